"""Kinetic and potential energy of a fixed-base tree, batched.

    T(q, qd) = 1/2 sum_i v_i . I_i v_i + 1/2 sum_j armature_j qd_j^2  (= 1/2 qd^T M qd)
    V(q)     = -sum_i m_i g . c_i(q)

with v_i, I_i the world spatial velocity and inertia of body i (angular
first, about the world origin) and c_i its centre of mass in world
coordinates.  The armature (rotor inertia) is included in T because it is
included in M.  V sums over the moving bodies only: links welded to the fixed
base add a constant and are left out, as in Pinocchio's
``computePotentialEnergy``; the zero of V is the world origin.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import body_inertias_world, body_poses, body_velocities, motion_subspaces


def kinetic_energy(model: Model, q, qd) -> np.ndarray:
    """Kinetic energy T (...,) in J of the joint state q, qd (..., n), armature included."""
    q, qd = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(qd, dtype=float))
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    v = body_velocities(model, S, qd)
    I = body_inertias_world(model, R, p)
    Iv = np.einsum("...ij,...j->...i", I, v)
    return 0.5 * np.einsum("...ni,...ni->...", v, Iv) + 0.5 * np.einsum("j,...j->...", model.armature, qd * qd)


def potential_energy(model: Model, q) -> np.ndarray:
    """Gravitational potential energy V (...,) in J at q (..., n), moving bodies only."""
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    c = p + np.einsum("...nij,nj->...ni", R, model.com)
    return -np.einsum("n,...ni,i->...", model.mass, c, model.gravity)
