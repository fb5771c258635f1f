"""The benchmark scripts of benchmarks/ and the hand-written kernels they compare with."""
