"""Velocities and accelerations of a sampled free-flyer motion (base pose + joints).

A floating-base trajectory gives the base pose as position ``p`` (world) and
unit quaternion ``u`` (x, y, z, w) per sample.  Missing rates come from the
same splines as a fixed-base joint trajectory
(:func:`composedyn.torque_check.chunked.differentiate_chunks`: the interpolating quintic
spline by default, a smoothing spline on request, in overlapping windows),
fitted to the position, to the quaternion's four components (made
sign-continuous first: ``u`` and ``-u`` are the same orientation) and to the
joints, and then mapped to Pinocchio's free-flyer tangent coordinates:

    v_lin = Rᵀ ṗ,                      ω = 2 vec(u* ⊗ u̇)          (base axes)
    a_lin = Rᵀ p̈ - ω × v_lin,          ω̇ = 2 vec(u* ⊗ ü)

(``a`` is the time derivative of the body twist ``v``; ``u* ⊗ u̇`` has a zero
scalar part for a unit quaternion, and d/dt (u* ⊗ u̇) = u̇* ⊗ u̇ + u* ⊗ ü with a
scalar first term).  The fitted quaternion is not exactly of unit norm between
samples; ``u = q / |q|`` and its derivatives are taken from the fitted ``q``
exactly (quotient rule).  Given body twists ``v`` are differentiated directly
for ``a``.

References
----------
J. Solà, "Quaternion kinematics for the error-state Kalman filter",
arXiv:1711.02508, eq. (109) (q̇ = ½ q ⊗ ω for the local angular velocity).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.floating.lie import quaternion_matrix, quaternion_multiply


def continuous_quaternions(quat: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
    """Quaternions (T, 4) with signs flipped so that consecutive ones have a positive dot product
    (``previous``: the sample before the first, if any)."""
    quat = np.array(quat, dtype=float)
    ref = previous
    sign = np.ones(len(quat))
    for k in range(len(quat)):
        if ref is not None and quat[k] @ ref < 0:
            sign[k] = -1.0
        ref = sign[k] * quat[k]
    return quat * sign[:, None]


def _conj(u: np.ndarray) -> np.ndarray:
    return np.concatenate([-u[..., :3], u[..., 3:]], -1)


def twist_from_pose(p: np.ndarray, pd: np.ndarray, pdd: np.ndarray, q: np.ndarray, qd: np.ndarray,
                    qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Body twist v (..., 6) and its derivative a (..., 6), linear first, base axes, from the world
    position p and a (not necessarily unit) quaternion q (x, y, z, w) with first and second time
    derivatives (see the module docstring)."""
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    u = q / n
    nd = np.sum(u * qd, -1, keepdims=True)
    ud = (qd - nd * u) / n
    ndd = np.sum(ud * qd, -1, keepdims=True) + np.sum(u * qdd, -1, keepdims=True)
    udd = (qdd - ndd * u - 2 * nd * ud) / n
    uc = _conj(u)
    w = 2 * quaternion_multiply(uc, ud)[..., :3]
    wd = 2 * quaternion_multiply(uc, udd)[..., :3]
    Rt = np.swapaxes(quaternion_matrix(u), -1, -2)
    vl = np.einsum("...ij,...j->...i", Rt, pd)
    al = np.einsum("...ij,...j->...i", Rt, pdd) - np.cross(w, vl)
    return np.concatenate([vl, w], -1), np.concatenate([al, wd], -1)


def floating_rates(t: np.ndarray, q: np.ndarray, v: np.ndarray | None = None, a: np.ndarray | None = None,
                   smoothing: float | str = 0.0, jerk: bool = False):
    """(v (T, nv), a (T, nv), joint jerk (T, n) or None) of a free-flyer trajectory q (T, 7 + n)
    sampled at t (T,), keeping the given v and a.

    ``smoothing``: as in :func:`composedyn.check_trajectory`; ``jerk``: also the joints' third
    derivative (of q, v or a, whichever is the highest given)."""
    from composedyn.torque_check.chunked import differentiate_chunks

    if a is not None and v is None:
        raise ValueError("base and joint accelerations need velocities too")
    y = np.concatenate([q[:, :3], continuous_quaternions(q[:, 3:7]), q[:, 7:]], 1)
    block = (t, y) + tuple(x for x in (v, a) if x is not None)
    parts = [np.concatenate(c) if c[0] is not None else None
             for c in zip(*differentiate_chunks([block], smoothing, jerk))]
    _, _, yd, ydd, yddd = parts
    if v is None:
        vb, ab = twist_from_pose(y[:, :3], yd[:, :3], ydd[:, :3], y[:, 3:7], yd[:, 3:7], ydd[:, 3:7])
        v, a = np.concatenate([vb, yd[:, 7:]], 1), np.concatenate([ab, ydd[:, 7:]], 1)
        return v, a, (yddd[:, 7:] if jerk else None)
    return v, ydd, (yddd[:, 6:] if jerk else None)
