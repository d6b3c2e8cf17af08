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

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import FreeFlyerPair, erd_urdf, pin
from timing import interleaved, machine

ROBOTS = {"Solo12": erd_urdf("solo12"), "Talos": erd_urdf("talos")}


def _states(robot, rng, N=None):
    """(q, v, x) random configurations, velocities and accelerations (or torques)."""
    q = robot.random_configuration(size=N, seed=int(rng.integers(1 << 30)))
    shape = (robot.nv,) if N is None else (N, robot.nv)
    return q, rng.normal(size=shape), rng.normal(size=shape)


def single(robot, pp, rng):
    """Per quantity: (composedyn, Pinocchio) zero-argument callables at one random state."""
    q, v, x = _states(robot, rng)
    m, d = pp.model, pp.data
    pq, pv, px = pp.q(q), pp.v(v), pp.v(x)
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(q, v, x, friction=False),
                 lambda: pin.computeRNEADerivatives(m, d, pq, pv, px)),
        "d FD": (lambda: robot.forward_dynamics_derivatives(q, v, x, friction=False),
                 lambda: pin.computeABADerivatives(m, d, pq, pv, px)),
    }


def batch(robot, pp, rng, N):
    """Per quantity: (composedyn batch call, Pinocchio Python loop)."""
    Q, V, X = _states(robot, rng, N)
    m, d = pp.model, pp.data
    PQ, PV, PX = [pp.q(x) for x in Q], [pp.v(x) for x in V], [pp.v(x) for x in X]
    idx = range(N)
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(Q, V, X, friction=False),
                 lambda: [pin.computeRNEADerivatives(m, d, PQ[i], PV[i], PX[i]) for i in idx]),
        "d FD": (lambda: robot.forward_dynamics_derivatives(Q, V, X, friction=False),
                 lambda: [pin.computeABADerivatives(m, d, PQ[i], PV[i], PX[i]) for i in idx]),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller batch (smoke run)")
    a = ap.parse_args(argv)
    if a.quick:
        a.batch, a.repeat = 1000, 3
    print(f"Machine: {machine()}\n")
    robots = {}
    for name, urdf in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.load(urdf, floating=True)
        robots[name] = (robot, FreeFlyerPair(robot, urdf, pin.JointModelFreeFlyer()))
    print("### Per call (µs, median; ratio = composedyn / Pinocchio, < 1 is faster)\n")
    print("| robot | nv | quantity | Pinocchio | `FloatingRobot` method | ratio |")
    print("|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, ref) in single(robot, pp, np.random.default_rng(0)).items():
            ours()  # compile / load the kernels outside the timing
            t = interleaved({"ours": ours, "pin": ref}, number=1000, repeat=a.repeat)
            print(f"| {name} | {robot.nv} | {qty} | {t['pin'] * 1e6:.2f} | {t['ours'] * 1e6:.2f} "
                  f"| {t['ours'] / t['pin']:.2f} |")
    print(f"\n### Batch of {a.batch} samples (µs per sample, median; speed-up = Pinocchio loop / composedyn)\n")
    print("| robot | quantity | Pinocchio loop | composedyn batch | speed-up |")
    print("|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, ref) in batch(robot, pp, np.random.default_rng(1), a.batch).items():
            t = interleaved({"ours": ours, "pin": ref}, number=1, repeat=max(3, a.repeat // 3))
            p, o = t["pin"] / a.batch * 1e6, t["ours"] / a.batch * 1e6
            print(f"| {name} | {qty} | {p:.2f} | {o:.3f} | {p / o:.1f}× |")


if __name__ == "__main__":
    main()
