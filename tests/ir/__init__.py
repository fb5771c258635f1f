"""The tensor IR (linnet/ir): its languages, verifier, state and numerics."""
