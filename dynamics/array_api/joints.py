"""Joint models on the Python array API: each joint kind with its own configuration size and velocity size.

A joint connects a parent body to its child body.  Its placement (fixed, in the model) takes the parent body
frame to the joint frame; the joint transform below takes the joint frame to the child body frame as a function
of the joint's configuration ``qj`` (``nq`` numbers) and its velocity ``vj`` (``nv`` numbers).  Every convention
is Pinocchio's (``JointModelRevolute``, ``JointModelPrismatic``, ``JointModelHelical``, ``JointModelUniversal``,
``JointModelSpherical``, ``JointModelPlanar``, ``JointModelFreeFlyer`` and their Lie groups):

========== ==== ==== ==========================================================================================
kind        nq   nv  configuration / velocity
========== ==== ==== ==========================================================================================
revolute     1    1  angle (rad) about ``axis`` / angular rate
continuous   1    1  as revolute (the angle itself, not Pinocchio's (cos, sin) pair)
prismatic    1    1  displacement (m) along ``axis`` / its rate
helical      1    1  angle about ``axis`` with a translation ``pitch * angle`` (m) along it
universal    2    2  angles about ``axis`` then about ``axis2`` (in the frame rotated by the first)
spherical    4    3  unit quaternion (x, y, z, w) / angular velocity in the child frame
planar       4    3  (x, y, cos θ, sin θ) in the joint's xy plane / (vx, vy, ωz) in the child frame
free_flyer   7    6  position (m) and unit quaternion (x, y, z, w) / (linear, angular) velocity, child frame
========== ==== ==== ==========================================================================================

Spatial vectors are linear first, (v, ω), in child-frame axes.  Every function takes the array namespace ``xp``
(``array_api_compat.array_namespace(x)``) and broadcasts over leading batch axes ``(...)``; nothing is assigned
in place, so the functions run under ``jax.jit`` and torch autograd.  Results are smooth in their inputs (series
expansions near zero angles), so gradients exist at zero velocity.  Quaternions and (cos θ, sin θ) pairs are divided
by their norms where they are read, as the Robot does (a zero one gives NaN, never a finite wrong pose; gradients
with respect to them are tangent); ``integrate`` returns them unit to first order, as Pinocchio does.  The
table ``_KIND_TABLE`` is the one place that knows the kinds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from composedyn.dynamics.array_api.spatial import rows

KINDS = ("revolute", "continuous", "prismatic", "helical", "universal", "spherical", "planar", "free_flyer")

Array = Any  # an array of any array-API namespace

_SERIES_LIMIT = 0.25  # below this squared angle, coefficient functions use their Taylor series


@dataclass(frozen=True)
class Joint:
    """One joint of a kinematic tree.

    ``idx_q``/``idx_v`` are the offsets of its ``nq`` configuration and ``nv`` velocity coordinates in the
    model's q and v.  ``axis`` (unit, joint frame) is the axis of revolute, continuous, prismatic and helical
    joints and the first axis of a universal joint; ``axis2`` is a universal joint's second axis (unit, in the
    frame rotated by the first angle); ``pitch`` (m/rad) is a helical joint's translation per radian.
    """

    name: str
    kind: str
    nq: int
    nv: int
    idx_q: int
    idx_v: int
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    axis2: tuple[float, float, float] = (0.0, 1.0, 0.0)
    pitch: float = 0.0


def _unit_axis(name: str, which: str, axis: Any) -> tuple[float, float, float]:
    a = np.asarray(axis, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"joint '{name}': {which} must be 3 finite numbers, got {axis!r}")
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ValueError(f"joint '{name}': {which} is the zero vector")
    return tuple(float(x) for x in a / n)


def make_joint(
    name: str,
    kind: str,
    idx_q: int,
    idx_v: int,
    axis: Any = (0.0, 0.0, 1.0),
    axis2: Any = (0.0, 1.0, 0.0),
    pitch: float = 0.0,
) -> Joint:
    """A :class:`Joint` whose ``nq``/``nv`` follow from ``kind``; axes are normalised.

    Raises ``ValueError`` naming the joint for an unknown kind, a zero or non-finite axis or pitch, or parallel
    axes of a universal joint.
    """
    if kind not in _KIND_TABLE:
        raise ValueError(f"joint '{name}': unknown joint kind '{kind}' (known: {', '.join(KINDS)})")
    if not math.isfinite(float(pitch)):
        raise ValueError(f"joint '{name}': pitch must be finite, got {pitch!r}")
    ops = _KIND_TABLE[kind]
    unit, unit2 = _unit_axis(name, "axis", axis), _unit_axis(name, "axis2", axis2)
    if kind == "universal" and abs(float(np.dot(unit, unit2))) > 1.0 - 1e-9:
        raise ValueError(f"joint '{name}': the two axes of a universal joint are parallel ({unit}, {unit2})")
    return Joint(
        name=name,
        kind=kind,
        nq=ops.nq,
        nv=ops.nv,
        idx_q=int(idx_q),
        idx_v=int(idx_v),
        axis=unit,
        axis2=unit2,
        pitch=float(pitch),
    )


# ----------------------------------------------------------------------------------------------- public interface


def joint_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    """The child frame in the joint frame: ``qj`` (..., nq) -> ``R`` (..., 3, 3), ``p`` (..., 3) (m).

    A point with child-frame coordinates ``x`` has joint-frame coordinates ``R @ x + p`` (Pinocchio's
    ``jdata.M``).
    """
    return _KIND_TABLE[joint.kind].transform(xp, joint, qj)


def motion_subspace(xp: Any, joint: Joint, qj: Array) -> Array:
    """The motion subspace ``S`` (..., 6, nv): child velocity relative to the parent = ``S @ vj``, child frame."""
    return _KIND_TABLE[joint.kind].subspace(xp, joint, qj)


def motion_subspace_derivative(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    """``dS/dt`` (..., 6, nv) along the joint's own motion at velocity ``vj``, child frame (zero unless ``S``
    depends on ``qj`` in the child frame, as a universal joint's does); ``bias == dS/dt @ vj``."""
    return _KIND_TABLE[joint.kind].subspace_rate(xp, joint, qj, vj)


