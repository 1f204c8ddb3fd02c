"""numba-jitted kernels: plain arrays in, plain arrays out; no validation, no Python objects, no I/O."""
