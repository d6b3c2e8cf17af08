"""Time composedyn's dynamics against Pinocchio, measured in the same run.

    python bench/dynamics.py [--batch 10000] [--repeat 5]

For the UR5 and Panda URDFs of example-robot-data (test extra; Panda
fingers as independent joints), and a random 30-joint chain and tree
(``tests/random_robots.py``), times a single call and a batch of ``--batch``
random samples of inverse dynamics, the mass matrix and forward dynamics,
through the public ``Robot`` facade (compiled or NumPy backend, see
``composedyn.dynamics.dispatch``; ``COMPOSEDYN_BACKEND=numpy`` selects NumPy)
and through the NumPy kernels directly (RNEA, CRBA, ABA, CRBA + Cholesky: the
last two decide the NumPy forward-dynamics default).  composedyn runs the batch as one vectorised call;
Pinocchio is called in a Python loop over the samples (its Python API has no
batch).  Each line prints composedyn's time, Pinocchio's time and their ratio
(> 1: composedyn slower): best of ``--repeat`` rounds for the batch and of
4 x ``--repeat`` rounds for single calls, composedyn and Pinocchio timed in
alternation so that both see the same load.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import composedyn as cd
from composedyn.dynamics.dispatch import backend
from composedyn.dynamics.reference.aba import aba
from composedyn.dynamics.reference.crba import crba
from composedyn.dynamics.reference.forward import solve_mass
from composedyn.dynamics.reference.rnea import rnea
from composedyn.testing.pinocchio_oracle import PinPair, erd_urdf, pin
from composedyn.testing.random_robots import random_urdf


def _run(f, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        f()
    return (time.perf_counter() - t0) / number


def paired_times(f, g, repeat: int, nf: int = 1, ng: int = 1) -> tuple[float, float]:
    """Best wall time (s) of one call of ``f`` and of ``g``, timed in alternation
    (``repeat`` rounds of ``nf`` calls of f and ``ng`` calls of g) so that both
    see the same machine load."""
    f(), g()  # warm-up (and compilation)
    bf = bg = np.inf
    for r in range(repeat):
        if r % 2:
            bg, bf = min(bg, _run(g, ng)), min(bf, _run(f, nf))
        else:
            bf, bg = min(bf, _run(f, nf)), min(bg, _run(g, ng))
    return bf, bg


def crba_cholesky(model, q, qd, tau):
    """Forward dynamics by CRBA + Cholesky (friction-free, armature included)."""
    M = crba(model, q)
    idx = np.arange(model.n)
    M[..., idx, idx] += model.armature
    return solve_mass(model, M, tau - rnea(model, q, qd, np.zeros_like(q)))


def bench_robot(label: str, urdf: str, batch: int, repeat: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = cd.from_urdf(urdf, mimic="independent")  # Panda fingers as independent joints
    pp = PinPair(robot, urdf)
    m, pm, pd = robot.model, pp.model, pp.data
    rng = np.random.default_rng(0)
    Q, QD, X = rng.uniform(-1.0, 1.0, (3, batch, robot.dof))
    q, qd, x = Q[0], QD[0], X[0]
    P = [(pp.q(Q[k]), pp.v(QD[k]), pp.v(X[k])) for k in range(batch)]
    qp, vp, xp = P[0]
    pin_id, pin_m, pin_fd = (lambda a, b, c: pin.rnea(pm, pd, a, b, c)), (lambda a, b, c: pin.crba(pm, pd, a)), \
        (lambda a, b, c: pin.aba(pm, pd, a, b, c))
    cases = {
        f"ID  facade ({backend()})": (lambda Q, QD, X: robot.inverse_dynamics(Q, QD, X, friction=False), pin_id),
        "ID  NumPy RNEA": (lambda Q, QD, X: rnea(m, Q, QD, X), pin_id),
        f"M   facade ({backend()})": (lambda Q, QD, X: robot.mass_matrix(Q), pin_m),
        "M   NumPy CRBA": (lambda Q, QD, X: crba(m, Q), pin_m),
        f"FD  facade ({backend()})": (lambda Q, QD, X: robot.forward_dynamics(Q, QD, X, friction=False), pin_fd),
        "FD  NumPy ABA": (lambda Q, QD, X: aba(m, Q, QD, X), pin_fd),
        "FD  NumPy CRBA+Cholesky": (lambda Q, QD, X: crba_cholesky(m, Q, QD, X), pin_fd),
    }
    print(f"\n{label} (n = {robot.dof}); batch = {batch} samples; ratio = composedyn / Pinocchio")
    print(f"  {'':26s} {'single call':>31s}   {'batch (Pinocchio: Python loop)':>33s}")
    print(f"  {'':26s} {'composedyn':>11s} {'Pinocchio':>10s} {'ratio':>8s}   "
          f"{'composedyn':>11s} {'Pinocchio':>11s} {'ratio':>8s}")
    for name, (ours, theirs) in cases.items():
        s1, s2 = paired_times(lambda: ours(q, qd, x), lambda: theirs(qp, vp, xp), 4 * repeat, 25, 500)

        def loop():
            for a, b, c in P:
                theirs(a, b, c)

        b1, b2 = paired_times(lambda: ours(Q, QD, X), loop, repeat)
        print(f"  {name:26s} {s1 * 1e6:9.1f}us {s2 * 1e6:8.2f}us {s1 / s2:8.1f}   "
              f"{b1 * 1e3:9.1f}ms {b2 * 1e3:9.1f}ms {b1 / b2:8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--vendor-only", action="store_true", help="UR5 and Panda only, no random 30-joint robots")
    args = ap.parse_args()
    print(f"composedyn {cd.__version__} (backend {backend()}), pinocchio {pin.__version__}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs; --repeat {args.repeat}")
    robots = [("UR5", erd_urdf("ur5")), ("Panda", erd_urdf("panda"))]
    if not args.vendor_only:
        robots += [("random chain", random_urdf(0, 30, p_branch=0.0, p_fixed=0.0)),
                   ("random tree", random_urdf(1, 30, p_fixed=0.2))]
    for label, urdf in robots:
        bench_robot(label, urdf, args.batch, args.repeat)


if __name__ == "__main__":
    main()
