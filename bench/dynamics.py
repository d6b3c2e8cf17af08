"""Time composedyn's dynamics against Pinocchio, measured in the same run.

    python bench/dynamics.py [--batch 10000] [--repeat 5]

For the UR5 and Panda URDFs of example-robot-data (test extra), times a
single call and a batch of ``--batch`` random samples of inverse dynamics
(RNEA), the mass matrix (CRBA) and forward dynamics (ABA, and CRBA +
Cholesky), through the public ``Robot`` facade and through the two forward
dynamics kernels directly.  composedyn runs the batch as one vectorised call;
Pinocchio is called in a Python loop over the samples (its Python API has no
batch).  Each line prints composedyn's time, Pinocchio's time and their ratio
(> 1: composedyn slower).  Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import composedyn as cd  # noqa: E402
from composedyn.dynamics.aba import aba  # noqa: E402
from composedyn.dynamics.crba import crba  # noqa: E402
from composedyn.dynamics.forward import solve_mass  # noqa: E402
from composedyn.dynamics.rnea import rnea  # noqa: E402
from pin_oracle import PinPair, erd_urdf, pin  # noqa: E402


def best_time(f, repeat: int, number: int = 1) -> float:
    """Best wall time of one call of ``f`` (s) over ``repeat`` runs of ``number`` calls."""
    f()  # warm-up
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def crba_cholesky(model, q, qd, tau):
    """Forward dynamics by CRBA + Cholesky (friction-free, armature included)."""
    M = crba(model, q)
    idx = np.arange(model.n)
    M[..., idx, idx] += model.armature
    return solve_mass(model, M, tau - rnea(model, q, qd, np.zeros_like(q)))


def bench_robot(key: str, batch: int, repeat: int) -> None:
    path = erd_urdf(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = cd.from_urdf(path)
    pp = PinPair(robot, path)
    m, pm, pd = robot.model, pp.model, pp.data
    rng = np.random.default_rng(0)
    Q, QD, X = rng.uniform(-1.0, 1.0, (3, batch, robot.dof))
    q, qd, x = Q[0], QD[0], X[0]
    P = [(pp.q(Q[k]), pp.v(QD[k]), pp.v(X[k])) for k in range(batch)]
    qp, vp, xp = P[0]
    cases = {
        "inverse dynamics": (
            lambda Q, QD, X: robot.inverse_dynamics(Q, QD, X, friction=False),
            lambda a, b, c: pin.rnea(pm, pd, a, b, c)),
        "mass matrix": (lambda Q, QD, X: robot.mass_matrix(Q), lambda a, b, c: pin.crba(pm, pd, a)),
        "forward dynamics (facade)": (
            lambda Q, QD, X: robot.forward_dynamics(Q, QD, X, friction=False),
            lambda a, b, c: pin.aba(pm, pd, a, b, c)),
        "forward dynamics, ABA kernel": (lambda Q, QD, X: aba(m, Q, QD, X), lambda a, b, c: pin.aba(pm, pd, a, b, c)),
        "forward dynamics, CRBA+Cholesky": (
            lambda Q, QD, X: crba_cholesky(m, Q, QD, X), lambda a, b, c: pin.aba(pm, pd, a, b, c)),
    }
    print(f"\n{key} (n = {robot.dof}), batch = {batch}")
    print(f"  {'quantity':34s} {'call':6s} {'composedyn':>12s} {'pinocchio':>12s} {'ratio':>8s}")
    for name, (ours, theirs) in cases.items():
        t1 = best_time(lambda: ours(q, qd, x), repeat, number=200)
        t2 = best_time(lambda: theirs(qp, vp, xp), repeat, number=2000)
        print(f"  {name:34s} {'single':6s} {t1 * 1e6:10.1f}us {t2 * 1e6:10.1f}us {t1 / t2:8.1f}")
        t1 = best_time(lambda: ours(Q, QD, X), repeat)

        def loop():
            for a, b, c in P:
                theirs(a, b, c)

        t2 = best_time(loop, repeat)
        print(f"  {name:34s} {'batch':6s} {t1 * 1e3:10.1f}ms {t2 * 1e3:10.1f}ms {t1 / t2:8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"composedyn {cd.__version__}, pinocchio {pin.__version__}, numpy {np.__version__}")
    for key in ("ur5", "panda"):
        bench_robot(key, args.batch, args.repeat)


if __name__ == "__main__":
    main()
