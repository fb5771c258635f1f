"""The compiler's passes (linnet/passes): one test file per pass module, by stage."""
