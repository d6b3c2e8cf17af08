"""How much of a batch of dynamics derivatives is writing fresh output memory.

    python bench/derivatives_memory.py [--batch 10000] [--repeat 5]

For each robot of ``bench/derivatives.py`` and ``bench/floating_derivatives.py``
and each quantity (d ID: two (n, n) outputs per sample, d FD: three), times the
compiled sample loop itself, serial and parallel (both forced), writing into
output arrays allocated once and reused (memory already mapped) and into
fresh ``np.empty`` arrays on every call (the kernel's first write faults every
page in, as a ``Robot`` call does).  Prints a Markdown table for
docs/performance.md: µs per sample, best of ``--repeat``; "fresh − reused" is
the cost of the new memory.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import composedyn as cd
from composedyn.dynamics.compiled import declare
from composedyn.dynamics.compiled import fd_derivatives as FD
from derivatives import ROBOTS
from floating_derivatives import ROBOTS as FLOATING
from timing import machine


def best(f, repeat: int) -> float:
    """Smallest wall-clock seconds of ``repeat`` calls of f."""
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def loops(N: int):
    """Per robot: (name, n, {quantity: (outputs, call(parallel, outs))}): the declared batch loops of the
    derivatives (a floating robot's on its tree) on N random states, friction off."""
    rng = np.random.default_rng(0)
    robots = []
    for name, urdf in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.from_urdf(urdf, mimic="independent")
        robots.append((name, robot, rng.uniform(-1, 1, (N, robot.nq))))
    for name, urdf in FLOATING.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.load(urdf, floating=True)
        robots.append((name, robot, robot.random_configuration(size=N, seed=1)))
    for name, robot, Q in robots:
        V, X = rng.uniform(-1, 1, (2, N, robot.nv))
        qty = {}
        for label, q, k in (("d ID", FD.INVERSE_DYNAMICS_DERIVATIVES, 2), ("d FD", FD.FORWARD_DYNAMICS_DERIVATIVES, 3)):
            model = robot.data.arrays.of(q)
            qty[label] = (k, lambda parallel, outs, q=q, model=model: declare.run_batch(
                q, model, (Q, V, X), options=(0,), number=0.0, results=tuple(outs), parallel=parallel))
        yield name, robot.nv, qty


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    N = a.batch
    print(f"Machine: {machine()}\n")
    print(f"### Batch of {N} samples: compiled loop, µs per sample (best of {a.repeat})\n")
    print("| robot | n | quantity | output KB / sample | serial, reused | serial, fresh | parallel, reused "
          "| parallel, fresh | fresh − reused (parallel) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, n, qty in loops(N):
        for q, (k, call) in qty.items():
            outs = [np.empty((N, n, n)) for _ in range(k)]
            t = {}
            for kind, parallel in (("serial", False), ("parallel", True)):
                call(parallel, outs)  # compile or load, map the reused outputs
                t[kind, "reused"] = best(lambda: call(parallel, outs), a.repeat) / N * 1e6
                t[kind, "fresh"] = best(lambda: call(parallel, [np.empty((N, n, n)) for _ in range(k)]),
                                        a.repeat) / N * 1e6
            print(f"| {name} | {n} | {q} | {k * n * n * 8 / 1024:.1f} | {t['serial', 'reused']:.2f} "
                  f"| {t['serial', 'fresh']:.2f} | {t['parallel', 'reused']:.2f} | {t['parallel', 'fresh']:.2f} "
                  f"| {t['parallel', 'fresh'] - t['parallel', 'reused']:.2f} |")


if __name__ == "__main__":
    main()
