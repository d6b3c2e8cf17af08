"""Compiled Coriolis matrix in Christoffel form, world coordinates.

The algorithm of :mod:`composedyn.dynamics.coriolis` (Echeandia & Wensing
2021) written as loops: world motion subspaces S_i, velocities v_i,
dS_i/dt = v_i x S_i, spatial inertias I_i and B_i = 1/2 (v_i x* I_i -
I_i v_i x + A(I_i v_i)), their subtree sums IC, BC, then for each body d and
ancestor k: C[k, d] = S_k . (IC_d dS_d + BC_d S_d) and
C[d, k] = S_d . (IC_d dS_k + BC_d S_k).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.crba import _inertia_to_parent
from composedyn.dynamics.compiled.joint import compose, copy_pose, joint_transform, serial_and_parallel
from composedyn.dynamics.compiled.layout import AX, H, IO, MASS

# scratch columns per body
_XW, _S, _V, _SD, _IC, _BC = 0, 12, 18, 24, 30, 66
_WIDTH = 102


@njit(cache=True)
def _world_inertia(fm, i, Xw, row, I6):
    """Spatial inertia of body i about the world origin in world axes, I6 (6, 6); row: scratch (13,)."""
    for c in range(13):
        row[c] = 0.0
    body = np.empty(13)
    body[0] = fm[i, MASS]
    for c in range(3):
        body[1 + c] = fm[i, H + c]
    for c in range(9):
        body[4 + c] = fm[i, IO + c]
    _inertia_to_parent(Xw, body, row)
    m, h0, h1, h2 = row[0], row[1], row[2], row[3]
    for r in range(6):
        for c in range(6):
            I6[r, c] = 0.0
    for r in range(3):
        for c in range(3):
            I6[r, c] = row[4 + 3 * r + c]
        I6[3 + r, 3 + r] = m
    I6[0, 4], I6[0, 5], I6[1, 3], I6[1, 5], I6[2, 3], I6[2, 4] = -h2, h1, h2, -h0, -h1, h0
    for r in range(3):
        for c in range(3):
            I6[3 + r, c] = -I6[r, 3 + c]


@njit(cache=True)
def _skew_into(A, r0, c0, x0, x1, x2, sign):
    """A[r0:r0+3, c0:c0+3] = sign * skew(x)."""
    A[r0, c0], A[r0, c0 + 1], A[r0, c0 + 2] = 0.0, -sign * x2, sign * x1
    A[r0 + 1, c0], A[r0 + 1, c0 + 1], A[r0 + 1, c0 + 2] = sign * x2, 0.0, -sign * x0
    A[r0 + 2, c0], A[r0 + 2, c0 + 1], A[r0 + 2, c0 + 2] = -sign * x1, sign * x0, 0.0


@njit(cache=True)
def _b_matrix(v, I6, B, CF, CM, CB):
    """B = 1/2 (crf(v) I - I crm(v) + crf_bar(I v)) (6, 6); CF, CM, CB: scratch (6, 6)."""
    Iv = np.empty(6)
    for r in range(6):
        Iv[r] = 0.0
        for c in range(6):
            Iv[r] += I6[r, c] * v[c]
    for r in range(6):
        for c in range(6):
            CF[r, c], CM[r, c], CB[r, c] = 0.0, 0.0, 0.0
    _skew_into(CF, 0, 0, v[0], v[1], v[2], 1.0)
    _skew_into(CF, 0, 3, v[3], v[4], v[5], 1.0)
    _skew_into(CF, 3, 3, v[0], v[1], v[2], 1.0)
    _skew_into(CM, 0, 0, v[0], v[1], v[2], 1.0)
    _skew_into(CM, 3, 0, v[3], v[4], v[5], 1.0)
    _skew_into(CM, 3, 3, v[0], v[1], v[2], 1.0)
    _skew_into(CB, 0, 0, Iv[0], Iv[1], Iv[2], -1.0)
    _skew_into(CB, 0, 3, Iv[3], Iv[4], Iv[5], -1.0)
    _skew_into(CB, 3, 0, Iv[3], Iv[4], Iv[5], -1.0)
    for r in range(6):
        for c in range(6):
            acc = CB[r, c]
            for k in range(6):
                acc += CF[r, k] * I6[k, c] - I6[r, k] * CM[k, c]
            B[r, c] = 0.5 * acc


@njit(cache=True)
def _dot6(x, o, y):
    """x[o:o+6] . y"""
    return x[o] * y[0] + x[o + 1] * y[1] + x[o + 2] * y[2] + x[o + 3] * y[3] + x[o + 4] * y[4] + x[o + 5] * y[5]


@njit(cache=True)
def coriolis_one(im, fm, q, qd, out):
    """C(q, qd) (n, n) into ``out`` for one sample."""
    n = q.shape[0]
    w = np.empty((n, _WIDTH))
    X, row = np.empty(12), np.empty(13)
    M6 = np.empty((5, 6, 6))  # I, B, and three scratch matrices
    for i in range(n):
        k = im[i, 0]
        joint_transform(fm, im[i, 1], i, q[i], X)
        Xw = w[i, _XW:_XW + 12]
        if k < 0:
            copy_pose(X, Xw)
        else:
            compose(w[k, _XW:_XW + 12], X, Xw)
        ax, ay, az = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
        a = (Xw[0] * ax + Xw[1] * ay + Xw[2] * az, Xw[3] * ax + Xw[4] * ay + Xw[5] * az,
             Xw[6] * ax + Xw[7] * ay + Xw[8] * az)
        S, v, Sd = w[i, _S:_S + 6], w[i, _V:_V + 6], w[i, _SD:_SD + 6]
        if im[i, 1] == 0:
            p0, p1, p2 = Xw[9], Xw[10], Xw[11]
            S[0], S[1], S[2] = a[0], a[1], a[2]
            S[3], S[4], S[5] = p1 * a[2] - p2 * a[1], p2 * a[0] - p0 * a[2], p0 * a[1] - p1 * a[0]
        else:
            S[0], S[1], S[2], S[3], S[4], S[5] = 0.0, 0.0, 0.0, a[0], a[1], a[2]
        for c in range(6):
            v[c] = S[c] * qd[i] + (w[k, _V + c] if k >= 0 else 0.0)
        Sd[0] = v[1] * S[2] - v[2] * S[1]
        Sd[1] = v[2] * S[0] - v[0] * S[2]
        Sd[2] = v[0] * S[1] - v[1] * S[0]
        Sd[3] = v[1] * S[5] - v[2] * S[4] + v[4] * S[2] - v[5] * S[1]
        Sd[4] = v[2] * S[3] - v[0] * S[5] + v[5] * S[0] - v[3] * S[2]
        Sd[5] = v[0] * S[4] - v[1] * S[3] + v[3] * S[1] - v[4] * S[0]
        _world_inertia(fm, i, Xw, row, M6[0])
        _b_matrix(v, M6[0], M6[1], M6[2], M6[3], M6[4])
        for r in range(6):
            for c in range(6):
                w[i, _IC + 6 * r + c] = M6[0, r, c]
                w[i, _BC + 6 * r + c] = M6[1, r, c]
    for i in range(n - 1, -1, -1):  # subtree sums (world axes: plain additions)
        k = im[i, 0]
        if k >= 0:
            for c in range(72):
                w[k, _IC + c] += w[i, _IC + c]
    for r in range(n):
        for c in range(n):
            out[r, c] = 0.0
    F, Hd, Kd = np.empty(6), np.empty(6), np.empty(6)
    for d in range(n):
        S, Sd = w[d, _S:_S + 6], w[d, _SD:_SD + 6]
        for r in range(6):
            F[r], Hd[r], Kd[r] = 0.0, 0.0, 0.0
            for c in range(6):
                F[r] += w[d, _IC + 6 * r + c] * Sd[c] + w[d, _BC + 6 * r + c] * S[c]
                Hd[r] += w[d, _IC + 6 * c + r] * S[c]
                Kd[r] += w[d, _BC + 6 * c + r] * S[c]
        out[d, d] = _dot6(S, 0, F)
        k = im[d, 0]
        while k >= 0:
            out[k, d] = _dot6(w[k], _S, F)
            out[d, k] = _dot6(w[k], _SD, Hd) + _dot6(w[k], _S, Kd)
            k = im[k, 0]


def _coriolis_loop(im, fm, Q, QD, OUT):
    """Samples (N, n) -> OUT (N, n, n)."""
    for s in prange(Q.shape[0]):
        coriolis_one(im, fm, Q[s], QD[s], OUT[s])


coriolis_serial, coriolis_parallel = serial_and_parallel(_coriolis_loop)
