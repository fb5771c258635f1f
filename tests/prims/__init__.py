"""The primitive table (linnet/prims)."""
