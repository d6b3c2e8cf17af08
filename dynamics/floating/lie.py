"""Lie-group operations of a floating base (SE(3) free flyer, SE(2) planar base), batched.

Conventions are Pinocchio's.  A free-flyer configuration is (x, y, z, qx, qy,
qz, qw): position of the base frame in world axes and the unit quaternion of
its orientation (Hamilton, scalar last).  A planar configuration is
(x, y, cos θ, sin θ).  Tangent vectors are body twists, linear first:
(vx, vy, vz, wx, wy, wz) in base axes, (vx, vy, w) for the planar base.

``integrate(q, v) = q · exp(v)`` (right composition, as Pinocchio), and
``difference(q0, q1) = log(q0⁻¹ q1)``, so that
``integrate(q0, difference(q0, q1)) = q1``.  The SE(3) exponential moves the
origin by ``V(w) v`` with ``V(w) = I + (1 - cos θ)/θ² [w] + (θ - sin θ)/θ³ [w]²``
(θ = |w|), and SE(2) likewise with its 2 x 2 ``V``.

Every function takes (..., k) arrays and broadcasts over the leading axes.

References
----------
J. Solà, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in
robotics", arXiv:1812.01537, eqs. (143)-(146) (SO(3)), (156)-(163) (SE(3)),
(171)-(175) (SE(2)).
"""

from __future__ import annotations

import numpy as np

SMALL = 1e-4  # |angle| below which the series forms are used (error ~ angle^6)


def skew(w: np.ndarray) -> np.ndarray:
    """[w] (..., 3, 3), the cross-product matrix of w (..., 3)."""
    z = np.zeros(w.shape[:-1])
    x, y, t = w[..., 0], w[..., 1], w[..., 2]
    return np.stack([np.stack([z, -t, y], -1), np.stack([t, z, -x], -1), np.stack([-y, x, z], -1)], -2)


