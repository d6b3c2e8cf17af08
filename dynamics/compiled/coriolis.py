"""Compiled Coriolis matrix in Christoffel form, world coordinates.

The algorithm of :mod:`composedyn.dynamics.coriolis` (Echeandia & Wensing
2021): world motion subspaces S_i, velocities v_i, dS_i/dt = v_i x S_i,
spatial inertias I_i and B_i = 1/2 (v_i x* I_i - I_i v_i x + A(I_i v_i)),
their subtree sums IC, BC, then for each body d and ancestor k:
C[k, d] = S_k . (IC_d dS_d + BC_d S_d), C[d, k] = S_d . (IC_d dS_k + BC_d S_k).

With I = [[A, h x], [-h x, m 1]] about the world origin, v = (w, u) and
I v = (k, l), B has two non-zero 3x3 blocks:
B = [[1/2 (W A - A W - U H - H U - K), 0], [-L, 0]] (capitals: cross-product
matrices of w, u, h, k, l), so a body stores (m, h, A) and (B11, l), and
subtree sums are plain sums of those.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.crba import _inertia_to_parent
from composedyn.dynamics.compiled.joint import compose, copy_pose, joint_transform, serial_and_parallel
from composedyn.dynamics.compiled.layout import AX, BLOCKS, H, IO, MASS

# scratch columns per body: world pose, S, dS/dt, v, IC = (m, h, A), BC = (B11, l)
_XW, _S, _SD, _V, _IC, _BC = 0, 12, 18, 24, 30, 43
SCRATCH = 55


@njit(cache=True)
def _body_terms(fm, i, w):
    """Fill the world inertia (m, h, A) and (B11, l) of body i from its pose and velocity in row w[i]."""
    for c in range(13):
        w[i, _IC + c] = 0.0
    w[i, _BC] = fm[i, MASS]  # the body inertia, briefly, as the child in _inertia_to_parent
    for c in range(3):
        w[i, _BC + 1 + c] = fm[i, H + c]
    for c in range(9):
        w[i, _BC + 4 + c] = fm[i, IO + c]
    _inertia_to_parent(w[i, _XW:_XW + 12], w[i, _BC:_BC + 13], w[i, _IC:_IC + 13])
    m, h0, h1, h2 = w[i, _IC], w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3]
    w0, w1, w2, u0, u1, u2 = w[i, _V], w[i, _V + 1], w[i, _V + 2], w[i, _V + 3], w[i, _V + 4], w[i, _V + 5]
    A = w[i, _IC + 4:_IC + 13]
    k0 = A[0] * w0 + A[1] * w1 + A[2] * w2 + h1 * u2 - h2 * u1
    k1 = A[3] * w0 + A[4] * w1 + A[5] * w2 + h2 * u0 - h0 * u2
    k2 = A[6] * w0 + A[7] * w1 + A[8] * w2 + h0 * u1 - h1 * u0
    l0, l1, l2 = m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0)
    Wm = ((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))
    Km = ((0.0, -k2, k1), (k2, 0.0, -k0), (-k1, k0, 0.0))
    uh = u0 * h0 + u1 * h1 + u2 * h2
    uu, hh = (u0, u1, u2), (h0, h1, h2)
    for r in range(3):
        for c in range(3):
            wa = Wm[r][0] * A[c] + Wm[r][1] * A[3 + c] + Wm[r][2] * A[6 + c]
            aw = A[3 * r] * Wm[0][c] + A[3 * r + 1] * Wm[1][c] + A[3 * r + 2] * Wm[2][c]
            uhhu = uu[r] * hh[c] + hh[r] * uu[c] - (2.0 * uh if r == c else 0.0)  # U H + H U
            w[i, _BC + 3 * r + c] = 0.5 * (wa - aw - uhhu - Km[r][c])
    w[i, _BC + 9], w[i, _BC + 10], w[i, _BC + 11] = l0, l1, l2


@njit(cache=True)
def coriolis_one(im, fm, q, qd, out):
    """C(q, qd) (n, n) into ``out`` for one sample."""
    coriolis_into(im, fm, q, qd, out, np.empty((q.shape[0], SCRATCH)))


@njit(cache=True)
def coriolis_into(im, fm, q, qd, out, w):
    """:func:`coriolis_one` with caller-provided scratch ``w`` (n, SCRATCH)."""
    n = q.shape[0]
    X = np.empty(12)
    for i in range(n):
        k = im[i, 0]
        joint_transform(fm, im[i, 1], i, q[i], X)
        Xw = w[i, _XW:_XW + 12]
        if k < 0:
            copy_pose(X, Xw)
        else:
            compose(w[k, _XW:_XW + 12], X, Xw)
        ax, ay, az = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
        a0 = Xw[0] * ax + Xw[1] * ay + Xw[2] * az
        a1 = Xw[3] * ax + Xw[4] * ay + Xw[5] * az
        a2 = Xw[6] * ax + Xw[7] * ay + Xw[8] * az
        S, v, Sd = w[i, _S:_S + 6], w[i, _V:_V + 6], w[i, _SD:_SD + 6]
        if im[i, 1] == 0:
            p0, p1, p2 = Xw[9], Xw[10], Xw[11]
            S[0], S[1], S[2] = a0, a1, a2
            S[3], S[4], S[5] = p1 * a2 - p2 * a1, p2 * a0 - p0 * a2, p0 * a1 - p1 * a0
        else:
            S[0], S[1], S[2], S[3], S[4], S[5] = 0.0, 0.0, 0.0, a0, a1, a2
        for c in range(6):
            v[c] = S[c] * qd[i] + (w[k, _V + c] if k >= 0 else 0.0)
        Sd[0] = v[1] * S[2] - v[2] * S[1]
        Sd[1] = v[2] * S[0] - v[0] * S[2]
        Sd[2] = v[0] * S[1] - v[1] * S[0]
        Sd[3] = v[1] * S[5] - v[2] * S[4] + v[4] * S[2] - v[5] * S[1]
        Sd[4] = v[2] * S[3] - v[0] * S[5] + v[5] * S[0] - v[3] * S[2]
        Sd[5] = v[0] * S[4] - v[1] * S[3] + v[3] * S[1] - v[4] * S[0]
        _body_terms(fm, i, w)
    for i in range(n - 1, -1, -1):  # subtree sums (world axes: plain additions)
        k = im[i, 0]
        if k >= 0:
            for c in range(_IC, SCRATCH):
                w[k, c] += w[i, c]
    for r in range(n):
        for c in range(n):
            out[r, c] = 0.0
    for d in range(n):
        F, Hd, Kd = _composite_vectors(w, d)
        S = w[d, _S:_S + 6]
        out[d, d] = _dot6(S, 0, F)
        k = im[d, 0]
        while k >= 0:
            out[k, d] = _dot6(w[k], _S, F)
            out[d, k] = _dot6(w[k], _SD, Hd) + _dot6(w[k], _S, Kd)
            k = im[k, 0]


@njit(cache=True)
def _composite_vectors(w, d):
    """F = IC_d dS_d + BC_d S_d, H = IC_d S_d, K = BC_d^T S_d (6-tuples) for body d."""
    m, h0, h1, h2 = w[d, _IC], w[d, _IC + 1], w[d, _IC + 2], w[d, _IC + 3]
    A, B, l = w[d, _IC + 4:_IC + 13], w[d, _BC:_BC + 9], w[d, _BC + 9:_BC + 12]
    s, t = w[d, _S:_S + 6], w[d, _SD:_SD + 6]
    # IC x = (A x1 + h x x2, m x2 - h x x1)
    Hs = (A[0] * s[0] + A[1] * s[1] + A[2] * s[2] + h1 * s[5] - h2 * s[4],
          A[3] * s[0] + A[4] * s[1] + A[5] * s[2] + h2 * s[3] - h0 * s[5],
          A[6] * s[0] + A[7] * s[1] + A[8] * s[2] + h0 * s[4] - h1 * s[3],
          m * s[3] - (h1 * s[2] - h2 * s[1]), m * s[4] - (h2 * s[0] - h0 * s[2]), m * s[5] - (h0 * s[1] - h1 * s[0]))
    # F = IC dS + (B11 s1, s1 x l)
    F = (A[0] * t[0] + A[1] * t[1] + A[2] * t[2] + h1 * t[5] - h2 * t[4] + B[0] * s[0] + B[1] * s[1] + B[2] * s[2],
         A[3] * t[0] + A[4] * t[1] + A[5] * t[2] + h2 * t[3] - h0 * t[5] + B[3] * s[0] + B[4] * s[1] + B[5] * s[2],
         A[6] * t[0] + A[7] * t[1] + A[8] * t[2] + h0 * t[4] - h1 * t[3] + B[6] * s[0] + B[7] * s[1] + B[8] * s[2],
         m * t[3] - (h1 * t[2] - h2 * t[1]) + s[1] * l[2] - s[2] * l[1],
         m * t[4] - (h2 * t[0] - h0 * t[2]) + s[2] * l[0] - s[0] * l[2],
         m * t[5] - (h0 * t[1] - h1 * t[0]) + s[0] * l[1] - s[1] * l[0])
    # K = (B11^T s1 + l x s2, 0)
    K = (B[0] * s[0] + B[3] * s[1] + B[6] * s[2] + l[1] * s[5] - l[2] * s[4],
         B[1] * s[0] + B[4] * s[1] + B[7] * s[2] + l[2] * s[3] - l[0] * s[5],
         B[2] * s[0] + B[5] * s[1] + B[8] * s[2] + l[0] * s[4] - l[1] * s[3], 0.0, 0.0, 0.0)
    return F, Hs, K


@njit(cache=True)
def _dot6(x, o, y):
    """x[o:o+6] . y (y a 6-tuple or array)."""
    return x[o] * y[0] + x[o + 1] * y[1] + x[o + 2] * y[2] + x[o + 3] * y[3] + x[o + 4] * y[4] + x[o + 5] * y[5]


def _coriolis_loop(im, fm, Q, QD, OUT):
    """Samples (N, n) -> OUT (N, n, n), in blocks with one scratch array each."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w = np.empty((n, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            coriolis_into(im, fm, Q[s], QD[s], OUT[s], w)


coriolis_serial, coriolis_parallel = serial_and_parallel(_coriolis_loop)
