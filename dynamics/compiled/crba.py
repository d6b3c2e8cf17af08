"""Compiled composite-rigid-body algorithm (mass matrix) in body coordinates.

Featherstone's ``HandC`` without the bias part: composite inertias
IC_p += X_i^T IC_i X_i child -> parent, then for each body F = IC_i S_i,
M[i, i] = S_i . F, and F carried up the ancestors j gives M[i, j] = M[j, i] =
S_j . F.  An inertia is stored as (mass m, first moment h = m c, rotational
inertia Io about the body origin).  Same result as
:func:`composedyn.dynamics.crba.crba`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.joint import joint_transform, serial_and_parallel
from composedyn.dynamics.compiled.layout import ARM, AX, BLOCKS, H, IO, MASS

SCRATCH = 31


@njit(cache=True)
def _inertia_to_parent(X, ci, cp):
    """Add composite inertia row ci = (m, h, Io) of a child to its parent's cp (pose row X)."""
    m = ci[0]
    hr0 = X[0] * ci[1] + X[1] * ci[2] + X[2] * ci[3]
    hr1 = X[3] * ci[1] + X[4] * ci[2] + X[5] * ci[3]
    hr2 = X[6] * ci[1] + X[7] * ci[2] + X[8] * ci[3]
    p0, p1, p2 = X[9], X[10], X[11]
    diag = 2.0 * (hr0 * p0 + hr1 * p1 + hr2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    # T = Io R^T (T[k, c] = Io[k, :] . R[c, :]), then the upper triangle of R T, mirrored
    R0, R1, R2, R3, R4, R5, R6, R7, R8 = X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8]
    t00, t01, t02 = (ci[4] * R0 + ci[5] * R1 + ci[6] * R2, ci[4] * R3 + ci[5] * R4 + ci[6] * R5,
                     ci[4] * R6 + ci[5] * R7 + ci[6] * R8)
    t10, t11, t12 = (ci[7] * R0 + ci[8] * R1 + ci[9] * R2, ci[7] * R3 + ci[8] * R4 + ci[9] * R5,
                     ci[7] * R6 + ci[8] * R7 + ci[9] * R8)
    t20, t21, t22 = (ci[10] * R0 + ci[11] * R1 + ci[12] * R2, ci[10] * R3 + ci[11] * R4 + ci[12] * R5,
                     ci[10] * R6 + ci[11] * R7 + ci[12] * R8)
    # (R T)[r, c] - (hr_r p_c + p_r hr_c + m p_r p_c), plus diag on the diagonal
    a00 = R0 * t00 + R1 * t10 + R2 * t20 - 2.0 * hr0 * p0 - m * p0 * p0 + diag
    a11 = R3 * t01 + R4 * t11 + R5 * t21 - 2.0 * hr1 * p1 - m * p1 * p1 + diag
    a22 = R6 * t02 + R7 * t12 + R8 * t22 - 2.0 * hr2 * p2 - m * p2 * p2 + diag
    a01 = R0 * t01 + R1 * t11 + R2 * t21 - (hr0 * p1 + p0 * hr1 + m * p0 * p1)
    a02 = R0 * t02 + R1 * t12 + R2 * t22 - (hr0 * p2 + p0 * hr2 + m * p0 * p2)
    a12 = R3 * t02 + R4 * t12 + R5 * t22 - (hr1 * p2 + p1 * hr2 + m * p1 * p2)
    cp[4] += a00
    cp[5] += a01
    cp[6] += a02
    cp[7] += a01
    cp[8] += a11
    cp[9] += a12
    cp[10] += a02
    cp[11] += a12
    cp[12] += a22
    cp[0] += m
    cp[1] += hr0 + m * p0
    cp[2] += hr1 + m * p1
    cp[3] += hr2 + m * p2


@njit(cache=True)
def crba_one(im, fm, q, arm, out):
    """M(q) (n, n) into ``out`` for one sample; arm = 1 adds the armature on the diagonal."""
    crba_into(im, fm, q, arm, out, np.empty((q.shape[0], SCRATCH)))


