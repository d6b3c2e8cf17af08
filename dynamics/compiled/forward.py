"""Compiled forward dynamics: qdd = M(q)^-1 (tau - h), by CRBA + Cholesky.

The ``Robot`` and ``robot.fast`` run the O(n) articulated-body kernel
(:mod:`.aba`, 1.5-2.9x faster than this from UR5 to Talos); ``forward_*`` stay
as an independent second compiled path that ``tests/test_compiled_aba.py``
checks ABA against, and :func:`cholesky_solve` serves ``dispatch.solve_mass``.

``cholesky_solve`` factorises in place and reports failure (M not positive
definite, or NaN) by its return value, so that the caller can raise the same
``ModelError`` as :func:`composedyn.dynamics.reference.forward.solve_mass`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.loops import serial_and_parallel
from composedyn.dynamics.compiled.layout import BLOCKS, DAMP, FRIC
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into


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


@njit(cache=True)
def forward_one(im, fm, q, qd, tau, fw, fric, smooth, out):
    """qdd (n,) into ``out``; returns 0, or 1 if M(q) is not positive definite.

    M includes the armature.  fric: 1 subtracts damping qd + friction sgn(qd),
    with sgn(x) = tanh(x / smooth) when smooth > 0.  fw: (n, 6) world forces or (0, 6).
    """
    n = q.shape[0]
    wr, wc = np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH))
    return forward_into(im, fm, q, qd, tau, fw, fric, smooth, out, wr, wc, np.empty((n, n)), np.empty(n))


@njit(cache=True)
def forward_into(im, fm, q, qd, tau, fw, fric, smooth, out, wr, wc, M, rhs):
    """:func:`forward_one` with caller-provided scratch: ``wr`` (n + 1, RNEA_SCRATCH),
    ``wc`` (n, CRBA_SCRATCH), M (n, n), rhs (n,), all C-contiguous (the kernels called
    here then reuse their compiled versions)."""
    n = q.shape[0]
    for i in range(n):
        out[i] = 0.0
    rnea_into(im, fm, q, qd, out, fw, 1, 0, rhs, wr)
    for i in range(n):
        x = qd[i]
        h = rhs[i]
        if fric:
            if smooth > 0.0:
                sgn = math.tanh(x / smooth)
            else:
                sgn = 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
            h += fm[i, DAMP] * x + fm[i, FRIC] * sgn
        rhs[i] = tau[i] - h
    crba_into(im, fm, q, 1, M, wc)
    return cholesky_solve(M, rhs, out)


def _forward_loop(im, fm, Q, QD, TAU, FW, fric, smooth, OUT, STATUS):
    """Samples (N, n) -> OUT (N, n); STATUS (N,) int: 1 where M is not positive definite."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    none = np.empty((0, 6))
    for b in prange(blocks):
        wr, wc = np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH))
        M, rhs = np.empty((n, n)), np.empty(n)
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            f = FW[s] if FW.shape[0] > 0 else none
            STATUS[s] = forward_into(im, fm, Q[s], QD[s], TAU[s], f, fric, smooth, OUT[s], wr, wc, M, rhs)


def _solve_loop(M, B, X, STATUS):
    """Batched Cholesky solve of M (N, n, n) X = B (N, n); M is copied per sample."""
    for s in prange(M.shape[0]):
        L = M[s].copy()
        STATUS[s] = cholesky_solve(L, B[s], X[s])


forward_serial, forward_parallel = serial_and_parallel(_forward_loop)
solve_serial = serial_and_parallel(_solve_loop)[0]