def subspace_variations(xp: Any, joint: Joint, qj: Array, vj: Array) -> tuple[Array, Array, Array] | None:
    """How the joint's own child-frame terms move with its coordinates, for the analytical derivatives:
    ``(G, dc_dq, dc_dv)`` with ``G`` (..., 6, nv, nv), ``G[..., :, c, d]`` the derivative of column ``c`` of
    ``S`` along ``q ⊕ δ e_d``, and the derivatives (..., 6, nv) of the bias ``c`` along ``q ⊕ δ`` and in
    ``vj``; None when ``S`` is constant in the child frame and ``c`` is zero (every kind but universal)."""
    return _KIND_TABLE[joint.kind].variations(xp, joint, qj, vj)


def bias(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    """The velocity-product acceleration ``c = dS/dt vj`` (..., 6) in the child frame (Pinocchio's ``jdata.c``)."""
    return _KIND_TABLE[joint.kind].bias(xp, joint, qj, vj)


def integrate(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    """The configuration reached from ``qj`` (..., nq) by the constant velocity ``vj`` (..., nv) in unit time."""
    return _KIND_TABLE[joint.kind].integrate(xp, joint, qj, vj)


def difference(xp: Any, joint: Joint, q0: Array, q1: Array) -> Array:
    """The velocity ``vj`` (..., nv) with ``integrate(q0, vj) == q1``: ``q1 - q0`` for one-DOF and universal
    joints (continuous angles are not wrapped), the logarithm with rotation angles in [0, π] for spherical,
    planar and free-flyer joints."""
    return _KIND_TABLE[joint.kind].difference(xp, joint, q0, q1)


def integrate_jacobian(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    """``d integrate(qj, vj) / d vj`` (..., nv, nv) in tangent coordinates (Pinocchio's ``dIntegrate``, ARG1)."""
    return _KIND_TABLE[joint.kind].jacobian(xp, joint, qj, vj)


def neutral(joint: Joint) -> np.ndarray:
    """The neutral configuration (nq,) as a NumPy array (identity transform)."""
    return np.array(_KIND_TABLE[joint.kind].neutral, dtype=float)


_UNIT_PARTS = {"spherical": slice(0, 4), "free_flyer": slice(3, 7), "planar": slice(2, 4)}
_FREE_KINDS = frozenset({"free_flyer", "planar"})


def unit_part(joint: Joint) -> slice | None:
    """The entries of the joint's own q (nq,) that must have unit norm: a quaternion (spherical,
    free flyer) or (cos, sin) (planar); None for the joints whose coordinates are free."""
    return _UNIT_PARTS.get(joint.kind)


def scalar(joint: Joint) -> bool:
    """Whether the joint is revolute, continuous or prismatic: one coordinate along or about one axis
    (the kernels' scalar joint model)."""
    return joint.kind in _SCALAR_KINDS


_SCALAR_KINDS = frozenset({"revolute", "continuous", "prismatic"})


def constant_subspace(joint: Joint) -> bool:
    """Whether the joint's motion subspace is constant in its child frame (every kind but the
    universal joint, whose first column turns with its second angle)."""
    return _KIND_TABLE[joint.kind].variations is _no_variations


def subspace_columns(joint: Joint) -> np.ndarray | None:
    """The motion subspace S (6, nv) of a joint whose subspace is constant in its child frame
    (:func:`constant_subspace`), as NumPy numbers (child axes, linear first); None otherwise."""
    columns = getattr(_KIND_TABLE[joint.kind].subspace, "columns", None)
    return None if columns is None else np.asarray(columns(joint), dtype=float)


def periodic_coordinates(joint: Joint) -> tuple[int, ...]:
    """Offsets within the joint's configuration (and velocity) of its periodic coordinates: angles that
    enter the joint's transform only through their sine and cosine (revolute and continuous joints,
    both angles of a universal joint; not a helical joint's angle, which also translates)."""
    return _KIND_TABLE[joint.kind].periodic


def moves_freely(joint: Joint) -> bool:
    """Whether the joint is a free-flyer or planar joint: unactuated (no damping, Coulomb friction or
    armature of its own) and, at the root of a tree, a floating base."""
    return joint.kind in _FREE_KINDS


def configuration_rate(joint: Joint, qj: np.ndarray, vj: np.ndarray) -> np.ndarray:
    """dq_j/dt (..., nq) of the joint's configuration moving with velocity ``vj`` (..., nv), NumPy arrays:
    ``vj`` itself where q is a vector space; a quaternion's kinematics 1/2 q (x) (w, 0) (Solà et al., "Quaternion
    kinematics for the error-state Kalman filter", eq. (109)) with, for a free flyer, the position's rate R v and,
    for a planar joint, (R2 (vx, vy), w (-sin, cos))."""
    from composedyn.dynamics.floating.lie import quaternion_multiply, se2_rate, se3_rate

    if joint.kind == "spherical":
        return 0.5 * quaternion_multiply(qj, np.concatenate([vj, np.zeros(vj.shape[:-1] + (1,))], -1))
    if joint.kind == "free_flyer":
        return se3_rate(qj, vj)
    if joint.kind == "planar":
        return se2_rate(qj, vj)
    return np.array(vj, dtype=float)


def velocity_adjoint(joint: Joint, vj: np.ndarray) -> np.ndarray | None:
    """ad_v (..., nv, nv) of the joint's velocity ``vj`` (..., nv), NumPy arrays, or None where the
    configuration adds (revolute, prismatic, helical, universal): a right perturbation q ⊕ δ moving with
    the joint obeys δ̇ = δv - ad_v δ (Solà, Deray, Atchuthan, "A micro Lie theory for state estimation
    in robotics", 2018).  Spherical: ω×; free flyer (u, ω), linear first: ad_(u,ω)(p, θ) = (ω × p +
    u × θ, ω × θ); planar (vx, vy, ω): (ω ẑ × p + u × θ ẑ, 0)."""
    from composedyn.dynamics.reference.spatial import skew

    if joint.kind == "spherical":
        return skew(vj)
    if joint.kind == "free_flyer":
        out = np.zeros(vj.shape[:-1] + (6, 6))
        out[..., :3, :3] = out[..., 3:, 3:] = skew(vj[..., 3:])
        out[..., :3, 3:] = skew(vj[..., :3])
        return out
    if joint.kind == "planar":
        out = np.zeros(vj.shape[:-1] + (3, 3))
        out[..., 0, 1], out[..., 1, 0] = -vj[..., 2], vj[..., 2]
        out[..., 0, 2], out[..., 1, 2] = vj[..., 1], -vj[..., 0]
        return out
    return None


def random_configuration(joint: Joint, rng: np.random.Generator, lower: Any = None, upper: Any = None) -> np.ndarray:
    """A random configuration (nq,) as a NumPy array.

    ``lower``/``upper`` (nq,) bound the coordinates that are positions or angles (Pinocchio's convention:
    the translation part of planar and free-flyer joints; quaternion and (cos, sin) entries are ignored, their
    rotation is uniform).  Without bounds, angles are drawn in [-π, π] and positions in [-1, 1] m.
    """
    ops = _KIND_TABLE[joint.kind]
    lo = np.full(ops.nq, np.nan) if lower is None else np.asarray(lower, dtype=float).reshape(-1)
    hi = np.full(ops.nq, np.nan) if upper is None else np.asarray(upper, dtype=float).reshape(-1)
    if lo.shape != (ops.nq,) or hi.shape != (ops.nq,):
        raise ValueError(f"joint '{joint.name}': lower/upper must have {ops.nq} entries ({joint.kind})")
    return ops.random(joint, rng, lo, hi)


# ------------------------------------------------------------------------------------------------------ helpers


def _like(xp: Any, ref: Array, value: Any) -> Array:
    """A constant as an array with ``ref``'s dtype and device."""
    return xp.asarray(np.asarray(value, dtype=float), dtype=ref.dtype, device=_device(ref))


def _device(ref: Array) -> Any:
    """The device of an array: None for NumPy's (the core install has no array-API package; the
    PyTorch and JAX extras bring ``array_api_compat``, imported here only for their arrays)."""
    if isinstance(ref, (np.ndarray, np.generic)):
        return None
    from array_api_compat import device

    return device(ref)


def _batch(*arrays: Array) -> tuple[int, ...]:
    """The broadcast batch shape of arrays whose last axis is a coordinate axis."""
    return tuple(np.broadcast_shapes(*(tuple(a.shape[:-1]) for a in arrays)))


def _zeros(xp: Any, ref: Array, shape: tuple[int, ...]) -> Array:
    return xp.zeros(shape, dtype=ref.dtype, device=_device(ref))


def _constant(xp: Any, ref: Array, value: Any, batch: tuple[int, ...]) -> Array:
    c = _like(xp, ref, value)
    return xp.broadcast_to(c, batch + tuple(c.shape))


def _cross(xp: Any, a: Array, b: Array) -> Array:
    return xp.stack(
        (
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ),
        axis=-1,
    )


def _dot(xp: Any, a: Array, b: Array) -> Array:
    return xp.sum(a * b, axis=-1)


def _skew(xp: Any, w: Array) -> Array:
    z = w[..., 0] * 0
    rows = (
        xp.stack((z, -w[..., 2], w[..., 1]), axis=-1),
        xp.stack((w[..., 2], z, -w[..., 0]), axis=-1),
        xp.stack((-w[..., 1], w[..., 0], z), axis=-1),
    )
    return xp.stack(rows, axis=-2)


def _matvec(xp: Any, m: Array, v: Array) -> Array:
    return xp.sum(m * v[..., None, :], axis=-1)


def _series(xp: Any, t2: Array, coeffs: tuple[float, ...], direct: Callable[[Array, Array], Array]) -> Array:
    """f(t) for a smooth even function given by ``direct(t, t2)`` and its Taylor ``coeffs`` in powers of t²."""
    small = t2 < _SERIES_LIMIT
    t2_big = xp.where(small, xp.ones_like(t2), t2)
    t2_small = xp.where(small, t2, xp.zeros_like(t2))
    poly = t2_small * 0 + coeffs[-1]
    for c in reversed(coeffs[:-1]):
        poly = poly * t2_small + c
    return xp.where(small, poly, direct(xp.sqrt(t2_big), t2_big))


def _sin_over(xp: Any, t2: Array) -> Array:  # sin t / t
    return _series(xp, t2, (1, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800), lambda t, s: xp.sin(t) / t)


def _one_minus_cos_over(xp: Any, t2: Array) -> Array:  # (1 - cos t) / t²
    return _series(
        xp, t2, (1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800, -1 / 479001600), lambda t, s: (1 - xp.cos(t)) / s
    )


def _one_minus_sinc_over(xp: Any, t2: Array) -> Array:  # (1 - sin t / t) / t²
    return _series(
        xp,
        t2,
        (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800, -1 / 6227020800),
        lambda t, s: (1 - xp.sin(t) / t) / s,
    )


def _beta(xp: Any, t2: Array) -> Array:  # 1/t² - sin t / (2 t (1 - cos t))
    return _series(
        xp,
        t2,
        (1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160, 691 / 1307674368000),
        lambda t, s: 1 / s - xp.sin(t) / (2 * t * (1 - xp.cos(t))),
    )


def _beta_dot_over(xp: Any, t2: Array) -> Array:  # beta'(t) / t
    return _series(
        xp,
        t2,
        (1 / 360, 1 / 7560, 1 / 201600, 1 / 5987520, 691 / 130767436800, 1 / 6227020800),
        lambda t, s: -2 / (s * s) + (1 + xp.sin(t) / t) / (s * 2 * (1 - xp.cos(t))),
    )


def _half_sin_over(xp: Any, t2: Array) -> Array:  # sin(t/2) / t
    return _series(
        xp,
        t2,
        (1 / 2, -1 / 48, 1 / 3840, -1 / 645120, 1 / 185794560, -1 / 81749606400),
        lambda t, s: xp.sin(t / 2) / t,
    )


def _half_cos(xp: Any, t2: Array) -> Array:  # cos(t/2)
    return _series(xp, t2, (1, -1 / 8, 1 / 384, -1 / 46080, 1 / 10321920, -1 / 3715891200), lambda t, s: xp.cos(t / 2))


def _axis_rotation(xp: Any, axis: tuple[float, float, float], angle: Array) -> Array:
    """Rotation (..., 3, 3) by ``angle`` (...) about a constant unit axis (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    k2 = k @ k
    s, c1, zero = xp.sin(angle), 1 - xp.cos(angle), xp.zeros_like(angle)

    def entry(i: int, j: int) -> Array:  # 1 + s K + (1 - c) K^2, entry by entry (no broadcast of s, c)
        e = zero + float(i == j)
        if k[i, j] != 0.0:
            e = e + float(k[i, j]) * s
        if k2[i, j] != 0.0:
            e = e + float(k2[i, j]) * c1
        return e

    return xp.stack([xp.stack([entry(i, j) for j in range(3)], axis=-1) for i in range(3)], axis=-2)


def _quat_rotation(xp: Any, q: Array) -> Array:
    """Rotation (..., 3, 3) of a unit quaternion (..., 4) ordered (x, y, z, w) (Eigen's formula)."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = (
        xp.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), axis=-1),
        xp.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), axis=-1),
        xp.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), axis=-1),
    )
    return xp.stack(rows, axis=-2)


