"""Floating-base dynamics against Pinocchio's free flyer, measured in one run.

    python bench/floating.py [--batch 10000] [--repeat 15] [--number 2000]

Prints Markdown tables (paste them into ``docs/performance.md``, section
"Floating base", with the machine line):

1. per call, on Solo12, A1 and Talos reduced (example-robot-data, loaded with
   ``floating=True``): ``inverse_dynamics`` (ID), ``mass_matrix`` (M),
   ``forward_dynamics`` (FD) of the public ``FloatingRobot`` methods as ratios to
   Pinocchio's ``rnea``, ``crba``, ``aba`` on ``buildModelFromUrdf(path,
   JointModelFreeFlyer())`` called from Python (ratio < 1: composedyn faster);
   and for the last frame of ``FEET`` (a foot, a sole): ``frame_pose`` against
   ``framesForwardKinematics`` + reading ``oMf``, ``jacobian`` against
   ``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``);
2. batches of ``--batch`` samples in one call against Pinocchio in a Python
   loop, as speed-ups; the compiled loop on both cores (the parallel copy forced,
   as on a machine with an idle core: ``parallel.PARALLEL_IDLE``) returning a new
   array, the same writing into a reused array (``out=``, as a controller or an
   optimiser calling it again and again would), and on one core (new array).
   A new array is fresh memory the kernel must fault in: 116 MB for 10,000 Talos
   mass matrices, which costs about as much as computing them.

Medians of interleaved repeats (the machine may be shared).  Speed is never
asserted in tests.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import FreeFlyerPair, erd_urdf, pin
from timing import forced, interleaved, machine

ROBOTS = {"Solo12": "solo12", "A1": "a1", "Talos reduced": "talos"}
FEET = {"Solo12": "FL_FOOT", "A1": "FL_foot", "Talos reduced": "left_sole_link"}


def _states(robot, pp, rng, batch):
    """(q, v, a) composedyn arrays and Pinocchio's, one sample or ``batch`` samples."""
    N = 1 if batch is None else batch
    q = robot.random_configuration(size=N, seed=int(rng.integers(1 << 30)))
    v, a = rng.uniform(-1, 1, (2, N, robot.nv))
    pq = np.array([pp.q(x) for x in q])
    pv, pa = pp.v(v), pp.v(a)
    if batch is None:
        return q[0], v[0], a[0], pq[0], pv[0], pa[0]
    return q, v, a, pq, pv, pa


def per_call(robot, pp, rng, number, repeat, foot):
    q, v, a, pq, pv, pa = _states(robot, pp, rng, None)
    tau = robot.inverse_dynamics(q, v, a)
    m, d = pp.model, pp.data
    fid = m.getFrameId(foot)

    def pin_pose():
        pin.framesForwardKinematics(m, d, pq)
        return d.oMf[fid].homogeneous

    pairs = {
        "ID": (lambda: robot.inverse_dynamics(q, v, a), lambda: pin.rnea(m, d, pq, pv, pa)),
        "M": (lambda: robot.mass_matrix(q), lambda: pin.crba(m, d, pq)),
        "FD": (lambda: robot.forward_dynamics(q, v, tau), lambda: pin.aba(m, d, pq, pv, pp.v(tau))),
        "pose": (lambda: robot.frame_pose(q, foot), pin_pose),
        "J": (lambda: robot.jacobian(q, foot),
              lambda: pin.computeFrameJacobian(m, d, pq, fid, pin.LOCAL_WORLD_ALIGNED)),
    }
    out = {}
    for k, (ours, theirs) in pairs.items():
        t = interleaved({"ours": ours, "pin": theirs}, number, repeat)
        out[k] = (t["ours"], t["pin"])
    return out


def batch(robot, pp, rng, N, repeat):
    q, v, a, pq, pv, pa = _states(robot, pp, rng, N)
    tau = robot.inverse_dynamics(q, v, a)
    ptau = pp.v(tau)
    m, d = pp.model, pp.data

    def loop(f, *arrays):
        return lambda: [f(m, d, *row) for row in zip(*arrays)]

    vec, mat = np.empty(v.shape), np.empty(v.shape + v.shape[-1:])
    pairs = {
        "ID": (lambda out=None: robot.inverse_dynamics(q, v, a, out=out), vec, loop(pin.rnea, pq, pv, pa)),
        "M": (lambda out=None: robot.mass_matrix(q, out=out), mat, loop(pin.crba, pq)),
        "FD": (lambda out=None: robot.forward_dynamics(q, v, tau, out=out), vec, loop(pin.aba, pq, pv, ptau)),
    }
    out = {}
    for k, (ours, into, theirs) in pairs.items():
        t = interleaved({"two": forced(ours, 0, -np.inf), "into": forced(lambda: ours(into), 0, -np.inf),
                         "one": forced(ours, 1 << 62, 0.5), "pin": theirs}, 1, repeat)
        out[k] = (t["two"], t["into"], t["one"], t["pin"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=2000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(machine())
    rows_call, rows_batch = [], []
    for label, key in ROBOTS.items():
        path = erd_urdf(key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = cd.load(path, floating=True)
        pp = FreeFlyerPair(robot, path, pin.JointModelFreeFlyer())
        robot.warm_up()
        pc = per_call(robot, pp, rng, args.number, args.repeat, FEET[label])
        rows_call.append(f"| {label} ({robot.nv} dof) | " + " | ".join(
            f"{pc[k][0] * 1e6:.2f} µs / {pc[k][1] * 1e6:.2f} µs = **{pc[k][0] / pc[k][1]:.2f}x**" for k in pc) + " |")
        bt = batch(robot, pp, rng, args.batch, max(5, args.repeat // 2))
        rows_batch.append(f"| {label} | " + " | ".join(
            f"{bt[k][0] * 1e3:.1f} / {bt[k][1] * 1e3:.1f} / {bt[k][2] * 1e3:.1f} ms vs {bt[k][3] * 1e3:.1f} ms = "
            f"**{bt[k][3] / bt[k][0]:.1f}x** / **{bt[k][3] / bt[k][1]:.1f}x** / {bt[k][3] / bt[k][2]:.1f}x"
            for k in bt) + " |")
    print("\nPer call (composedyn / Pinocchio; < 1: composedyn faster)\n")
    print("| robot | ID (rnea) | M (crba) | FD (aba) | frame_pose (foot) | jacobian (foot) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows_call))
    print(f"\nBatch of {args.batch} samples: one composedyn call (two cores, new array / two cores, out= / "
          "one core, new array) vs a Pinocchio Python loop (speed-ups in the same order)\n")
    print("| robot | ID | M | FD |\n|---|---|---|---|")
    print("\n".join(rows_batch))


if __name__ == "__main__":
    main()
