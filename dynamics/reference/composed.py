"""Composed 6N-dimensional vectors of Giacaglia & Lamas (2020), numerically.

For N bodies and n generalised coordinates (here the joint coordinates, one
body per joint), every quantity of the paper is built from the bodies'
partial velocities.  Each body contributes six components, **linear first**
as in the paper, ``(v_i, omega_i)`` (the spatial algebra elsewhere in the
package is angular first).  All vectors are in world (base) coordinates and
``v`` is the velocity of the body's centre of mass C_i.

=====================  =======================================  ============
array (shape)          meaning                                   paper eq.
=====================  =======================================  ============
``vw`` (n, 6N)         vω_α = (v_α1, ω_α1, ..., v_αN, ω_αN)        (2.1), (2.8)
``PL`` (n, 6N)         PL_α = (m_i v_αi, I_i ω_αi)                 (2.11), (2.13)
``XY`` (n, n, 6N)      XY_βγ = (m_i ∂v_βi/∂q_γ,                    (2.12), (2.14)
                       I_i ∂ω_βi/∂q_γ + ω_βi × I_i ω_γi)
``mass_matrix`` (n,n)  a_γα = PL_α ∘ vω_γ                          (2.19)
``brackets`` (n,n,n)   [αβ, γ] = sym_(αβ) XY_αβ ∘ vω_γ,            (2.21), (2.22)
                       indexed ``brackets[γ, α, β]``
=====================  =======================================  ============

Generalised forces Q_γ = FN ∘ vω_γ (2.23) for any composed force-torque
vector FN = (F_1, N_1, ..., F_N, N_N) of forces at the centres of mass and
torques, and the equations of motion (2.24)

    Σ_α a_γα q̈_α + Σ_αβ [αβ, γ] q̇_α q̇_β = Q_γ.

The derivatives of vω are analytic: along a chain ∂S_α/∂q_β = S_β × S_α for
β an ancestor of α (a motion cross product), and ∂C_i/∂q_β = v_βi.  The paper
writes XY_αβ unsymmetrised; its quadratic form is the same, and its part
symmetric in (α, β) equals the Christoffel symbol of the first kind, which is
what ``brackets`` holds (so C = Σ_β brackets[:, :, β] q̇_β is the Christoffel
Coriolis matrix).  All arrays carry the leading batch axes of q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import body_poses, motion_subspaces
from composedyn.dynamics.reference.spatial import crm_apply


def ancestor_mask(model: Model) -> np.ndarray:
    """(n, n) float, ``A[a, i] = 1`` when joint a moves body i (a is i or an ancestor)."""
    A = np.zeros((model.n, model.n))
    for i in range(model.n):
        A[model.ancestors(i), i] = 1.0
    return A


@dataclass(frozen=True)
class ComposedVectors:
    """The composed vectors of one configuration (or a batch).  See the module doc."""

    body_names: tuple
    com: np.ndarray  # (..., N, 3) centres of mass, world
    vw: np.ndarray  # (..., n, 6N)
    PL: np.ndarray  # (..., n, 6N)
    XY: np.ndarray  # (..., n, n, 6N), XY[β, γ]
    mass_matrix: np.ndarray  # (..., n, n), a[γ, α]
    brackets: np.ndarray  # (..., n, n, n), [αβ, γ] stored at [γ, α, β]

    def generalized_forces(self, FN: np.ndarray) -> np.ndarray:
        """Q_γ = FN ∘ vω_γ (eq. 2.23).  FN: (..., 6N) or (..., N, 6), linear first."""
        FN = np.asarray(FN, dtype=float)
        if FN.shape[-1] != self.vw.shape[-1]:
            FN = FN.reshape(FN.shape[:-2] + (FN.shape[-2] * FN.shape[-1],))
        return np.einsum("...gk,...k->...g", self.vw, FN)

    def coriolis_matrix(self, qd: np.ndarray) -> np.ndarray:
        """C[γ, α] = Σ_β [αβ, γ] q̇_β (Christoffel form), (..., n, n)."""
        return np.einsum("...gab,...b->...ga", self.brackets, qd)

    def velocity_terms(self, qd: np.ndarray) -> np.ndarray:
        """Σ_αβ [αβ, γ] q̇_α q̇_β = C(q, q̇) q̇, (..., n)."""
        return np.einsum("...gab,...a,...b->...g", self.brackets, qd, qd)


def composed_vectors(model: Model, q) -> ComposedVectors:
    """Compute vω_α, PL_α, XY_βγ, a_γα and the brackets at q (..., n)."""
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)  # (..., n, 6) angular first, world
    c = p + np.einsum("...nij,nj->...ni", R, model.com)
    I = R @ model.inertia_com @ np.swapaxes(R, -1, -2)  # (..., N, 3, 3) about COM, world axes
    A = ancestor_mask(model)  # A[a, i]
    Sa, Sl = S[..., :3], S[..., 3:]
    w = Sa[..., :, None, :] * A[:, :, None]  # ω_αi (..., n, N, 3)
    v = (Sl[..., :, None, :] + np.cross(Sa[..., :, None, :], c[..., None, :, :])) * A[:, :, None]
    # dS[β, α] = ∂S_α/∂q_β = S_β × S_α when β moves α (A[β, α]), else 0.
    dS = crm_apply(S[..., :, None, :], S[..., None, :, :]) * A[:, :, None]
    dSa = np.swapaxes(dS[..., :3], -3, -2)  # [α, β] = ∂ω_α/∂q_β (axis part)
    dSl = np.swapaxes(dS[..., 3:], -3, -2)
    mask = A[:, None, :, None]  # body i moved by α
    dw = dSa[..., :, :, None, :] * mask  # (..., n, n, N, 3): ∂ω_αi/∂q_β
    dv = (
        dSl[..., :, :, None, :]
        + np.cross(dSa[..., :, :, None, :], c[..., None, None, :, :])
        + np.cross(Sa[..., :, None, None, :], v[..., None, :, :, :])
    ) * mask  # ∂v_αi/∂q_β
    m = model.mass[:, None]
    Iw = np.einsum("...nij,...anj->...ani", I, w)  # I_i ω_αi
    vw = np.concatenate([v, w], axis=-1)
    PL = np.concatenate([m * v, Iw], axis=-1)
    Y = np.einsum("...nij,...abnj->...abni", I, dw) + np.cross(w[..., :, None, :, :], Iw[..., None, :, :, :])
    XY = np.concatenate([m * dv, Y], axis=-1)
    flat = q.shape[:-1] + (model.n, 6 * model.n)
    vw, PL = vw.reshape(flat), PL.reshape(flat)
    XY = XY.reshape(q.shape[:-1] + (model.n,) + flat[-2:])
    a = np.einsum("...ak,...gk->...ga", PL, vw)
    b = np.einsum("...abk,...gk->...gab", XY, vw)
    return ComposedVectors(
        body_names=model.body_names,
        com=c,
        vw=vw,
        PL=PL,
        XY=XY,
        mass_matrix=a,
        brackets=0.5 * (b + np.swapaxes(b, -1, -2)),
    )


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
