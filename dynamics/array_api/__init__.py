"""Dynamics algorithms written once against the Python array API (NumPy, PyTorch, JAX)."""
