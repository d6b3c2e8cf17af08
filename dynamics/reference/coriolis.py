"""Coriolis matrix in Christoffel form (Echeandia & Wensing 2021, world frame).

With world-frame body Jacobians J_i, spatial inertias I_i and velocities v_i,

    C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i),
    B_i = 1/2 (v_i x* I_i - I_i v_i x + A(I_i v_i)),   A(f) v = v x* f,

so that C qd = the velocity-product torques and dM/dt - 2C is skew-symmetric;
C[j, k] = sum_l Gamma_{j,kl} qd_l with the Christoffel symbols of the first
kind.  Because column k of dJ_i/dt is dS_k/dt = v_k x S_k for every body i
below joint k, the sum over bodies collapses onto composite quantities of the
deeper joint d of each ancestor pair (j, k):  C[j, k] = S_j . (IC_d dS_k +
BC_d S_k).  Cost O(n * depth), like the CRBA.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.crba import composite_inertias
from composedyn.dynamics.reference.kinematics import (
    body_inertias_world,
    body_poses,
    body_velocities,
    motion_derivatives,
    motion_subspaces,
)
from composedyn.dynamics.reference.spatial import crf, crf_bar, crm


def coriolis_matrix(model: Model, q, qd) -> np.ndarray:
    """Christoffel-consistent Coriolis matrix C(q, qd) (..., n, n)."""
    q, qd = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(qd, dtype=float))
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    I = body_inertias_world(model, R, p)
    v = body_velocities(model, S, qd)
    Sd = motion_derivatives(S, v)
    Iv = np.einsum("...ij,...j->...i", I, v)
    B = 0.5 * (crf(v) @ I - I @ crm(v) + crf_bar(Iv))
    IC = composite_inertias(model, I)
    BC = composite_inertias(model, B)
    n = model.n
    C = np.zeros(q.shape[:-1] + (n, n))
    for d in range(n):
        ICd, BCd = IC[..., d, :, :], BC[..., d, :, :]
        Fd = np.einsum("...ij,...j->...i", ICd, Sd[..., d, :]) + np.einsum("...ij,...j->...i", BCd, S[..., d, :])
        # Row d: C[d, k] for ancestors k of d (k != d) uses composites of d.
        Hd = np.einsum("...ij,...j->...i", np.swapaxes(ICd, -1, -2), S[..., d, :])
        Kd = np.einsum("...ij,...j->...i", np.swapaxes(BCd, -1, -2), S[..., d, :])
        C[..., d, d] = np.einsum("...i,...i->...", S[..., d, :], Fd)
        k = model.parent[d]
        while k >= 0:
            # C[k, d] = S_k . (IC_d dS_d + BC_d S_d)
            C[..., k, d] = np.einsum("...i,...i->...", S[..., k, :], Fd)
            # C[d, k] = S_d . (IC_d dS_k + BC_d S_k) = (IC_d^T S_d) . dS_k + (BC_d^T S_d) . S_k
            C[..., d, k] = (np.einsum("...i,...i->...", Hd, Sd[..., k, :])
                            + np.einsum("...i,...i->...", Kd, S[..., k, :]))
            k = model.parent[k]
    return C
