"""Compiled floating-base chart: free-flyer coordinates -> the fixed-base kernels' coordinates.

The same map as :mod:`composedyn.dynamics.floating.base` (read its docstring
for the derivation), written for one sample in scalars so that the checked
entries below run a floating robot's inverse dynamics, mass matrix and forward
dynamics in one compiled call, and the batch loops (``*_serial``,
``*_parallel``) that do the same per sample.

The base is packed as ``bf`` (16,) float64: kind (0 free flyer, 1 planar),
``go = Roᵀ g``, gravity in the axes of the base joint's frame at the neutral
configuration, then that frame's rotation ``Ro`` (row-major) and origin ``po``
in the world (used by the task-space entries of :mod:`.floating_frames`).  With the base orientation ``R``
(quaternion, or the planar angle) the base-axes gravity is ``Rᵀ go``.

Velocity products of the virtual chain, coordinates linear first, for the
body twist (u, w): free flyer ``b = (u × w, (wy wz, -wx wz, wx wy))``; planar
``b = (uy w, -ux w, 0)``.  The chart's accelerations are
``ẍ = a - b - (Rᵀ go, 0)`` on the base (the planar base keeps only the
in-plane part: the normal part is in the chart model's gravity).
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_chart_into
from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.layout import BLOCKS
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW
from composedyn.dynamics.compiled.loops import all_finite, serial_and_parallel
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into


@njit(cache=True, inline="always")
def _gravity(bf, q):
    """(gx, gy, gz) = Rᵀ go in base axes, and 0 or 1 when the base orientation is invalid (zero norm)."""
    if bf[0] == 0.0:
        x, y, z, w = q[3], q[4], q[5], q[6]
        m = max(abs(x), abs(y), abs(z), abs(w))  # scaled before squaring: no overflow, no underflow
        if not m > 0.0:
            return 0.0, 0.0, 0.0, 1
        x, y, z, w = x / m, y / m, z / m, w / m
        s = x * x + y * y + z * z + w * w
        if not m * math.sqrt(s) > 1e-12:
            return 0.0, 0.0, 0.0, 1
        s = 2.0 / s  # R of the normalised quaternion: R = I + s (w [v] + [v]^2)
        r00, r01, r02 = 1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)
        r10, r11, r12 = s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)
        r20, r21, r22 = s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)
        g0, g1, g2 = bf[1], bf[2], bf[3]
        return r00 * g0 + r10 * g1 + r20 * g2, r01 * g0 + r11 * g1 + r21 * g2, r02 * g0 + r12 * g1 + r22 * g2, 0
    c, s = q[2], q[3]
    r = math.hypot(c, s)
    if not r > 1e-12:
        return 0.0, 0.0, 0.0, 1
    c, s = c / r, s / r
    return c * bf[1] + s * bf[2], -s * bf[1] + c * bf[2], 0.0, 0


@njit(cache=True, inline="always")
def chart_state(bf, q, v, a, x, xdd):
    """Chart coordinates x (n,) and accelerations xdd (n,) of one sample (a: accelerations, or
    None-like zeros); returns 0, or 1 when the base orientation has zero norm."""
    g0, g1, g2, bad = _gravity(bf, q)
    if bad:
        return 1
    if bf[0] == 0.0:
        nqb, nb = 7, 6
        u0, u1, u2, w0, w1, w2 = v[0], v[1], v[2], v[3], v[4], v[5]
        xdd[0] = a[0] - (u1 * w2 - u2 * w1) - g0
        xdd[1] = a[1] - (u2 * w0 - u0 * w2) - g1
        xdd[2] = a[2] - (u0 * w1 - u1 * w0) - g2
        xdd[3] = a[3] - w1 * w2
        xdd[4] = a[4] + w0 * w2
        xdd[5] = a[5] - w0 * w1
    else:
        nqb, nb = 4, 3
        xdd[0] = a[0] - v[1] * v[2] - g0
        xdd[1] = a[1] + v[0] * v[2] - g1
        xdd[2] = a[2]
    for i in range(nb):
        x[i] = 0.0
    for i in range(nb, x.shape[0]):
        x[i] = q[i - nb + nqb]
        xdd[i] = a[i]
    return 0


@njit(cache=True, inline="always")
def base_acceleration(bf, q, v, out):
    """Chart accelerations in ``out`` -> free-flyer accelerations, in place (inverse of :func:`chart_state`)."""
    g0, g1, g2, _ = _gravity(bf, q)
    if bf[0] == 0.0:
        u0, u1, u2, w0, w1, w2 = v[0], v[1], v[2], v[3], v[4], v[5]
        out[0] += (u1 * w2 - u2 * w1) + g0
        out[1] += (u2 * w0 - u0 * w2) + g1
        out[2] += (u0 * w1 - u1 * w0) + g2
        out[3] += w1 * w2
        out[4] -= w0 * w2
        out[5] += w0 * w1
    else:
        out[0] += v[1] * v[2] + g0
        out[1] += -v[0] * v[2] + g1


@njit(cache=True, inline="always")
def _sizes(bf, fm):
    """(n, nq): chart size nv and configuration size (one more: 7 for 6 free-flyer, 4 for 3 planar)."""
    n = fm.shape[0]
    return n, n + 1


def inverse_dynamics(im, fm, bf, q, v, a, fric, out):
    """Generalised forces (nv,) into ``out``; 0 done, 1 wrong length, 2 NaN/inf, 4 zero quaternion."""
    n, nq = _sizes(bf, fm)
    if q.shape[0] != nq or v.shape[0] != n or a.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return 2
    x, xdd = np.empty(n), np.empty(n)
    if chart_state(bf, q, v, a, x, xdd):
        return 4
    if fric:
        rnea_into(im, fm, x, v, xdd, _NO_FW, 1, 3, out, np.empty((n + 1, RNEA_SCRATCH)))
    else:
        rnea_into(im, fm, x, v, xdd, _NO_FW, 1, 1, out, np.empty((n + 1, RNEA_SCRATCH)))
    return 0


def mass_matrix(im, fm, bf, q, out):
    """M (nv, nv) into ``out``; statuses as :func:`inverse_dynamics`."""
    n, nq = _sizes(bf, fm)
    if q.shape[0] != nq or out.shape[0] != n or out.shape[1] != n:
        return 1
    if not all_finite(q):
        return 2
    if _gravity(bf, q)[3]:  # zero-norm orientation
        return 4
    x = np.empty(n)
    nb = 6 if bf[0] == 0.0 else 3
    for i in range(nb):
        x[i] = 0.0
    for i in range(nb, n):
        x[i] = q[i + 1]
    crba_chart_into(im, fm, nb, x, out, np.empty((n, CRBA_SCRATCH)))
    return 0


def forward_dynamics(im, fm, bf, q, v, tau, fric, smooth, out):
    """Accelerations a (nv,) into ``out``; statuses as :func:`inverse_dynamics`, 3 singular M."""
    n, nq = _sizes(bf, fm)
    if q.shape[0] != nq or v.shape[0] != n or tau.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(v) and all_finite(tau)):
        return 2
    x, xdd = np.empty(n), np.empty(n)
    if chart_state(bf, q, v, v, x, xdd):
        return 4
    if fric:
        status = aba_into(im, fm, x, v, tau, _NO_FW, 1, smooth, out, np.empty((n + 1, ABA_SCRATCH)))
    else:
        status = aba_into(im, fm, x, v, tau, _NO_FW, 0, smooth, out, np.empty((n + 1, ABA_SCRATCH)))
    if status:
        return 3
    base_acceleration(bf, q, v, out)
    return 0


def _id_loop(im, fm, bf, Q, V, A, extra, OUT, STATUS):
    """Samples Q (N, nq), V, A (N, nv) -> OUT (N, nv); STATUS (N,) 4 for a zero quaternion.
    extra: 3 with joint friction, 1 without (the rnea kernel's flags)."""
    N, n = Q.shape[0], V.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w, x, xdd = np.empty((n + 1, RNEA_SCRATCH)), np.empty(n), np.empty(n)
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = 4 * chart_state(bf, Q[s], V[s], A[s], x, xdd)
            if STATUS[s] == 0:
                rnea_into(im, fm, x, V[s], xdd, _NO_FW, 1, extra, OUT[s], w)


def _mass_loop(im, fm, bf, Q, OUT, STATUS):
    """Samples Q (N, nq) -> OUT (N, nv, nv); STATUS as :func:`_id_loop`."""
    N, n = Q.shape[0], OUT.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w, x, xdd, z = np.empty((n, CRBA_SCRATCH)), np.empty(n), np.empty(n), np.zeros(n)
        nb = 6 if bf[0] == 0.0 else 3
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = 4 * chart_state(bf, Q[s], z, z, x, xdd)
            if STATUS[s] == 0:
                crba_chart_into(im, fm, nb, x, OUT[s], w)


def _fd_loop(im, fm, bf, Q, V, TAU, fric, smooth, OUT, STATUS):
    """Samples -> accelerations OUT (N, nv); STATUS 4 zero quaternion, 1 singular M."""
    N, n = Q.shape[0], V.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w, x, xdd = np.empty((n + 1, ABA_SCRATCH)), np.empty(n), np.empty(n)
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            STATUS[s] = 4 * chart_state(bf, Q[s], V[s], V[s], x, xdd)
            if STATUS[s] == 0:
                STATUS[s] = aba_into(im, fm, x, V[s], TAU[s], _NO_FW, fric, smooth, OUT[s], w)
                base_acceleration(bf, Q[s], V[s], OUT[s])


id_serial, id_parallel = serial_and_parallel(_id_loop)
mass_serial, mass_parallel = serial_and_parallel(_mass_loop)
fd_serial, fd_parallel = serial_and_parallel(_fd_loop)
