"""Compiled Cholesky factorisation and solve, for kernels that hold a mass matrix.

Forward dynamics runs the articulated-body kernel (:mod:`.aba`); the
closed-chain kernel (:mod:`.closed`, reduced mass matrix) and the
forward-dynamics derivatives (:mod:`.fd_derivatives`, M^-1) factorise a mass
matrix here.  ``cholesky_factor`` and ``cholesky_solve`` work in place and
report failure (M not positive definite, or NaN / inf) by their return value,
so that the caller can fall back to the NumPy reference, which raises the
``ModelError`` of :func:`composedyn.dynamics.reference.forward.solve_mass`.
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit


@njit(cache=True)
def cholesky_factor(M):
    """Lower Cholesky factor of symmetric M (n, n), in place in its lower triangle.

    Returns 0 on success, 1 when a pivot is not positive and finite (M not
    positive definite, or NaN / inf in it).
    """
    n = M.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not (s > 0.0 and s < math.inf):
            return 1
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            t = M[i, j]
            for k in range(j):
                t -= M[i, k] * M[j, k]
            M[i, j] = t / d
    return 0


@njit(cache=True)
def cholesky_solve(M, b, x):
    """Solve M x = b for symmetric positive-definite M (n, n), overwritten by its factor L.

    Returns 0 on success, 1 when :func:`cholesky_factor` fails (x is then undefined).
    """
    n = b.shape[0]
    if cholesky_factor(M):
        return 1
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
