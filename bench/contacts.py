"""Time contact inverse dynamics against the same least-norm solve with Pinocchio, same run.

    python bench/contacts.py [--batch 1000] [--repeat 5] [--cones 200]

Robots (example-robot-data, free flyer): Solo12 on four point feet and Talos on
two surface soles.  Least norm, per call: ``robot.contact_inverse_dynamics``
against ``pin.rnea`` + ``pin.computeJointJacobians`` +
``pin.updateFramePlacements`` + ``pin.getFrameJacobian`` (LOCAL_WORLD_ALIGNED)
per contact + ``numpy.linalg.lstsq`` on the base rows; batch: one call on
``--batch`` random samples against a Python loop of that.  Best of
``--repeat`` rounds, alternating.  Friction cones (no Pinocchio counterpart):
median time per sample of ``--cones`` random standing-like samples with mu = 0.7.
Ratios > 1: composedyn slower.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import erd_robots_dir, pin

ROBOTS = (("solo12", "solo_description/robots/solo12.urdf", ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"), "point"),
          ("talos", "talos_data/robots/talos_reduced.urdf", ("left_sole_link", "right_sole_link"), "surface"))


def best(f, repeat: int, number: int) -> float:
    f()
    out = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        out = min(out, (time.perf_counter() - t0) / number)
    return out


def pin_solver(model, robot, frames, rows):
    data = model.createData()
    perm = np.array([robot.joint_names.index(nm) for nm in list(model.names)[2:]])
    ids = [model.getFrameId(f) for f in frames]

    def solve(q, v, a):
        qp, vp, ap = np.r_[q[:7], q[7:][perm]], np.r_[v[:6], v[6:][perm]], np.r_[a[:6], a[6:][perm]]
        b = pin.rnea(model, data, qp, vp, ap)
        pin.computeJointJacobians(model, data, qp)
        pin.updateFramePlacements(model, data)
        JT = np.concatenate([pin.getFrameJacobian(model, data, i, pin.LOCAL_WORLD_ALIGNED)[:rows] for i in ids]).T
        f = np.linalg.lstsq(JT[:6], b[:6], rcond=None)[0]
        return b[6:] - JT[6:] @ f, f

    return solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cones", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| robot | quantity | composedyn | Pinocchio | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name, rel, frames, kind in ROBOTS:
        path = str(erd_robots_dir() / rel)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = cd.load(path, floating=True)
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        contacts = dict.fromkeys(frames, kind)
        solve = pin_solver(model, robot, frames, 3 if kind == "point" else 6)
        q = robot.random_configuration(seed=1)
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        ours = best(lambda: robot.contact_inverse_dynamics(q, v, a, contacts, friction=False), args.repeat, 50)
        theirs = best(lambda: solve(q, v, a), args.repeat, 50)
        print(f"| {name} | least norm, per call | {ours * 1e6:.0f} us | {theirs * 1e6:.0f} us | {ours / theirs:.2f} |")
        Q = robot.random_configuration(size=args.batch, seed=2)
        V, A = rng.normal(size=(args.batch, robot.nv)), rng.normal(size=(args.batch, robot.nv))
        ours = best(lambda: robot.contact_inverse_dynamics(Q, V, A, contacts, friction=False), args.repeat, 1)
        theirs = best(lambda: [solve(Q[k], V[k], A[k]) for k in range(args.batch)], args.repeat, 1)
        print(f"| {name} | least norm, {args.batch} samples | {ours * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | "
              f"{ours / theirs:.2f} |")
        q0 = robot.neutral()
        q0[2] = -min(robot.frame_pose(q0, f)[2, 3] for f in frames)
        times = []
        robot.contact_inverse_dynamics(q0, 0 * v, 0 * a, contacts, friction_coefficient=0.7)  # compiles the program
        for _ in range(args.cones):
            dv, da = 0.1 * rng.normal(size=robot.nv), 0.5 * rng.normal(size=robot.nv)
            t0 = time.perf_counter()
            robot.contact_inverse_dynamics(q0, dv, da, contacts, friction_coefficient=0.7)
            times.append(time.perf_counter() - t0)
        print(f"| {name} | friction cones, median per sample | {np.median(times) * 1e3:.1f} ms | - | - |")


if __name__ == "__main__":
    main()
