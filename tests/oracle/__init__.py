"""The NumPy oracle (linnet/fuzz/oracle) on the corpus, the kernels and the models."""
