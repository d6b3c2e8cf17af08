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
from composedyn.dynamics.compiled import derivatives as D
from composedyn.dynamics.compiled import fd_derivatives as FD
from composedyn.dynamics.compiled import floating_derivatives as F
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
    """Per robot: (name, n, {quantity: (serial, parallel, outputs, call(loop, outs))})."""
    rng = np.random.default_rng(0)
    nf, npm = np.empty((0, 1, 6)), np.empty((0, 1, 9))
    for name, urdf in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.from_urdf(urdf, mimic="independent")
        im, fm = robot._threads.arrays.bodies
        n = robot.dof
        Q, QD, X = rng.uniform(-1, 1, (3, N, n))
        st = np.zeros(N, dtype=np.int64)
        yield name, n, {
            "d ID": (D.derivatives_serial, D.derivatives_parallel, 2,
                     lambda f, o: f(im, fm, Q, QD, X, nf, npm, 1, 0, 0.0, *o)),
            "d FD": (FD.fd_derivatives_serial, FD.fd_derivatives_parallel, 3,
                     lambda f, o: f(im, fm, Q, QD, X, 0, 0.0, *o, st)),
        }
    for name, urdf in FLOATING.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            robot = cd.load(urdf, floating=True)
        (im, fm), bf = robot._threads.arrays.bodies, robot._threads.arrays.base
        n = robot.nv
        Q = robot.random_configuration(size=N, seed=1)
        V, X = rng.normal(size=(2, N, n))
        st = np.zeros(N, dtype=np.int64)
        yield name, n, {
            "d ID": (F.inverse_serial, F.inverse_parallel, 2,
                     lambda f, o: f(im, fm, bf, Q, V, X, 0, 0.0, *o, st)),
            "d FD": (F.forward_serial, F.forward_parallel, 3,
                     lambda f, o: f(im, fm, bf, Q, V, X, 0, 0.0, *o, st)),
        }


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
        for q, (serial, parallel, k, call) in qty.items():
            outs = [np.empty((N, n, n)) for _ in range(k)]
            t = {}
            for kind, loop in (("serial", serial), ("parallel", parallel)):
                call(loop, outs)  # compile or load, map the reused outputs
                t[kind, "reused"] = best(lambda: call(loop, outs), a.repeat) / N * 1e6
                t[kind, "fresh"] = best(lambda: call(loop, [np.empty((N, n, n)) for _ in range(k)]),
                                        a.repeat) / N * 1e6
            print(f"| {name} | {n} | {q} | {k * n * n * 8 / 1024:.1f} | {t['serial', 'reused']:.2f} "
                  f"| {t['serial', 'fresh']:.2f} | {t['parallel', 'reused']:.2f} | {t['parallel', 'fresh']:.2f} "
                  f"| {t['parallel', 'fresh'] - t['parallel', 'reused']:.2f} |")


if __name__ == "__main__":
    main()
