"""The composed vectors of Giacaglia & Lamas (2020): their result type and force vectors.

The vectors are computed by :func:`composedyn.dynamics.array_api.composed.composed_vectors` for a
tree of any joints (the paper's eqs. (2.1)-(2.22), that module's docstring).  For N bodies and nv
velocity coordinates, each body contributes six components, **linear first** as in the paper,
``(v_i, omega_i)``, world axes, ``v`` the velocity of the body's centre of mass C_i.

Generalised forces Q_γ = FN ∘ vω_γ (2.23) for any composed force-torque vector
FN = (F_1, N_1, ..., F_N, N_N) of forces at the centres of mass and torques, and the equations
of motion (2.24)

    Σ_α a_γα q̈_α + Σ_αβ [αβ, γ] q̇_α q̇_β = Q_γ.

All arrays carry the leading batch axes of q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.model import Model


@dataclass(frozen=True)
class ComposedVectors:
    """The composed vectors of one configuration (or a batch).  See the module doc."""

    body_names: tuple
    com: np.ndarray  # (..., N, 3) centres of mass, world
    vw: np.ndarray  # (..., nv, 6N)
    PL: np.ndarray  # (..., nv, 6N)
    XY: np.ndarray  # (..., nv, nv, 6N), XY[β, γ]
    mass_matrix: np.ndarray  # (..., nv, nv), a[γ, α], no armature
    brackets: np.ndarray  # (..., nv, nv, nv), [αβ, γ] stored at [γ, α, β]

    def generalized_forces(self, FN: np.ndarray) -> np.ndarray:
        """Q_γ = FN ∘ vω_γ (eq. 2.23).  FN: (..., 6N) or (..., N, 6), linear first."""
        FN = np.asarray(FN, dtype=float)
        if FN.shape[-1] != self.vw.shape[-1]:
            FN = FN.reshape(FN.shape[:-2] + (FN.shape[-2] * FN.shape[-1],))
        return np.einsum("...gk,...k->...g", self.vw, FN)

    def coriolis_matrix(self, qd: np.ndarray) -> np.ndarray:
        """C[γ, α] = Σ_β [αβ, γ] q̇_β (..., nv, nv): the Christoffel form on one-coordinate joints."""
        return np.einsum("...gab,...b->...ga", self.brackets, qd)

    def velocity_terms(self, qd: np.ndarray) -> np.ndarray:
        """Σ_αβ [αβ, γ] q̇_α q̇_β = C(q, q̇) q̇, (..., nv)."""
        return np.einsum("...gab,...a,...b->...g", self.brackets, qd, qd)


def gravity_FN(model: Model, cv: ComposedVectors) -> np.ndarray:
    """Composed gravity action (m_i g, 0) on every body, (..., 6N) (eq. 2.9 / 3.7)."""
    F = np.zeros(cv.com.shape[:-1] + (6,))
    F[..., :3] = model.mass[:, None] * model.gravity
    return F.reshape(F.shape[:-2] + (-1,))


def wrench_FN(model: Model, cv: ComposedVectors, link_poses, f_ext: dict) -> np.ndarray:
    """Composed action of wrenches applied at link centres of mass, (..., 6N).

    ``f_ext``: link name -> (..., 6) (fx, fy, fz, tx, ty, tz), world axes,
    force at the link's centre of mass; ``link_poses``: (R, p) of every link
    from :func:`composedyn.dynamics.reference.kinematics.link_poses`.  The force is moved
    to the body's centre of mass C_i, adding its moment (P - C_i) x F.
    """
    Rl, pl = link_poses
    FN = np.zeros(cv.com.shape[:-1] + (6,))
    index = {name: k for k, name in enumerate(model.link_names)}
    for name, w in f_ext.items():
        k = index[name]
        b = model.link_body[k]
        if b < 0:
            continue
        w = np.asarray(w, dtype=float)
        P = pl[..., k, :] + np.einsum("...ij,j->...i", Rl[..., k, :, :], model.link_com[k])
        FN[..., b, :3] += w[..., :3]
        FN[..., b, 3:] += w[..., 3:] + np.cross(P - cv.com[..., b, :], w[..., :3])
    return FN.reshape(FN.shape[:-2] + (-1,))
