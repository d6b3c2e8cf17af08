"""The Coriolis matrix in Christoffel form on the array API (world frame, 6 x 6 spatial matrices).

With world-frame motion subspaces S_j, body velocities v_i, spatial inertias I_i (linear first,
about the world origin) and B_i = 1/2 (v_i x* I_i - I_i v_i x + A(I_i v_i)), A(f) v = v x* f,

    C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i),     dS_j/dt = v_j x S_j,

so that C qd = the velocity-product torques and dM/dt - 2C is skew-symmetric (Echeandia and
Wensing, "Numerical methods to compute the Coriolis matrix and Christoffel symbols for rigid-body
systems", J. Comput. Nonlinear Dyn. 2021).  The sum collapses onto subtree composites:
C[j, k] = S_j . (IC_d dS_k + BC_d S_k) with d the deeper of the ancestor pair (j, k).
dS_j/dt = v_j x S_j holds for motion subspaces fixed in the child frame (every joint kind but
``universal``, whose S turns with its second angle).
"""

from __future__ import annotations

from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    full_q,
    full_v,
    reduce_matrix,
    tree,
    velocities,
    world_poses,
)
from composedyn.dynamics.array_api.spatial import cross, inertia_to_parent, mv, skew


def _blocks(xp, a, b, c, d):
    """[[a, b], [c, d]] of four (..., 3, 3) blocks -> (..., 6, 6)."""
    return xp.concat([xp.concat([a, b], axis=-1), xp.concat([c, d], axis=-1)], axis=-2)


def _crm(xp, v, w):
    """6 x 6 matrix of (v, w) x acting on motions (linear first)."""
    W, V = skew(xp, w), skew(xp, v)
    return _blocks(xp, W, V, xp.zeros_like(W), W)


def _crf(xp, v, w):
    """6 x 6 matrix of (v, w) x* acting on forces: -crm^T."""
    W, V = skew(xp, w), skew(xp, v)
    return _blocks(xp, W, xp.zeros_like(W), V, W)


def _crf_bar(xp, f, n):
    """A(f) (..., 6, 6) with A(f) m = m x* f for the force f = (f, n)."""
    Fm = -skew(xp, f)
    return _blocks(xp, xp.zeros_like(Fm), Fm, Fm, -skew(xp, n))


def coriolis_matrix(bm, q, qd):
    """Christoffel-consistent Coriolis matrix C(q, qd) (..., nv, nv): the Robot's ``coriolis_matrix``."""
    xp = bm.xp
    am = bm.am
    batch = batch_shape(q, qd)
    qf, vf = full_q(bm, q), full_v(bm, qd)
    X, S = tree(bm, qf)
    W = world_poses(bm, X)
    vel, _ = velocities(bm, X, S, vf)
    Sw, Sd, I6, B6 = [], [], [], []
    for i in range(am.n):
        R, p = W[i]
        ang = R @ S[i][..., 3:, :]
        lin = R @ S[i][..., :3, :] + xp.linalg.cross(xp.broadcast_to(p[..., :, None], ang.shape), ang, axis=-2)
        Sw.append(xp.broadcast_to(xp.concat([lin, ang], axis=-2), batch + (6, am.joints[i].nv)))
        w = mv(R, vel[i][1])
        v = mv(R, vel[i][0]) + cross(xp, p, w)
        m, h, Io = inertia_to_parent(xp, R, p, bm.m[i], bm.h[i], bm.I[i])
        H = skew(xp, h)
        eye = xp.eye(3, dtype=bm.dtype, device=bm.device)
        I = _blocks(xp, m[..., None, None] * eye + xp.zeros_like(H), -H, H, Io)
        f = m[..., None] * v + cross(xp, w, h)
        n = mv(Io, w) + cross(xp, h, v)
        I6.append(I)
        B6.append(0.5 * (_crf(xp, v, w) @ I - I @ _crm(xp, v, w) + _crf_bar(xp, f, n)))
        Sd.append(_crm(xp, v, w) @ Sw[i])
    IC, BC = list(I6), list(B6)
    for i in range(am.n - 1, -1, -1):
        k = am.parent[i]
        if k >= 0:
            IC[k], BC[k] = IC[k] + IC[i], BC[k] + BC[i]
    blocks = {}
    for d in range(am.n):
        St = xp.matrix_transpose(Sw[d])
        blocks[(d, d)] = St @ (IC[d] @ Sd[d] + BC[d] @ Sw[d])
        F = IC[d] @ Sd[d] + BC[d] @ Sw[d]
        Hd, Kd = St @ IC[d], St @ BC[d]
        k = am.parent[d]
        while k >= 0:
            blocks[(k, d)] = xp.matrix_transpose(Sw[k]) @ F
            blocks[(d, k)] = Hd @ Sd[k] + Kd @ Sw[k]
            k = am.parent[k]
    order = sorted(range(am.n), key=lambda i: am.joints[i].idx_v)
    rows = []
    for r in order:
        rows.append(xp.concat([xp.broadcast_to(blocks[(r, c)], batch + (am.joints[r].nv, am.joints[c].nv))
                               if (r, c) in blocks else
                               xp.zeros(batch + (am.joints[r].nv, am.joints[c].nv), dtype=bm.dtype, device=bm.device)
                               for c in order], axis=-1))
    return reduce_matrix(bm, xp.concat(rows, axis=-2))
