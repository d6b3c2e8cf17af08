"""Random robots for the tests: see :mod:`composedyn.testing.random_robots`."""

from composedyn.testing.random_robots import (  # noqa: F401
    FIXED_SEEDS,
    MOVING,
    random_inertia,
    random_rotation,
    random_urdf,
    urdfs,
)
