"""The joint-space mass matrix by the composite-rigid-body algorithm, and forward dynamics by a
solve with M, on the array API.

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, Table 6.2 (algorithm
CRBA) and eq. 6.25 ff.: ``H_ji = S_j^T IC_i S_i`` for body j on the path from body i to the
root, IC_i the inertia of i's subtree.  Here every motion subspace and composite inertia is
expressed once in the axes of its tree's root body, about its origin (one transform per body,
then sums of (m, h, I) triples from the leaves to the root), so that each block is one product
of S_j with the force ``IC_i S_i``, not a chain of force transforms ``X_j^T`` (the body-frame
form, :func:`project_to_ancestors`, serves the regressor).  In float32, whose digits inertias
about a distant origin would cost, each composite stays about its own body's origin and a
block moves the force's moment to the ancestor's origin (:func:`local_mass_matrix`).  Forward dynamics solves
``M qdd = tau - h`` (sec. 6.1): on JAX by the LTL factorisation that keeps M's tree sparsity
(RBDA sec. 6.5, Table 6.3), unrolled into elementwise operations over the batch; on NumPy and
PyTorch by one batched ``linalg.solve`` (as fast forwards, and its reverse mode is one more
solve).
"""

from __future__ import annotations

import math

from composedyn.dynamics.array_api.joints import constant_subspace
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
    cross,
    dot,
    force_to_parent,
    inertia_times,
    inertia_times_columns,
    inertia_to_parent,
    mm,
    motion_cross,
    motion_to_parent,
    mv,
    outer,
    rows,
    spread,
    subspace_times_columns,
    symmetric,
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


def root_inertias(bm, W, inertias):
    """Per body its inertia (m, h, I) about its tree root's origin, root axes, for the root poses W
    of :func:`composedyn.dynamics.array_api.kinematics.root_poses` (one transform per body)."""
    return [I if W[i] is None else inertia_to_parent(bm.xp, *W[i], *I) for i, I in enumerate(inertias)]


def subtree_sums(bm, per_body):
    """Per body the sum of a per-body quantity (tuples of arrays, None for zero) over its subtree,
    leaves to root."""
    out = list(per_body)
    for i in range(bm.am.n - 1, -1, -1):
        k = bm.am.parent[i]
        if k >= 0 and out[i] is not None:
            out[k] = out[i] if out[k] is None else tuple(a + b for a, b in zip(out[k], out[i]))
    return out


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
    In float32 :func:`local_mass_matrix`: its products stay at each body's scale, where the common
    frame's inertias about a distant origin cost digits that forward dynamics amplifies."""
    xp = bm.xp
    X, S = tree(bm, q) if kinematics is None else kinematics
    if bm.dtype != xp.float64:
        return local_mass_matrix(bm, X, S, params, q.shape[0])
    return root_mass_matrix(bm, root_terms(bm, X, S, params), q.shape[0])


def local_mass_matrix(bm, X, S, params, N):
    """M_full (N, nv_full, nv_full) for float32, as accurate as the body-frame form with one transform per
    body: the composite inertias IC_i and forces F_i = IC_i S_i in body axes, so a diagonal block
    S_i^T F_i picks the force's own components (a rotated subspace would cancel digits where a link's
    inertia about its axis is small beside its other moments); then each F_i turned once to its tree's
    root axes, and H_ji = S_j^T F_i (RBDA eq. 6.25) with S_j in root axes and F_i's moment moved to body
    j's origin, n + d x f.  The offset d sums the joints' own offsets along the path (X's p turned to
    root axes), never a difference of root-frame positions, whose rounding would not vanish where a
    wrist's offset is zero."""
    xp = bm.xp
    am = bm.am
    W = root_poses(bm, X)
    comp = composite_inertias(bm, X, body_inertias(bm, params))
    off = [None if k < 0 else X[i][1] if W[k] is None else mv(xp, W[k][0], X[i][1]) for i, k in enumerate(am.parent)]
    S0 = [S[j] if W[j] is None else xp.concat([mm(xp, W[j][0], S[j][:3]), mm(xp, W[j][0], S[j][3:])], axis=0)
          for j in range(am.n)]
    blocks = {}
    for i in range(am.n):
        Fl, Fn = subtree_forces(bm, S, comp, i)
        blocks[(i, i)] = subspace_times_columns(xp, S[i], xp.concat([Fl, Fn], axis=0))
        if W[i] is not None:
            Fl, Fn = mm(xp, W[i][0], Fl), mm(xp, W[i][0], Fn)
        below, j, d = i, am.parent[i], None
        while j >= 0:
            d = off[below] if d is None else d + off[below]  # body i's origin from body j's, root axes
            moment = Fn + cross(xp, spread(xp, d, Fl.shape[1], axis=1), Fl)
            blocks[(j, i)] = columns_dot(xp, S0[j], xp.concat([Fl, moment], axis=0))
            below, j = j, am.parent[j]
    return assemble(bm, blocks, N, symmetric=True)


