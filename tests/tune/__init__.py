"""Kernel tuning (linnet/tune, `linnet tune`)."""
