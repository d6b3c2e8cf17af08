"""Checked compiled entries of a floating robot's task space: frame pose, Jacobian, twist and
classical acceleration in free-flyer coordinates, one sample per call.

Each maps the configuration to the chart (:mod:`composedyn.dynamics.floating.base`):
base joints at zero, joint positions copied, the base's velocity products
subtracted from the accelerations (:func:`.floating.chart_state`), runs the
fixed-base frame kernel (:mod:`.frames`) on the chart and moves a world-axes
result from the chart's axes (the base axes at that instant) to the world by
the base pose (R₀, p₀).  ``bf`` is the packed base of :mod:`.floating`: kind,
gravity in the base joint frame at neutral, then that frame's origin
``Ro`` (row-major) and ``po`` in the world.

Statuses: 0 done, 1 wrong length or frame code, 2 NaN/inf, 4 zero quaternion.
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.compiled import frames as _frames
from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.floating import _gravity, chart_state
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.loops import all_finite


@njit(cache=True, inline="always")
def _base_pose(bf, q, P):
    """P (12,) = (R₀ row-major, p₀): world pose of the base frame at q; 1 for a zero orientation."""
    if bf[0] == 0.0:
        x, y, z, w = q[3], q[4], q[5], q[6]
        m = max(abs(x), abs(y), abs(z), abs(w))  # scaled before squaring: no overflow, no underflow
        if not m > 0.0:
            return 1
        x, y, z, w = x / m, y / m, z / m, w / m
        s = x * x + y * y + z * z + w * w
        if not m * math.sqrt(s) > 1e-12:
            return 1
        s = 2.0 / s
        r = (1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
             s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w),
             s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y))
        t0, t1, t2 = q[0], q[1], q[2]
    else:
        h = math.hypot(q[2], q[3])
        if not h > 1e-12:
            return 1
        c, s = q[2] / h, q[3] / h
        r = (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
        t0, t1, t2 = q[0], q[1], 0.0
    for i in range(3):  # R₀ = Ro R, p₀ = po + Ro t
        o0, o1, o2 = bf[4 + 3 * i], bf[5 + 3 * i], bf[6 + 3 * i]
        for j in range(3):
            P[3 * i + j] = o0 * r[j] + o1 * r[3 + j] + o2 * r[6 + j]
        P[9 + i] = bf[13 + i] + o0 * t0 + o1 * t1 + o2 * t2
    return 0


@njit(cache=True, inline="always")
def _rotate_twist(P, out):
    """out (6,) linear and angular parts <- R₀ times each."""
    a0, a1, a2, b0, b1, b2 = out[0], out[1], out[2], out[3], out[4], out[5]
    for i in range(3):
        out[i] = P[3 * i] * a0 + P[3 * i + 1] * a1 + P[3 * i + 2] * a2
        out[3 + i] = P[3 * i] * b0 + P[3 * i + 1] * b1 + P[3 * i + 2] * b2


@njit(cache=True, inline="always")
def _positions(bf, q, x):
    """Chart positions x (n,): the base's virtual joints at zero, then the joints of q."""
    nb, nqb = (6, 7) if bf[0] == 0.0 else (3, 4)
    for i in range(nb):
        x[i] = 0.0
    for i in range(nb, x.shape[0]):
        x[i] = q[i - nb + nqb]


@njit(cache=True, inline="always")
def _lengths(im, fx, q, code):
    """Whether q has the chart's n + 1 entries and ``code`` (:func:`.frames.frame_code`) names a frame."""
    return q.shape[0] == im.shape[0] + 1 and code >= 0


@njit(cache=True, fastmath=_frames.FASTMATH, inline="always")
def frame_pose(im, fx, bf, q, frame, out):
    """World <- frame transform into out (4, 4)."""
    code = _frames.frame_code(im, fx, frame, 0)
    n = im.shape[0]
    if not _lengths(im, fx, q, code) or out.shape[0] != 4 or out.shape[1] != 4:
        return 1
    if not all_finite(q):
        return 2
    P, x, T = np.empty(12), np.empty(n), np.empty((4, 4))
    if _base_pose(bf, q, P):
        return 4
    _positions(bf, q, x)
    _frames.pose_into(im, fx, x, code, T, np.empty((6, n)))
    for i in range(3):
        for j in range(4):
            out[i, j] = P[3 * i] * T[0, j] + P[3 * i + 1] * T[1, j] + P[3 * i + 2] * T[2, j]
        out[i, 3] += P[9 + i]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0
    return 0


