"""The joint torque regressor on the array API: tau = Y(q, qd, qdd) @ params.

Columns are the Robot's (:mod:`composedyn.parameters`): per body ``[m, m cx, m cy, m cz, Ixx,
Ixy, Iyy, Ixz, Iyz, Izz]`` about the body frame origin in body axes, then with
``joint_terms=True`` per joint carrying them ``[fv, fc, Ia]`` (columns qd, sgn qd, qdd; with
``offset=True`` a constant ``off``).  Body i's spatial force is linear in its parameters,
``(f, n) = A_i pi_i`` with its body-frame velocity (v, w), spatial acceleration (dv, dw)
(gravity as the base acceleration -g) and classical acceleration a = dv + w x v:

    f = m a + ([dw] + [w]^2) h,       n = L(dw) I + w x L(w) I + h x a,

(Khalil and Dombre, *Modeling, Identification and Control of Robots*, 2002, ch. 12), and
joint j carries S_j^T of the forces of its subtree, moved up by X^T (the RNEA's backward pass).
"""

from __future__ import annotations

from composedyn.dynamics.array_api.crba import project_to_ancestors
from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    flat,
    full_q,
    full_v,
    tree,
    unflat_matrix,
    velocities,
)
from composedyn.dynamics.array_api.rnea import accelerations
from composedyn.dynamics.array_api.spatial import cross, mm, skew


def _inertia_map(xp, w):
    """L(w) (3, 6, N) with L(w) (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) = I w, for w (3, N)."""
    x, y, z = w[0], w[1], w[2]
    o = xp.zeros_like(x)
    return xp.stack([xp.stack([x, y, o, z, o, o], axis=0), xp.stack([o, x, y, o, z, o], axis=0),
                     xp.stack([o, o, o, x, y, z], axis=0)], axis=0)


def body_force_matrix(xp, v, w, dv, dw):
    """A (6, 10, N) with the body's spatial force (f, n) = A pi (body axes, linear first)."""
    a = dv + cross(xp, w, v)
    W = skew(xp, w)
    lin = xp.concat([a[:, None], skew(xp, dw) + mm(xp, W, W), xp.zeros_like(W), xp.zeros_like(W)], axis=1)
    ang = xp.concat([xp.zeros_like(a)[:, None], -skew(xp, a), _inertia_map(xp, dw) + mm(xp, W, _inertia_map(xp, w))],
                    axis=1)
    return xp.concat([lin, ang], axis=0)


def rigid_regressor(bm, q, v, a):
    """Y_full (N, nv_full, 10 n) at full (q, v, a) (N, k): the model's rigid-body torques = Y_full @ params."""
    xp = bm.xp
    am = bm.am
    N = q.shape[0]
    X, S = tree(bm, q)
    vel, vJ = velocities(bm, X, S, v)
    acc = accelerations(bm, X, S, vel, vJ, q, v, a)
    blocks = {}
    for i in range(am.n):
        A = xp.broadcast_to(body_force_matrix(xp, *vel[i], *acc[i]), (6, 10, N))
        project_to_ancestors(bm, X, S, i, A[:3], A[3:], blocks)
    rows = []
    for r in sorted(range(am.n), key=lambda i: am.joints[i].idx_v):
        shape = (am.joints[r].nv, 10, N)
        rows.append(xp.concat([xp.broadcast_to(blocks[(r, i)], shape) if (r, i) in blocks
                               else xp.zeros(shape, dtype=bm.dtype, device=bm.device) for i in range(am.n)],
                              axis=1))
    return unflat_matrix(xp, xp.concat(rows, axis=0), (N,))


def joint_term_columns(bm, v, a, offset: bool = False):
    """(N, nv_full, k T) for the T joints carrying joint terms, full v and a (N, nv_full): row j
    has (qd_j, sgn qd_j, qdd_j(, 1)) in block j (k = 3, or 4 with ``offset``)."""
    xp = bm.xp
    eye = xp.eye(bm.am.nv_full, dtype=bm.dtype, device=bm.device)
    cols = []
    for j in bm.am.term_joints:
        vals = [v[..., j], xp.sign(v[..., j]), a[..., j]] + ([xp.ones_like(v[..., j])] if offset else [])
        cols.append(eye[:, j][:, None] * xp.stack(vals, axis=-1)[..., None, :])
    return xp.concat(cols, axis=-1) if cols else xp.zeros((v.shape[0], bm.am.nv_full, 0), dtype=bm.dtype,
                                                          device=bm.device)


def regressor(bm, q, qd, qdd, joint_terms: bool = False, offset: bool = False):
    """Y (..., nv, 10 bodies [+ 3 or 4 per joint]) with Y @ params = the inverse dynamics without
    friction and armature (with joint terms: the Robot's full inverse dynamics); the Robot's
    ``regressor`` layout.  q (..., nq), qd and qdd (..., nv); mimic joints: Gv^T Y_full."""
    xp = bm.xp
    batch = batch_shape(q, qd, qdd)
    q, qd, qdd = (flat(xp, x, batch) for x in (q, qd, qdd))
    qf, vf, af = full_q(bm, q), full_v(bm, qd), full_v(bm, qdd)
    Y = rigid_regressor(bm, qf, vf, af)
    if joint_terms:
        Y = xp.concat([Y, joint_term_columns(bm, vf, af, offset)], axis=-1)
    if bm.Gv is not None:
        Y = xp.matrix_transpose(bm.Gv) @ Y
    return xp.reshape(Y, tuple(batch) + tuple(Y.shape[-2:]))


def inertial_parameters(bm):
    """The model's parameters (10 bodies,) in the regressor's layout (backend array)."""
    return bm.xp.reshape(bm.inertia, (-1,))
