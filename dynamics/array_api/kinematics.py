"""Per-body kinematics in body frames, and the map between the robot's and the model's coordinates.

Body ``i``'s frame is its joint's child frame (:mod:`composedyn.dynamics.array_api.model`).
``tree(bm, q)`` gives, per body, its pose ``(R, p)`` in the parent body frame and the motion
subspace ``S`` (..., 6, nv_i) of its joint (child axes, linear first); ``velocities`` runs
Featherstone's velocity recursion ``v_i = X_i v_parent + S_i v_j`` (RBDA eq. 5.7, body frames).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.spatial import cross, motion_to_child, mv


def batch_shape(*arrays) -> tuple[int, ...]:
    """The broadcast leading shape of arrays whose last axis is a coordinate axis (None skipped)."""
    return tuple(np.broadcast_shapes(*(tuple(a.shape[:-1]) for a in arrays if a is not None)))


def coords(x, joint, velocity: bool = True):
    """The joint's slice of a full velocity (``velocity``) or configuration array (..., nv_j or nq_j)."""
    k = joint.idx_v if velocity else joint.idx_q
    return x[..., k:k + (joint.nv if velocity else joint.nq)]


def full_q(bm, q):
    """Model configuration q_full (..., nq_full) = Gq q + bq of the robot's q (..., nq)."""
    return q if bm.Gq is None else q @ bm.xp.matrix_transpose(bm.Gq) + bm.bq


def full_v(bm, v):
    """Model velocities (or accelerations) v_full (..., nv_full) = Gv v of the robot's v (..., nv)."""
    return v if v is None or bm.Gv is None else v @ bm.xp.matrix_transpose(bm.Gv)


def reduce(bm, tau):
    """Generalised forces of the model (..., nv_full) -> the robot's (..., nv): Gv^T tau."""
    return tau if bm.Gv is None else tau @ bm.Gv


def reduce_matrix(bm, A):
    """A matrix over the model's velocities (..., nv_full, nv_full) -> Gv^T A Gv (..., nv, nv)."""
    return A if bm.Gv is None else bm.xp.matrix_transpose(bm.Gv) @ A @ bm.Gv


def reduce_columns(bm, J):
    """Columns over the model's velocities (..., r, nv_full) -> the robot's (..., r, nv): J Gv."""
    return J if bm.Gv is None else J @ bm.Gv


def tree(bm, q):
    """Per body: (R (..., 3, 3), p (..., 3)) its pose in the parent body frame (m), and the
    motion subspace S (..., 6, nv_i) of its joint, child axes, linear first; q (..., nq_full)."""
    xp = bm.xp
    X, S = [], []
    for i, joint in enumerate(bm.am.joints):
        qj = coords(q, joint, velocity=False)
        Rj, pj = jm.joint_transform(xp, joint, qj)
        X.append((bm.R[i] @ Rj, bm.p[i] + mv(bm.R[i], pj)))
        S.append(jm.motion_subspace(xp, joint, qj))
    return X, S


def world_poses(bm, X):
    """World pose (R (..., 3, 3), p (..., 3)) of every body frame from the parent poses X of :func:`tree`."""
    out = []
    for i, (R, p) in enumerate(X):
        k = bm.am.parent[i]
        if k < 0:
            out.append((R, p))
        else:
            Rk, pk = out[k]
            out.append((Rk @ R, pk + mv(Rk, p)))
    return out


def joint_motion(S, x):
    """S x: (..., 6, nv_j) @ (..., nv_j) -> the halves ((..., 3), (..., 3)) of a spatial motion."""
    m = mv(S, x)
    return m[..., :3], m[..., 3:]


def velocities(bm, X, S, v):
    """Body velocities (v_i, w_i) (..., 3) each, body axes (m/s, rad/s), and the joint motions
    vJ_i = S_i v_j, for full velocities v (..., nv_full) (Featherstone RBDA eq. 5.7)."""
    xp = bm.xp
    vel, vJ = [], []
    for i, joint in enumerate(bm.am.joints):
        Jv, Jw = joint_motion(S[i], coords(v, joint))
        vJ.append((Jv, Jw))
        k = bm.am.parent[i]
        if k < 0:
            vel.append((Jv, Jw))
        else:
            pv, pw = motion_to_child(xp, *X[i], *vel[k])
            vel.append((pv + Jv, pw + Jw))
    return vel, vJ


def point_velocity(xp, v, w, r):
    """Velocity (..., 3) of the point r (..., 3) of a body moving with (v, w) (all one frame's axes)."""
    return v + cross(xp, w, r)