def _quat_mul(xp: Any, a: Array, b: Array) -> Array:
    av, bv, aw, bw = a[..., :3], b[..., :3], a[..., 3:], b[..., 3:]
    vec = aw * bv + bw * av + _cross(xp, av, bv)
    return xp.concat((vec, aw * bw - _dot(xp, av, bv)[..., None]), axis=-1)


def _quat_conj(xp: Any, q: Array) -> Array:
    return xp.concat((-q[..., :3], q[..., 3:]), axis=-1)


def _quat_exp(xp: Any, w: Array) -> Array:
    """Unit quaternion (..., 4) of the rotation vector ``w`` (..., 3)."""
    t2 = _dot(xp, w, w)
    return xp.concat((_half_sin_over(xp, t2)[..., None] * w, _half_cos(xp, t2)[..., None]), axis=-1)


def _quat_log(xp: Any, q: Array) -> Array:
    """Rotation vector (..., 3) of a quaternion (..., 4), angle in [0, π] (Pinocchio's ``log3``)."""
    vec, w = q[..., :3], q[..., 3]
    sign = xp.where(w < 0, -xp.ones_like(w), xp.ones_like(w))
    wa = w * sign
    n2 = _dot(xp, vec, vec)
    # 2 atan2(n, wa) / n, with its series (2/wa)(1 - r/3 + r²/5 - ...), r = n²/wa², for small n
    small = n2 < 1e-4 * wa * wa
    n2_big = xp.where(small, xp.ones_like(n2), n2)
    n_big = xp.sqrt(n2_big)
    wa_safe = xp.where(small, wa, xp.ones_like(wa))
    r = xp.where(small, n2 / (wa_safe * wa_safe), xp.zeros_like(n2))
    series = (2 / wa_safe) * (1 - r / 3 + r * r / 5 - r * r * r / 7)
    factor = xp.where(small, series, 2 * xp.atan2(n_big, wa) / n_big)
    return (sign * factor)[..., None] * vec


