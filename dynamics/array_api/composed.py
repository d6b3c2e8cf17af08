"""Composed vectors of Giacaglia & Lamas on a tree of any joints, NumPy arrays.

G. E. O. Giacaglia and W. Q. Lamas, "On Euler-Lagrange's equations: a new approach", eqs.
(2.1)-(2.24), written for the velocity coordinates of the joint model
(:mod:`composedyn.dynamics.array_api.joints`): a one-coordinate joint's rate, a spherical
joint's angular velocity in its child frame, a free-flyer's body twist.  With N bodies and nv
velocity coordinates (each body's six components linear first, world axes, at its centre of mass):

=====================  =======================================  ============
array (shape)          meaning                                   paper eq.
=====================  =======================================  ============
``vw`` (nv, 6N)        vω_α = (v_α1, ω_α1, ..., v_αN, ω_αN)        (2.1), (2.8)
``PL`` (nv, 6N)        PL_α = (m_i v_αi, I_i ω_αi)                 (2.11), (2.13)
``XY`` (nv, nv, 6N)    XY_βγ = (m_i ∂_γ v_βi,                      (2.12), (2.14)
                       I_i ∂_γ ω_βi + ω_βi × I_i ω_γi)
``mass_matrix``        a_γα = PL_α ∘ vω_γ                          (2.19)
``brackets``           [αβ, γ], indexed ``brackets[γ, α, β]``      (2.21), (2.22)
=====================  =======================================  ============

``∂_γ`` is the derivative along the configuration space's direction γ (``q ⊕ δ e_γ``, the
joint model's ``integrate``), which for a one-coordinate joint is ∂/∂q_γ.  A perturbation along
a column β of a joint moves that joint's child and its subtree rigidly by the world twist J_β,
so a column α of the same joint or of a joint below it turns as ``∂_β J_α = J_β × J_α`` (a motion
cross product), plus, for a joint whose subspace turns with its own coordinates (a universal
joint), the joint model's variation ``Ad G[:, α, β]``
(:func:`~composedyn.dynamics.array_api.joints.subspace_variations`); a centre of mass moves as
``∂_β c_i = v_βi``.

The equations of motion (2.24) ``Σ_α a_γα v̇_α + Σ_αβ [αβ, γ] v_α v_β = Q_γ`` hold with the
brackets' symmetric part ``sym_(αβ) XY_αβ ∘ vω_γ``, the Christoffel symbols of the first kind
where every velocity is a coordinate's rate.  Where velocities are not (the rotations of
spherical, planar and free-flyer joints), the directions do not commute, and the brackets add
the antisymmetric term ``½ Σ_δ a_γδ c^δ_βα`` of their structure constants (Hamel's), computed
from the same derivatives: ``S(c_βα) = ∂_β J_α - ∂_α J_β - J_β × J_α``.  Then
``C = Σ_β brackets[:, :, β] v_β`` is the Coriolis matrix with Ṁ - 2C skew-symmetric
(Pinocchio's ``computeCoriolisMatrix``), and equals the Christoffel form on one-coordinate joints.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.kinematics import coords, tree, world_poses
from composedyn.dynamics.reference.composed import ComposedVectors


def _cross(a, b):
    """Motion cross products a × b of spatial motions (..., 6), linear first."""
    al, aw, bl, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate((np.cross(aw, bl) + np.cross(al, bw), np.cross(aw, bw)), axis=-1)


def _moves(am) -> np.ndarray:
    """(n, n) bool, ``[a, i]`` when body a's joint moves body i (a is i or one of its ancestors)."""
    out = np.zeros((am.n, am.n), bool)
    for i in range(am.n):
        out[am.ancestors(i), i] = True
    return out


def body_names(am) -> tuple[str, ...]:
    """Each body's name: its first link frame (the joint's child link)."""
    first = {}
    for name, body in zip(am.frame_names, am.frame_body):
        first.setdefault(int(body), name)
    return tuple(first.get(i, am.joints[i].name) for i in range(am.n))


def world_columns(am, q):
    """The world columns of the :class:`~composedyn.dynamics.array_api.model.ArrayModel` ``am`` and their
    derivatives along the configuration space at its full coordinates q (N, nq_full).

    Returns (R (N, n, 3, 3), p (N, n, 3): the bodies' world poses; J (N, nv, 6): column α as a world twist,
    linear part the velocity of the point at the world origin; D (N, nv, nv, 6): ``D[:, β, α] = ∂_β J_α``
    (module docstring), so that along a motion with velocity v the column turns as ``dJ_α/dt = Σ_β v_β
    D[:, β, α]``; A (nv, n): 1.0 where column α moves body i)."""
    from composedyn.dynamics.array_api.model import on

    N, n, nv = q.shape[0], am.n, am.nv_full
    X, S = tree(on(am, np), q)
    W = world_poses(on(am, np), X)
    R = np.stack([np.broadcast_to(np.moveaxis(W[i][0], -1, 0), (N, 3, 3)) for i in range(n)], 1)  # (N, n, 3, 3)
    p = np.stack([np.broadcast_to(np.moveaxis(W[i][1], -1, 0), (N, 3)) for i in range(n)], 1)  # (N, n, 3)

    owner = np.concatenate([np.full(j.nv, i) for i, j in enumerate(am.joints)]).astype(int)
    moves = _moves(am)
    related = moves[owner][:, owner]  # [β, α]: β's joint is α's or one of its ancestors

    J = np.zeros((N, nv, 6))
    for i, joint in enumerate(am.joints):
        Si = np.broadcast_to(np.moveaxis(S[i], -1, 0), (N, 6, joint.nv))
        wa = np.einsum("nij,njc->nci", R[:, i], Si[:, 3:])
        lin = np.einsum("nij,njc->nci", R[:, i], Si[:, :3]) + np.cross(p[:, i, None, :], wa)
        J[:, joint.idx_v:joint.idx_v + joint.nv] = np.concatenate((lin, wa), -1)

    D = _cross(J[:, :, None, :], J[:, None, :, :]) * related[None, :, :, None]
    for i, joint in enumerate(am.joints):
        var = jm.subspace_variations(np, joint, coords(q, joint, velocity=False), np.zeros((N, joint.nv)))
        if var is None:
            continue
        G = np.broadcast_to(var[0], (N, 6, joint.nv, joint.nv))  # [:, c, d]: column c along δ e_d, child axes
        wa = np.einsum("nij,njcd->ndci", R[:, i], G[:, 3:])
        lin = np.einsum("nij,njcd->ndci", R[:, i], G[:, :3]) + np.cross(p[:, i, None, None, :], wa)
        own = slice(joint.idx_v, joint.idx_v + joint.nv)
        D[:, own, own] += np.concatenate((lin, wa), -1)
    return R, p, J, D, moves[owner].astype(float)


