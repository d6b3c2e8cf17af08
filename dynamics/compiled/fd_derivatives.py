"""Compiled forward-dynamics derivatives.

Forward dynamics qdd = FD(q, qd, tau) satisfies ID(q, qd, FD(q, qd, tau)) = tau,
so d qdd / d x = -M^-1 d tau / d x at qdd = FD (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018, Sec. V).
:func:`fd_derivatives_into` chains the existing kernels: the articulated-body
kernel (qdd), :func:`.derivatives.derivatives_into` (d tau / d q, d tau / d qd
at that qdd), the mass matrix read off that kernel's composite inertias
(M[i, j] = S_j . IC_i S_i for j = i or an ancestor of i, plus the armature on the
diagonal: no CRBA pass), then the tree-sparse factorisation M = L^T L of
:mod:`.ltl`, its solves for -M^-1 d tau / d x and its inverse M^-1.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.derivatives import RI, S, _dot, _get, derivatives_into
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.layout import ARM, BLOCKS, NO_FW
from composedyn.dynamics.compiled.loops import serial_and_parallel
from composedyn.dynamics.compiled.ltl import ltl_factor, ltl_inverse, ltl_solve_columns

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True)
def fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wa, wd, L):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into ``aq``, ``aqd``, ``minv`` (qdd into ``qdd``).

    fric: 1 includes friction (tanh Coulomb model when smooth > 0).  Scratch:
    wa (n + 1, aba SCRATCH), wd (n, derivatives SCRATCH), L (n, n).  Returns 0, or 1 when M(q) is not positive definite.
    """
    n = q.shape[0]
    if aba_into(im, fm, q, qd, tau, NO_FW, fric, smooth, qdd, wa):
        return 1
    derivatives_into(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, fric, smooth, aq, aqd, wd)
    for i in range(n):  # the lower triangle of M (ltl_factor reads no other entry)
        ri = _get(wd, i, RI)
        j = i
        while j >= 0:
            L[i, j] = _dot(ri, _get(wd, j, S))
            j = im[j, 0]
        L[i, i] += fm[i, ARM]
    if ltl_factor(im, L):
        return 1
    ltl_solve_columns(im, L, aq, -1.0)
    ltl_solve_columns(im, L, aqd, -1.0)
    ltl_inverse(im, L, minv)
    return 0


@njit(cache=True)
def fd_derivatives_one(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
    """:func:`fd_derivatives_into` with its own scratch; returns its status."""
    n = q.shape[0]
    return fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, np.empty(n),
                               np.empty((n + 1, ABA_SCRATCH)), np.empty((n, DER_SCRATCH)), np.empty((n, n)))


def _fd_derivatives_loop(im, fm, Q, QD, TAU, fric, smooth, AQ, AQD, MINV, STATUS):
    """Samples (N, n) -> AQ, AQD, MINV (N, n, n); STATUS (N,) 1 where M is not positive definite."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        qdd, L = np.empty(n), np.empty((n, n))
        wa, wd = np.empty((n + 1, ABA_SCRATCH)), np.empty((n, DER_SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = fd_derivatives_into(im, fm, Q[s], QD[s], TAU[s], fric, smooth, AQ[s], AQD[s], MINV[s],
                                            qdd, wa, wd, L)


fd_derivatives_serial, fd_derivatives_parallel = serial_and_parallel(_fd_derivatives_loop)
