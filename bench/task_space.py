"""Time composedyn's task-space kinematics and inverse kinematics against Pinocchio, same run.

    python bench/task_space.py [--batch 10000] [--repeat 7] [--ik 1000]
    python bench/task_space.py --floor     # where a Panda Jacobian call's time goes

Robots: the Panda URDF of example-robot-data (7 arm joints + 2 finger joints
loaded as independent coordinates, frame ``panda_hand``) and the UR5
(frame ``tool0``).  Per call: ``robot.frame_pose`` against
``pin.framesForwardKinematics`` followed by reading ``data.oMf[frame]`` as a
4x4 array, and ``robot.jacobian`` against ``pin.computeFrameJacobian``
(LOCAL_WORLD_ALIGNED); best of ``--repeat`` rounds, timed in alternation.
Batch: one ``robot.jacobian`` call on ``--batch`` random configurations against
a Python loop of ``pin.computeFrameJacobian``, with the default loop (parallel
from ``parallel.PARALLEL_WORK`` samples x joints when a core is idle, see
``parallel.use_parallel``), then forced onto one thread, then forced onto all
threads whatever the load.  Ratios > 1: composedyn slower.
Inverse kinematics: ``--ik`` targets ``frame_pose(q)`` at random in-limit q,
each solved from q0 = 0 (projected on the limits) with the default
tolerances (1e-9 m, 1e-9 rad); success rate, limits respected, median and
99th-percentile time per solve.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import composedyn as cd
from composedyn.dynamics.compiled import parallel
from composedyn.ik import random_configurations
from composedyn.testing.pinocchio_oracle import PinPair, erd_urdf, pin

ROBOTS = (("panda", "panda_hand"), ("ur5", "tool0"))
FLOOR = '''
Where a ``robot.jacobian`` call's time goes (``--floor``, Panda, frame
``panda_hand``): the whole call against Pinocchio's, then its parts -- the
Jacobian entry's C caller alone (a new result each call), a C caller of an
empty C function with the entry's signature, the result allocation, and one
Jacobian inside the compiled sample loop.  Best of 200 rounds of 1000 calls, ns.
'''


def _run(f, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        f()
    return (time.perf_counter() - t0) / number


def paired(f, g, repeat: int, number: int) -> tuple[float, float]:
    """Best time (s) per call of f and g, alternating rounds of ``number`` calls."""
    f(), g()
    bf = bg = np.inf
    for r in range(repeat):
        if r % 2:
            bg, bf = min(bg, _run(g, number)), min(bf, _run(f, number))
        else:
            bf, bg = min(bf, _run(f, number)), min(bg, _run(g, number))
    return bf, bg


def line(label: str, ours: float, theirs: float, unit: str = "us") -> str:
    s = 1e6 if unit == "us" else 1e3
    return f"| {label} | {ours * s:.2f} {unit} | {theirs * s:.2f} {unit} | {ours / theirs:.2f} |"


def floor() -> None:
    """Print the table of :data:`FLOOR`."""
    import timeit

    from numba import cfunc

    from composedyn.dynamics.compiled import declare
    from composedyn.dynamics.compiled._call import Caller

    urdf = erd_urdf("panda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(urdf, mimic="independent")
    pp = PinPair(robot, urdf)
    m, d = pp.model, pp.data
    fid = m.getFrameId("panda_hand", pin.BODY)
    q = np.random.default_rng(0).uniform(-1, 1, robot.dof)
    qp = pp.q(q)
    im, fx = robot.arrays.frames
    k, n = robot.frame_names.index("panda_hand"), robot.dof
    robot.warm_up(batch=True)
    caller = robot._threads.data["jacobian"]

    @cfunc(declare.signature())
    def empty(p, dims, o, s):
        return 0

    bare = Caller(empty.address, (im, fx), (), (n,), ((6, n),), ("frame", "local"), (-1, 0), None, False,
                  declare.ON, None)
    Q = np.repeat(q[None], 10_000, axis=0)
    OUT = np.empty((10_000, 6, n))
    from composedyn.dynamics.compiled.frames import JACOBIAN

    loop, status = declare.loops(JACOBIAN)[0], np.empty(len(Q), dtype=np.int64)
    world = pin.LOCAL_WORLD_ALIGNED

    def best(f, number=1000):
        f()
        return min(timeit.repeat(f, number=number, repeat=200)) / number * 1e9

    rows = {
        "pin.computeFrameJacobian (whole call)": best(lambda: pin.computeFrameJacobian(m, d, qp, fid, world)),
        "robot.jacobian (whole call)": best(lambda: robot.jacobian(q, "panda_hand")),
        "the Jacobian entry's C caller alone": best(lambda: caller(q, k)),
        "a C caller of an empty C function": best(lambda: bare(q, k)),
        "np.empty((6, n)) for the result": best(lambda: np.empty((6, n))),
        "one Jacobian in the compiled sample loop": best(lambda: loop(im, fx, Q, k, 0, OUT, status), 5) / len(Q),
    }
    print("| part | ns |")
    print("|---|---|")
    print("\n".join(f"| {k} | {v:.0f} |" for k, v in rows.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--ik", type=int, default=1000)
    ap.add_argument("--floor", action="store_true", help="only the breakdown of one Jacobian call")
    args = ap.parse_args()
    if args.floor:
        floor()
        return
    rows, ik_rows = [], []
    for key, frame in ROBOTS:
        urdf = erd_urdf(key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.from_urdf(urdf, mimic="independent")
        pp = PinPair(robot, urdf)
        m, d = pp.model, pp.data
        fid = m.getFrameId(frame, pin.BODY)
        rng = np.random.default_rng(0)
        Q = random_configurations(robot, args.batch, rng)
        q, qp = Q[0].copy(), pp.q(Q[0])
        world = pin.LOCAL_WORLD_ALIGNED

        def pin_pose():
            pin.framesForwardKinematics(m, d, qp)
            return d.oMf[fid].homogeneous

        ours, theirs = paired(lambda: robot.frame_pose(q, frame), pin_pose, args.repeat, 2000)
        rows.append(line(f"{key} frame_pose vs framesForwardKinematics + oMf", ours, theirs))
        ours, theirs = paired(lambda: robot.jacobian(q, frame),
                              lambda: pin.computeFrameJacobian(m, d, qp, fid, world), args.repeat, 2000)
        rows.append(line(f"{key} jacobian vs computeFrameJacobian", ours, theirs))
        QP = [pp.q(x) for x in Q]

        def pin_loop():
            for x in QP:
                pin.computeFrameJacobian(m, d, x, fid, world)

        ours, theirs = paired(lambda: robot.jacobian(Q, frame), pin_loop, 2 * args.repeat, 1)
        rows.append(line(f"{key} jacobian, {args.batch} samples vs Python loop", ours, theirs, "ms"))
        work, idle = parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE
        for label, forced in (("one thread", (1 << 62, idle)), ("two threads (forced)", (0, -np.inf))):
            parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = forced  # the same batch, loop chosen
            try:
                ours, theirs = paired(lambda: robot.jacobian(Q, frame), pin_loop, 2 * args.repeat, 1)
            finally:
                parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = work, idle
            rows.append(line(f"{key} jacobian, {args.batch} samples, {label}, vs Python loop", ours, theirs, "ms"))
        targets = [robot.frame_pose(x, frame) for x in Q[:args.ik]]
        robot.inverse_kinematics(frame, targets[0])  # compile
        lim = robot.limits
        ok = inside = 0
        times, its = [], []
        for T in targets:
            t0 = time.perf_counter()
            res = robot.inverse_kinematics(frame, T)
            times.append(time.perf_counter() - t0)
            its.append(res.iterations)
            ok += res.success
            inside += bool(np.all(res.q >= lim["lower"]) and np.all(res.q <= lim["upper"]))
        n = len(targets)
        ik_rows.append(f"| {key} ({robot.dof} coordinates, frame {frame}) | {100 * ok / n:.1f} % of {n} | "
                       f"{100 * inside / n:.1f} % | {np.median(times) * 1e3:.3f} ms | "
                       f"{np.percentile(times, 99) * 1e3:.2f} ms | {int(np.median(its))} |")
    print("| quantity | composedyn | Pinocchio | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("| inverse kinematics | solved (1e-9 m, 1e-9 rad) | within limits | median time | 99th pct "
          "| median iterations |")
    print("|---|---|---|---|---|---|")
    print("\n".join(ik_rows))


if __name__ == "__main__":
    main()