def _unit(xp: Any, q: Array) -> Array:
    """The quaternion (..., 4) divided by its norm, as the Robot takes a configuration's quaternion
    (any finite norm; a zero quaternion gives NaN, never a finite wrong pose), so that gradients with
    respect to it are tangent to the unit sphere."""
    norm = xp.sqrt(_dot(xp, q, q))
    return xp.stack([c / norm for c in rows(xp, q, axis=-1)], axis=-1)  # entry by entry: no broadcast


def _unit_pair(xp: Any, c: Array, s: Array) -> tuple[Array, Array]:
    """A planar joint's (cos θ, sin θ) divided by its norm (zero gives NaN), as :func:`_unit`."""
    r = xp.sqrt(c * c + s * s)
    return c / r, s / r


def _first_order_normalize(xp: Any, q: Array) -> Array:
    return q * ((3 - _dot(xp, q, q)) / 2)[..., None]


def _so3_jexp(xp: Any, w: Array) -> Array:
    """Right Jacobian of exp on SO(3) (..., 3, 3) (Pinocchio's ``Jexp3``)."""
    t2 = _dot(xp, w, w)
    a = _sin_over(xp, t2)[..., None, None]
    b = _one_minus_cos_over(xp, t2)[..., None, None]
    c = _one_minus_sinc_over(xp, t2)[..., None, None]
    eye = _like(xp, w, np.eye(3))
    return a * eye - b * _skew(xp, w) + c * (w[..., :, None] * w[..., None, :])


