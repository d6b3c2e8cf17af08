"""The joint-space mass matrix by the composite-rigid-body algorithm, and forward dynamics by a
solve with M, on the array API.

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, Table 6.2 (algorithm
CRBA) and eq. 6.25 ff.: ``H_ji = S_j^T IC_i S_i`` for body j on the path from body i to the
root, IC_i the inertia of i's subtree.  Here every motion subspace and composite inertia is
expressed once in the axes of its tree's root body, about its origin (one transform per body,
then sums of (m, h, I) triples from the leaves to the root), so that each block is one product
of S_j with the force ``IC_i S_i``, not a chain of force transforms ``X_j^T`` (the body-frame
form, :func:`project_to_ancestors`, serves the regressor and float32, whose digits the common
frame's inertias about a distant origin would cost).  Forward dynamics solves
``M qdd = tau - h`` (sec. 6.1): on JAX by the LTL factorisation that keeps M's tree sparsity
(RBDA sec. 6.5, Table 6.3), unrolled into elementwise operations over the batch; on NumPy and
PyTorch by one batched ``linalg.solve`` (as fast forwards, and its reverse mode is one more
solve).
"""

from __future__ import annotations

import math

from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    flat,
    full_q,
    full_v,
    reduce,
    reduce_matrix,
    root_poses,
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
from composedyn.dynamics.array_api.spatial import (
    columns_dot,
    force_to_parent,
    inertia_times_columns,
    inertia_to_parent,
    motion_to_parent,
    subspace_times_columns,
    unrolled,
)


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
        blocks[(j, i)] = subspace_times_columns(xp, S[j], F6)
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


def root_composite_inertias(bm, W, inertias):
    """Per body the inertia (m, h, I) of its subtree about its tree root's origin, root axes, for
    the root poses W of :func:`composedyn.dynamics.array_api.kinematics.root_poses`: one
    transform per body, then sums from the leaves to the root."""
    xp = bm.xp
    comp = [I if W[i] is None else inertia_to_parent(xp, *W[i], *I) for i, I in enumerate(inertias)]
    for i in range(bm.am.n - 1, -1, -1):
        k = bm.am.parent[i]
        if k >= 0:
            comp[k] = tuple(a + b for a, b in zip(comp[k], comp[i]))
    return comp


def root_subspace(bm, pose, S):
    """A joint's motion subspace S (6, nv_j, N) in the axes of its tree's root body, about its
    origin; ``pose`` the body's root pose, None for a root body (S as it is)."""
    if pose is None:
        return S
    return bm.xp.concat(motion_to_parent(bm.xp, *pose, S[:3], S[3:]), axis=0)


def rigid_mass_matrix(bm, q, params=None, kinematics=None):
    """M_full (N, nv_full, nv_full) of the model at q_full (N, nq_full), without armature
    (``kinematics``: ``tree(bm, q)`` when the caller has it already).

    With every motion subspace S_i and composite inertia IC_i expressed in the axes of the tree's
    root body, about its origin, the block of body j and its descendant i is one product
    H_ji = S_j^T (IC_i S_i) (RBDA eq. 6.25 with the force IC_i S_i already in the common frame)
    instead of a force transform per body up the chain: one spatial transform per body in all.
    In float32 the body-frame form (:func:`project_to_ancestors`): its products stay at each
    body's scale, where the common frame's inertias about a distant origin cost digits that
    forward dynamics amplifies."""
    xp = bm.xp
    X, S = tree(bm, q) if kinematics is None else kinematics
    if bm.dtype != xp.float64:
        comp = composite_inertias(bm, X, body_inertias(bm, params))
        blocks = {}
        for i in range(bm.am.n):
            project_to_ancestors(bm, X, S, i, *subtree_forces(bm, S, comp, i), blocks)
        return assemble(bm, blocks, q.shape[0], symmetric=True)
    W = root_poses(bm, X)
    comp = root_composite_inertias(bm, W, body_inertias(bm, params))
    S0 = [root_subspace(bm, W[i], S[i]) for i in range(bm.am.n)]
    blocks = {}
    for i in range(bm.am.n):
        F = xp.concat(inertia_times_columns(xp, *comp[i], S0[i][:3], S0[i][3:]), axis=0)
        j = i
        while j >= 0:
            blocks[(j, i)] = columns_dot(xp, S0[j], F)
            j = bm.am.parent[j]
    return assemble(bm, blocks, q.shape[0], symmetric=True)


def _diag(xp, d):
    """diag(d) (..., k, k) of d (..., k)."""
    k = d.shape[-1]
    return d[..., None] * xp.eye(k, dtype=d.dtype, device=getattr(d, "device", None))


def _flat_terms(xp, batch, *terms):
    """Joint-term arrays: batched ones (..., nv_full) flattened to (N, nv_full), others as given."""
    return [x if x is None or len(x.shape) < 2 else flat(xp, x, batch) for x in terms]


def _mass_matrix(bm, q, params, armature, kinematics=None):
    """M (N, nv, nv) of flat q (N, nq), params (N, 10 n) or None, armature or None."""
    M = rigid_mass_matrix(bm, full_q(bm, q), params, kinematics)
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


DENSE_UNROLLED = 12  # largest dense (mimic-coupled) matrix factorised by unrolled scalar operations


