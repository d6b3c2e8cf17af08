"""Compiled floating-base chart: free-flyer coordinates -> the fixed-base kernels' coordinates.

The same map as :mod:`composedyn.dynamics.floating.base` (read its docstring
for the derivation), written for one sample in scalars so that the checked
entry below runs a floating robot's forward dynamics in one compiled call, and
the batch loops (``*_serial``, ``*_parallel``) that do the same per sample;
the task-space and derivative kernels of a floating base use the same map
(:mod:`.floating_frames`, :mod:`.floating_derivatives`).  Inverse dynamics and
the mass matrix need no map: they run on the robot as a tree whose root joint
is the base's free-flyer joint (:func:`.layout.pack_tree`).

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

from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW


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
def forward_dynamics(im, fm, bf, q, v, tau, fric, smooth, out, w, x, xdd):
    """Accelerations a (nv,) into ``out``; statuses as :func:`inverse_dynamics`, 3 singular M;
    scratch w (nv + 1, aba.SCRATCH), x, xdd (nv,)."""
    if chart_state(bf, q, v, v, x, xdd):
        return 4
    if aba_into(im, fm, x, v, tau, _NO_FW, 1 if fric else 0, smooth, out, w):
        return 3
    base_acceleration(bf, q, v, out)
    return 0


# ---- declarations (composedyn.dynamics.compiled.declare) ----
_QV = (("q", "nq"), ("v", "nv"))
FORWARD_DYNAMICS = Quantity("forward_dynamics", forward_dynamics, inputs=_QV + (("tau", "nv"),), results=(("nv",),),
                            options=(("friction", 1),), number="smooth_friction",
                            scratch=(("nv+1", ABA_SCRATCH), ("nv",), ("nv",)), floating=True)
