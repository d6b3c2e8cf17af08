"""The joint-space mass matrix by the composite-rigid-body algorithm in body frames, and
forward dynamics by a Cholesky-factor solve of M, on the array API.

Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, Table 6.2 (algorithm CRBA):
composite inertias ``IC_p += X_i^T IC_i X_i`` from the leaves to the root (here as (m, h, I)
triples, :func:`composedyn.dynamics.array_api.spatial.inertia_to_parent`), then per body
``F = IC_i S_i``, ``H_ii = S_i^T F`` and, walking to the root, ``F = X_j^T F``,
``H_ji = S_j^T F`` (eq. 6.25 ff.).  Forward dynamics solves ``M qdd = tau - h`` (sec. 6.1).
"""

from __future__ import annotations

from composedyn.dynamics.array_api.kinematics import batch_shape, full_q, full_v, reduce, reduce_matrix, tree
from composedyn.dynamics.array_api.rnea import (
    body_inertias,
    check_width,
    friction_torques,
    rigid_torques,
)
from composedyn.dynamics.array_api.spatial import inertia_times_columns, inertia_to_parent


def composite_inertias(bm, X, inertias):
    """Per body the inertia (m, h, I) of its subtree about its origin, body axes."""
    xp = bm.xp
    comp = list(inertias)
    for i in range(bm.am.n - 1, -1, -1):
        k = bm.am.parent[i]
        if k >= 0:
            m, h, I = inertia_to_parent(xp, *X[i], *comp[i])
            mk, hk, Ik = comp[k]
            comp[k] = (mk + m, hk + h, Ik + I)
    return comp


def subtree_forces(bm, S, comp, i):
    """F = IC_i S_i as (linear (..., 3, nv_i), angular (..., 3, nv_i)): the subtree momentum per
    unit joint rate, body i axes."""
    return inertia_times_columns(bm.xp, *comp[i], S[i][..., :3, :], S[i][..., 3:, :])


def up_columns(xp, R, p, Fl, Fn):
    """Force columns (..., 3, k) in a child frame -> its parent frame: (R Fl, R Fn + [p] R Fl)."""
    RF = R @ Fl
    return RF, R @ Fn + xp.linalg.cross(xp.broadcast_to(p[..., :, None], RF.shape), RF, axis=-2)


def project_to_ancestors(bm, X, S, i, Fl, Fn, blocks):
    """blocks[(j, i)] = S_j^T F for body i and each ancestor j, F (force columns (Fl, Fn) (..., 3, k)
    in body i's frame) moved up the chain by X^T (the CRBA's and the regressor's inner loop)."""
    xp = bm.xp
    j = i
    while True:
        blocks[(j, i)] = xp.matrix_transpose(S[j]) @ xp.concat([Fl, Fn], axis=-2)
        if bm.am.parent[j] < 0:
            return
        Fl, Fn = up_columns(xp, *X[j], Fl, Fn)
        j = bm.am.parent[j]


def rigid_mass_matrix(bm, q, params=None):
    """M_full (..., nv_full, nv_full) of the model at q_full, without armature."""
    xp = bm.xp
    am = bm.am
    batch = batch_shape(q)
    X, S = tree(bm, q)
    comp = composite_inertias(bm, X, body_inertias(bm, params))
    blocks = {}
    for i in range(am.n):
        project_to_ancestors(bm, X, S, i, *subtree_forces(bm, S, comp, i), blocks)
    order = sorted(range(am.n), key=lambda i: am.joints[i].idx_v)
    rows = []
    for r in order:
        row = []
        for c in order:
            shape = batch + (am.joints[r].nv, am.joints[c].nv)
            if (r, c) in blocks:
                b = blocks[(r, c)]
            elif (c, r) in blocks:
                b = xp.matrix_transpose(blocks[(c, r)])
            else:
                b = xp.zeros(shape, dtype=bm.dtype, device=bm.device)
            row.append(xp.broadcast_to(b, shape))
        rows.append(xp.concat(row, axis=-1))
    return xp.concat(rows, axis=-2)


def _diag(xp, d):
    """diag(d) (..., k, k) of d (..., k)."""
    k = d.shape[-1]
    return d[..., None] * xp.eye(k, dtype=d.dtype, device=getattr(d, "device", None))


def mass_matrix(bm, q, params=None, armature=None):
    """Joint-space inertia M(q) (..., nv, nv) (kg m^2, kg), armature on the diagonal: the
    Robot's ``mass_matrix``.  q (..., nq); ``params``/``armature`` as in
    :func:`composedyn.dynamics.array_api.rnea.inverse_dynamics`."""
    M = rigid_mass_matrix(bm, full_q(bm, q), params)
    M = M + _diag(bm.xp, bm.armature if armature is None else armature)
    return reduce_matrix(bm, M)


def solve_spd(xp, M, b):
    """x (..., k) with M x = b for symmetric positive-definite M (..., k, k) (Cholesky solve)."""
    L = xp.linalg.cholesky(M)
    y = xp.linalg.solve(L, b[..., None])
    return xp.linalg.solve(xp.matrix_transpose(L), y)[..., 0]


def forward_dynamics(bm, q, qd, tau, params=None, friction: bool = True, smooth_friction=None,
                     damping=None, coulomb=None, armature=None):
    """Accelerations qdd (..., nv) with M qdd = tau - C qd - g - friction: the Robot's
    ``forward_dynamics`` (a floating base's a: the derivative of its body twist).

    q (..., nq), qd and tau (..., nv); the options as in
    :func:`composedyn.dynamics.array_api.rnea.inverse_dynamics`.
    """
    smooth_friction = check_width(smooth_friction)
    qf, vf = full_q(bm, q), full_v(bm, qd)
    h = rigid_torques(bm, qf, vf, None, params)
    if friction:
        h = h + friction_torques(bm, vf, smooth_friction, damping, coulomb)
    M = mass_matrix(bm, q, params, armature)
    return solve_spd(bm.xp, M, tau - reduce(bm, h))
