"""Speed of a floating robot's dynamics derivatives against Pinocchio's free flyer, in one run.

    python bench/floating_derivatives.py [--batch 10000] [--repeat 9] [--quick]

Prints Markdown tables (for docs/performance.md, "Floating-base derivatives"):

1. per call on Solo12 and Talos (``cd.load(path, floating=True)`` against
   ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())``):
   ``robot.inverse_dynamics_derivatives`` against ``pin.computeRNEADerivatives``
   and ``robot.forward_dynamics_derivatives`` against
   ``pin.computeABADerivatives``, both called from Python with friction off
   (ratio = composedyn / Pinocchio);
2. a batch of ``--batch`` samples in one call against Pinocchio in a Python
   loop (speed-up = Pinocchio / composedyn).

Medians of interleaved repeats (the machine may be shared); speed is never
asserted in tests.
"""

from __future__ import annotations

import warnings

import composedyn as cd
import derivatives
from composedyn.testing.pinocchio_oracle import FreeFlyerPair, erd_urdf, pin

ROBOTS = {"Solo12": erd_urdf("solo12"), "Talos": erd_urdf("talos")}


def _states(robot, rng, N=None):
    """(q, v, x) random configurations, velocities and accelerations (or torques)."""
    q = robot.random_configuration(size=N, seed=int(rng.integers(1 << 30)))
    shape = (robot.nv,) if N is None else (N, robot.nv)
    return q, rng.normal(size=shape), rng.normal(size=shape)


def single(robot, pp, rng):
    """Per quantity: (composedyn, Pinocchio) callables at one random state on the group."""
    return derivatives.single(robot, pp, rng, _states)


def batch(robot, pp, rng, N):
    """Per quantity: (composedyn batch call, Pinocchio Python loop) on N random states."""
    return derivatives.batch(robot, pp, rng, N, _states)


def main(argv=None) -> None:
    a = derivatives.arguments(argv, __doc__)
    robots = {}
    for name, urdf in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.load(urdf, floating=True)
        robots[name] = (robot, FreeFlyerPair(robot, urdf, pin.JointModelFreeFlyer()))
    derivatives.tables(robots, single, batch, a.batch, a.repeat, method="`FloatingRobot` method", size="nv",
                       number=1000)

if __name__ == "__main__":
    main()
