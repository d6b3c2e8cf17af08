"""The Coriolis matrix in Christoffel form on the array API (world frame, 6 x 6 spatial matrices).

With world-frame motion subspaces S_j, body velocities v_i, spatial inertias I_i (linear first,
about the world origin) and B_i = 1/2 (v_i x* I_i - I_i v_i x + A(I_i v_i)), A(f) v = v x* f,

    C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i),     dS_j/dt = v_j x S_j + X_j dS_j/dt|child,

so that C qd = the velocity-product torques and dM/dt - 2C is skew-symmetric (Echeandia and
Wensing, "Numerical methods to compute the Coriolis matrix and Christoffel symbols for rigid-body
systems", J. Comput. Nonlinear Dyn. 2021).  The sum collapses onto subtree composites:
C[j, k] = S_j . (IC_d dS_k + BC_d S_k) with d the deeper of the ancestor pair (j, k).
The world-frame column derivative is the body's motion v_j x S_j plus the joint's own rate of
S in its child frame (:func:`composedyn.dynamics.array_api.joints.motion_subspace_derivative`:
nonzero for a universal joint, whose S turns with its second angle).
"""

from __future__ import annotations

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    coords,
    flat,
    full_q,
    full_v,
    reduce_matrix,
    tree,
    unflat_matrix,
    velocities,
    world_poses,
)
from composedyn.dynamics.array_api.spatial import inertia_to_parent


def _rows(xp, x, N):
    """Components first (3, N) or (a, b, N) -> batch first (N, 3) or (N, a, b)."""
    if len(x.shape) == 2:
        return xp.matrix_transpose(xp.broadcast_to(x, (x.shape[0], N)))
    return unflat_matrix(xp, x, (N,))


def _skew(xp, w):
    """[w] (N, 3, 3) of w (N, 3)."""
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    o = xp.zeros_like(x)
    return xp.stack([xp.stack([o, -z, y], axis=-1), xp.stack([z, o, -x], axis=-1),
                     xp.stack([-y, x, o], axis=-1)], axis=-2)


def _mv(A, x):
    return (A @ x[..., None])[..., 0]


def _blocks(xp, a, b, c, d):
    """[[a, b], [c, d]] of four (N, 3, 3) blocks -> (N, 6, 6)."""
    return xp.concat([xp.concat([a, b], axis=-1), xp.concat([c, d], axis=-1)], axis=-2)


def _crm(xp, v, w):
    """6 x 6 matrix of (v, w) x acting on motions (linear first)."""
    W, V = _skew(xp, w), _skew(xp, v)
    return _blocks(xp, W, V, xp.zeros_like(W), W)


def _crf(xp, v, w):
    """6 x 6 matrix of (v, w) x* acting on forces: -crm^T."""
    W, V = _skew(xp, w), _skew(xp, v)
    return _blocks(xp, W, xp.zeros_like(W), V, W)


def _crf_bar(xp, f, n):
    """A(f) (N, 6, 6) with A(f) m = m x* f for the force f = (f, n)."""
    Fm = -_skew(xp, f)
    return _blocks(xp, xp.zeros_like(Fm), Fm, Fm, -_skew(xp, n))


def coriolis_matrix(bm, q, qd):
    """Christoffel-consistent Coriolis matrix C(q, qd) (..., nv, nv): the Robot's ``coriolis_matrix``."""
    xp = bm.xp
    am = bm.am
    batch = batch_shape(q, qd)
    q, qd = flat(xp, q, batch), flat(xp, qd, batch)
    N = q.shape[0]
    q, vf = full_q(bm, q), full_v(bm, qd)
    X, S = tree(bm, q)
    W = world_poses(bm, X)
    vel, _ = velocities(bm, X, S, vf)
    eye = xp.eye(3, dtype=bm.dtype, device=bm.device)
    Sw, Sd, I6, B6 = [], [], [], []
    for i in range(am.n):
        m, h, Io = inertia_to_parent(xp, *W[i], bm.m[i], bm.h[i], bm.I[i])
        R, p, h, Io = _rows(xp, W[i][0], N), _rows(xp, W[i][1], N), _rows(xp, h, N), _rows(xp, Io, N)
        Si = unflat_matrix(xp, S[i], (N,))
        ang = R @ Si[..., 3:, :]
        lin = R @ Si[..., :3, :] + xp.linalg.cross(xp.broadcast_to(p[..., :, None], ang.shape), ang, axis=-2)
        Sw.append(xp.concat([lin, ang], axis=-2))
        w = _mv(R, _rows(xp, vel[i][1], N))
        v = _mv(R, _rows(xp, vel[i][0], N)) + xp.linalg.cross(p, w)
        H = _skew(xp, h)
        I = _blocks(xp, m[..., None, None] * eye + xp.zeros_like(H), -H, H, Io)
        f = m[..., None] * v + xp.linalg.cross(w, h)
        n = _mv(Io, w) + xp.linalg.cross(h, v)
        I6.append(I)
        B6.append(0.5 * (_crf(xp, v, w) @ I - I @ _crm(xp, v, w) + _crf_bar(xp, f, n)))
        dS = jm.motion_subspace_derivative(xp, am.joints[i], coords(q, am.joints[i], velocity=False),
                                           coords(vf, am.joints[i]))  # the joint's own dS/dt, child frame
        dang = R @ dS[..., 3:, :]
        dlin = R @ dS[..., :3, :] + xp.linalg.cross(xp.broadcast_to(p[..., :, None], dang.shape), dang, axis=-2)
        Sd.append(_crm(xp, v, w) @ Sw[i] + xp.concat([dlin, dang], axis=-2))
    IC, BC = list(I6), list(B6)
    for i in range(am.n - 1, -1, -1):
        k = am.parent[i]
        if k >= 0:
            IC[k], BC[k] = IC[k] + IC[i], BC[k] + BC[i]
    blocks = {}
    for d in range(am.n):
        St = xp.matrix_transpose(Sw[d])
        F = IC[d] @ Sd[d] + BC[d] @ Sw[d]
        blocks[(d, d)] = St @ F
        Hd, Kd = St @ IC[d], St @ BC[d]
        k = am.parent[d]
        while k >= 0:
            blocks[(k, d)] = xp.matrix_transpose(Sw[k]) @ F
            blocks[(d, k)] = Hd @ Sd[k] + Kd @ Sw[k]
            k = am.parent[k]
    order = sorted(range(am.n), key=lambda i: am.joints[i].idx_v)
    rows = []
    for r in order:
        rows.append(xp.concat([blocks[(r, c)] if (r, c) in blocks else
                               xp.zeros((N, am.joints[r].nv, am.joints[c].nv), dtype=bm.dtype, device=bm.device)
                               for c in order], axis=-1))
    C = reduce_matrix(bm, xp.concat(rows, axis=-2))
    return xp.reshape(C, tuple(batch) + tuple(C.shape[-2:]))