def _se3_exp_translation(xp: Any, lin: Array, w: Array) -> Array:
    """The translation of exp6((lin, w)) (..., 3)."""
    t2 = _dot(xp, w, w)
    wxl = _cross(xp, w, lin)
    a = _one_minus_cos_over(xp, t2)[..., None]
    b = _one_minus_sinc_over(xp, t2)[..., None]
    return lin + a * wxl + b * _cross(xp, w, wxl)


def _se3_log_linear(xp: Any, p: Array, w: Array) -> Array:
    """The linear part of log6 of the transform (exp3(w), p) (..., 3)."""
    wxp = _cross(xp, w, p)
    return p - wxp / 2 + _beta(xp, _dot(xp, w, w))[..., None] * _cross(xp, w, wxp)


def _se3_jexp(xp: Any, lin: Array, w: Array) -> Array:
    """Right Jacobian of exp on SE(3) (..., 6, 6), linear first (Pinocchio's ``Jexp6``)."""
    t2 = _dot(xp, w, w)
    jr = _so3_jexp(xp, w)
    p = _matvec(xp, xp.matrix_transpose(jr), lin)
    wtp = _dot(xp, w, p)[..., None, None]
    beta = _beta(xp, t2)[..., None, None]
    bdot = _beta_dot_over(xp, t2)[..., None, None]
    outer = lambda a, b: a[..., :, None] * b[..., None, :]  # noqa: E731
    eye = _like(xp, w, np.eye(3))
    j = (
        _skew(xp, p) / 2
        + bdot * wtp * outer(w, w)
        - (t2[..., None, None] * bdot + 2 * beta) * outer(p, w)
        + wtp * beta * eye
        + beta * outer(w, p)
    )
    top = xp.concat((jr, -(jr @ j)), axis=-1)
    bottom = xp.concat((xp.zeros_like(jr), jr), axis=-1)
    return xp.concat((top, bottom), axis=-2)


