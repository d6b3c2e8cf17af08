"""Forward kinematics in world coordinates, batched over leading axes.

All functions take joint arrays of shape (..., n) and return per-body arrays
with the body index on the axis just before the vector dimensions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from composedyn.dynamics.reference import joint
from composedyn.dynamics.reference.spatial import crm_apply

if TYPE_CHECKING:
    from composedyn.dynamics.model import Model


def body_poses(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World pose of every body frame.

    q (..., n) -> R (..., n, 3, 3) body axes in world coordinates,
    p (..., n, 3) body origin in world coordinates (world = base frame).
    """
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    n = model.n
    R = np.empty(batch + (n, 3, 3))
    p = np.empty(batch + (n, 3))
    for i in range(n):
        Rl, pl = joint.joint_pose(model, i, q[..., i])
        k = model.parent[i]
        if k < 0:
            R[..., i, :, :], p[..., i, :] = Rl, pl
        else:
            R[..., i, :, :] = R[..., k, :, :] @ Rl
            p[..., i, :] = p[..., k, :] + np.einsum("...ij,...j->...i", R[..., k, :, :], pl)
    return R, p


def motion_subspaces(model: Model, R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """World-frame joint motion vectors S_i (..., n, 6), angular first, about the world origin,
    from the body poses R (..., n, 3, 3), p (..., n, 3) (:func:`.joint.motion_subspaces`)."""
    return joint.motion_subspaces(model, np.einsum("...nij,nj->...ni", R, model.axis), p)


def body_velocities(model: Model, S: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """World spatial velocity of each body (..., n, 6): v_i = v_parent + S_i qd_i."""
    v = S * qd[..., :, None]
    for i in range(model.n):
        k = model.parent[i]
        if k >= 0:
            v[..., i, :] += v[..., k, :]
    return v


def motion_derivatives(S: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Time derivative of the world motion subspaces: dS_i/dt = v_i x S_i (..., n, 6)."""
    return crm_apply(v, S)


def body_inertias_world(model: Model, R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Spatial inertia of every body about the world origin in world axes (..., n, 6, 6)."""
    m = model.mass
    c = p + np.einsum("...nij,nj->...ni", R, model.com)
    Ic = R @ model.inertia_com @ np.swapaxes(R, -1, -2)
    from composedyn.dynamics.reference.spatial import spatial_inertia

    return spatial_inertia(m, c, Ic)


def link_poses(model: Model, R: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World pose of every link frame (fixed links included), in ``model.link_names`` order.

    Returns R (..., L, 3, 3), p (..., L, 3).  Base links use the identity body pose.
    """
    batch = R.shape[:-3]
    L = len(model.link_names)
    eye = np.broadcast_to(np.eye(3), batch + (1, 3, 3)) if batch else np.eye(3)[None]
    zero = np.zeros(batch + (1, 3))
    Rb = np.concatenate([R, eye], axis=-3)  # index -1 -> appended identity
    pb = np.concatenate([p, zero], axis=-2)
    idx = np.where(model.link_body < 0, model.n, model.link_body)
    Rsel, psel = Rb[..., idx, :, :], pb[..., idx, :]
    TR, Tp = model.link_T[:, :3, :3], model.link_T[:, :3, 3]
    R_link = Rsel @ TR
    p_link = psel + np.einsum("...ij,...j->...i", Rsel, Tp)
    assert R_link.shape[-3] == L
    return R_link, p_link
