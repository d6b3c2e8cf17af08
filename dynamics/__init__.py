"""Dynamics algorithms: pure functions of (model, q, qd, qdd, ...), batched.

Spatial conventions are stated in :mod:`composedyn.dynamics.reference.spatial`.
"""
