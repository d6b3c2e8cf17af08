"""Articulated-body algorithm (Featherstone's FDab), world frame, batched.

In world coordinates no coordinate transforms appear between bodies: the
articulated inertia and bias force of a child are added to its parent as they
are.  Gravity is the base acceleration a_0 = (0, -g).  Armature enters the
joint-space inertia D_i = S_i . IA_i S_i + armature_i (a rotor spinning with
the joint about a fixed axis, as in Pinocchio).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.model import Model
from composedyn.dynamics.pivots import model_pivot_floors, singular_at
from composedyn.dynamics.reference.kinematics import body_inertias_world, body_poses, body_velocities, motion_subspaces
from composedyn.dynamics.reference.spatial import crf_apply, crm_apply


def aba(model: Model, q, qd, tau, f_world=None, armature: bool = True) -> np.ndarray:
    """Joint accelerations qdd (..., n) solving M qdd + C qd + g = tau + J^T f_ext.

    q, qd, tau: (..., n) broadcast-compatible.  ``f_world``: optional
    (..., n, 6) external spatial forces on the bodies (world axes, moment
    about the world origin, angular first).  Friction is not included:
    subtract it from ``tau``.  ``armature=False`` leaves out the rotor
    inertia.  Raises ModelError naming the joint whose articulated inertia
    is not above its floor (:mod:`composedyn.dynamics.pivots`: a joint that moves no
    mass, or a singular M where the pivot is round-off).
    """
    q, qd, tau = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, tau)))
    n = model.n
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    v = body_velocities(model, S, qd)
    IA = body_inertias_world(model, R, p)
    c = crm_apply(v, S) * qd[..., :, None]  # velocity-product acceleration dS_i/dt qd_i
    pA = crf_apply(v, np.einsum("...ij,...j->...i", IA, v))
    if f_world is not None:
        pA = pA - f_world
    floor = model_pivot_floors(model)  # the compiled kernel's floors (composedyn.dynamics.pivots)
    U = np.empty(q.shape + (6,))
    D = np.empty(q.shape)
    u = np.empty(q.shape)
    for i in range(n - 1, -1, -1):  # articulated inertias, child -> parent
        U[..., i, :] = (IA[..., i, :, :] @ S[..., i, :, None])[..., 0]
        D[..., i] = (S[..., i, None, :] @ U[..., i, :, None])[..., 0, 0] + (model.armature[i] if armature else 0.0)
        if not np.all(D[..., i] > floor[i]):
            raise ModelError(f"{model.source}: cannot solve forward dynamics, {singular_at([model.joint_names[i]])}")
        u[..., i] = tau[..., i] - (S[..., i, None, :] @ pA[..., i, :, None])[..., 0, 0]
        k = model.parent[i]
        if k >= 0:
            Ud = U[..., i, :] / D[..., i, None]
            Ia = IA[..., i, :, :] - U[..., i, :, None] * Ud[..., None, :]
            pa = pA[..., i, :] + (Ia @ c[..., i, :, None])[..., 0] + Ud * u[..., i, None]
            IA[..., k, :, :] += Ia
            pA[..., k, :] += pa
    a = np.empty(q.shape + (6,))
    qdd = np.empty(q.shape)
    a0 = np.concatenate([np.zeros(3), -model.gravity])
    for i in range(n):  # accelerations, parent -> child
        k = model.parent[i]
        ai = (a[..., k, :] if k >= 0 else a0) + c[..., i, :]
        qdd[..., i] = (u[..., i] - (U[..., i, None, :] @ ai[..., :, None])[..., 0, 0]) / D[..., i]
        a[..., i, :] = ai + S[..., i, :] * qdd[..., i, None]
    return qdd
