"""Compiling the kernels ahead of use: the warm-up groups and the build step of the wheel."""