def root_mass_matrix(bm, terms, N):
    """M_full (N, nv_full, nv_full) from the :func:`root_terms` (S, own and composite inertias, F):
    H_ji = S_j^T F_i."""
    S0, _, _, F = terms
    blocks = {}
    for i in range(bm.am.n):
        j = i
        while j >= 0:
            blocks[(j, i)] = columns_dot(bm.xp, S0[j], F[i])
            j = bm.am.parent[j]
    return assemble(bm, blocks, N, symmetric=True)


def root_terms(bm, X, S, params=None):
    """Per body, in the axes of its tree's root body about its origin: the motion subspace S_i
    (6, nv_i, N), the body's inertia (m, h, I), its subtree's composite inertia IC_i and the forces
    F_i = IC_i S_i (6, nv_i, N)."""
    xp = bm.xp
    W = root_poses(bm, X)
    own = root_inertias(bm, W, body_inertias(bm, params))
    comp = subtree_sums(bm, own)
    S0 = [root_subspace(bm, W[i], S[i]) for i in range(bm.am.n)]
    F = [xp.concat(inertia_times_columns(xp, *comp[i], S0[i][:3], S0[i][3:]), axis=0) for i in range(bm.am.n)]
    return S0, own, comp, F


def scalar_tree(bm) -> bool:
    """Whether every joint has one coordinate (nq = nv = 1) whose motion subspace is constant in the
    child frame (revolute, continuous, prismatic, helical): the joints :func:`mass_matrix_jvp` takes."""
    return all(j.nq == 1 and j.nv == 1 and constant_subspace(j) for j in bm.am.joints)


def mass_matrix_jvp(bm, terms, dq):
    """dM_full (N, nv_full, nv_full): the derivative of :func:`rigid_mass_matrix` along dq (N, nq_full),
    at the :func:`root_terms` of q, for trees of :func:`scalar_tree` joints; linear in dq with
    coefficients from one CRBA pass, so its transpose (a backend's reverse mode) is a pass of the
    same size, not a pass back through the kinematics.

    In the axes of a tree's root body (which no other joint moves; M does not change with the root
    joint's own coordinate), joint k moving at dq_k moves its subtree rigidly with the twist
    dq_k S_k, so body b moves with v_b = sum of dq_k S_k over the non-root joints k on its path:
    a motion subspace turns as dS_j = v_parent(j) x S_j, a body's inertia as v_b x* I_b - I_b v_b x,
    and dM_ji = dS_j^T F_i + S_j^T (dIC_i S_i + IC_i dS_i) with dIC_i the subtree's sum.

    Written on the 3-vector halves of the 6-vectors and on each coordinate's rate as a row of its
    own, never a 6-vector made by concatenation or a slice of dq: on JAX, the values the reverse
    mode keeps are then stored component by component, and its transpose stacks the rows'
    cotangents instead of padding slices, which XLA's CPU backend fuses into slow loops over
    interleaved components."""
    xp = bm.xp
    am = bm.am
    S0, own, comp, F = terms
    s = [(x[:3, 0], x[3:, 0]) for x in S0]  # (3, N) halves of each 6-vector
    f = [(x[:3, 0], x[3:, 0]) for x in F]
    rate = rows(xp, dq, axis=1)
    vel, dS = [None] * am.n, [None] * am.n
    for b in range(am.n):
        k = am.parent[b]
        if k >= 0:
            if vel[k] is not None:
                dS[b] = motion_cross(xp, *vel[k], *s[b])
            d = spread(xp, rate[am.joints[b].idx_q], 3)
            vb = (d * s[b][0], d * s[b][1])
            vel[b] = vb if vel[k] is None else (vel[k][0] + vb[0], vel[k][1] + vb[1])
    rates = [None] * am.n
    for b in range(am.n):  # v_b x* I_b - I_b v_b x: h' = w x h + m v, I' = A + A^T entry by entry
        if vel[b] is not None:
            rates[b] = _inertia_rate(xp, *own[b], *vel[b])
    dIC = subtree_sums(bm, rates)
    blocks = {}
    for i in range(am.n):
        dF = None
        v, w = s[i]
        if dIC[i] is not None:  # dIC_i S_i = (w x h', I' w + h' x v) (no mass rate)
            hd, Id = dIC[i]
            dF = (cross(xp, w, hd), mv(xp, Id, w) + cross(xp, hd, v))
        if dS[i] is not None:
            g = inertia_times(xp, *comp[i], *dS[i])
            dF = g if dF is None else (dF[0] + g[0], dF[1] + g[1])
        j = i
        while j >= 0:
            t = None
            if dF is not None:
                t = dot(xp, s[j][0], dF[0]) + dot(xp, s[j][1], dF[1])
            if dS[j] is not None:
                e = dot(xp, dS[j][0], f[i][0]) + dot(xp, dS[j][1], f[i][1])
                t = e if t is None else t + e
            if t is not None:
                blocks[(j, i)] = t[None, None]
            j = am.parent[j]
    return assemble(bm, blocks, dq.shape[0], symmetric=True)


