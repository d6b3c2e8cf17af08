"""Analytical derivatives of the inverse dynamics, world frame (NumPy reference).

The recursive Newton-Euler algorithm of :func:`composedyn.dynamics.reference.rnea.rnea`
(world axes, spatial vectors angular first, moments about the world origin)

    v_i = v_k + S_i qd_i,   a_i = a_k + S_i qdd_i + (v_i x S_i) qd_i,   a_base = (0, -g)
    f_i = I_i a_i + v_i x* I_i v_i - fx_i,   F_i = sum of f over the subtree of i,   tau_i = S_i . F_i

is differentiated as in Carpentier & Mansard (Algorithm 1).  Moving q_j turns
the subtree of joint j about the world twist S_j.  Expressed as derivatives of
body-frame quantities mapped to world axes ("D_j"), body inertias are then
constant and, for every body k in the subtree of j,

    D_j v_k = psi_j = v_p x S_j,     D_j a_k = alpha_j + psi_j x v_k,   alpha_j = a_p x S_j + v_p x psi_j,
    d v_k / d qd_j = S_j,            d a_k / d qd_j = 2 psi_j + S_j x v_k,

with p the parent of j (v_p = 0, a_p = a_base at the root), so that

    D_j f_k = I_k alpha_j + B_k psi_j,        d f_k / d qd_j = 2 I_k psi_j + B_k S_j,
    B_k x = v_k x* (I_k x) - I_k (v_k x x) + x x* (I_k v_k)      (linear in x).

The world derivative of tau_i = S_i . F_i (S_i . (S_j x* F_i) cancels
(S_j x S_i) . F_i) then collapses onto subtree sums (composites IC, BC):

    j ancestor of i or i:   d tau_i / d q_j  = S_i . (IC_i alpha_j + BC_i psi_j + E_i(j))
                            d tau_i / d qd_j = S_i . (IC_i 2 psi_j + BC_i S_j)
    i strict ancestor of j: d tau_i / d q_j  = S_i . (S_j x* F_j + IC_j alpha_j + BC_j psi_j + E_j(j))
                            d tau_i / d qd_j = S_i . (IC_j 2 psi_j + BC_j S_j)

and 0 for joints on different branches: O(n * depth) work, each pair in O(1)
once the row vectors IC_i S_i, BC_i^T S_i are formed.  External wrenches are
fixed in world axes and applied at link centres of mass, which move with q
(the J^T f term): with omega_j the angular part of S_j, a link wrench (force
F at point c, couple T) gives D_j(-fx) = (omega_j x (T + c x F) + P omega_j,
omega_j x F), P = (c . F) 1 - c F^T, summed over the subtree into E.

Friction adds d/d qd of damping qd + friction sgn(qd); armature adds nothing
(its derivative with respect to qdd is the armature on the diagonal of M).

References
----------
J. Carpentier and N. Mansard, "Analytical derivatives of rigid body dynamics
algorithms", Robotics: Science and Systems, 2018, Algorithm 1 and Sec. IV.
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer, 2008, Ch. 2 and 5.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.crba import crba
from composedyn.dynamics.reference.external import body_forces
from composedyn.dynamics.reference.forward import forward_dynamics
from composedyn.dynamics.reference.kinematics import (
    body_inertias_world,
    body_poses,
    body_velocities,
    link_poses,
    motion_subspaces,
)
from composedyn.dynamics.reference.spatial import crf, crf_apply, crf_bar, crm, crm_apply


def subtree_sums(model: Model, x: np.ndarray, dims: int) -> np.ndarray:
    """Sum of ``x`` over the subtree of every body; the body axis is ``-1 - dims``."""
    out = np.array(x, dtype=float)
    ax = out.ndim - 1 - dims
    for i in range(model.n - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            out[(slice(None),) * ax + (k,)] += out[(slice(None),) * ax + (i,)]
    return out


def external_terms(model: Model, R: np.ndarray, p: np.ndarray, f_ext: Mapping[str, np.ndarray]):
    """Body forces and their lever-arm matrices for world-fixed link wrenches.

    Returns ``(f_world, P)``: f_world (..., n, 6) as
    :func:`composedyn.dynamics.reference.external.body_forces` and P (..., n, 3, 3) =
    sum over the body's links of (c . F) 1 - c F^T (c the link's centre of mass
    in world coordinates, F the wrench's force), the term that the motion of
    the application points adds to the derivative (module docstring).
    """
    f_world = body_forces(model, R, p, f_ext)
    Rl, pl = link_poses(model, R, p)
    P = np.zeros(f_world.shape[:-1] + (3, 3))
    index = {name: k for k, name in enumerate(model.link_names)}
    for name, w in f_ext.items():
        k = index[name]
        b = model.link_body[k]
        if b < 0:
            continue
        F = np.asarray(w, dtype=float)[..., :3]
        c = pl[..., k, :] + np.einsum("...ij,j->...i", Rl[..., k, :, :], model.link_com[k])
        P[..., b, :, :] += (np.einsum("...i,...i->...", c, F)[..., None, None] * np.eye(3)
                            - c[..., :, None] * F[..., None, :])
    return f_world, P


def rnea_derivatives(model: Model, q, qd, qdd, f_world=None, P=None, gravity: bool = True):
    """d tau / d q and d tau / d qd (..., n, n) of the rigid-body inverse dynamics.

    tau is :func:`composedyn.dynamics.reference.rnea.rnea` (no armature, no friction);
    q, qd, qdd (..., n) broadcast.  ``f_world`` (..., n, 6) and ``P``
    (..., n, 3, 3) from :func:`external_terms` (both or neither).  Entry
    [i, j] is d tau_i / d x_j.  See the module docstring for the equations.
    """
    q, qd, qdd = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, qdd)))
    n = model.n
    mv = lambda A, x: np.einsum("...ij,...j->...i", A, x)  # noqa: E731
    dot = lambda x, y: np.einsum("...i,...i->...", x, y)  # noqa: E731
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    Ib = body_inertias_world(model, R, p)
    v = body_velocities(model, S, qd)
    a = S * qdd[..., :, None] + crm_apply(v, S) * qd[..., :, None]
    for i in range(n):
        if model.parent[i] >= 0:
            a[..., i, :] += a[..., model.parent[i], :]
    a0 = np.concatenate([np.zeros(3), -model.gravity if gravity else np.zeros(3)])
    a = a + a0
    h = mv(Ib, v)
    f = mv(Ib, a) + crf_apply(v, h)
    if f_world is not None:
        f = f - f_world
    # parent velocity and acceleration of every joint (base: 0 and a0)
    par = model.parent
    vp = np.where((par >= 0)[:, None], v[..., par, :], 0.0)
    ap = np.where((par >= 0)[:, None], a[..., par, :], a0)
    psi = crm_apply(vp, S)
    alpha = crm_apply(ap, S) + crm_apply(vp, psi)
    B = crf(v) @ Ib - Ib @ crm(v) + crf_bar(h)
    IC, BC, F = subtree_sums(model, Ib, 2), subtree_sums(model, B, 2), subtree_sums(model, f, 1)
    rI = mv(IC, S)  # IC symmetric
    rB = mv(np.swapaxes(BC, -1, -2), S)
    Phi = crf_apply(S, F) + mv(IC, alpha) + mv(BC, psi)
    Phid = mv(IC, 2.0 * psi) + mv(BC, S)
    w = S[..., :3]
    e = np.zeros(S.shape[:-1] + (3,))
    if f_world is not None:
        X, PC = subtree_sums(model, f_world, 1), subtree_sums(model, P, 2)
        e = np.cross(X[..., :3], w) + mv(np.swapaxes(PC, -1, -2), w) + np.cross(X[..., 3:], S[..., 3:])
        Phi = Phi + np.concatenate([np.cross(w, X[..., :3]) + mv(PC, w), np.cross(w, X[..., 3:])], axis=-1)
    dq = np.zeros(q.shape + (n,))
    dqd = np.zeros(q.shape + (n,))
    for i in range(n):
        j = i
        while j >= 0:  # j = i and its ancestors
            dq[..., i, j] = (dot(rI[..., i, :], alpha[..., j, :]) + dot(rB[..., i, :], psi[..., j, :])
                             + dot(e[..., i, :], w[..., j, :]))
            dqd[..., i, j] = dot(rI[..., i, :], 2.0 * psi[..., j, :]) + dot(rB[..., i, :], S[..., j, :])
            if j != i:
                dq[..., j, i] = dot(S[..., j, :], Phi[..., i, :])
                dqd[..., j, i] = dot(S[..., j, :], Phid[..., i, :])
            j = par[j]
    return dq, dqd


def friction_derivative(model: Model, qd, smooth: float | None = None) -> np.ndarray:
    """d tau_friction / d qd (..., n), the diagonal of the friction term's Jacobian.

    damping + friction * (1 - tanh^2(qd / smooth)) / smooth with ``smooth`` > 0
    (the tanh model of :func:`composedyn.dynamics.reference.friction.friction_torques`);
    without ``smooth`` the exact sign model's derivative, 0 away from qd = 0,
    is returned as 0 at qd = 0 too, where it does not exist (the kink): only
    the viscous ``damping`` remains.
    """
    qd = np.asarray(qd, dtype=float)
    if smooth:
        return model.damping + model.friction * (1.0 - np.tanh(qd / smooth) ** 2) / smooth
    return np.broadcast_to(model.damping, qd.shape).copy()


def forward_dynamics_derivatives(model: Model, q, qd, tau, friction: bool = True, smooth: float | None = None):
    """d qdd / d q, d qdd / d qd and d qdd / d tau = M^-1, each (..., n, n), of
    :func:`composedyn.dynamics.reference.forward.forward_dynamics` (no external wrenches).

    From ID(q, qd, FD(q, qd, tau)) = tau: d qdd / d x = -M^-1 d tau / d x at qdd = FD
    (Carpentier & Mansard 2018, Sec. V), M with armature; friction and ``smooth`` as in
    :func:`friction_derivative`.  Raises ModelError when M(q) is singular.
    """
    q, qd, tau = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, tau)))
    qdd = forward_dynamics(model, q, qd, tau, friction=friction, smooth=smooth)
    dq, dqd = rnea_derivatives(model, q, qd, qdd)
    if friction:
        dqd[..., np.arange(model.n), np.arange(model.n)] += friction_derivative(model, qd, smooth)
    M = crba(model, q) + np.diag(model.armature)
    Minv = np.linalg.inv(M)  # positive definite: forward_dynamics raised ModelError otherwise
    Minv = 0.5 * (Minv + np.swapaxes(Minv, -1, -2))
    return -Minv @ dq, -Minv @ dqd, Minv
