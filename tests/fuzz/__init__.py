"""The fuzzer (linnet/fuzz): its generator, reducer and driver, and the regression programs it
found."""