def mass_matrix_vjp(bm, terms, lam):
    """q_bar (N, nq_full): the gradient of sum(lam * M_full) with respect to q, at the
    :func:`root_terms` of q, lam (N, nv_full, nv_full), for trees of :func:`scalar_tree` joints: the
    transpose of :func:`mass_matrix_jvp`, written out (a pass of the CRBA's size).

    With c_ji the cotangent of the block H_ji = S_j^T F_i (lam_ji + lam_ij, lam_ii on the
    diagonal), the adjoints F~_i = sum over j up the path of c_ji S_j and S~_j = sum over i below of
    c_ji F_i + IC_j F~_j (IC symmetric); the composite-inertia rates' adjoints (from dIC_i S_i)
    summed down each path, through the transpose of the inertia rate v x* I - I v x to each body's
    twist v_b; S_b's turning dS_b = v_parent x S_b adds to v_parent's adjoint; and inward
    q_bar_b = S_b . v~_b, v~_parent += v~_b."""
    xp = bm.xp
    am = bm.am
    S0, own, comp, F = terms
    s = [(x[:3, 0], x[3:, 0]) for x in S0]
    f = [(x[:3, 0], x[3:, 0]) for x in F]
    L = [rows(xp, r, axis=1) for r in rows(xp, lam, axis=1)]
    idx = [j.idx_v for j in am.joints]
    moving = [am.parent[b] >= 0 for b in range(am.n)]  # a body moved by the rates (not a root)
    turning = [moving[b] and moving[am.parent[b]] for b in range(am.n)]  # dS_b = v_parent x S_b != 0
    Fb, Sb = [None] * am.n, [None] * am.n
    for i in range(am.n):
        j = i
        while j >= 0:
            c = L[idx[j]][idx[i]] if j == i else L[idx[j]][idx[i]] + L[idx[i]][idx[j]]
            c3 = spread(xp, c, 3)
            Fb[i] = _axpy(Fb[i], c3, s[j])
            if turning[j]:
                Sb[j] = _axpy(Sb[j], c3, f[i])
            j = am.parent[j]
    ICb = [None] * am.n  # adjoint of dIC_i: (h~, G~) from dIC_i S_i = (w x h', I' w + h' x v)
    for i in range(am.n):
        (fv, fw), (v, w) = Fb[i], s[i]
        ICb[i] = (cross(xp, fv, w) + cross(xp, v, fw), outer(xp, fw, w))
        if turning[i]:
            g = inertia_times(xp, *comp[i], fv, fw)
            Sb[i] = (Sb[i][0] + g[0], Sb[i][1] + g[1])
    velb = [None] * am.n
    for b in range(am.n):
        k = am.parent[b]
        if k >= 0:
            ICb[b] = (ICb[b][0] + ICb[k][0], ICb[b][1] + ICb[k][1])  # sum over the ancestors' subtrees
        if moving[b]:
            velb[b] = _inertia_rate_vjp(xp, *own[b], *ICb[b])
    for b in range(am.n):
        if turning[b]:  # <a, v x s> = v . (s_w x a_v) + w . (s_v x a_v + s_w x a_w)
            (av, aw), (sv, sw), k = Sb[b], s[b], am.parent[b]
            velb[k] = (velb[k][0] + cross(xp, sw, av), velb[k][1] + cross(xp, sv, av) + cross(xp, sw, aw))
    N = lam.shape[0]
    out = [xp.zeros((N,), dtype=bm.dtype, device=bm.device)] * am.n
    for b in range(am.n - 1, -1, -1):
        if moving[b]:
            out[b] = dot(xp, s[b][0], velb[b][0]) + dot(xp, s[b][1], velb[b][1])
            k = am.parent[b]
            if moving[k]:
                velb[k] = (velb[k][0] + velb[b][0], velb[k][1] + velb[b][1])
    order = sorted(range(am.n), key=lambda i: am.joints[i].idx_q)
    return xp.stack([out[i] for i in order], axis=1)