def _identity_jacobian(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return _constant(xp, vj, np.eye(joint.nv), _batch(qj, vj))


def _add(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return qj + vj


def _subtract(xp: Any, joint: Joint, q0: Array, q1: Array) -> Array:
    return q1 - q0


def _no_bias(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return _zeros(xp, vj, _batch(qj, vj) + (6,))


def _constant_s(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return _zeros(xp, vj, _batch(qj, vj) + (6, joint.nv))


def _uniform(rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray, default: float) -> np.ndarray:
    lo = np.where(np.isfinite(lo), lo, -default)
    hi = np.where(np.isfinite(hi), hi, default)
    return rng.uniform(lo, hi)


def _random_quaternion(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


# --------------------------------------------------------------------------------------------------- the kinds


def _revolute_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    return _axis_rotation(xp, joint.axis, qj[..., 0]), _zeros(xp, qj, _batch(qj) + (3,))


def _prismatic_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    return _constant(xp, qj, np.eye(3), _batch(qj)), xp.stack([qj[..., 0] * float(a) for a in joint.axis], axis=-1)


def _helical_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    return _axis_rotation(xp, joint.axis, qj[..., 0]), qj * _like(xp, qj, np.multiply(joint.axis, joint.pitch))


def _constant_subspace(columns: Callable[[Joint], np.ndarray]) -> Callable[[Any, Joint, Array], Array]:
    def subspace(xp: Any, joint: Joint, qj: Array) -> Array:
        return _constant(xp, qj, columns(joint), _batch(qj))

    subspace.columns = columns
    return subspace


def _revolute_s(joint: Joint) -> np.ndarray:
    return np.concatenate((np.zeros(3), joint.axis))[:, None]


def _prismatic_s(joint: Joint) -> np.ndarray:
    return np.concatenate((joint.axis, np.zeros(3)))[:, None]


def _helical_s(joint: Joint) -> np.ndarray:
    return np.concatenate((np.multiply(joint.axis, joint.pitch), joint.axis))[:, None]


def _random_angles(joint: Joint, rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return _uniform(rng, lo, hi, math.pi)


def _random_positions(joint: Joint, rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return _uniform(rng, lo, hi, 1.0)


def _universal_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    r1 = _axis_rotation(xp, joint.axis, qj[..., 0])
    r2 = _axis_rotation(xp, joint.axis2, qj[..., 1])
    return r1 @ r2, _zeros(xp, qj, _batch(qj) + (3,))


def _universal_first_axis(xp: Any, joint: Joint, qj: Array) -> Array:
    """The first axis in the child frame, R2ᵀ axis (..., 3)."""
    r2 = _axis_rotation(xp, joint.axis2, qj[..., 1])
    return _matvec(xp, xp.matrix_transpose(r2), _like(xp, qj, joint.axis))


def _universal_subspace(xp: Any, joint: Joint, qj: Array) -> Array:
    a1 = _universal_first_axis(xp, joint, qj)
    a2 = xp.broadcast_to(_like(xp, qj, joint.axis2), a1.shape)
    angular = xp.stack((a1, a2), axis=-1)
    return xp.concat((xp.zeros_like(angular), angular), axis=-2)


def _universal_rate(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    """The first column turns with the second angle: d(R2ᵀ axis)/dt = (R2ᵀ axis) × axis2 q̇2; the second is fixed."""
    a1 = _universal_first_axis(xp, joint, qj)
    a2 = xp.broadcast_to(_like(xp, qj, joint.axis2), a1.shape)
    col = _cross(xp, a1, a2) * vj[..., 1:2]
    col = xp.concat((xp.zeros_like(col), col), axis=-1)
    return xp.stack((col, xp.zeros_like(col)), axis=-1)


def _universal_bias(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    a1 = _universal_first_axis(xp, joint, qj)
    a2 = xp.broadcast_to(_like(xp, qj, joint.axis2), a1.shape)
    angular = _cross(xp, a1, a2) * (vj[..., 0] * vj[..., 1])[..., None]
    return xp.concat((xp.zeros_like(angular), angular), axis=-1)


def _universal_variations(xp: Any, joint: Joint, qj: Array, vj: Array) -> tuple[Array, Array, Array]:
    """Only the first column moves, with the second angle: d(R2ᵀ axis)/dq2 = w = (R2ᵀ axis) × axis2, so
    c = (0, w) q̇1 q̇2, dc/dq2 = (0, w × axis2) q̇1 q̇2, dc/dv = (0, w q̇2), (0, w q̇1)."""
    a1 = _universal_first_axis(xp, joint, qj)
    a2 = xp.broadcast_to(_like(xp, qj, joint.axis2), a1.shape)
    w = _cross(xp, a1, a2)
    v1, v2 = vj[..., 0:1], vj[..., 1:2]
    zero = xp.zeros_like(w)

    def six(x):
        return xp.concat((xp.zeros_like(x), x), axis=-1)

    G = xp.stack((xp.stack((six(zero), six(w)), axis=-1), xp.stack((six(zero), six(zero)), axis=-1)), axis=-2)
    dc_dq = xp.stack((six(zero), six(_cross(xp, w, a2) * v1 * v2)), axis=-1)
    dc_dv = xp.stack((six(w * v2), six(w * v1)), axis=-1)
    return G, dc_dq, dc_dv


def _no_variations(xp: Any, joint: Joint, qj: Array, vj: Array) -> None:
    return None


def _spherical_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    return _quat_rotation(xp, _unit(xp, qj)), _zeros(xp, qj, _batch(qj) + (3,))


def _spherical_integrate(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return _first_order_normalize(xp, _quat_mul(xp, _unit(xp, qj), _quat_exp(xp, vj)))


def _spherical_difference(xp: Any, joint: Joint, q0: Array, q1: Array) -> Array:
    return _quat_log(xp, _quat_mul(xp, _quat_conj(xp, _unit(xp, q0)), _unit(xp, q1)))


def _spherical_jacobian(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return xp.broadcast_to(_so3_jexp(xp, vj), _batch(qj, vj) + (3, 3))


def _random_spherical(joint: Joint, rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return _random_quaternion(rng)


def _planar_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    c, s = _unit_pair(xp, qj[..., 2], qj[..., 3])
    z, one = c * 0, c * 0 + 1
    rot = xp.stack(
        (xp.stack((c, -s, z), axis=-1), xp.stack((s, c, z), axis=-1), xp.stack((z, z, one), axis=-1)), axis=-2
    )
    return rot, xp.stack((qj[..., 0], qj[..., 1], z), axis=-1)


def _planar_integrate(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    (x0, y0), (c0, s0) = (qj[..., 0], qj[..., 1]), _unit_pair(xp, qj[..., 2], qj[..., 3])
    vx, vy, om = vj[..., 0], vj[..., 1], vj[..., 2]
    t2 = om * om
    a = _sin_over(xp, t2)  # sin ω / ω
    b = om * _one_minus_cos_over(xp, t2)  # (1 - cos ω) / ω
    tx, ty = a * vx - b * vy, b * vx + a * vy
    c, s = xp.cos(om), xp.sin(om)
    return xp.stack((c0 * tx - s0 * ty + x0, s0 * tx + c0 * ty + y0, c0 * c - s0 * s, s0 * c + c0 * s), axis=-1)


def _planar_difference(xp: Any, joint: Joint, q0: Array, q1: Array) -> Array:
    (c0, s0), (c1, s1) = _unit_pair(xp, q0[..., 2], q0[..., 3]), _unit_pair(xp, q1[..., 2], q1[..., 3])
    dx, dy = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
    px, py = c0 * dx + s0 * dy, -s0 * dx + c0 * dy
    theta = xp.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    alpha = 1 - theta * theta * _beta(xp, theta * theta)  # θ sin θ / (2 (1 - cos θ))
    return xp.stack((alpha * px + theta / 2 * py, alpha * py - theta / 2 * px, theta), axis=-1)


def _planar_jacobian(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    z = vj[..., 0] * 0
    lin = xp.stack((vj[..., 0], vj[..., 1], z), axis=-1)
    w = xp.stack((z, z, vj[..., 2]), axis=-1)
    j6 = _se3_jexp(xp, lin, w)
    rows = xp.concat((j6[..., 0:2, :], j6[..., 5:6, :]), axis=-2)
    j3 = xp.concat((rows[..., :, 0:2], rows[..., :, 5:6]), axis=-1)
    return xp.broadcast_to(j3, _batch(qj, vj) + (3, 3))


def _random_planar(joint: Joint, rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    th = rng.uniform(-math.pi, math.pi)
    return np.concatenate((_uniform(rng, lo[:2], hi[:2], 1.0), [math.cos(th), math.sin(th)]))


def _free_flyer_transform(xp: Any, joint: Joint, qj: Array) -> tuple[Array, Array]:
    return _quat_rotation(xp, _unit(xp, qj[..., 3:7])), qj[..., 0:3]


def _free_flyer_integrate(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    quat0, lin, w = _unit(xp, qj[..., 3:7]), vj[..., 0:3], vj[..., 3:6]
    p = qj[..., 0:3] + _matvec(xp, _quat_rotation(xp, quat0), _se3_exp_translation(xp, lin, w))
    quat = _quat_mul(xp, quat0, _quat_exp(xp, w))
    same_side = _dot(xp, quat, quat0)[..., None] >= 0
    quat = _first_order_normalize(xp, xp.where(same_side, quat, -quat))
    return xp.concat((p, quat), axis=-1)


def _free_flyer_difference(xp: Any, joint: Joint, q0: Array, q1: Array) -> Array:
    quat0 = _unit(xp, q0[..., 3:7])
    p = _matvec(xp, xp.matrix_transpose(_quat_rotation(xp, quat0)), q1[..., 0:3] - q0[..., 0:3])
    w = _quat_log(xp, _quat_mul(xp, _quat_conj(xp, quat0), _unit(xp, q1[..., 3:7])))
    return xp.concat((_se3_log_linear(xp, p, w), w), axis=-1)


def _free_flyer_jacobian(xp: Any, joint: Joint, qj: Array, vj: Array) -> Array:
    return xp.broadcast_to(_se3_jexp(xp, vj[..., 0:3], vj[..., 3:6]), _batch(qj, vj) + (6, 6))


def _random_free_flyer(joint: Joint, rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.concatenate((_uniform(rng, lo[:3], hi[:3], 1.0), _random_quaternion(rng)))


class _KindOps(NamedTuple):
    nq: int
    nv: int
    transform: Callable[[Any, Joint, Array], tuple[Array, Array]]
    subspace: Callable[[Any, Joint, Array], Array]
    subspace_rate: Callable[[Any, Joint, Array, Array], Array]
    bias: Callable[[Any, Joint, Array, Array], Array]
    integrate: Callable[[Any, Joint, Array, Array], Array]
    difference: Callable[[Any, Joint, Array, Array], Array]
    jacobian: Callable[[Any, Joint, Array, Array], Array]
    neutral: tuple[float, ...]
    random: Callable[[Joint, np.random.Generator, np.ndarray, np.ndarray], np.ndarray]
    variations: Callable[[Any, Joint, Array, Array], Any] = _no_variations
    periodic: tuple[int, ...] = ()


_VECTOR_SPACE = {"integrate": _add, "difference": _subtract, "jacobian": _identity_jacobian}
_CONSTANT_S = {"subspace_rate": _constant_s, "bias": _no_bias}
_REVOLUTE = _KindOps(
    nq=1, nv=1, transform=_revolute_transform, subspace=_constant_subspace(_revolute_s), neutral=(0.0,),
    random=_random_angles, periodic=(0,), **_CONSTANT_S, **_VECTOR_SPACE,
)  # fmt: skip

_KIND_TABLE: dict[str, _KindOps] = {
    "revolute": _REVOLUTE,
    "continuous": _REVOLUTE,
    "prismatic": _KindOps(
        nq=1, nv=1, transform=_prismatic_transform, subspace=_constant_subspace(_prismatic_s), neutral=(0.0,),
        random=_random_positions, **_CONSTANT_S, **_VECTOR_SPACE,
    ),
    "helical": _KindOps(
        nq=1, nv=1, transform=_helical_transform, subspace=_constant_subspace(_helical_s), neutral=(0.0,),
        random=_random_angles, **_CONSTANT_S, **_VECTOR_SPACE,
    ),
    "universal": _KindOps(
        nq=2, nv=2, transform=_universal_transform, subspace=_universal_subspace, subspace_rate=_universal_rate,
        bias=_universal_bias, neutral=(0.0, 0.0), random=_random_angles, variations=_universal_variations,
        periodic=(0, 1), **_VECTOR_SPACE,
    ),
    "spherical": _KindOps(
        nq=4, nv=3, transform=_spherical_transform,
        subspace=_constant_subspace(lambda j: np.vstack((np.zeros((3, 3)), np.eye(3)))), **_CONSTANT_S,
        integrate=_spherical_integrate, difference=_spherical_difference, jacobian=_spherical_jacobian,
        neutral=(0.0, 0.0, 0.0, 1.0), random=_random_spherical,
    ),
    "planar": _KindOps(
        nq=4, nv=3, transform=_planar_transform, subspace=_constant_subspace(lambda j: np.eye(6)[:, [0, 1, 5]]),
        **_CONSTANT_S, integrate=_planar_integrate, difference=_planar_difference, jacobian=_planar_jacobian,
        neutral=(0.0, 0.0, 1.0, 0.0), random=_random_planar,
    ),
    "free_flyer": _KindOps(
        nq=7, nv=6, transform=_free_flyer_transform, subspace=_constant_subspace(lambda j: np.eye(6)),
        **_CONSTANT_S, integrate=_free_flyer_integrate, difference=_free_flyer_difference,
        jacobian=_free_flyer_jacobian, neutral=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), random=_random_free_flyer,
    ),
}  # fmt: skip

assert tuple(_KIND_TABLE) == KINDS
