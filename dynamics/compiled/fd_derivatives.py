"""Compiled forward-dynamics derivatives.

Forward dynamics qdd = FD(q, qd, tau) satisfies ID(q, qd, FD(q, qd, tau)) = tau,
so d qdd / d x = -M^-1 d tau / d x at qdd = FD (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018, Sec. V).
:func:`fd_derivatives_into` chains the existing kernels: the CRBA (M with
armature) and its tree-sparse factorisation M = L^T L (:mod:`.ltl`); qdd =
M^-1 (tau - h - friction) with the bias h from the RNEA at zero acceleration
(cheaper than a separate articulated-body pass, since the factor is needed
anyway); :func:`.derivatives.derivatives_into` (d tau / d q, d tau / d qd at
that qdd); the solves for -M^-1 d tau / d x and M^-1.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.derivatives import derivatives_into
from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.joint import joint_friction
from composedyn.dynamics.compiled.layout import BLOCKS, NO_FW
from composedyn.dynamics.compiled.loops import serial_and_parallel
from composedyn.dynamics.compiled.ltl import ltl_factor, ltl_solve_columns
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True)
def fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wa, wc, wd, L):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into ``aq``, ``aqd``, ``minv`` (qdd into ``qdd``).

    fric: 1 includes friction (tanh Coulomb model when smooth > 0).  Scratch:
    wa (n + 1, >= rnea SCRATCH columns), wc (n, crba SCRATCH), wd (n, derivatives
    SCRATCH), L (n, n).  Returns 0, or 1 when M(q) is not positive definite.
    """
    n = q.shape[0]
    crba_into(im, fm, q, 1, L, wc)
    if ltl_factor(im, L):
        return 1
    for i in range(n):  # aq[0]: zero accelerations (aq is written below)
        aq[0, i] = 0.0
    rnea_into(im, fm, q, qd, aq[0], NO_FW, 1, 0, qdd, wa)  # the bias h, in qdd
    for i in range(n):
        qdd[i] = tau[i] - qdd[i] - (joint_friction(fm, i, qd[i], smooth) if fric else 0.0)
    ltl_solve_columns(im, L, qdd.reshape((n, 1)), 1.0)
    derivatives_into(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, fric, smooth, aq, aqd, wd)
    ltl_solve_columns(im, L, aq, -1.0)
    ltl_solve_columns(im, L, aqd, -1.0)
    for i in range(n):
        for j in range(n):
            minv[i, j] = 1.0 if i == j else 0.0
    ltl_solve_columns(im, L, minv, 1.0)
    for i in range(n):  # exact symmetry
        for j in range(i):
            x = 0.5 * (minv[i, j] + minv[j, i])
            minv[i, j] = x
            minv[j, i] = x
    return 0


@njit(cache=True)
def fd_derivatives_one(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
    """:func:`fd_derivatives_into` with its own scratch; returns its status."""
    n = q.shape[0]
    return fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, np.empty(n),
                               np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH)),
                               np.empty((n, DER_SCRATCH)), np.empty((n, n)))


def _fd_derivatives_loop(im, fm, Q, QD, TAU, fric, smooth, AQ, AQD, MINV, STATUS):
    """Samples (N, n) -> AQ, AQD, MINV (N, n, n); STATUS (N,) 1 where M is not positive definite."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        qdd, L = np.empty(n), np.empty((n, n))
        wa, wc, wd = np.empty((n + 1, RNEA_SCRATCH)), np.empty((n, CRBA_SCRATCH)), np.empty((n, DER_SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = fd_derivatives_into(im, fm, Q[s], QD[s], TAU[s], fric, smooth, AQ[s], AQD[s], MINV[s],
                                            qdd, wa, wc, wd, L)


fd_derivatives_serial, fd_derivatives_parallel = serial_and_parallel(_fd_derivatives_loop)