def _axpy(y, c, x):
    """y + c x for pairs of (3, N) halves (y None: zero)."""
    return (c * x[0], c * x[1]) if y is None else (y[0] + c * x[0], y[1] + c * x[1])


def _inertia_rate_vjp(xp, m, h, I, hb, Gb):
    """The adjoint (v~, w~) of the twist of :func:`_inertia_rate` for the adjoint (h~, G~) of its
    result (G~ (3, 3, N) the full matrix's): with Gs = G~ + G~^T,
    v~ = m h~ - Gs h + tr(Gs) h and w~ = h x h~ + sum over columns c of I_c x Gs_c."""
    Gs = Gb + xp.permute_dims(Gb, (1, 0, 2))
    tr = Gs[0, 0] + Gs[1, 1] + Gs[2, 2]
    wb = cross(xp, h, hb)
    for c in range(3):
        wb = wb + cross(xp, I[:, c], Gs[:, c])
    return m * hb - mv(xp, Gs, h) + tr * h, wb


def _inertia_rate(xp, m, h, I, v, w):
    """The rate (h', I') of a body's inertia (m, h, I) moving with the twist (v, w) (3, N):
    v x* I - I v x, h' = w x h + m v and I' = A + A^T, A = [w x I_c]_c - h v^T + (v . h) 1,
    written entry by entry (a stacked, transposed A would be copied between layouts by XLA)."""
    wI = [rows(xp, cross(xp, w, I[:, c]), axis=0) for c in range(3)]  # wI[c][r] = (w x I_c)_r
    hs, vs = rows(xp, h, axis=0), rows(xp, v, axis=0)
    vh2 = 2 * dot(xp, v, h)

    def entry(r, c):
        return wI[c][r] + wI[r][c] - hs[r] * vs[c] - hs[c] * vs[r]

    return cross(xp, w, h) + m * v, symmetric(xp, entry(0, 0) + vh2, entry(0, 1), entry(1, 1) + vh2,
                                               entry(0, 2), entry(1, 2), entry(2, 2) + vh2)


def _diag(xp, d):
    """diag(d) (..., k, k) of d (..., k)."""
    k = d.shape[-1]
    return d[..., None] * xp.eye(k, dtype=d.dtype, device=getattr(d, "device", None))


def _flat_terms(xp, batch, *terms):
    """Joint-term arrays: batched ones (..., nv_full) flattened to (N, nv_full), others as given."""
    return [x if x is None or len(x.shape) < 2 else flat(xp, x, batch) for x in terms]


def _mass_matrix(bm, q, params, armature, kinematics=None, rigid=None):
    """M (N, nv, nv) of flat q (N, nq), params (N, 10 n) or None, armature or None; ``rigid``: a
    replacement of :func:`rigid_mass_matrix` (same arguments and result)."""
    M = (rigid or rigid_mass_matrix)(bm, full_q(bm, q), params, kinematics)
    return reduce_matrix(bm, M + _diag(bm.xp, bm.armature if armature is None else armature))


def mass_matrix(bm, q, params=None, armature=None, rigid=None):
    """Joint-space inertia M(q) (..., nv, nv) (kg m^2, kg), armature on the diagonal: the
    Robot's ``mass_matrix``.  q (..., nq); ``params``/``armature`` as in
    :func:`composedyn.dynamics.array_api.rnea.inverse_dynamics`; ``rigid``: a replacement of
    :func:`rigid_mass_matrix` (a backend's form with its own derivative rule)."""
    xp = bm.xp
    check_parameters(bm, params)
    batch = batch_shape(q, params, armature)
    q, params = flat(xp, q, batch), flat(xp, params, batch)
    (armature,) = _flat_terms(xp, batch, armature)
    M = _mass_matrix(bm, q, params, armature, rigid=rigid)
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
    y = list(rows(xp, b, axis=1))  # rows, not slices: a slice's transpose would pad (JAX)
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
