"""A legged robot swaying on planted feet: exact q, v, a for tests of floating-base checks.

The base follows a closed-form motion -- position ``p(t) = p₀ + (ax sin ωt,
ay sin 2ωt, az sin 1.5ωt)`` and orientation ``R(t) = Rz(ψ(t)) Ry(θ(t))`` with
``ψ = yaw sin ωt``, ``θ = pitch sin 1.5ωt`` -- whose body twist and its
derivative are known exactly:

    ω_b = θ̇ e_y + Ry(θ)ᵀ e_z ψ̇,   ω̇_b = θ̈ e_y + Ry(θ)ᵀ e_z ψ̈ - θ̇ e_y × Ry(θ)ᵀ e_z ψ̇,
    v_lin = Rᵀ ṗ,                  a_lin = Rᵀ p̈ - ω_b × v_lin.

The joints keep the feet where they are at t = 0: positions by Newton's method
on the foot positions, rates from ``J_c v = 0`` and accelerations from
``J_c a + J̇_c v = 0`` (stance feet do not move), both solved for the joint
columns.  ``write_csv`` writes the samples in the floating-base trajectory CSV
format (:mod:`composedyn.floating.legged_csv`).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.floating.lie import quaternion_matrix

SOLO12_STANCE = (0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6)


def _rot(axis: int, x: float) -> np.ndarray:
    c, s = np.cos(x), np.sin(x)
    i, j = (axis + 1) % 3, (axis + 2) % 3  # cyclic: the rotation by x about e_axis
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def _quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix (w >= 0 branch, Shepperd's method)."""
    w = 0.5 * np.sqrt(max(1.0 + np.trace(R), 1e-300))
    q = np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w])
    return q / np.linalg.norm(q)


def base_motion(t: float, p0, amp=(0.02, 0.015, 0.01), yaw: float = 0.05, pitch: float = 0.04,
                omega: float = 2 * np.pi):
    """(q_base (7,), v_base (6,), a_base (6,)) of the closed-form sway at time t."""
    ax, ay, az = amp
    s1, c1, s2, c2, s3, c3 = (np.sin(omega * t), np.cos(omega * t), np.sin(2 * omega * t), np.cos(2 * omega * t),
                              np.sin(1.5 * omega * t), np.cos(1.5 * omega * t))
    p = np.asarray(p0, float) + np.array([ax * s1, ay * s2, az * s3])
    pd = np.array([ax * omega * c1, 2 * ay * omega * c2, 1.5 * az * omega * c3])
    pdd = -np.array([ax * omega ** 2 * s1, 4 * ay * omega ** 2 * s2, 2.25 * az * omega ** 2 * s3])
    psi, psid, psidd = yaw * s1, yaw * omega * c1, -yaw * omega ** 2 * s1
    th, thd, thdd = pitch * s3, 1.5 * pitch * omega * c3, -2.25 * pitch * omega ** 2 * s3
    Ry = _rot(1, th)
    R = _rot(2, psi) @ Ry
    ey, ez_b = np.array([0.0, 1.0, 0.0]), Ry.T @ np.array([0.0, 0.0, 1.0])
    w = thd * ey + ez_b * psid
    wd = thdd * ey + ez_b * psidd - thd * np.cross(ey, ez_b) * psid
    vl = R.T @ pd
    al = R.T @ pdd - np.cross(w, vl)
    return np.r_[p, _quaternion(R)], np.r_[vl, w], np.r_[al, wd]


def planted_feet_motion(robot, feet, t, joints0=SOLO12_STANCE, **sway):
    """(q (T, nq), v (T, nv), a (T, nv)) of ``robot`` swaying on ``feet`` at times t (T,).

    The feet are planted on the ground z = 0 where they are at t = 0 with the joints at
    ``joints0``; ``sway``: keywords of :func:`base_motion`."""
    q = robot.neutral()
    q[7:] = joints0
    q[2] = -min(robot.frame_pose(q, f)[2, 3] for f in feet)
    targets = np.array([robot.frame_pose(q, f)[:3, 3] for f in feet])
    p0 = q[:3].copy()
    Q, V, A = [], [], []
    for tk in np.asarray(t, float):
        qb, vb, ab = base_motion(tk, p0, **sway)
        q = np.r_[qb, q[7:]]
        for _ in range(50):  # Newton on the joints: feet back to their targets
            r = np.concatenate([targets[i] - robot.frame_pose(q, f)[:3, 3] for i, f in enumerate(feet)])
            if np.abs(r).max() < 1e-13:
                break
            Jj = np.concatenate([robot.jacobian(q, f)[:3, 6:] for f in feet])
            q[7:] += np.linalg.lstsq(Jj, r, rcond=None)[0]
        J = np.concatenate([robot.jacobian(q, f)[:3] for f in feet])
        v = np.r_[vb, np.linalg.lstsq(J[:, 6:], -J[:, :6] @ vb, rcond=None)[0]]
        a0 = np.r_[ab, np.zeros(robot.nv - 6)]
        bias = np.concatenate([robot.frame_acceleration(q, v, a0, f)[:3] for f in feet])
        a = np.r_[ab, np.linalg.lstsq(J[:, 6:], -bias, rcond=None)[0]]
        Q.append(q.copy())
        V.append(v)
        A.append(a)
    return np.array(Q), np.array(V), np.array(A)


def write_csv(path, robot, t, q, stance: dict, v=None, a=None) -> None:
    """Write a floating-base trajectory CSV: time, base pose, joints, (rates), ``<frame>_contact``.

    ``stance``: frame -> (T,) 0/1 flags."""
    cols = ["time", "base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw", *robot.joint_names]
    data = [np.asarray(t, float)[:, None], q]
    if v is not None:
        cols += ["base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]
        cols += [f"{j}_vel" for j in robot.joint_names]
        data.append(v)
    if a is not None:
        cols += ["base_ax", "base_ay", "base_az", "base_dwx", "base_dwy", "base_dwz"]
        cols += [f"{j}_acc" for j in robot.joint_names]
        data.append(a)
    cols += [f"{f}_contact" for f in stance]
    data.append(np.array([np.asarray(s, float) for s in stance.values()]).T.reshape(len(t), -1))
    np.savetxt(path, np.concatenate(data, 1), delimiter=",", header=",".join(cols), comments="", fmt="%.17g")


def rotation(q_base: np.ndarray) -> np.ndarray:
    """World rotation (3, 3) of a free-flyer base configuration (7,)."""
    return quaternion_matrix(q_base[3:7] / np.linalg.norm(q_base[3:7]))
