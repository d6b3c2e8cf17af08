"""Conversions of free-flyer (floating-base) coordinates between Pinocchio, MuJoCo and Drake.

A floating base is one rigid body free in space: position ``p`` of its frame's origin in the world
(m), orientation ``R`` (world <- base) as a unit quaternion, and the joints behind it.  The three
conventions differ in the quaternion's place and order and in the axes of the base velocity:

============  ==============================  ==============================================  =========
convention    q (nq = 7 + n)                  v (nv = 6 + n)                                  a
============  ==============================  ==============================================  =========
pinocchio     (x, y, z, qx, qy, qz, qw, j..)  (R^T dp/dt, w_b, dj/dt..): both in base axes    dv/dt
mujoco        (x, y, z, qw, qx, qy, qz, j..)  (dp/dt, w_b, dj/dt..): world linear, base angular  dv/dt
drake         (qw, qx, qy, qz, x, y, z, j..)  (R w_b, dp/dt, dj/dt..): angular first, world axes  dv/dt
============  ==============================  ==============================================  =========

``w_b`` is the base's angular velocity in base axes (rad/s), ``dR/dt = R [w_b]x``; ``dp/dt`` the
velocity of the base origin in world axes (m/s).  "composedyn" is an alias of "pinocchio" (the
convention of ``cd.load(..., floating=True)``).  Joint entries pass through unchanged.

Every convention's acceleration is the time derivative of its own velocity, so the base part of
``a`` changes with the axes: with ``v_b = R^T dp/dt`` (Pinocchio's linear velocity),

    d/dt (dp/dt) = R (dv_b/dt + w_b x v_b),        d/dt (R w_b) = R dw_b/dt     (w_b x w_b = 0).

Pinocchio's free-flyer ``a`` is therefore the derivative of the body-frame twist components, not the
classical acceleration of the origin (which is MuJoCo's linear ``qacc``).

The velocity maps are orthogonal (rotations and a permutation): if ``v_target = T(q) v_source``
then ``T^{-1} = T^T`` and generalised forces, dual to velocities through the power ``tau . v``,
map with ``T^{-T} = T``: the same formulas (:func:`convert_floating_forces`).

References
----------
Pinocchio documentation, "JointModelFreeFlyer" (configuration xyz + quaternion xyzw, body twist).
MuJoCo documentation, "Computation / Free joint" (qpos xyz + quaternion wxyz, qvel world linear and
local angular velocity).  Drake documentation, ``QuaternionFloatingJoint`` (q = quaternion wxyz,
position; v = angular velocity w_WB_W, translational velocity v_WB_W, both in world axes).
"""

from __future__ import annotations

import difflib

import numpy as np

from composedyn.dynamics.floating.lie import quaternion_matrix, unit_and_norm

CONVENTIONS: tuple[str, ...] = ("pinocchio", "mujoco", "drake")
_ALIASES = {"composedyn": "pinocchio"}

# q layout: indices of (x, y, z) and of the quaternion read as (qx, qy, qz, qw)
_POSITION = {"pinocchio": [0, 1, 2], "mujoco": [0, 1, 2], "drake": [4, 5, 6]}
_QUAT_XYZW = {"pinocchio": [3, 4, 5, 6], "mujoco": [4, 5, 6, 3], "drake": [1, 2, 3, 0]}


def _convention(name: str, role: str) -> str:
    """Canonical name of a convention, or ValueError listing the known ones."""
    key = str(name).lower()
    key = _ALIASES.get(key, key)
    if key not in CONVENTIONS:
        known = list(CONVENTIONS) + list(_ALIASES)
        close = difflib.get_close_matches(key, known, n=2)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"unknown {role} free-flyer convention {name!r}{hint}; known: {', '.join(known)}")
    return key


def _rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3), world <- base, of quaternions (..., 4) (x, y, z, w), normalised first;
    ValueError for a zero-norm or non-finite quaternion."""
    unit, norm = unit_and_norm(quat_xyzw)
    norm = norm[..., 0]
    bad = ~(np.isfinite(norm) & (norm > 0.0))
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(bad) else ()
        at = f" at batch index {where}" if where else ""
        raise ValueError(f"base quaternion{at} has zero norm or is not finite: {quat_xyzw[where]}")
    return quaternion_matrix(unit)


def _apply(R: np.ndarray, x: np.ndarray, transpose: bool = False) -> np.ndarray:
    """R x (or R^T x) for rotations (..., 3, 3) and vectors (..., 3), broadcast."""
    return np.einsum("...ji,...j->...i" if transpose else "...ij,...j->...i", R, x)


def _base_to_pinocchio(conv: str, R: np.ndarray, v: np.ndarray, a: np.ndarray | None):
    """Base velocity (and acceleration) of ``conv`` -> Pinocchio's (v_b, w_b) and (dv_b/dt, dw_b/dt)."""
    if conv == "pinocchio":
        return v[..., :3], v[..., 3:6], (None if a is None else a[..., :3]), (None if a is None else a[..., 3:6])
    if conv == "mujoco":
        pdot, w_b = v[..., :3], v[..., 3:6]
        wdot_b = None if a is None else a[..., 3:6]
        pddot = None if a is None else a[..., :3]
    else:  # drake
        w_b, pdot = _apply(R, v[..., :3], True), v[..., 3:6]
        wdot_b = None if a is None else _apply(R, a[..., :3], True)
        pddot = None if a is None else a[..., 3:6]
    v_b = _apply(R, pdot, True)
    vdot_b = None if a is None else _apply(R, pddot, True) - np.cross(w_b, v_b)
    return v_b, w_b, vdot_b, wdot_b