def dof_parents(bm) -> tuple[int, ...] | None:
    """lambda (nv,): the parent of each velocity coordinate in the tree (-1 at a root), the
    sparsity of M (M[i, j] != 0 only along ancestor chains), or the chain k -> k - 1 (a dense
    matrix) when mimic joints couple branches; None when that dense matrix is too large to
    factorise by unrolled scalar operations (then LAPACK through ``xp.linalg``)."""
    am = bm.am
    if bm.Gv is not None:
        return tuple(range(-1, am.nv - 1)) if am.nv <= DENSE_UNROLLED else None
    lam = [0] * am.nv_full
    for i, joint in enumerate(am.joints):
        for k in range(joint.nv):
            d = joint.idx_v + k
            p = am.parent[i]
            lam[d] = d - 1 if k else (-1 if p < 0 else am.joints[p].idx_v + am.joints[p].nv - 1)
    return tuple(lam)


def solve_tree(xp, M, b, lam):
    """x (N, n) with M x = b for symmetric positive-definite M (N, n, n) whose entries vanish off
    the ancestor chains of ``lam`` (:func:`dof_parents`): Featherstone's LTL factorisation
    M = L^T L (RBDA Table 6.3) and the two triangular solves, unrolled into elementwise
    operations on the N samples (no fill-in, O(sum of depth^2)).  A singular M gives NaN."""
    n = len(lam)

    def chain(k):
        out, i = [], lam[k]
        while i >= 0:
            out.append(i)
            i = lam[i]
        return out

    anc = [chain(k) for k in range(n)]
    H = {(k, j): M[:, k, j] for k in range(n) for j in [k] + anc[k]}
    for k in range(n - 1, -1, -1):
        H[(k, k)] = xp.sqrt(H[(k, k)])
        for i in anc[k]:
            H[(k, i)] = H[(k, i)] / H[(k, k)]
        for i in anc[k]:
            for j in [i] + anc[i]:
                H[(i, j)] = H[(i, j)] - H[(k, i)] * H[(k, j)]
    y = [b[:, k] for k in range(n)]
    for k in range(n - 1, -1, -1):  # L^T y = b, leaves first
        y[k] = y[k] / H[(k, k)]
        for i in anc[k]:
            y[i] = y[i] - H[(k, i)] * y[k]
    x = []
    for k in range(n):  # L x = y, root first
        s = y[k]
        for i in anc[k]:
            s = s - H[(k, i)] * x[i]
        x.append(s / H[(k, k)])
    return xp.stack(x, axis=-1)


def solve_spd(xp, M, b, lam=None):
    """x (N, k) with M x = b for symmetric positive-definite M (N, k, k).  When :func:`unrolled`
    (a traced program, whose derivative rule solves with the factor again): :func:`solve_tree` with
    the sparsity ``lam``, or a Cholesky factor and two solves of ``xp.linalg`` without it.  Eager
    libraries (NumPy, PyTorch): one batched ``xp.linalg.solve``, as fast as the unrolled
    factorisation forwards, and whose reverse mode is one more solve rather than a pass back
    through a few hundred operations on rows of N numbers.  A singular M gives NaN (unrolled) or the
    library's error."""
    if not unrolled(xp):
        return xp.linalg.solve(M, b[..., None])[..., 0]
    if lam is not None:
        return solve_tree(xp, M, b, lam)
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
    return accelerations_and_mass(bm, q, qd, tau, params, friction, smooth_friction, damping, coulomb, armature)[0]


def accelerations_and_mass(bm, q, qd, tau, params=None, friction: bool = True, smooth_friction=None,
                           damping=None, coulomb=None, armature=None):
    """(qdd (..., nv), M (..., nv, nv)): :func:`forward_dynamics` and the mass matrix it solved
    with (armature included), for a derivative rule that needs both (:func:`solve_mass`)."""
    xp = bm.xp
    smooth_friction = check_width(smooth_friction)
    check_parameters(bm, params)
    batch = batch_shape(q, qd, tau, params, damping, coulomb, armature)
    q, qd, tau, params = (flat(xp, x, batch) for x in (q, qd, tau, params))
    damping, coulomb, armature = _flat_terms(xp, batch, damping, coulomb, armature)
    qf, vf = full_q(bm, q), full_v(bm, qd)
    kinematics = tree(bm, qf)  # shared by h and M
    h = rigid_torques(bm, qf, vf, None, params, kinematics=kinematics)
    if friction:
        h = h + friction_torques(bm, vf, smooth_friction, damping, coulomb)
    M = _mass_matrix(bm, q, params, armature, kinematics)
    qdd = unflat_rows(xp, solve_spd(xp, M, tau - reduce(bm, h), dof_parents(bm)), batch)
    return qdd, xp.reshape(M, tuple(batch) + tuple(M.shape[-2:]))


def solve_mass(bm, M, b):
    """x (..., nv) with M x = b for a mass matrix M (..., nv, nv) of :func:`accelerations_and_mass`
    (the same sparse factorisation; linear in ``b``, so autodiff transposes it)."""
    xp = bm.xp
    batch = tuple(M.shape[:-2])
    n = M.shape[-1]
    x = solve_spd(xp, xp.reshape(M, (math.prod(batch), n, n)), flat(xp, b, batch), dof_parents(bm))
    return unflat_rows(xp, x, batch)
