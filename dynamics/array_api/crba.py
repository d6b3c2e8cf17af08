"""The joint-space mass matrix by the composite-rigid-body algorithm in body frames, and
forward dynamics by a Cholesky-factor solve of M, on the array API.

Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, Table 6.2 (algorithm CRBA):
composite inertias ``IC_p += X_i^T IC_i X_i`` from the leaves to the root (here as (m, h, I)
triples, :func:`composedyn.dynamics.array_api.spatial.inertia_to_parent`), then per body
``F = IC_i S_i``, ``H_ii = S_i^T F`` and, walking to the root, ``F = X_j^T F``,
``H_ji = S_j^T F`` (eq. 6.25 ff.).  Forward dynamics solves ``M qdd = tau - h`` (sec. 6.1).
"""

from __future__ import annotations

from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    flat,
    full_q,
    full_v,
    reduce,
    reduce_matrix,
    tree,
    unflat_matrix,
    unflat_rows,
)
from composedyn.dynamics.array_api.rnea import (
    body_inertias,
    check_parameters,
    check_width,
    friction_torques,
    rigid_torques,
)
from composedyn.dynamics.array_api.spatial import force_to_parent, inertia_times_columns, inertia_to_parent


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
    """F = IC_i S_i as (linear (3, nv_i, N), angular (3, nv_i, N)): the subtree momentum per
    unit joint rate, body i axes."""
    return inertia_times_columns(bm.xp, *comp[i], S[i][:3], S[i][3:])


def project_to_ancestors(bm, X, S, i, Fl, Fn, blocks):
    """blocks[(j, i)] = S_j^T F (nv_j, k, N) for body i and each ancestor j, F the force columns
    (Fl, Fn) (3, k, N) in body i's frame moved up the chain by X^T (the CRBA's and the
    regressor's inner loop)."""
    xp = bm.xp
    j = i
    while True:
        F6 = xp.concat([Fl, Fn], axis=0)
        blocks[(j, i)] = xp.sum(S[j][:, :, None, ...] * F6[:, None, ...], axis=0)
        if bm.am.parent[j] < 0:
            return
        Fl, Fn = force_to_parent(xp, *X[j], Fl, Fn)
        j = bm.am.parent[j]


def assemble(bm, blocks, N, symmetric: bool = False):
    """The (N, nv_full, nv_full) matrix of blocks {(row body, column body): (nv_r, nv_c, N)}:
    missing blocks are the transposed (c, r) block when ``symmetric``, else zero."""
    xp = bm.xp
    am = bm.am
    order = sorted(range(am.n), key=lambda i: am.joints[i].idx_v)
    rows = []
    for r in order:
        row = []
        for c in order:
            shape = (am.joints[r].nv, am.joints[c].nv, N)
            if (r, c) in blocks:
                b = blocks[(r, c)]
            elif symmetric and (c, r) in blocks:
                b = xp.permute_dims(blocks[(c, r)], (1, 0, 2))
            else:
                b = xp.zeros(shape[:2] + (1,), dtype=bm.dtype, device=bm.device)
            row.append(xp.broadcast_to(b, shape))
        rows.append(xp.concat(row, axis=1))
    return unflat_matrix(xp, xp.concat(rows, axis=0), (N,))


def rigid_mass_matrix(bm, q, params=None):
    """M_full (N, nv_full, nv_full) of the model at q_full (N, nq_full), without armature."""
    X, S = tree(bm, q)
    comp = composite_inertias(bm, X, body_inertias(bm, params))
    blocks = {}
    for i in range(bm.am.n):
        project_to_ancestors(bm, X, S, i, *subtree_forces(bm, S, comp, i), blocks)
    return assemble(bm, blocks, q.shape[0], symmetric=True)


def _diag(xp, d):
    """diag(d) (..., k, k) of d (..., k)."""
    k = d.shape[-1]
    return d[..., None] * xp.eye(k, dtype=d.dtype, device=getattr(d, "device", None))


def _flat_terms(xp, batch, *terms):
    """Joint-term arrays: batched ones (..., nv_full) flattened to (N, nv_full), others as given."""
    return [x if x is None or len(x.shape) < 2 else flat(xp, x, batch) for x in terms]


def _mass_matrix(bm, q, params, armature):
    """M (N, nv, nv) of flat q (N, nq), params (N, 10 n) or None, armature or None."""
    M = rigid_mass_matrix(bm, full_q(bm, q), params)
    return reduce_matrix(bm, M + _diag(bm.xp, bm.armature if armature is None else armature))


def mass_matrix(bm, q, params=None, armature=None):
    """Joint-space inertia M(q) (..., nv, nv) (kg m^2, kg), armature on the diagonal: the
    Robot's ``mass_matrix``.  q (..., nq); ``params``/``armature`` as in
    :func:`composedyn.dynamics.array_api.rnea.inverse_dynamics`."""
    xp = bm.xp
    check_parameters(bm, params)
    batch = batch_shape(q, params, armature)
    q, params = flat(xp, q, batch), flat(xp, params, batch)
    (armature,) = _flat_terms(xp, batch, armature)
    M = _mass_matrix(bm, q, params, armature)
    return xp.reshape(M, tuple(batch) + tuple(M.shape[-2:]))


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
    xp = bm.xp
    smooth_friction = check_width(smooth_friction)
    check_parameters(bm, params)
    batch = batch_shape(q, qd, tau, params, damping, coulomb, armature)
    q, qd, tau, params = (flat(xp, x, batch) for x in (q, qd, tau, params))
    damping, coulomb, armature = _flat_terms(xp, batch, damping, coulomb, armature)
    qf, vf = full_q(bm, q), full_v(bm, qd)
    h = rigid_torques(bm, qf, vf, None, params)
    if friction:
        h = h + friction_torques(bm, vf, smooth_friction, damping, coulomb)
    M = _mass_matrix(bm, q, params, armature)
    return unflat_rows(xp, solve_spd(xp, M, tau - reduce(bm, h)), batch)
