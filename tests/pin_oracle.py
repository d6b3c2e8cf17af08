"""Pinocchio as the tests' oracle: see :mod:`composedyn.testing.pinocchio_oracle`."""

from composedyn.testing.pinocchio_oracle import (  # noqa: F401
    ERD_URDFS, PinPair, erd_robots_dir, erd_urdf, pin, rel_err,
)
