"""Analytical derivatives of inverse dynamics on a tree of any joints, NumPy arrays.

Carpentier and Mansard, "Analytical derivatives of rigid body dynamics algorithms", RSS 2018,
Algorithm 1, in world axes, column by column: every joint contributes its ``nv`` columns
``J = Ad(oMi) S`` (linear first, moments about the world origin), and the configuration moves on
the joint's own space (``q ⊕ δ = integrate(q, δ)``, Pinocchio's convention), so that a
perturbation ``δ_d`` moves the joint's child and its subtree rigidly by the twist ``J_d``.  Per
body ``i`` with parent ``p`` (``a`` includes gravity as the base's acceleration ``-g``):

    ψ_d = v_p × J_d,   α_d = a_p × J_d + v_p × ψ_d,   ∂a/∂v_d = v_i × J_d + ψ_d,
    Ẏ_i = v_i ×* Y_i - Y_i v_i× + (h_i ×̄),   f_i = Y_i a_i + v_i ×* Y_i v_i - f_ext,i,

with the subtree sums Y^c, Ẏ^c, F; rows r below joint i take ``J_rᵀ (Y^c_r α_d + Ẏ^c_r ψ_d)``
for i's columns d, i's rows take ``J_iᵀ`` of the subtree's ``∂F/∂q`` (each column's
``Y^c α + Ẏ^c ψ``, and ``J_d ×* F`` once it reaches the ancestors).

Where a joint's motion subspace turns with its own coordinates (a universal joint), the joint
model's :func:`~composedyn.dynamics.array_api.joints.subspace_variations` adds what the formulas
above leave out: the columns' own turning ``G`` (the rows of the joint see ``G_dᵀ F``), the
velocity ``Ad(G_d v_J)`` it adds to the subtree, and the bias' derivatives.  Pinocchio's
``computeRNEADerivatives`` omits these terms (on a universal joint it differs from finite
differences).  Link wrenches held fixed in world axes at points of the links (the Robot's
``f_ext``) move with their points but do not turn: ``-J_kᵀ E J_d`` for the columns k, d above the
body, ``E = [[0, F×], [0, F× c× + N×]]`` (force F, moment N about the origin, point c).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.kinematics import coords, tree, world_poses


def _bf(x):
    """Components-first (a, ..., N) -> batch-first (N, a, ...)."""
    return np.moveaxis(np.asarray(x), -1, 0)


def _skew(w):
    out = np.zeros(w.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    out[..., 1, 0], out[..., 2, 0], out[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return out


def _crm(v):
    """v× (N, 6, 6) on motions, linear first: [[ω×, u×], [0, ω×]]."""
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[..., :3, :3] = out[..., 3:, 3:] = _skew(v[..., 3:])
    out[..., :3, 3:] = _skew(v[..., :3])
    return out


def _crf(v):
    """v×* (N, 6, 6) on forces: -(v×)ᵀ."""
    return -np.swapaxes(_crm(v), -1, -2)


def _cross_columns(v, J):
    """v × J_c for each column of J (N, 6, k)."""
    return _crm(v) @ J


def _force_cross_columns(J, f):
    """J_c ×* f for each column c of J (N, 6, k) and one force f (N, 6)."""
    u, w = J[:, :3], J[:, 3:]
    fl, fn = f[:, :3, None], f[:, 3:, None]
    return np.concatenate((np.cross(w, fl, axis=1), np.cross(w, fn, axis=1) + np.cross(u, fl, axis=1)), axis=1)


def _adjoint(R, p):
    """Ad (N, 6, 6) of the world pose (R, p), linear first: [[R, p× R], [0, R]]."""
    out = np.zeros(R.shape[:-2] + (6, 6))
    out[..., :3, :3] = out[..., 3:, 3:] = R
    out[..., :3, 3:] = _skew(p) @ R
    return out


def _world_inertia(inertia, R, p):
    """Spatial inertia (N, 6, 6) about the world origin, linear first, of a body whose parameters
    (10,) [m, h, I] are about its origin in its axes, at world pose (R, p)."""
    m, h = inertia[0], inertia[1:4]
    xx, xy, yy, xz, yz, zz = inertia[4:]
    Io = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    g = R @ h
    hw = m * p + g
    eye = np.eye(3)
    pg = np.einsum("ni,ni->n", p, g)[:, None, None]
    Iw = (R @ Io @ np.swapaxes(R, -1, -2) + m * (np.einsum("ni,ni->n", p, p)[:, None, None] * eye
                                                  - p[:, :, None] * p[:, None, :])
          + 2.0 * pg * eye - p[:, :, None] * g[:, None, :] - g[:, :, None] * p[:, None, :])
    out = np.zeros(R.shape[:-2] + (6, 6))
    out[:, :3, :3] = m * eye
    out[:, :3, 3:] = -_skew(hw)
    out[:, 3:, :3] = _skew(hw)
    out[:, 3:, 3:] = Iw
    return out


def _momentum_bar(h):
    """The matrix of x -> x ×* h (N, 6, 6) for a momentum h = (L, K), linear first."""
    out = np.zeros(h.shape[:-1] + (6, 6))
    out[..., :3, 3:] = out[..., 3:, :3] = -_skew(h[..., :3])
    out[..., 3:, 3:] = -_skew(h[..., 3:])
    return out


def rnea_derivatives(am, q, v, a, f_world=None, P=None, gravity: bool = True):
    """(dτ/dq, dτ/dv) (N, nv_full, nv_full) of the rigid-body inverse dynamics (no friction, no
    armature, which add nothing to them but friction's dv diagonal) of the :class:`ArrayModel` ``am``
    at its full coordinates q (N, nq_full), v, a (N, nv_full); q perturbed on the configuration
    space.  ``f_world`` (N, n, 6): link wrenches summed per body as (moment about the world origin,
    force), world axes; ``P`` (N, n, 9) their lever-arm matrices (row-major), per body the sum over
    its wrenches of (c · F) 1 - c Fᵀ, c the point (see
    :func:`composedyn.link_wrenches.body_forces`); both or neither."""
    from composedyn.dynamics.array_api.model import on

    bm = on(am, np)
    N, n, nv = q.shape[0], am.n, am.nv_full
    X, S = tree(bm, q)
    W = world_poses(bm, X)
    grav = np.broadcast_to(np.asarray(am.gravity, float) if gravity else np.zeros(3), (N, 3))
    cols = [np.arange(j.idx_v, j.idx_v + j.nv) for j in am.joints]
    ext = f_world is not None
    fx = np.concatenate((f_world[..., 3:], f_world[..., :3]), axis=-1) if ext else None  # linear first

    # forward pass, parent -> child
    J, dV, dA, dAv, Y, dY, F, G, Ad = ([None] * n for _ in range(9))
    vel, acc = [None] * n, [None] * n
    for i, joint in enumerate(am.joints):
        k = am.parent[i]
        vp = np.zeros((N, 6)) if k < 0 else vel[k]
        ap = np.concatenate((-grav, np.zeros((N, 3))), axis=1) if k < 0 else acc[k]
        R, p = _bf(W[i][0]), _bf(W[i][1])
        R, p = np.broadcast_to(R, (N, 3, 3)), np.broadcast_to(p, (N, 3))
        Ad[i] = _adjoint(R, p)
        Si = np.broadcast_to(_bf(S[i]), (N, 6, joint.nv))
        Ji = Ad[i] @ Si
        qj, vj, aj = coords(q, joint, velocity=False), coords(v, joint), coords(a, joint)
        vJ = np.einsum("nij,nj->ni", Ji, vj)
        vi = vp + vJ
        cJ = np.einsum("nij,nj->ni", Ad[i], np.asarray(jm.bias(np, joint, qj, vj)))
        acc[i] = ap + np.einsum("nij,nj->ni", Ji, aj) + cJ + np.einsum("nij,nj->ni", _crm(vi), vJ)
        vel[i] = vi
        J[i] = Ji
        dV[i] = _cross_columns(vp, Ji)
        dA[i] = _cross_columns(ap, Ji) + _cross_columns(vp, dV[i])
        dAv[i] = _cross_columns(vi, Ji) + dV[i]
        var = jm.subspace_variations(np, joint, qj, vj)
        if var is not None:  # the joint's own terms (module docstring)
            Gl, dc_dq, dc_dv = (np.broadcast_to(x, (N,) + x.shape[-3:] if x.ndim == 4 else (N,) + x.shape[-2:])
                                for x in var)
            Gw = np.einsum("nij,njcd->nicd", Ad[i], Gl)  # world columns' own turning
            Gv = np.einsum("nicd,nc->nid", Gw, vj)  # velocity each δ_d adds: Ad(G_d v_J)
            Ga = np.einsum("nicd,nc->nid", Gw, aj)
            extra = (Ga + Ad[i] @ dc_dq + _cross_columns_many(Gv, vJ) + 2.0 * (_crm(vi) @ Gv))
            dV[i] = dV[i] + Gv
            dA[i] = dA[i] + extra
            dAv[i] = dAv[i] + Ad[i] @ dc_dv
            G[i] = Gw
        Y[i] = _world_inertia(am.inertia[i], R, p)
        h = np.einsum("nij,nj->ni", Y[i], vi)
        dY[i] = _crf(vi) @ Y[i] - Y[i] @ _crm(vi) + _momentum_bar(h)
        F[i] = np.einsum("nij,nj->ni", Y[i], acc[i]) + np.einsum("nij,nj->ni", _crf(vi), h)
        if ext:
            F[i] = F[i] - fx[:, i]

    # backward pass, child -> parent
    dq = np.zeros((N, nv, nv))
    dv = np.zeros((N, nv, nv))
    dFda, dYtJ, dFdq, dFdv = (np.zeros((N, 6, nv)) for _ in range(4))
    E = None
    if ext:
        dE = np.zeros((N, nv, nv))  # the wrenches' terms, added once every block is written
        E = np.zeros((N, n, 6, 6))
        fl, mo = fx[..., :3], fx[..., 3:]
        E[..., :3, 3:] = _skew(fl)
        E[..., 3:, 3:] = _skew(mo) - P.reshape(P.shape[:-1] + (3, 3))
    sub = [list(c) for c in cols]
    for i in range(n - 1, -1, -1):
        c, Jc = cols[i], J[i]
        own = np.asarray(sub[i])
        below = own[len(c):] if len(own) > len(c) else own[:0]
        dFda[:, :, c] = Y[i] @ Jc
        dYtJ[:, :, c] = np.swapaxes(dY[i], -1, -2) @ Jc
        dFdq[:, :, c] = Y[i] @ dA[i] + dY[i] @ dV[i]
        dFdv[:, :, c] = dY[i] @ Jc + Y[i] @ dAv[i]
        if below.size:
            Fb, Tb = np.swapaxes(dFda[:, :, below], -1, -2), np.swapaxes(dYtJ[:, :, below], -1, -2)
            dq[:, below[:, None], c] = Fb @ dA[i] + Tb @ dV[i]
            dv[:, below[:, None], c] = Fb @ dAv[i] + Tb @ Jc
        Jt = np.swapaxes(Jc, -1, -2)
        dq[:, c[:, None], own] = Jt @ dFdq[:, :, own]
        dv[:, c[:, None], own] = Jt @ dFdv[:, :, own]
        if G[i] is not None:  # the joint's rows turn with its own coordinates: G_dᵀ F
            dq[:, c[:, None], c] += np.einsum("nicd,ni->ncd", G[i], F[i])
        dFdq[:, :, c] += _force_cross_columns(Jc, F[i])
        if ext:  # world-fixed wrenches: -J_kᵀ E J_d for k, d above the bodies of i's subtree
            up = np.concatenate([cols[b] for b in am.ancestors(i)])
            Jup = np.concatenate([J[b] for b in am.ancestors(i)], axis=-1)
            dE[:, up[:, None], c] -= np.swapaxes(Jup, -1, -2) @ E[:, i] @ Jc
            strict = up[len(c):]
            if strict.size:
                dE[:, c[:, None], strict] -= Jt @ E[:, i] @ Jup[:, :, len(c):]
        k = am.parent[i]
        if k >= 0:
            Y[k] = Y[k] + Y[i]
            dY[k] = dY[k] + dY[i]
            F[k] = F[k] + F[i]
            sub[k] = sub[k] + sub[i]
            if ext:
                E[:, k] += E[:, i]
    return (dq + dE if ext else dq), dv


def _cross_columns_many(X, w):
    """X_d × w for each column d of X (N, 6, k) and one motion w (N, 6)."""
    return -(_crm(w) @ X)