@njit(cache=True)
def crba_into(im, fm, q, arm, out, w):
    """:func:`crba_one` with caller-provided scratch ``w`` (n, SCRATCH): per body the pose
    row 0:12, the composite inertia (m, h, Io) 12:25, a force 25:31."""
    n = q.shape[0]
    for i in range(n):
        joint_transform(fm, im[i, 1], i, q[i], w[i, 0:12])
        w[i, 12] = fm[i, MASS]
        for c in range(3):
            w[i, 13 + c] = fm[i, H + c]
        for c in range(9):
            w[i, 16 + c] = fm[i, IO + c]
    for i in range(n - 1, -1, -1):
        if im[i, 0] >= 0:
            _inertia_to_parent(w[i, 0:12], w[i, 12:25], w[im[i, 0], 12:25])
    for r in range(n):
        for c in range(n):
            out[r, c] = 0.0
    for i in range(n):
        ax0, ax1, ax2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
        m, h0, h1, h2 = w[i, 12], w[i, 13], w[i, 14], w[i, 15]
        if im[i, 1] == 0:  # F = IC (a, 0) = (Io a, a x h)
            n0 = w[i, 16] * ax0 + w[i, 17] * ax1 + w[i, 18] * ax2
            n1 = w[i, 19] * ax0 + w[i, 20] * ax1 + w[i, 21] * ax2
            n2 = w[i, 22] * ax0 + w[i, 23] * ax1 + w[i, 24] * ax2
            f0, f1, f2 = ax1 * h2 - ax2 * h1, ax2 * h0 - ax0 * h2, ax0 * h1 - ax1 * h0
            out[i, i] = ax0 * n0 + ax1 * n1 + ax2 * n2
        else:  # F = IC (0, a) = (h x a, m a)
            n0, n1, n2 = h1 * ax2 - h2 * ax1, h2 * ax0 - h0 * ax2, h0 * ax1 - h1 * ax0
            f0, f1, f2 = m * ax0, m * ax1, m * ax2
            out[i, i] = ax0 * f0 + ax1 * f1 + ax2 * f2
        if arm:
            out[i, i] += fm[i, ARM]
        j = i
        while im[j, 0] >= 0:  # F to the parent frame: (R n + p x R f, R f)
            F0 = w[j, 0] * f0 + w[j, 1] * f1 + w[j, 2] * f2
            F1 = w[j, 3] * f0 + w[j, 4] * f1 + w[j, 5] * f2
            F2 = w[j, 6] * f0 + w[j, 7] * f1 + w[j, 8] * f2
            p0, p1, p2 = w[j, 9], w[j, 10], w[j, 11]
            N0 = w[j, 0] * n0 + w[j, 1] * n1 + w[j, 2] * n2 + p1 * F2 - p2 * F1
            N1 = w[j, 3] * n0 + w[j, 4] * n1 + w[j, 5] * n2 + p2 * F0 - p0 * F2
            N2 = w[j, 6] * n0 + w[j, 7] * n1 + w[j, 8] * n2 + p0 * F1 - p1 * F0
            n0, n1, n2, f0, f1, f2 = N0, N1, N2, F0, F1, F2
            j = im[j, 0]
            if im[j, 1] == 0:
                x = fm[j, AX] * n0 + fm[j, AX + 1] * n1 + fm[j, AX + 2] * n2
            else:
                x = fm[j, AX] * f0 + fm[j, AX + 1] * f1 + fm[j, AX + 2] * f2
            out[i, j] = x
            out[j, i] = x


def _crba_loop(im, fm, Q, arm, OUT):
    """Samples Q (N, n) -> OUT (N, n, n), in blocks with one scratch array each."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w = np.empty((n, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            crba_into(im, fm, Q[s], arm, OUT[s], w)


crba_serial, crba_parallel = serial_and_parallel(_crba_loop)