@njit(cache=True, fastmath=_frames.FASTMATH, inline="always")
def jacobian(im, fx, bf, q, frame, local, out):
    """Frame Jacobian into out (6, nv), linear rows first; world rows rotated by R₀."""
    code = _frames.frame_code(im, fx, frame, local)
    n = im.shape[0]
    if not _lengths(im, fx, q, code) or out.shape[0] != 6 or out.shape[1] != n:
        return 1
    if not all_finite(q):
        return 2
    P, x = np.empty(12), np.empty(n)
    if _base_pose(bf, q, P):
        return 4
    _positions(bf, q, x)
    _frames.jacobian_into(im, fx, x, code, out)
    c = _frames.frame_of(im, fx, code)[0]
    while code % 2 == 0 and c >= 0:  # world rows: rotate the chain's columns (the others are zero)
        a0, a1, a2, b0, b1, b2 = out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c]
        for i in range(3):
            out[i, c] = P[3 * i] * a0 + P[3 * i + 1] * a1 + P[3 * i + 2] * a2
            out[3 + i, c] = P[3 * i] * b0 + P[3 * i + 1] * b1 + P[3 * i + 2] * b2
        c = im[c, 0]
    return 0


@njit(cache=True, fastmath=_frames.FASTMATH, inline="always")
def frame_velocity(im, fx, bf, q, v, frame, local, out):
    """Frame twist J v into out (6,)."""
    code = _frames.frame_code(im, fx, frame, local)
    n = im.shape[0]
    if not _lengths(im, fx, q, code) or v.shape[0] != n or out.shape[0] != 6:
        return 1
    if not (all_finite(q) and all_finite(v)):
        return 2
    P, x = np.empty(12), np.empty(n)
    if _base_pose(bf, q, P):
        return 4
    _positions(bf, q, x)
    _frames.velocity_into(im, fx, x, v, code, out, np.empty((6, n)))
    if code % 2 == 0:
        _rotate_twist(P, out)
    return 0


@njit(cache=True, fastmath=_frames.FASTMATH, inline="always")
def frame_acceleration(im, fx, bf, q, v, a, frame, local, out):
    """Classical acceleration of the frame origin and angular acceleration into out (6,)."""
    code = _frames.frame_code(im, fx, frame, local)
    n = im.shape[0]
    if not _lengths(im, fx, q, code) or v.shape[0] != n or a.shape[0] != n or out.shape[0] != 6:
        return 1
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return 2
    P, x, xdd = np.empty(12), np.empty(n), np.empty(n)
    if _base_pose(bf, q, P) or chart_state(bf, q, v, a, x, xdd):
        return 4
    g0, g1, g2, _ = _gravity(bf, q)  # chart_state took gravity off the base: a frame's kinematics has none
    xdd[0], xdd[1] = xdd[0] + g0, xdd[1] + g1
    if bf[0] == 0.0:
        xdd[2] += g2
    _frames.acceleration_into(im, fx, x, v, xdd, code, out, np.empty((6, n)))
    if code % 2 == 0:
        _rotate_twist(P, out)
    return 0

# ---- declarations (composedyn.dynamics.compiled.declare) ----
_FRAME, _LOCAL, _OPT = ("frame", -1), ("local", 0), {"model": "frames", "floating": True, "fastmath": _frames.FASTMATH}
FRAME_POSE = Quantity("frame_pose", frame_pose, inputs=(("q", "nq"),), results=((4, 4),), options=(_FRAME,), **_OPT)
JACOBIAN = Quantity("jacobian", jacobian, inputs=(("q", "nq"),), results=((6, "nv"),), options=(_FRAME, _LOCAL), **_OPT)
FRAME_VELOCITY = Quantity("frame_velocity", frame_velocity, inputs=(("q", "nq"), ("v", "nv")), results=((6,),),
                          options=(_FRAME, _LOCAL), **_OPT)
FRAME_ACCELERATION = Quantity("frame_acceleration", frame_acceleration,
                              inputs=(("q", "nq"), ("v", "nv"), ("a", "nv")), results=((6,),),
                              options=(_FRAME, _LOCAL), **_OPT)
