"""Speed of composedyn's compiled dynamics against Pinocchio, measured in one run.

    python bench/speed.py [--batch 10000] [--repeat 15] [--quick]

Prints Markdown tables (paste them into ``docs/performance.md``, section
"Dynamics per call and batches", with the machine line):

1. start-up: ``import composedyn``; first ``inverse_dynamics`` call with an
   empty numba cache (compilation) and in a second process (cache filled);
2. per-call latency on UR5, Panda (9 joints, fingers independent), xArm 7 and
   Talos reduced (32 joints, branched) of inverse dynamics (ID), mass matrix (M),
   Coriolis matrix (C), gravity (g), forward dynamics (FD) and the frame
   Jacobian (J, world axes, of the frame in ``FRAMES``): the public ``Robot``
   method and the lean ``robot.fast`` entry (its Jacobian not timed), as ratios to
   Pinocchio (``rnea``, ``crba``, ``computeCoriolisMatrix``,
   ``computeGeneralizedGravity``, ``aba``, ``computeFrameJacobian`` with
   ``LOCAL_WORLD_ALIGNED``) called from Python (ratio < 1: composedyn faster);
3. batch throughput: ``--batch`` samples in one ``Robot`` call (compiled loop,
   forced parallel and forced serial; the default picks parallel from
   ``parallel.PARALLEL_WORK`` samples x joints) against Pinocchio in a Python
   loop, as speed-ups;
4. the PUMA 560 against the Robotics Toolbox's ``rne`` when installed;
5. RNEA cost against the number of joints (random chains, 2 to 100 joints).

Medians of interleaved repeats (the machine may be shared); per call, the
best of 10 x ``--repeat`` interleaved rounds of 200 calls (a short round that
another job did not interrupt).  Speed is never asserted in tests.
"""

from __future__ import annotations

import argparse

import numpy as np

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import parallel
from composedyn.testing.pinocchio_oracle import PinPair, erd_robots_dir, erd_urdf, pin
from composedyn.testing.random_robots import random_urdf
from timing import interleaved, linear_fit, machine, startup

ROBOTS = {"UR5": erd_urdf("ur5"), "Panda": erd_urdf("panda"),
          "xArm 7": str(erd_robots_dir() / "xarm_description/urdf/xarm7.urdf"), "Talos reduced": erd_urdf("talos")}
QUANTITIES = ("ID", "M", "C", "g", "FD")
FRAMES = {"UR5": "tool0", "Panda": "panda_hand", "xArm 7": "link_eef", "Talos reduced": "gripper_left_base_link"}


def calls(robot, pp, rng, batch: int | None, frame: str | None = None):
    """Per quantity: (composedyn public, composedyn fast, Pinocchio) zero-argument callables; one
    sample with ``frame``: also the frame Jacobian "J" (fast None: not timed)."""
    shape = (robot.dof,) if batch is None else (batch, robot.dof)
    q, qd, qdd = rng.uniform(-1, 1, (3,) + shape)
    fd, m, d = robot.fast, pp.model, pp.data
    if batch is None:  # robot.fast writes into reused arrays, as Pinocchio into its `data`
        pq, pv, pa = pp.q(q), pp.v(qd), pp.v(qdd)
        v, A = np.empty(robot.dof), np.empty((robot.dof, robot.dof))
        single = {
            "ID": (lambda: robot.inverse_dynamics(q, qd, qdd), lambda: fd.inverse_dynamics(q, qd, qdd, out=v),
                   lambda: pin.rnea(m, d, pq, pv, pa)),
            "M": (lambda: robot.mass_matrix(q), lambda: fd.mass_matrix(q, out=A), lambda: pin.crba(m, d, pq)),
            "C": (lambda: robot.coriolis_matrix(q, qd), lambda: fd.coriolis_matrix(q, qd, out=A),
                  lambda: pin.computeCoriolisMatrix(m, d, pq, pv)),
            "g": (lambda: robot.gravity_torques(q), lambda: fd.gravity_torques(q, out=v),
                  lambda: pin.computeGeneralizedGravity(m, d, pq)),
            "FD": (lambda: robot.forward_dynamics(q, qd, qdd), lambda: fd.forward_dynamics(q, qd, qdd, out=v),
                   lambda: pin.aba(m, d, pq, pv, pa)),
        }
        if frame is not None:
            fid, world = m.getFrameId(frame, pin.BODY), pin.LOCAL_WORLD_ALIGNED
            single["J"] = (lambda: robot.jacobian(q, frame), None,
                           lambda: pin.computeFrameJacobian(m, d, pq, fid, world))
        return single
    PQ = np.array([pp.q(x) for x in q])
    PV, PA = np.ascontiguousarray(qd[:, pp.perm]), np.ascontiguousarray(qdd[:, pp.perm])
    idx = range(batch)

    def loop(f, *arrays):
        return lambda: [f(m, d, *(a[i] for a in arrays)) for i in idx]
    return {
        "ID": (lambda: robot.inverse_dynamics(q, qd, qdd), loop(pin.rnea, PQ, PV, PA)),
        "M": (lambda: robot.mass_matrix(q), loop(pin.crba, PQ)),
        "C": (lambda: robot.coriolis_matrix(q, qd), loop(pin.computeCoriolisMatrix, PQ, PV)),
        "g": (lambda: robot.gravity_torques(q), loop(pin.computeGeneralizedGravity, PQ)),
        "FD": (lambda: robot.forward_dynamics(q, qd, qdd), loop(pin.aba, PQ, PV, PA)),
    }


