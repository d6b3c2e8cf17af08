"""Recursive Newton-Euler inverse dynamics (Featherstone's ID, world frame)."""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import body_inertias_world, body_poses, body_velocities, motion_subspaces
from composedyn.dynamics.reference.spatial import crf_apply, crm_apply


def rnea(model: Model, q, qd, qdd, f_world=None, gravity: bool = True) -> np.ndarray:
    """Rigid-body inverse dynamics tau = M(q) qdd + C(q, qd) qd + g(q) - J^T f_ext.

    q, qd, qdd: (..., n) broadcast-compatible joint arrays.  ``f_world``:
    optional (..., n, 6) external spatial forces on each body, world axes,
    moment about the world origin (angular first).  Gravity enters as a
    fictitious base acceleration -g.  Armature and friction are *not* added
    here (see ``composedyn.dynamics.reference.friction``).  Returns tau (..., n).
    """
    q, qd, qdd = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, qdd)))
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    I = body_inertias_world(model, R, p)
    v = body_velocities(model, S, qd)
    a = S * qdd[..., :, None] + crm_apply(v, S) * qd[..., :, None]
    for i in range(model.n):  # accelerations accumulate parent -> child
        k = model.parent[i]
        if k >= 0:
            a[..., i, :] += a[..., k, :]
    if gravity:  # base acceleration -g: the same spatial vector for every body in world axes
        a[..., :, 3:] -= model.gravity
    f = np.einsum("...ij,...j->...i", I, a) + crf_apply(v, np.einsum("...ij,...j->...i", I, v))
    if f_world is not None:
        f = f - f_world
    for i in range(model.n - 1, -1, -1):  # forces accumulate child -> parent
        k = model.parent[i]
        if k >= 0:
            f[..., k, :] += f[..., i, :]
    return np.einsum("...i,...i->...", S, f)
