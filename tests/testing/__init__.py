"""The helpers of linnet/testing."""