def composed_vectors(am, q) -> ComposedVectors:
    """vω, PL, XY, a and the brackets (module docstring) of the
    :class:`~composedyn.dynamics.array_api.model.ArrayModel` ``am`` at its full coordinates q
    (..., nq_full), over its nv_full velocity coordinates (dependent mimic joints included); the
    mass matrix without armature.  Leading batch axes of q are kept."""
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    q = q.reshape(-1, am.nq_full)
    N, n, nv = q.shape[0], am.n, am.nv_full
    R, p, J, D, A = world_columns(am, q)

    # bodies: centre of mass (world) and rotational inertia about it (world axes)
    m = am.inertia[:, 0]
    h = am.inertia[:, 1:4]
    xx, xy, yy, xz, yz, zz = am.inertia[:, 4:].T
    Io = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2)
    cl = np.divide(h, m[:, None], out=np.zeros_like(h), where=m[:, None] > 0)
    Ic = Io - m[:, None, None] * (np.einsum("ni,ni->n", cl, cl)[:, None, None] * np.eye(3)
                                  - cl[:, :, None] * cl[:, None, :])
    c = np.einsum("znij,nj->zni", R, cl) + p  # (N, n, 3)
    I = R @ Ic @ np.swapaxes(R, -1, -2)  # (N, n, 3, 3)

    mask = A[None, :, :, None]
    Ja, Jl = J[..., 3:], J[..., :3]
    w = Ja[:, :, None, :] * mask  # ω_αi (N, nv, n, 3)
    v = (Jl[:, :, None, :] + np.cross(Ja[:, :, None, :], c[:, None, :, :])) * mask  # v_αi at c_i
    dSa = np.swapaxes(D[..., 3:], 1, 2)  # [α, β] = ∂_β ω_α
    dSl = np.swapaxes(D[..., :3], 1, 2)
    mask2 = A[None, :, None, :, None]
    dw = dSa[:, :, :, None, :] * mask2  # (N, nv, nv, n, 3): ∂_β ω_αi
    dv = (dSl[:, :, :, None, :] + np.cross(dSa[:, :, :, None, :], c[:, None, None, :, :])
          + np.cross(Ja[:, :, None, None, :], v[:, None, :, :, :])) * mask2  # ∂_β v_αi
    Iw = np.einsum("znij,zanj->zani", I, w)
    Y = np.einsum("znij,zaenj->zaeni", I, dw) + np.cross(w[:, :, None], Iw[:, None, :])
    mm = m[None, None, :, None]
    flat = (N, nv, 6 * n)
    vw = np.concatenate((v, w), -1).reshape(flat)
    PL = np.concatenate((mm * v, Iw), -1).reshape(flat)
    XY = np.concatenate((mm[:, None] * dv, Y), -1).reshape((N, nv) + flat[1:])
    a = np.einsum("zak,zgk->zga", PL, vw)
    b = np.einsum("zaek,zgk->zgae", XY, vw)

    # Hamel's term: S(c_βα) / 2 as a motion, its momentum on the bodies both columns move, ∘ vω_γ
    Dt = np.swapaxes(D, 1, 2)  # [α, β] = ∂_β J_α
    H = 0.5 * (Dt - D - _cross(J[:, None, :, :], J[:, :, None, :]))  # [α, β] (zero but on one joint's pairs)
    both = (A[:, None, :] * A[None, :, :])[None, :, :, :, None]  # (1, nv, nv, n, 1)
    Ha = H[:, :, :, None, 3:] * both
    Hl = (H[:, :, :, None, :3] + np.cross(H[:, :, :, None, 3:], c[:, None, None, :, :])) * both
    PH = np.concatenate((mm[:, None] * Hl, np.einsum("znij,zaenj->zaeni", I, Ha)), -1).reshape((N, nv) + flat[1:])
    brackets = 0.5 * (b + np.swapaxes(b, -1, -2)) + np.einsum("zaek,zgk->zgae", PH, vw)

    def out(x):
        return x.reshape(batch + x.shape[1:])

    return ComposedVectors(body_names=body_names(am), com=out(c), vw=out(vw), PL=out(PL), XY=out(XY),
                           mass_matrix=out(a), brackets=out(brackets))
