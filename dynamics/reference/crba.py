"""Composite-rigid-body algorithm for the joint-space mass matrix (world frame)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from composedyn.dynamics.reference.kinematics import body_inertias_world, body_poses, motion_subspaces

if TYPE_CHECKING:
    from composedyn.dynamics.model import Model


def composite_inertias(model: Model, I: np.ndarray) -> np.ndarray:
    """IC_i = sum of world spatial inertias over the subtree of body i (..., n, 6, 6)."""
    IC = I.copy()
    for i in range(model.n - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            IC[..., k, :, :] += IC[..., i, :, :]
    return IC


def crba(model: Model, q) -> np.ndarray:
    """Rigid-body mass matrix M(q) (..., n, n), without armature.

    In world coordinates M[i, j] = S_i . IC_i S_j for j an ancestor of i (or
    i itself), and 0 for bodies on different branches.
    """
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    IC = composite_inertias(model, body_inertias_world(model, R, p))
    n = model.n
    M = np.zeros(q.shape[:-1] + (n, n))
    for i in range(n):
        F = np.einsum("...ij,...j->...i", IC[..., i, :, :], S[..., i, :])
        j = i
        while j >= 0:
            M[..., i, j] = M[..., j, i] = np.einsum("...i,...i->...", S[..., j, :], F)
            j = model.parent[j]
    return M
