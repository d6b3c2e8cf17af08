"""Compiled Cholesky solve of M x = b, for callers that have the mass matrix already.

Forward dynamics runs the articulated-body kernel (:mod:`.aba`); this module
serves ``solve_mass`` of :mod:`composedyn.dynamics.dispatch` (mimic-reduced
models, whose M is projected before the solve).

``cholesky_solve`` factorises in place and reports failure (M not positive
definite, or NaN) by its return value, so that the caller can raise the same
``ModelError`` as :func:`composedyn.dynamics.reference.forward.solve_mass`.
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.loops import serial_and_parallel


@njit(cache=True)
def cholesky_solve(M, b, x):
    """Solve M x = b for symmetric positive-definite M (n, n), overwritten by its factor L.

    Returns 0 on success, 1 when a pivot is not positive (x is then undefined).
    """
    n = b.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not s > 0.0:
            return 1
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            t = M[i, j]
            for k in range(j):
                t -= M[i, k] * M[j, k]
            M[i, j] = t / d
    for i in range(n):  # L y = b
        t = b[i]
        for k in range(i):
            t -= M[i, k] * x[k]
        x[i] = t / M[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        t = x[i]
        for k in range(i + 1, n):
            t -= M[k, i] * x[k]
        x[i] = t / M[i, i]
    return 0


def _solve_loop(M, B, X, STATUS):
    """Batched Cholesky solve of M (N, n, n) X = B (N, n); M is copied per sample."""
    for s in prange(M.shape[0]):
        L = M[s].copy()
        STATUS[s] = cholesky_solve(L, B[s], X[s])


solve_serial = serial_and_parallel(_solve_loop)[0]
