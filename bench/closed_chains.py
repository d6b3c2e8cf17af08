"""Speed of closed-chain dynamics (compiled ``ClosedChain`` path) against its targets, in one run.

    python bench/closed_chains.py [--repeat 15]

Prints Markdown tables (for docs/performance.md, "Closed chains"):

1. per call (µs, median of interleaved repeats) of the four-bar's forward and inverse dynamics
   through ``ClosedChain`` (independent coordinates in, the loops closed inside) -- at one state
   (the closure starts at the solution) and along a path of 1 ms steps at qd (the closure takes
   Newton steps from the previous sample, as in a simulation) -- against the
   spanning tree's ``Robot.forward_dynamics`` (ABA) at the same state, and Pinocchio's
   ``constraintDynamics`` (one CONTACT_3D constraint) against its ``aba`` on the same URDF;
   the same for the Delta; the NumPy reference path for comparison;
2. a 5 s simulation of the four-bar (``cd.simulate``, DOP853, rtol 1e-8), wall time;
3. the targets: four-bar FD <= 4x the tree's FD, 5 s simulation < 0.5 s, Delta ID < 30 µs;
4. the same mechanisms on a ``TreeRobot`` (a ``TreeClosedChain``, the class that takes joints of
   several coordinates: NumPy over the tree's compiled frame calls) against the compiled
   ``ClosedChain``, per call.

Speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.testing.pinocchio_oracle import PinPair, loop_constraints, pin


def per_call(funcs: dict, repeat: int, number: int) -> dict:
    """Median µs per call of each function, timed in interleaved rounds."""
    times = {k: [] for k in funcs}
    for f in funcs.values():
        f()
    for _ in range(repeat):
        for k, f in funcs.items():
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[k].append((time.perf_counter() - t0) / number * 1e6)
    return {k: float(np.median(v)) for k, v in times.items()}


def pinocchio_pair(ch):
    pp = PinPair(ch.robot, ch.robot.model.source)
    return (pp, *loop_constraints(pp, ch.robot, ch.loops))


def chain_row(name: str, repeat: int, number: int) -> dict:
    ch = cd.load_closed_chain(name)
    rng = np.random.default_rng(0)
    q = ch._last[ch._ind] + rng.uniform(-0.05, 0.05, ch.dof)
    qd, qdd = rng.uniform(-1, 1, (2, ch.dof))
    tau = ch.inverse_dynamics(q, qd, qdd)
    qa, qda = ch.assemble(q), ch.velocities(q, qd)
    tt = np.zeros(ch.robot.dof)
    tt[ch._ind] = tau
    robot = ch.robot
    pp, cms, cds = pinocchio_pair(ch)
    pq, pv, ptau = pp.q(qa), pp.v(qda), pp.v(tt)
    settings = pin.ProximalSettings(1e-12, 1e-8, 20)
    path = [q + 1e-3 * s * qd for s in range(100)] + [q + 1e-3 * s * qd for s in range(100, 0, -1)]
    step = iter(int(i) for i in np.resize(np.arange(len(path)), 10**8))

    funcs = {
        "cc_fd": lambda: ch.forward_dynamics(q, qd, tau),
        "cc_fd_path": lambda: ch.forward_dynamics(path[next(step)], qd, tau),
        "cc_id": lambda: ch.inverse_dynamics(q, qd, qdd),
        "tree_fd": lambda: robot.forward_dynamics(qa, qda, tt),
        "pin_cd": lambda: pin.constraintDynamics(pp.model, pp.data, pq, pv, ptau, cms, cds, settings),
        "pin_aba": lambda: pin.aba(pp.model, pp.data, pq, pv, ptau),
    }
    r = per_call(funcs, repeat, number)
    dispatch.set_backend("numpy")
    try:
        r.update(per_call({"ref_fd": lambda: ch.forward_dynamics(q, qd, tau)},
                          max(3, repeat // 5), max(5, number // 50)))
    finally:
        dispatch.set_backend("numba")
    return r


def simulation_seconds(repeat: int) -> tuple[float, int]:
    ch = cd.load_closed_chain("fourbar")
    t = np.linspace(0.0, 5.0, 251)
    cd.simulate(ch, [-1.2], [0.0], t[:3])
    out = []
    for _ in range(max(3, repeat // 3)):
        t0 = time.perf_counter()
        sim = cd.simulate(ch, [-1.2], [0.0], t)
        out.append(time.perf_counter() - t0)
    return float(np.median(out)), sim.nfev


def tree_row(name: str, repeat: int, number: int) -> dict:
    """The mechanism ``name`` as a ``TreeClosedChain`` against the compiled ``ClosedChain`` (same states)."""
    from composedyn.tree_robot import TreeRobot

    ch = cd.load_closed_chain(name)
    tree = cd.ClosedChain(TreeRobot(ch.robot.graph), ch.loops, ch.joint_names,
                          guess=dict(zip(ch.robot.joint_names, ch.assembly)))
    rng = np.random.default_rng(0)
    q = ch._last[ch._ind] + rng.uniform(-0.05, 0.05, ch.dof)
    qd, qdd = rng.uniform(-1, 1, (2, ch.dof))
    tau = ch.inverse_dynamics(q, qd, qdd)
    gap = float(np.abs(tree.forward_dynamics(q, qd, tau) - qdd).max())
    path = [q + 1e-3 * s * qd for s in range(100)] + [q + 1e-3 * s * qd for s in range(100, 0, -1)]
    step = iter(int(i) for i in np.resize(np.arange(len(path)), 10**8))
    funcs = {"cc_fd": lambda: ch.forward_dynamics(q, qd, tau), "tree_fd": lambda: tree.forward_dynamics(q, qd, tau),
             "tree_fd_path": lambda: tree.forward_dynamics(path[next(step)], qd, tau),
             "tree_id": lambda: tree.inverse_dynamics(q, qd, qdd)}
    return {**per_call(funcs, repeat, number), "gap": gap}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=2000)
    args = ap.parse_args(argv)
    rows = {name: chain_row(name, args.repeat, args.number) for name in ("fourbar", "delta")}
    print("| mechanism | ClosedChain FD | FD along a path | ClosedChain ID | tree FD (ABA) | FD / tree FD "
          "| path FD / tree FD | NumPy reference FD | Pinocchio constraintDynamics | Pinocchio aba | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['cc_fd']:.2f} | {r['cc_fd_path']:.2f} | {r['cc_id']:.2f} | {r['tree_fd']:.2f} "
              f"| {r['cc_fd'] / r['tree_fd']:.1f} | {r['cc_fd_path'] / r['tree_fd']:.1f} "
              f"| {r['ref_fd']:.0f} | {r['pin_cd']:.2f} | {r['pin_aba']:.2f} | {r['pin_cd'] / r['pin_aba']:.1f} |")
    sim_s, nfev = simulation_seconds(args.repeat)
    f, d = rows["fourbar"], rows["delta"]
    print()
    print("| target | measured | met |")
    print("|---|---|---|")
    print(f"| four-bar FD <= 4x the tree's FD (one state) | {f['cc_fd'] / f['tree_fd']:.1f}x "
          f"| {f['cc_fd'] <= 4 * f['tree_fd']} |")
    print(f"| four-bar FD <= 4x the tree's FD (along a path) | {f['cc_fd_path'] / f['tree_fd']:.1f}x "
          f"| {f['cc_fd_path'] <= 4 * f['tree_fd']} |")
    print(f"| 5 s four-bar simulation < 0.5 s | {sim_s:.3f} s ({nfev} right-hand sides) | {sim_s < 0.5} |")
    print(f"| Delta ID < 30 µs | {d['cc_id']:.1f} µs | {d['cc_id'] < 30} |")
    trees = {name: tree_row(name, max(3, args.repeat // 3), max(10, args.number // 40)) for name in rows}
    print()
    print("| mechanism | TreeClosedChain FD | FD along a path | TreeClosedChain ID | ClosedChain FD | ratio "
          "| max |FD - ClosedChain's| |")
    print("|---|---|---|---|---|---|---|")
    for name, r in trees.items():
        print(f"| {name} | {r['tree_fd']:.0f} | {r['tree_fd_path']:.0f} | {r['tree_id']:.0f} | {r['cc_fd']:.2f} "
              f"| {r['tree_fd'] / r['cc_fd']:.0f} | {r['gap']:.1e} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