def _base_from_pinocchio(conv: str, R: np.ndarray, v_b, w_b, vdot_b, wdot_b):
    """Pinocchio's base velocity (and acceleration) -> the first six entries of ``conv``'s v (and a)."""
    if conv == "pinocchio":
        return np.concatenate([v_b, w_b], -1), (None if vdot_b is None else np.concatenate([vdot_b, wdot_b], -1))
    pdot = _apply(R, v_b)
    pddot = None if vdot_b is None else _apply(R, vdot_b + np.cross(w_b, v_b))
    if conv == "mujoco":
        return np.concatenate([pdot, w_b], -1), (None if vdot_b is None else np.concatenate([pddot, wdot_b], -1))
    v = np.concatenate([_apply(R, w_b), pdot], -1)  # drake
    return v, (None if vdot_b is None else np.concatenate([_apply(R, wdot_b), pddot], -1))


def _array(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array of shape (..., n), got a scalar")
    return arr


def convert_floating(q, v=None, a=None, *, source: str = "pinocchio", target: str = "mujoco",
                     normalize: bool = False, joints=None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Free-flyer configuration, velocity and acceleration from one convention to another.

    Parameters
    ----------
    q : (..., nq) configuration in ``source`` order, nq = 7 + n joints; the quaternion need not be
        of unit norm (it is moved, not changed; rotations use its normalised value) but not zero.
    v : (..., nv) velocity, nv = nq - 1 = 6 + n, or None.  Base part: see the module table
        (m/s, rad/s); leading axes broadcast with those of ``q``.
    a : (..., nv) acceleration = d/dt of ``v`` in the ``source`` convention (m/s^2, rad/s^2), or
        None.  Needs ``v`` (the change of axes adds velocity terms, e.g. d/dt(R v_b) = R(dv_b/dt +
        w_b x v_b)).
    source, target : "pinocchio" (alias "composedyn"), "mujoco" or "drake" (:data:`CONVENTIONS`).
    normalize : divide the output quaternion by its norm (default False: lossless).
    joints : a robot's joint records (``robot.joints``) for a robot with joints of several coordinates:
        a free-flyer root joint is the base above (none: no base), and each spherical joint's quaternion
        is reordered too ((x, y, z, w) in Pinocchio's convention, (w, x, y, z) in MuJoCo's; its angular
        velocity, in the child frame, is the same in both; Drake's ball joint has roll-pitch-yaw
        coordinates and is refused).

    Returns
    -------
    (q, v, a) in ``target`` convention: new arrays, ``q`` of the shape of the input ``q``, ``v`` and ``a``
    of the broadcast batch shape (..., nv), None where they were given as None.  Joint entries are
    copied unchanged, and everything when source and target are the same convention.  Round trips
    through any conventions return ``q`` exactly and ``v``, ``a`` up to rounding (~1e-16 relative).

    Raises
    ------
    ValueError : unknown convention; nq < 7; nv != nq - 1; a without v or of another length than v;
        a quaternion of zero norm (or not finite); batch shapes that do not broadcast.
    """
    src, tgt = _convention(source, "source"), _convention(target, "target")
    q = _array(q, "q")
    if joints is not None:
        return _convert_joints(q, v, a, src, tgt, normalize, tuple(joints))
    nq = q.shape[-1]
    if nq < 7:
        raise ValueError(f"a free-flyer configuration q has 7 base entries plus the joints, got q of length {nq}")
    if v is None and a is not None:
        raise ValueError("converting the acceleration a needs the velocity v (the change of axes depends on it)")
    for name, x in (("v", v), ("a", a)):
        if x is not None and np.shape(x)[-1:] != (nq - 1,):
            got = f"length {np.shape(x)[-1]}" if np.ndim(x) else "no length (a scalar)"
            raise ValueError(f"{name} has {got} but q has length {nq}: a free flyer has "
                             f"nv = nq - 1 = {nq - 1} (3 position + 4 quaternion entries, 6 base velocities)")
    quat = q[..., _QUAT_XYZW[src]]
    R = _rotation(quat)
    if normalize:
        quat = unit_and_norm(quat)[0]
    q_out = np.empty_like(q)
    q_out[..., _POSITION[tgt]] = q[..., _POSITION[src]]
    q_out[..., _QUAT_XYZW[tgt]] = quat
    q_out[..., 7:] = q[..., 7:]
    if v is None:
        return q_out, None, None
    v = _array(v, "v")
    a = None if a is None else _array(a, "a")
    try:
        shape = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], () if a is None else a.shape[:-1])
    except ValueError:
        raise ValueError(f"batch shapes do not broadcast: q {q.shape}, v {v.shape}"
                         + ("" if a is None else f", a {a.shape}")) from None
    v = np.broadcast_to(v, shape + v.shape[-1:])
    a = None if a is None else np.broadcast_to(a, shape + a.shape[-1:])
    R = np.broadcast_to(R, shape + (3, 3))
    if src == tgt:
        return q_out, v.copy(), (None if a is None else a.copy())
    base_v, base_a = _base_from_pinocchio(tgt, R, *_base_to_pinocchio(src, R, v, a))
    v_out = np.concatenate([base_v, v[..., 6:]], -1)
    return q_out, v_out, (None if a is None else np.concatenate([base_a, a[..., 6:]], -1))



def convert_floating_forces(q, tau, *, source: str = "pinocchio", target: str = "mujoco", joints=None) -> np.ndarray:
    """Free-flyer generalised forces from one convention to another.

    Parameters
    ----------
    q : (..., nq) configuration in ``source`` order (as for :func:`convert_floating`).
    tau : (..., nv) generalised forces dual to the ``source`` velocity: base force (N) and moment
        about the base origin (N m) in that convention's axes and order, then joint torques/forces.

    Returns
    -------
    (..., nv) forces dual to the ``target`` velocity, ``tau_t = T^{-T} tau_s`` for ``v_t = T v_s``, so
    that the power ``tau . v`` is unchanged.  ``T`` is orthogonal (block rotations and a
    permutation), hence ``T^{-T} = T``: forces map like velocities, e.g. Pinocchio's base wrench
    (f_b, m_b) in base axes becomes MuJoCo's (R f_b, m_b) and Drake's (R m_b, R f_b).
    ``joints``: as for :func:`convert_floating` (a ball joint's torque is the same in both).
    """
    return convert_floating(q, tau, source=source, target=target, joints=joints)[1]


_BALL_XYZW = {"pinocchio": [0, 1, 2, 3], "mujoco": [1, 2, 3, 0]}  # a ball joint's quaternion, read as (x, y, z, w)


def _convert_joints(q, v, a, src: str, tgt: str, normalize: bool, joints: tuple):
    """:func:`convert_floating` with ``joints``: the free-flyer root as the base, ball quaternions reordered."""
    from composedyn.dynamics.array_api.joints import moves_freely, unit_part

    nq, nv = sum(j.nq for j in joints), sum(j.nv for j in joints)
    if q.shape[-1] != nq:
        raise ValueError(f"q has length {q.shape[-1]}; the joints have nq = {nq}")
    if v is None and a is not None:
        raise ValueError("converting the acceleration a needs the velocity v (the change of axes depends on it)")
    rates = [None if x is None else _array(x, name) for name, x in (("v", v), ("a", a))]
    for name, x in zip(("v", "a"), rates):
        if x is not None and x.shape[-1] != nv:
            raise ValueError(f"{name} has length {x.shape[-1]}; the joints have nv = {nv}")
    base = bool(joints) and moves_freely(joints[0]) and joints[0].nv == 6
    balls = [j for j in joints[int(base):] if (part := unit_part(j)) is not None and part.stop - part.start == 4]
    if balls and "drake" in (src, tgt) and src != tgt:
        raise ValueError(f"joint {balls[0].name!r} is spherical: Drake's ball joint has roll-pitch-yaw coordinates, "
                         "which this conversion does not produce")
    q_out = q.copy()
    v_out, a_out = (None if x is None else x.copy() for x in rates)
    if base:
        qb, vb, ab = convert_floating(q[..., :7], None if v is None else rates[0][..., :6],
                                      None if a is None else rates[1][..., :6], source=src, target=tgt,
                                      normalize=normalize)
        shape = qb.shape[:-1] if vb is None else vb.shape[:-1]
        q_out = np.array(np.broadcast_to(q_out, shape + q_out.shape[-1:]))
        q_out[..., :7] = qb
        if vb is not None:
            v_out = np.array(np.broadcast_to(v_out, shape + v_out.shape[-1:]))
            v_out[..., :6] = vb
        if ab is not None:
            a_out = np.array(np.broadcast_to(a_out, shape + a_out.shape[-1:]))
            a_out[..., :6] = ab
    for j in balls:
        k = j.idx_q + np.array(_BALL_XYZW.get(src, _BALL_XYZW["pinocchio"]))
        quat = q[..., k]
        if normalize:
            quat = unit_and_norm(quat)[0]
        q_out[..., j.idx_q + np.array(_BALL_XYZW.get(tgt, _BALL_XYZW["pinocchio"]))] = quat
    return q_out, v_out, a_out
