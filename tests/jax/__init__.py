"""The JAX runtime (linnet/jax): loading, jit and grad, device meshes."""
