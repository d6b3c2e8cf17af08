"""Per-body kinematics in body frames, the layout conversions, and the map between the
robot's and the model's coordinates.

Public arrays are (..., k) with leading batch axes; the algorithms flatten the batch to N
samples (:func:`flat`) and work in the components-first layout of
:mod:`composedyn.dynamics.array_api.spatial` ((3, N) vectors, (3, 3, N) matrices), converting
back with :func:`unflat_vector` / :func:`unflat_matrix`.  Configurations and velocities stay
(N, k) batch-first, as the joint model (:mod:`composedyn.dynamics.array_api.joints`) takes them.

Body ``i``'s frame is its joint's child frame (:mod:`composedyn.dynamics.array_api.model`).
:func:`tree` gives, per body, its pose ``(R, p)`` in the parent body frame and the motion
subspace ``S`` (6, nv_i, N) of its joint (child axes, linear first); :func:`velocities` runs
Featherstone's velocity recursion ``v_i = X_i v_parent + S_i v_j`` (RBDA eq. 5.7, body frames).
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.spatial import combine, mm, motion_to_child, mv, rows


def batch_shape(*arrays) -> tuple[int, ...]:
    """The broadcast leading shape of arrays whose last axis is a coordinate axis (None skipped)."""
    return tuple(np.broadcast_shapes(*(tuple(a.shape[:-1]) for a in arrays if a is not None)))


def flat(xp, x, batch):
    """(..., k) broadcast to ``batch`` and flattened to (N, k); None stays None."""
    if x is None:
        return None
    k = x.shape[-1]
    return xp.reshape(xp.broadcast_to(x, tuple(batch) + (k,)), (math.prod(batch), k))


def unflat_vector(xp, x, batch):
    """(k, N) (or (k, 1)) -> batch + (k,)."""
    x = xp.broadcast_to(x, (x.shape[0], math.prod(batch)))
    return xp.reshape(xp.matrix_transpose(x), tuple(batch) + (x.shape[0],))


def unflat_matrix(xp, x, batch):
    """(r, c, N) (or (r, c, 1)) -> batch + (r, c)."""
    x = xp.broadcast_to(x, tuple(x.shape[:2]) + (math.prod(batch),))
    return xp.reshape(xp.permute_dims(x, (2, 0, 1)), tuple(batch) + tuple(x.shape[:2]))


def unflat_rows(xp, x, batch):
    """(N, k) (or (1, k)) -> batch + (k,)."""
    x = xp.broadcast_to(x, (math.prod(batch), x.shape[-1]))
    return xp.reshape(x, tuple(batch) + (x.shape[-1],))


def components(xp, x):
    """A joint-model result (N, a) or (N, a, b) -> components first, (a, N) or (a, b, N),
    contiguous (stacked rows), so that later operations run on rows of N numbers."""
    if len(x.shape) == 2:
        return xp.stack(rows(xp, x, axis=1), axis=0)
    a, b = x.shape[1], x.shape[2]
    entries = xp.stack([e for r in rows(xp, x, axis=1) for e in rows(xp, r, axis=1)], axis=0)
    return xp.reshape(entries, (a, b, x.shape[0]))


def coords(x, joint, velocity: bool = True):
    """The joint's slice of a full velocity (``velocity``) or configuration array (N, nv_j or nq_j)."""
    k = joint.idx_v if velocity else joint.idx_q
    return x[..., k:k + (joint.nv if velocity else joint.nq)]


def full_q(bm, q):
    """Model configuration q_full (N, nq_full) = Gq q + bq of the robot's q (N, nq)."""
    return q if bm.Gq is None else q @ bm.xp.matrix_transpose(bm.Gq) + bm.bq


def full_v(bm, v):
    """Model velocities (or accelerations) v_full (N, nv_full) = Gv v of the robot's v (N, nv)."""
    return v if v is None or bm.Gv is None else v @ bm.xp.matrix_transpose(bm.Gv)


def reduce(bm, tau):
    """Generalised forces of the model (N, nv_full) -> the robot's (N, nv): Gv^T tau."""
    return tau if bm.Gv is None else tau @ bm.Gv


def reduce_matrix(bm, A):
    """A matrix over the model's velocities (N, nv_full, nv_full) -> Gv^T A Gv (N, nv, nv)."""
    return A if bm.Gv is None else bm.xp.matrix_transpose(bm.Gv) @ A @ bm.Gv


def reduce_columns(bm, J):
    """Columns over the model's velocities (N, r, nv_full) -> the robot's (N, r, nv): J Gv."""
    return J if bm.Gv is None else J @ bm.Gv


def tree(bm, q):
    """Per body: (R (3, 3, N), p (3, N)) its pose in the parent body frame (m), and the motion
    subspace S (6, nv_i, N) of its joint, child axes, linear first; q (N, nq_full)."""
    xp = bm.xp
    X, S = [], []
    for i, joint in enumerate(bm.am.joints):
        qj = coords(q, joint, velocity=False)
        Rj, pj = jm.joint_transform(xp, joint, qj)
        Rj, pj = components(xp, Rj), components(xp, pj)
        if bm.identity_R[i]:
            X.append((Rj, bm.p[i] + pj))
        else:
            X.append((mm(xp, bm.R[i], Rj), bm.p[i] + mv(xp, bm.R[i], pj)))
        S.append(components(xp, jm.motion_subspace(xp, joint, qj)))
    return X, S


def world_poses(bm, X):
    """World pose (R (3, 3, N), p (3, N)) of every body frame from the parent poses X of :func:`tree`."""
    xp = bm.xp
    out = []
    for i, (R, p) in enumerate(X):
        k = bm.am.parent[i]
        if k < 0:
            out.append((R, p))
        else:
            Rk, pk = out[k]
            out.append((mm(xp, Rk, R), pk + mv(xp, Rk, p)))
    return out


def root_poses(bm, X):
    """Per body its pose (R (3, 3, N), p (3, N)) in the frame of its tree's root body (the body
    whose joint attaches to the world), from the parent poses X of :func:`tree`; None for a root
    body (the identity).  Quantities in these axes stay of the robot's size whatever the root's
    place in the world."""
    xp = bm.xp
    out = []
    for i, (R, p) in enumerate(X):
        k = bm.am.parent[i]
        if k < 0:
            out.append(None)
        elif out[k] is None:
            out.append((R, p))
        else:
            Rk, pk = out[k]
            out.append((mm(xp, Rk, R), pk + mv(xp, Rk, p)))
    return out


def joint_motion(xp, S, x):
    """S x for S (6, nv_j, N) and joint rates x (N, nv_j): the halves ((3, N), (3, N))."""
    m = combine(xp, S, xp.matrix_transpose(x))
    return m[:3], m[3:]


def velocities(bm, X, S, v):
    """Body velocities (v_i, w_i) (3, N) each, body axes (m/s, rad/s), and the joint motions
    vJ_i = S_i v_j, for full velocities v (N, nv_full) (Featherstone RBDA eq. 5.7)."""
    xp = bm.xp
    vel, vJ = [], []
    for i, joint in enumerate(bm.am.joints):
        Jv, Jw = joint_motion(xp, S[i], coords(v, joint))
        vJ.append((Jv, Jw))
        k = bm.am.parent[i]
        if k < 0:
            vel.append((Jv, Jw))
        else:
            pv, pw = motion_to_child(xp, *X[i], *vel[k])
            vel.append((pv + Jv, pw + Jw))
    return vel, vJ
