"""Compiled forward-dynamics derivatives.

Forward dynamics qdd = FD(q, qd, tau) satisfies ID(q, qd, FD(q, qd, tau)) = tau,
so d qdd / d x = -M^-1 d tau / d x at qdd = FD (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018, Sec. V).
:func:`fd_derivatives_into` chains the existing kernels: the CRBA (M with
armature) and its Cholesky factor L, the RNEA at qdd = 0 (the bias h), then
qdd = M^-1 (tau - h - friction) by the factor (cheaper than a separate
articulated-body pass: the factor is needed anyway, and the RNEA costs half of
the ABA), :func:`.derivatives.derivatives_into` (d tau / d q, d tau / d qd at
that qdd), and one triangular solve on the 3 n columns of -d tau / d q,
-d tau / d qd and the identity (-M^-1 d tau / d x and M^-1).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.derivatives import derivatives_into
from composedyn.dynamics.compiled.forward import cholesky_factor
from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.joint import joint_friction
from composedyn.dynamics.compiled.layout import BLOCKS, NO_FW
from composedyn.dynamics.compiled.loops import serial_and_parallel
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True, fastmath={"contract"})
def _solve_columns(L, X, scale):
    """X := scale * M^-1 X with M = L L^T: forward then back substitution, row by row on
    all columns at once (contiguous inner loops)."""
    n, m = L.shape[0], X.shape[1]
    for i in range(n):  # L Y = scale X
        for c in range(m):
            X[i, c] *= scale
        for k in range(i):
            lik = L[i, k]
            for c in range(m):
                X[i, c] -= lik * X[k, c]
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d
    for j in range(n):  # L^T Z = Y
        i = n - 1 - j
        for k in range(i + 1, n):
            lki = L[k, i]
            for c in range(m):
                X[i, c] -= lki * X[k, c]
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d


@njit(cache=True)
def fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wr, wc, wd, L, X):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into ``aq``, ``aqd``, ``minv``.

    fric: 1 includes friction (tanh Coulomb model when smooth > 0).  Scratch:
    qdd (2, n) (row 1: the accelerations), wr (n + 1, rnea SCRATCH), wc (n, crba
    SCRATCH), wd (n, derivatives SCRATCH), L (n, n), X (n, 3 n).  Returns 0, or 1
    when M(q) is not positive definite.
    """
    n = q.shape[0]
    crba_into(im, fm, q, 1, L, wc)
    if cholesky_factor(L):
        return 1
    z, a = qdd[0], qdd[1]
    for i in range(n):
        z[i] = 0.0
    rnea_into(im, fm, q, qd, z, NO_FW, 1, 0, a, wr)  # h = C qd + g
    for i in range(n):  # tau - h - damping qd - friction sgn(qd) (or tanh(qd / smooth))
        x = tau[i] - a[i]
        if fric:
            x -= joint_friction(fm, i, qd[i], smooth)
        a[i] = x
    _solve_columns(L, a.reshape((n, 1)), 1.0)  # qdd = M^-1 (tau - h - friction), as one column
    derivatives_into(im, fm, q, qd, a, NO_FW, _NO_P, 1, fric, smooth, aq, aqd, wd)
    for i in range(n):  # X = [-d tau / d q, -d tau / d qd, 1]: one solve on 3 n columns
        for j in range(n):
            X[i, j], X[i, n + j], X[i, 2 * n + j] = -aq[i, j], -aqd[i, j], 1.0 if i == j else 0.0
    _solve_columns(L, X, 1.0)
    for i in range(n):
        for j in range(n):
            aq[i, j], aqd[i, j] = X[i, j], X[i, n + j]
    for i in range(n):  # M^-1, exactly symmetric
        for j in range(i + 1):
            x = 0.5 * (X[i, 2 * n + j] + X[j, 2 * n + i])
            minv[i, j] = x
            minv[j, i] = x
    return 0


@njit(cache=True)
def fd_derivatives_one(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
    """:func:`fd_derivatives_into` with its own scratch; returns its status."""
    n = q.shape[0]
    return fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, np.empty((2, n)),
                               np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH)),
                               np.empty((n, DER_SCRATCH)), np.empty((n, n)), np.empty((n, 3 * n)))


def _fd_derivatives_loop(im, fm, Q, QD, TAU, fric, smooth, AQ, AQD, MINV, STATUS):
    """Samples (N, n) -> AQ, AQD, MINV (N, n, n); STATUS (N,) 1 where M is not positive definite."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        qdd, L, X = np.empty((2, n)), np.empty((n, n)), np.empty((n, 3 * n))
        wr, wc, wd = np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH)), np.empty((n, DER_SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = fd_derivatives_into(im, fm, Q[s], QD[s], TAU[s], fric, smooth, AQ[s], AQD[s], MINV[s],
                                            qdd, wr, wc, wd, L, X)


fd_derivatives_serial, fd_derivatives_parallel = serial_and_parallel(_fd_derivatives_loop)
