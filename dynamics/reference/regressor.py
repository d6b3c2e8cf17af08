"""Inverse dynamics linear in the inertial parameters: tau = Y(q, qd, qdd) pi (NumPy reference).

Parameters of body i (its frame = its joint frame, links merged by fixed
joints included), Pinocchio's ``Inertia.toDynamicParameters`` layout:

    pi_i = [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]      (10,)

with the centre of mass c and the rotational inertia I_o **about the body
frame origin** in body axes (I_o = I_c + m (|c|^2 1 - c c^T)).  With the
body-frame velocity (w, u), spatial acceleration (dw, du) (gravity as the
fictitious base acceleration -g) and classical linear acceleration
a = du + w x u, the body's spatial force (moment about the origin first) is

    n = L(dw) I + w x L(w) I + h x a,     f = m a + (dw x + (w x)^2) h,

where h = m c and L(w) I = I_o w is linear in I = (Ixx, Ixy, Iyy, Ixz, Iyz,
Izz).  Joint j carries S_j^T of the forces of its subtree, so block (j, i) of
Y is S_j . X_{j<-i}^* A_i for i in the subtree of j (zero otherwise).

Joint terms (optional extra columns, 3 or 4 per joint, joint-major):
``[fv, fc, Ia(, off)]`` with columns ``qd_j``, ``sgn(qd_j)``, ``qdd_j`` (and 1)
in row j, so that ``Y_joint @ (damping, friction, armature(, 0))`` is the
friction and armature torque of :func:`composedyn.dynamics.reference.friction.friction_torques`.

References
----------
W. Khalil and E. Dombre, *Modeling, Identification and Control of Robots*,
2002, ch. 12 (dynamic model linear in the standard parameters).
J. Carpentier et al., "The Pinocchio C++ library", SII 2019
(``computeJointTorqueRegressor``, the column layout used here).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import body_poses, body_velocities, motion_subspaces
from composedyn.dynamics.reference.spatial import crm_apply, skew

PARAM_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
JOINT_TERM_NAMES = ("fv", "fc", "Ia", "off")


def inertial_parameters(model: Model) -> np.ndarray:
    """Standard parameters (10 n,) of the model's bodies, layout of the module docstring."""
    n = model.n
    out = np.zeros((n, 10))
    out[:, 0] = model.mass
    out[:, 1:4] = model.mass[:, None] * model.com
    Io = model.I_body[:, :3, :3]
    out[:, 4:] = Io[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return out.reshape(10 * n)


def joint_parameters(model: Model, offset: bool = False) -> np.ndarray:
    """Joint-term parameters (k n,), k = 3 (4 with ``offset``): (damping, friction, armature(, 0)) per joint."""
    cols = [model.damping, model.friction, model.armature] + ([np.zeros(model.n)] if offset else [])
    return np.stack(cols, axis=-1).reshape(-1)


def body_parameters(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mass (...,), first moment h (..., 3), I_o (..., 3, 3)) from parameter blocks (..., 10)."""
    pi = np.asarray(pi, dtype=float)
    xx, xy, yy, xz, yz, zz = (pi[..., k] for k in range(4, 10))
    Io = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2)
    return pi[..., 0], pi[..., 1:4], Io


def _inertia_map(w: np.ndarray) -> np.ndarray:
    """L(w) (..., 3, 6) with L(w) (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) = I_o w."""
    L = np.zeros(w.shape[:-1] + (3, 6))
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    L[..., 0, 0], L[..., 0, 1], L[..., 0, 3] = x, y, z
    L[..., 1, 1], L[..., 1, 2], L[..., 1, 4] = x, y, z
    L[..., 2, 3], L[..., 2, 4], L[..., 2, 5] = x, y, z
    return L


def body_force_matrix(w, dw, a) -> np.ndarray:
    """A (..., 6, 10) with body spatial force (n, f) = A pi_i; w, dw, a (..., 3) in body axes."""
    A = np.zeros(np.broadcast_shapes(w.shape, dw.shape, a.shape)[:-1] + (6, 10))
    W = skew(w)
    A[..., :3, 1:4] = -skew(a)  # h x a = -a x h
    A[..., :3, 4:] = _inertia_map(dw) + W @ _inertia_map(w)
    A[..., 3:, 0] = a
    A[..., 3:, 1:4] = skew(dw) + W @ W
    return A


def regressor(model: Model, q, qd, qdd, gravity: bool = True) -> np.ndarray:
    """Y (..., n, 10 n) with Y @ inertial_parameters(model) = rnea(model, q, qd, qdd).

    q, qd, qdd (..., n) broadcast; all joints of the model (no mimic
    reduction).  World-frame recursion as :func:`composedyn.dynamics.reference.rnea.rnea`,
    each body's velocity and acceleration then taken to its own frame.
    """
    q, qd, qdd = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, qdd)))
    n = model.n
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    v = body_velocities(model, S, qd)
    acc = S * qdd[..., :, None] + crm_apply(v, S) * qd[..., :, None]
    for i in range(n):
        k = model.parent[i]
        if k >= 0:
            acc[..., i, :] += acc[..., k, :]
    if gravity:
        acc[..., :, 3:] -= model.gravity
    Rt = np.swapaxes(R, -1, -2)

    def body(x):  # world (..., n, 3) -> body axes
        return np.einsum("...ij,...j->...i", Rt, x)

    w, dw = body(v[..., :3]), body(acc[..., :3])
    u = body(v[..., 3:] + np.cross(v[..., :3], p))  # velocity of the body origin
    du = body(acc[..., 3:] + np.cross(acc[..., :3], p))
    A = body_force_matrix(w, dw, du + np.cross(w, u))
    # to world axes, moment about the world origin: (R n + p x R f, R f)
    Fn, Ff = R @ A[..., :3, :], R @ A[..., 3:, :]
    Fn = Fn + np.cross(p[..., None, :], np.swapaxes(Ff, -1, -2)).swapaxes(-1, -2)
    F = np.concatenate([Fn, Ff], axis=-2)  # (..., n, 6, 10)
    Y = np.zeros(q.shape[:-1] + (n, n, 10))
    for i in range(n):
        for j in model.ancestors(i):
            Y[..., j, i, :] = np.einsum("...k,...kc->...c", S[..., j, :], F[..., i, :, :])
    return Y.reshape(q.shape[:-1] + (n, 10 * n))


def joint_regressor(qd, qdd, offset: bool = False) -> np.ndarray:
    """Joint-term columns (..., n, k n): row j has (qd_j, sgn(qd_j), qdd_j(, 1)) in block j."""
    qd, qdd = np.broadcast_arrays(np.asarray(qd, float), np.asarray(qdd, float))
    n = qd.shape[-1]
    cols = [qd, np.sign(qd), qdd] + ([np.ones_like(qd)] if offset else [])
    k = len(cols)
    out = np.zeros(qd.shape + (n, k))
    idx = np.arange(n)
    out[..., idx, idx, :] = np.stack(cols, axis=-1)
    return out.reshape(qd.shape + (k * n,))