def per_call_table(robots: dict, repeat: int) -> None:
    print("\n### Per call (µs, best of interleaved rounds; ratio = composedyn / Pinocchio, < 1 is faster)\n")
    print("| robot | n | quantity | Pinocchio | `Robot` method | ratio | `robot.fast` (`out=`) | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (pub, fast, ref) in calls(robot, pp, np.random.default_rng(0), None, FRAMES[name]).items():
            t = interleaved({"pub": pub, "pin": ref} | ({"fast": fast} if fast else {}), number=200,
                            repeat=10 * repeat, best=True)
            us = {k: v * 1e6 for k, v in t.items()}
            lean = f"{us['fast']:.2f} | {us['fast'] / us['pin']:.2f}" if fast else "– | –"
            print(f"| {name} | {robot.dof} | {qty} | {us['pin']:.2f} | {us['pub']:.2f} | {us['pub'] / us['pin']:.2f} "
                  f"| {lean} |")


def batch_table(robots: dict, N: int, repeat: int) -> None:
    print(f"\n### Batch of {N} samples (µs per sample, median; speed-up = Pinocchio loop / composedyn)\n")
    print("| robot | quantity | Pinocchio loop | compiled, parallel | speed-up | compiled, serial | speed-up | NumPy |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (robot, pp) in robots.items():
        for qty, (ours, ref) in calls(robot, pp, np.random.default_rng(1), N).items():
            keep = parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE
            parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = 0, -np.inf  # force the parallel loop
            par = interleaved({"ours": ours, "pin": ref}, number=1, repeat=repeat)
            parallel.PARALLEL_WORK = 1 << 62  # force the serial loop
            ser = interleaved({"ours": ours}, number=1, repeat=repeat)["ours"]
            parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = keep
            ref_np = "–"
            if qty in ("ID", "M"):
                dispatch.set_backend("numpy")
                ref_np = f"{interleaved({'np': ours}, number=1, repeat=max(3, repeat // 3))['np'] / N * 1e6:.2f}"
                dispatch.set_backend("auto")
            p, o = par["pin"] / N * 1e6, par["ours"] / N * 1e6
            print(f"| {name} | {qty} | {p:.2f} | {o:.3f} | {p / o:.1f}× | {ser / N * 1e6:.3f} | "
                  f"{p / (ser / N * 1e6):.1f}× | {ref_np} |")


def puma_row(repeat: int) -> None:
    print("\n### PUMA 560 inverse dynamics, per call (µs, median)\n")
    robot = cd.load("puma560")
    fd, q = robot.fast, np.full(robot.dof, 0.3)
    fd.warm_up()
    t = interleaved({"pub": lambda: robot.inverse_dynamics(q, q, q), "fast": lambda: fd.inverse_dynamics(q, q, q)},
                    number=2000, repeat=repeat)
    try:
        import roboticstoolbox as rtb

        p560 = rtb.models.DH.Puma560()
        rne = interleaved({"rne": lambda: p560.rne(q, q, q)}, number=2000, repeat=repeat)["rne"] * 1e6
        rtb_cell = f"{rne:.2f} (ratio `Robot` {t['pub'] * 1e6 / rne:.2f}, fast {t['fast'] * 1e6 / rne:.2f})"
    except ImportError:
        rtb_cell = "not installed"
    print("| `Robot` method | `robot.fast` | Robotics Toolbox `rne` |\n|---|---|---|")
    print(f"| {t['pub'] * 1e6:.2f} | {t['fast'] * 1e6:.2f} | {rtb_cell} |")


def scaling_table(N: int, repeat: int) -> None:
    print(f"\n### RNEA against the number of joints (random chains; batch of {N}, serial compiled loop)\n")
    print("| joints | per call `robot.fast` (`out=`, µs) | Pinocchio per call (µs) | batch (µs / sample) "
          "| batch / joint (ns) |")
    print("|---|---|---|---|---|")
    ns, costs = [2, 5, 10, 20, 50, 100], []
    for n in ns:
        xml = random_urdf(n, n, p_fixed=0.0, p_branch=0.0)
        robot = cd.from_urdf(xml)
        pp = PinPair(robot, xml)
        rng = np.random.default_rng(n)
        q, Q = rng.uniform(-1, 1, robot.dof), rng.uniform(-1, 1, (N, robot.dof))
        fd = robot.fast
        pq = pp.q(q)
        v = np.empty(robot.dof)
        t = interleaved({"fast": lambda: fd.inverse_dynamics(q, q, q, out=v),
                         "pin": lambda: pin.rnea(pp.model, pp.data, pq, q, q)}, number=1000, repeat=repeat)
        parallel.PARALLEL_WORK, keep = 1 << 62, parallel.PARALLEL_WORK
        b = interleaved({"b": lambda: robot.inverse_dynamics(Q, Q, Q)}, number=1, repeat=max(3, repeat // 3))["b"] / N
        parallel.PARALLEL_WORK = keep
        costs.append(b * 1e6)
        print(f"| {n} | {t['fast'] * 1e6:.2f} | {t['pin'] * 1e6:.2f} | {b * 1e6:.3f} | {b * 1e9 / n:.1f} |")
    a, slope, r2 = linear_fit(ns, costs)
    print(f"\nLinear fit of the batch cost: {a:.3f} µs + {slope * 1e3:.1f} ns × joints (R² = {r2:.4f}).")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller batch (smoke run)")
    a = ap.parse_args(argv)
    if a.quick:
        a.batch, a.repeat = 1000, 3
    print(f"Machine: {machine()}\n")
    s = startup(erd_urdf("ur5"), repeat=3 if a.quick else 5)
    print("### Start-up (s; UR5; median of processes)\n")
    print("| import composedyn | first call, empty cache (compile) | warm_up(), empty cache | "
          "warm_up(batch=True), empty cache | first call, cached | process start to first result, cached |")
    print("|---|---|---|---|---|---|")
    print(f"| {s['import']:.2f} | {s['cold_call']:.2f} | {s['cold_warm_up']:.2f} | {s['cold_warm_up_batch']:.2f} "
          f"| {s['cached_call']:.2f} | {s['cached_process']:.2f} |")
    robots = {}
    for name, urdf in ROBOTS.items():
        robot = cd.from_urdf(urdf, mimic="independent")
        robot.warm_up(batch=True)
        robot.fast.warm_up(batch=True)
        robots[name] = (robot, PinPair(robot, urdf))
    per_call_table(robots, a.repeat)
    batch_table(robots, a.batch, max(3, a.repeat // 3))
    puma_row(a.repeat)
    scaling_table(a.batch, a.repeat)


if __name__ == "__main__":
    main()