def unit_and_norm(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x / |x|, |x|) over the last axis, without overflow or underflow: scaled by the largest
    magnitude before squaring, so a quaternion of norm 1e200 gives its unit quaternion (|x| is
    then inf only if the norm itself exceeds the largest double).  Zero rows give NaN units
    and norm 0; callers refuse them."""
    x = np.asarray(x, dtype=float)
    m = np.max(np.abs(x), axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = x / m
        r = np.sqrt(np.sum(y * y, axis=-1, keepdims=True))
        norm = m * r  # x / norm rounds as x / |x| always did; y / r where the norm itself overflows
        return np.where(np.isfinite(norm), x / norm, y / r), norm


def quaternion_matrix(quat: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) (x, y, z, w)."""
    x, y, z, w = (quat[..., k] for k in range(4))
    R = np.empty(quat.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    return R


def quaternion_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a b (..., 4) of quaternions (x, y, z, w)."""
    av, aw, bv, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - np.sum(av * bv, -1, keepdims=True)], -1)


def _sinc_terms(t: np.ndarray):
    """sin t / t, (1 - cos t) / t², (t - sin t) / t³ for t >= 0, series near 0."""
    small = t < SMALL
    ts = np.where(small, 1.0, t)
    t2 = t * t
    a = np.where(small, 1 - t2 / 6 + t2 * t2 / 120, np.sin(ts) / ts)
    b = np.where(small, 0.5 - t2 / 24 + t2 * t2 / 720, (1 - np.cos(ts)) / ts ** 2)
    c = np.where(small, 1 / 6 - t2 / 120 + t2 * t2 / 5040, (ts - np.sin(ts)) / ts ** 3)
    return a, b, c


def exp_quaternion(w: np.ndarray) -> np.ndarray:
    """Unit quaternion (..., 4) (x, y, z, w) of the rotation by the vector w (..., 3) (axis x angle)."""
    t = np.linalg.norm(w, axis=-1, keepdims=True)
    h = 0.5 * t
    small = h < SMALL
    hs = np.where(small, 1.0, h)
    s = np.where(small, 0.5 * (1 - h * h / 6 + h ** 4 / 120), np.sin(hs) / np.where(small, 1.0, t))
    return np.concatenate([s * w, np.cos(h)], -1)


def log3(R: np.ndarray) -> np.ndarray:
    """SO(3) logarithm (..., 3) (axis x angle, angle in [0, π]) of rotations (..., 3, 3)."""
    s = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1)
    c = 0.5 * (np.trace(R, axis1=-2, axis2=-1) - 1.0)
    sn = np.linalg.norm(s, axis=-1)
    th = np.arctan2(sn, c)
    near_pi = th >= np.pi - 1e-4
    small = th < 1e-5
    scale = np.where(small, 1.0 + th * th / 6.0, th / np.where(sn > 0, sn, 1.0))
    out = scale[..., None] * s
    if np.any(near_pi):  # axis from the symmetric part: a a^T = (R + R^T)/2 - c I) / (1 - c)
        aa = (0.5 * (R + np.swapaxes(R, -1, -2)) - c[..., None, None] * np.eye(3)) / np.maximum(1.0 - c, 1e-300)[
            ..., None, None]
        k = np.argmax(np.diagonal(aa, axis1=-2, axis2=-1), axis=-1)
        a = np.take_along_axis(aa, k[..., None, None], axis=-1)[..., 0]
        a = a / np.sqrt(np.maximum(np.take_along_axis(a, k[..., None], axis=-1), 1e-300))
        a = np.where((np.sum(a * s, -1) >= 0.0)[..., None], a, -a)
        out = np.where(near_pi[..., None], th[..., None] * a, out)
    return out


def left_jacobian(w: np.ndarray) -> np.ndarray:
    """V(w) (..., 3, 3) = I + (1 - cos θ)/θ² [w] + (θ - sin θ)/θ³ [w]² (SE(3) exponential's translation map)."""
    _, b, c = _sinc_terms(np.linalg.norm(w, axis=-1))
    K = skew(w)
    return np.eye(3) + b[..., None, None] * K + c[..., None, None] * (K @ K)


def left_jacobian_inverse(w: np.ndarray) -> np.ndarray:
    """V(w)⁻¹ (..., 3, 3) = I - [w]/2 + (1/θ²)(1 - θ sin θ / (2 (1 - cos θ))) [w]², θ = |w| < 2π."""
    t = np.linalg.norm(w, axis=-1)
    small = t < SMALL
    ts = np.where(small, 1.0, t)
    d = np.where(small, 1 / 12 + t * t / 720, (1 - ts * np.sin(ts) / (2 * (1 - np.cos(ts)))) / ts ** 2)
    K = skew(w)
    return np.eye(3) - 0.5 * K + d[..., None, None] * (K @ K)


def se3_integrate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Free-flyer q (..., 7) moved by the body twist v (..., 6): q · exp(v); the quaternion's norm
    divided out first (any finite norm; zero gives NaN), the result's quaternion of unit norm."""
    quat = unit_and_norm(q[..., 3:7])[0]
    p = q[..., :3] + np.einsum("...ij,...j->...i", quaternion_matrix(quat),
                               np.einsum("...ij,...j->...i", left_jacobian(v[..., 3:]), v[..., :3]))
    out = quaternion_multiply(quat, exp_quaternion(v[..., 3:]))
    return np.concatenate([p, unit_and_norm(out)[0]], -1)


def se3_difference(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Body twist (..., 6) v with q1 = q0 · exp(v): log(q0⁻¹ q1), linear first."""
    R0, R1 = quaternion_matrix(unit_and_norm(q0[..., 3:7])[0]), quaternion_matrix(unit_and_norm(q1[..., 3:7])[0])
    R0t = np.swapaxes(R0, -1, -2)
    w = log3(R0t @ R1)
    dp = np.einsum("...ij,...j->...i", R0t, q1[..., :3] - q0[..., :3])
    return np.concatenate([np.einsum("...ij,...j->...i", left_jacobian_inverse(w), dp), w], -1)


def _v2(t: np.ndarray) -> np.ndarray:
    """SE(2) V(θ) (..., 2, 2) = [[sin θ/θ, -(1 - cos θ)/θ], [(1 - cos θ)/θ, sin θ/θ]]."""
    a, b, _ = _sinc_terms(np.abs(t))
    b = b * t
    return np.stack([np.stack([a, -b], -1), np.stack([b, a], -1)], -2)


def se2_integrate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Planar q (..., 4) = (x, y, cos θ, sin θ) moved by the body twist v (..., 3) = (vx, vy, w)."""
    c, s = q[..., 2], q[..., 3]
    d = np.einsum("...ij,...j->...i", _v2(v[..., 2]), v[..., :2])
    x = q[..., 0] + c * d[..., 0] - s * d[..., 1]
    y = q[..., 1] + s * d[..., 0] + c * d[..., 1]
    cw, sw = np.cos(v[..., 2]), np.sin(v[..., 2])
    c1, s1 = c * cw - s * sw, s * cw + c * sw
    r = np.hypot(c1, s1)
    return np.stack([x, y, c1 / r, s1 / r], -1)


def se2_difference(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Body twist (..., 3) v with q1 = q0 · exp(v)."""
    c0, s0, c1, s1 = q0[..., 2], q0[..., 3], q1[..., 2], q1[..., 3]
    t = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
    local = np.stack([c0 * dx + s0 * dy, -s0 * dx + c0 * dy], -1)
    return np.concatenate([np.linalg.solve(_v2(t), local[..., None])[..., 0], t[..., None]], -1)


def se3_rate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dq/dt (..., 7) of a free flyer q moving with the body twist v (..., 6):
    (R v_linear, ½ quat ⊗ (w, 0)), the quaternion kinematics (Solà et al., eq. (109))."""
    quat = q[..., 3:7]
    pd = np.einsum("...ij,...j->...i", quaternion_matrix(unit_and_norm(quat)[0]), v[..., :3])
    w = np.concatenate([v[..., 3:], np.zeros(v.shape[:-1] + (1,))], -1)
    return np.concatenate([pd, 0.5 * quaternion_multiply(quat, w)], -1)


def se2_rate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dq/dt (..., 4) of a planar base q = (x, y, cos θ, sin θ) moving with the body twist (vx, vy, w)."""
    c, s, w = q[..., 2], q[..., 3], v[..., 2]
    return np.stack([c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1], -s * w, c * w], -1)
