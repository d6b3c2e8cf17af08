"""Speed of composedyn's analytical dynamics derivatives against Pinocchio, in one run.

    python bench/derivatives.py [--batch 10000] [--repeat 9] [--quick]

Prints Markdown tables (for docs/performance.md, "Derivatives"):

1. per call on UR5, Panda (9 joints, fingers independent) and xArm 7 (7-DOF
   arm): ``robot.inverse_dynamics_derivatives`` against
   ``pin.computeRNEADerivatives`` and ``robot.forward_dynamics_derivatives``
   against ``pin.computeABADerivatives``, both called from Python with
   friction off (ratio = composedyn / Pinocchio; target <= 2);
2. a batch of ``--batch`` samples in one ``Robot`` call (compiled loop) against
   Pinocchio in a Python loop (speed-up = Pinocchio / composedyn; target >= 3):
   the parallel loop forced (two cores, as on a machine with an idle core:
   ``parallel.PARALLEL_IDLE``), returning new arrays and writing into arrays
   allocated once (``out=``, as a caller computing such batches repeatedly
   does; Pinocchio's loop too reuses its ``data``), and the serial one (what
   the default runs when the load average leaves less than half a core idle).

Medians of interleaved repeats (the machine may be shared); speed is never
asserted in tests.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import PinPair, erd_robots_dir, erd_urdf, pin
from timing import forced, interleaved, machine

ROBOTS = {"UR5": erd_urdf("ur5"), "Panda": erd_urdf("panda"),
          "xArm 7": str(erd_robots_dir() / "xarm_description/urdf/xarm7.urdf")}


def joint_states(robot, rng, N=None):
    """(q, qd, x) uniform in [-1, 1], each (n,) or (N, n)."""
    return rng.uniform(-1, 1, (3, robot.dof) if N is None else (3, N, robot.dof))


def single(robot, pp, rng, states=joint_states):
    """Per quantity: (composedyn, Pinocchio) zero-argument callables at one random state
    ``states(robot, rng)``."""
    q, qd, x = states(robot, rng)
    m, d = pp.model, pp.data
    pq, pv, px = pp.q(q), pp.v(qd), pp.v(x)
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(q, qd, x, friction=False),
                 lambda: pin.computeRNEADerivatives(m, d, pq, pv, px)),
        "d FD": (lambda: robot.forward_dynamics_derivatives(q, qd, x, friction=False),
                 lambda: pin.computeABADerivatives(m, d, pq, pv, px)),
    }


def batch(robot, pp, rng, N, states=joint_states):
    """Per quantity: (composedyn batch call, the same into reused arrays, Pinocchio Python loop) on
    ``states(robot, rng, N)``."""
    Q, QD, X = states(robot, rng, N)
    m, d = pp.model, pp.data
    PQ = [pp.q(x) for x in Q]
    PV, PX = [pp.v(x) for x in QD], [pp.v(x) for x in X]
    idx = range(N)
    out = tuple(np.zeros((N, robot.nv, robot.nv)) for _ in range(3))  # mapped once
    return {
        "d ID": (lambda: robot.inverse_dynamics_derivatives(Q, QD, X, friction=False),
                 lambda: robot.inverse_dynamics_derivatives(Q, QD, X, friction=False, out=out[:2]),
                 lambda: [pin.computeRNEADerivatives(m, d, PQ[i], PV[i], PX[i]) for i in idx]),
        "d FD": (lambda: robot.forward_dynamics_derivatives(Q, QD, X, friction=False),
                 lambda: robot.forward_dynamics_derivatives(Q, QD, X, friction=False, out=out),
                 lambda: [pin.computeABADerivatives(m, d, PQ[i], PV[i], PX[i]) for i in idx]),
    }


def arguments(argv, doc: str) -> argparse.Namespace:
    """--batch, --repeat, --quick of a derivative bench; prints the machine line."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller batch (smoke run)")
    a = ap.parse_args(argv)
    if a.quick:
        a.batch, a.repeat = 1000, 3
    print(f"Machine: {machine()}\n")
    return a


def main(argv=None) -> None:
    a = arguments(argv, __doc__)
    robots = {}
    for name, urdf in ROBOTS.items():
        with warnings.catch_warnings():  # xArm 7: a massless end-effector link
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.from_urdf(urdf, mimic="independent")
        robots[name] = (robot, PinPair(robot, urdf))
    tables(robots, single, batch, a.batch, a.repeat)


def tables(robots: dict, single, batch, N: int, repeat: int, method: str = "`Robot` method", size: str = "n",
           number: int = 2000) -> None:
    """Print the per-call and batch tables: ``robots`` name -> (robot, Pinocchio pair); ``single`` and
    ``batch`` give (composedyn, Pinocchio) callables per quantity (see :func:`single`, :func:`batch`)."""
    print("### Per call (µs, median; ratio = composedyn / Pinocchio, < 1 is faster)\n")
    print(f"| robot | {size} | quantity | Pinocchio | {method} | ratio |")
    print("|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, ref) in single(robot, pp, np.random.default_rng(0)).items():
            ours()  # compile or load the kernels outside the timing
            t = interleaved({"ours": ours, "pin": ref}, number=number, repeat=repeat)
            print(f"| {name} | {robot.dof} | {qty} | {t['pin'] * 1e6:.2f} | {t['ours'] * 1e6:.2f} "
                  f"| {t['ours'] / t['pin']:.2f} |")
    print(f"\n### Batch of {N} samples (µs per sample, median; speed-up = Pinocchio loop / composedyn)\n")
    print("| robot | quantity | Pinocchio loop | composedyn, two cores | speed-up | two cores, `out=` | speed-up "
          "| composedyn, one core | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, into, ref) in batch(robot, pp, np.random.default_rng(1), N).items():
            t = interleaved({"two": forced(ours, 0, -np.inf), "into": forced(into, 0, -np.inf),
                             "one": forced(ours, 1 << 62, 0.5), "pin": ref}, number=1, repeat=max(5, repeat // 2))
            p, two, into_, one = (t[k] / N * 1e6 for k in ("pin", "two", "into", "one"))
            print(f"| {name} | {qty} | {p:.2f} | {two:.3f} | {p / two:.1f}× | {into_:.3f} | {p / into_:.1f}× "
                  f"| {one:.3f} | {p / one:.1f}× |")


if __name__ == "__main__":
    main()
