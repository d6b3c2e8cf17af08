"""Compiled recursive Newton-Euler inverse dynamics in body coordinates.

Featherstone's ``ID`` with spatial vectors (angular first) in each body's
frame: v_i = X_i v_p + S_i qd_i, a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i
(base acceleration -g), f_i = I_i a_i + v_i x* I_i v_i - f_ext_i, then
tau_i = S_i . f_i and f_p += X_i^T f_i.  Same result as
:func:`composedyn.dynamics.rnea.rnea`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.joint import (
    compose, copy_pose, force_to_parent, joint_transform, motion_to_child, serial_and_parallel,
)
from composedyn.dynamics.compiled.layout import ARM, AX, BLOCKS, DAMP, FRIC, GRAV, H, IO, MASS

SCRATCH = 42  # columns of the per-body scratch array, see rnea_into


@njit(cache=True)
def _body_force(fm, i, v, a, f):
    """f = I a + v x* (I v) for body i (inertia as mass, h = m c, Io about the origin)."""
    m, h0, h1, h2 = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    # momentum I v = (Io w + h x u, m u - h x w)
    k0 = fm[i, IO] * w0 + fm[i, IO + 1] * w1 + fm[i, IO + 2] * w2 + h1 * u2 - h2 * u1
    k1 = fm[i, IO + 3] * w0 + fm[i, IO + 4] * w1 + fm[i, IO + 5] * w2 + h2 * u0 - h0 * u2
    k2 = fm[i, IO + 6] * w0 + fm[i, IO + 7] * w1 + fm[i, IO + 8] * w2 + h0 * u1 - h1 * u0
    l0, l1, l2 = m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0)
    b0, b1, b2, c0, c1, c2 = a[0], a[1], a[2], a[3], a[4], a[5]
    f[0] = fm[i, IO] * b0 + fm[i, IO + 1] * b1 + fm[i, IO + 2] * b2 + h1 * c2 - h2 * c1
    f[1] = fm[i, IO + 3] * b0 + fm[i, IO + 4] * b1 + fm[i, IO + 5] * b2 + h2 * c0 - h0 * c2
    f[2] = fm[i, IO + 6] * b0 + fm[i, IO + 7] * b1 + fm[i, IO + 8] * b2 + h0 * c1 - h1 * c0
    f[3] = m * c0 - (h1 * b2 - h2 * b1)
    f[4] = m * c1 - (h2 * b0 - h0 * b2)
    f[5] = m * c2 - (h0 * b1 - h1 * b0)
    # v x* (k, l) = (w x k + u x l, w x l)
    f[0] += w1 * k2 - w2 * k1 + u1 * l2 - u2 * l1
    f[1] += w2 * k0 - w0 * k2 + u2 * l0 - u0 * l2
    f[2] += w0 * k1 - w1 * k0 + u0 * l1 - u1 * l0
    f[3] += w1 * l2 - w2 * l1
    f[4] += w2 * l0 - w0 * l2
    f[5] += w0 * l1 - w1 * l0


@njit(cache=True)
def _subtract_world_force(Xw, fw, f):
    """f -= world spatial force fw (moment about the world origin) in body coordinates (pose row Xw)."""
    n0 = fw[0] - (Xw[10] * fw[5] - Xw[11] * fw[4])
    n1 = fw[1] - (Xw[11] * fw[3] - Xw[9] * fw[5])
    n2 = fw[2] - (Xw[9] * fw[4] - Xw[10] * fw[3])
    for c in range(3):
        f[c] -= Xw[c] * n0 + Xw[3 + c] * n1 + Xw[6 + c] * n2
        f[3 + c] -= Xw[c] * fw[3] + Xw[3 + c] * fw[4] + Xw[6 + c] * fw[5]


@njit(cache=True)
def rnea_one(im, fm, q, qd, qdd, fw, grav, extra, out):
    """tau (n,) into ``out`` for one sample.

    fw: (n, 6) world spatial forces on the bodies, or shape (0, 6) for none.
    grav: 1 to include gravity.  extra: bit flags, 1 adds armature qdd, 2 adds
    damping qd + friction sgn(qd); 3 gives the Robot's inverse dynamics.
    """
    rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, np.empty((q.shape[0] + 1, SCRATCH)))


@njit(cache=True)
def rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, w):
    """:func:`rnea_one` with caller-provided scratch ``w`` (n + 1, SCRATCH)."""
    n = q.shape[0]
    # one scratch row per body (+ the base in row n): X pose 0:12, Xw world pose 12:24,
    # v 24:30, a 30:36, f 36:42
    for c in range(24, 36):
        w[n, c] = 0.0
    if grav and n > 0:
        for c in range(3):
            w[n, 33 + c] = -fm[0, GRAV + c]
    use_fw = fw.shape[0] == n and n > 0
    for i in range(n):
        k, jt = im[i, 0], im[i, 1]
        kk = n if k < 0 else k
        X, v, a = w[i, 0:12], w[i, 24:30], w[i, 30:36]
        joint_transform(fm, jt, i, q[i], X)
        motion_to_child(X, w[kk, 24:30], v)
        motion_to_child(X, w[kk, 30:36], a)
        s0, s1, s2 = fm[i, AX] * qd[i], fm[i, AX + 1] * qd[i], fm[i, AX + 2] * qd[i]
        o = 0 if jt == 0 else 3
        v[o] += s0
        v[o + 1] += s1
        v[o + 2] += s2
        for c in range(3):
            a[o + c] += fm[i, AX + c] * qdd[i]
        w0, w1, w2 = v[0], v[1], v[2]
        if jt == 0:  # v x (S qd)
            u0, u1, u2 = v[3], v[4], v[5]
            a[0] += w1 * s2 - w2 * s1
            a[1] += w2 * s0 - w0 * s2
            a[2] += w0 * s1 - w1 * s0
            a[3] += u1 * s2 - u2 * s1
            a[4] += u2 * s0 - u0 * s2
            a[5] += u0 * s1 - u1 * s0
        else:
            a[3] += w1 * s2 - w2 * s1
            a[4] += w2 * s0 - w0 * s2
            a[5] += w0 * s1 - w1 * s0
        _body_force(fm, i, v, a, w[i, 36:42])
        if use_fw:
            if k < 0:
                copy_pose(X, w[i, 12:24])
            else:
                compose(w[k, 12:24], X, w[i, 12:24])
            _subtract_world_force(w[i, 12:24], fw[i], w[i, 36:42])
    for i in range(n - 1, -1, -1):
        o = 36 if im[i, 1] == 0 else 39
        out[i] = fm[i, AX] * w[i, o] + fm[i, AX + 1] * w[i, o + 1] + fm[i, AX + 2] * w[i, o + 2]
        if im[i, 0] >= 0:
            force_to_parent(w[i, 0:12], w[i, 36:42], w[im[i, 0], 36:42])
        if extra & 1:
            out[i] += fm[i, ARM] * qdd[i]
        if extra & 2:
            x = qd[i]
            sgn = 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
            out[i] += fm[i, DAMP] * x + fm[i, FRIC] * sgn


def _rnea_loop(im, fm, Q, QD, QDD, FW, grav, extra, OUT):
    """Samples (N, n) -> OUT (N, n); FW (N, n, 6) or (0, n, 6) for none.  The samples are
    cut into blocks (one scratch array each) that ``prange`` spreads over the threads."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    none = np.empty((0, 6))
    for b in prange(blocks):
        w = np.empty((n + 1, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            f = FW[s] if FW.shape[0] > 0 else none
            rnea_into(im, fm, Q[s], QD[s], QDD[s], f, grav, extra, OUT[s], w)


rnea_serial, rnea_parallel = serial_and_parallel(_rnea_loop)
