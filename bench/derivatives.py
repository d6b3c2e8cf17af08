"""Speed of composedyn's analytical dynamics derivatives against Pinocchio, in one run.

    python bench/derivatives.py [--batch 10000] [--repeat 9] [--quick]

Prints Markdown tables (for docs/performance.md, "Derivatives"):

1. per call on UR5, Panda (9 joints, fingers independent) and xArm 7 (7-DOF
   arm): ``robot.inverse_dynamics_derivatives`` against
   ``pin.computeRNEADerivatives`` and ``robot.forward_dynamics_derivatives``
   against ``pin.computeABADerivatives``, both called from Python with
   friction off (ratio = composedyn / Pinocchio; target <= 2);
2. a batch of ``--batch`` samples in one ``Robot`` call (compiled loop,
   parallel when the dispatcher picks it) against Pinocchio in a Python loop
   (speed-up = Pinocchio / composedyn; target >= 3).

Medians of interleaved repeats (the machine may be shared); speed is never
asserted in tests.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import PinPair, erd_robots_dir, erd_urdf, pin
from timing import interleaved, machine

ROBOTS = {"UR5": erd_urdf("ur5"), "Panda": erd_urdf("panda"),
          "xArm 7": str(erd_robots_dir() / "xarm_description/urdf/xarm7.urdf")}


def single(robot, pp, rng):
    """Per quantity: (composedyn, Pinocchio) zero-argument callables at one random state."""
    q, qd, x = rng.uniform(-1, 1, (3, robot.dof))
    m, d = pp.model, pp.data
    pq, pv, px = pp.q(q), pp.v(qd), pp.v(x)
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(q, qd, x, friction=False),
                 lambda: pin.computeRNEADerivatives(m, d, pq, pv, px)),
        "d FD": (lambda: robot.forward_dynamics_derivatives(q, qd, x, friction=False),
                 lambda: pin.computeABADerivatives(m, d, pq, pv, px)),
    }


def batch(robot, pp, rng, N):
    """Per quantity: (composedyn batch call, Pinocchio Python loop)."""
    Q, QD, X = rng.uniform(-1, 1, (3, N, robot.dof))
    m, d = pp.model, pp.data
    PQ = [pp.q(x) for x in Q]
    PV, PX = [pp.v(x) for x in QD], [pp.v(x) for x in X]
    idx = range(N)
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(Q, QD, X, friction=False),
                 lambda: [pin.computeRNEADerivatives(m, d, PQ[i], PV[i], PX[i]) for i in idx]),
        "d FD": (lambda: robot.forward_dynamics_derivatives(Q, QD, X, friction=False),
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
        with warnings.catch_warnings():  # xArm 7: a massless end-effector link
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.from_urdf(urdf, mimic="independent")
        robots[name] = (robot, PinPair(robot, urdf))
    print("### Per call (µs, median; ratio = composedyn / Pinocchio, < 1 is faster)\n")
    print("| robot | n | quantity | Pinocchio | `Robot` method | ratio |")
    print("|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, ref) in single(robot, pp, np.random.default_rng(0)).items():
            t = interleaved({"ours": ours, "pin": ref}, number=2000, repeat=a.repeat)
            print(f"| {name} | {robot.dof} | {qty} | {t['pin'] * 1e6:.2f} | {t['ours'] * 1e6:.2f} "
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
