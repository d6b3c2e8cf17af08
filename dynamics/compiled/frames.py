"""Compiled frame kinematics: pose, Jacobian, velocity and classical acceleration
of one frame, on the shared joint model (:func:`.joint.joint_pose`).

A frame rides on body ``b`` (-1: the fixed base) at the constant pose ``Tf``
(4, 4) in that body's frame (``Model.link_body``, ``Model.link_T``).  Only the
chain from the root to ``b`` is visited: :func:`chain_poses` lists it in
``path`` (``path[k-1]`` the root-most body, ``path[0] = b``) and writes each
body's world pose into the scratch rows ``W[i] = (R row-major, p)`` (n, 12).

Conventions as :mod:`composedyn.dynamics.reference.frames` (the NumPy reference these
kernels equal to ~1e-15): linear rows first; ``local = 0`` world axes
(Pinocchio LOCAL_WORLD_ALIGNED), ``1`` frame axes (LOCAL).  The classical
acceleration runs the textbook point recursion along the chain (Craig,
*Introduction to Robotics*, 3rd ed., eqs. 6.7-6.10 and 6.14-6.17, in world
axes), joint origin p_j, world axis a_j, parent body k, r = p_j - p_k::

    revolute   w_j = w_k + a qd,  dw_j = dw_k + w_k x a qd + a qdd,
               acc_j = acc_k + dw_k x r + w_k x (w_k x r)
    prismatic  w_j = w_k,  dw_j = dw_k,
               acc_j = acc_k + dw_k x r + w_k x (w_k x r) + 2 w_k x a qd + a qdd

and finally from body b's origin to the frame origin the same rigid-body step.
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.joint import REVOLUTE, cross, joint_pose
from composedyn.dynamics.compiled.layout import AX, BLOCKS
from composedyn.dynamics.compiled.loops import serial_and_parallel


@njit(cache=True, inline="always")
def chain_poses(im, fm, q, body, path, W):
    """World poses of ``body`` and its ancestors into W; returns the chain length k.

    Each body's parent is the previous one on the chain, so the running pose
    stays in local scalars (no reloads from W)."""
    k = 0
    i = body
    while i >= 0:
        path[k] = i
        k += 1
        i = im[i, 0]
    A0, A1, A2, A3, A4, A5, A6, A7, A8 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    t0 = t1 = t2 = 0.0
    for m in range(k - 1, -1, -1):
        i = path[m]
        R, p = joint_pose(im, fm, i, q[i])
        t0, t1, t2 = (t0 + A0 * p[0] + A1 * p[1] + A2 * p[2], t1 + A3 * p[0] + A4 * p[1] + A5 * p[2],
                      t2 + A6 * p[0] + A7 * p[1] + A8 * p[2])
        A0, A1, A2, A3, A4, A5, A6, A7, A8 = (
            A0 * R[0] + A1 * R[3] + A2 * R[6], A0 * R[1] + A1 * R[4] + A2 * R[7], A0 * R[2] + A1 * R[5] + A2 * R[8],
            A3 * R[0] + A4 * R[3] + A5 * R[6], A3 * R[1] + A4 * R[4] + A5 * R[7], A3 * R[2] + A4 * R[5] + A5 * R[8],
            A6 * R[0] + A7 * R[3] + A8 * R[6], A6 * R[1] + A7 * R[4] + A8 * R[7], A6 * R[2] + A7 * R[5] + A8 * R[8])
        W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5], W[i, 6], W[i, 7], W[i, 8] = \
            A0, A1, A2, A3, A4, A5, A6, A7, A8
        W[i, 9], W[i, 10], W[i, 11] = t0, t1, t2
    return k


@njit(cache=True, inline="always")
def _axis(fm, W, j):
    """World axis of joint j: R_j a_j."""
    x0, x1, x2 = fm[j, AX], fm[j, AX + 1], fm[j, AX + 2]
    return (W[j, 0] * x0 + W[j, 1] * x1 + W[j, 2] * x2,
            W[j, 3] * x0 + W[j, 4] * x1 + W[j, 5] * x2,
            W[j, 6] * x0 + W[j, 7] * x1 + W[j, 8] * x2)


@njit(cache=True, inline="always")
def pose_into(im, fm, q, body, Tf, out, path, W):
    """World <- frame transform (4, 4) into ``out``; returns the chain length (see chain_poses)."""
    k = chain_poses(im, fm, q, body, path, W)
    if body < 0:
        for r in range(4):
            for c in range(4):
                out[r, c] = Tf[r, c]
        return k
    for r in range(3):
        a0, a1, a2 = W[body, 3 * r], W[body, 3 * r + 1], W[body, 3 * r + 2]
        out[r, 0] = a0 * Tf[0, 0] + a1 * Tf[1, 0] + a2 * Tf[2, 0]
        out[r, 1] = a0 * Tf[0, 1] + a1 * Tf[1, 1] + a2 * Tf[2, 1]
        out[r, 2] = a0 * Tf[0, 2] + a1 * Tf[1, 2] + a2 * Tf[2, 2]
        out[r, 3] = W[body, 9 + r] + a0 * Tf[0, 3] + a1 * Tf[1, 3] + a2 * Tf[2, 3]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0
    return k


@njit(cache=True)
def jacobian_into(im, fm, q, body, Tf, local, out, T, path, W):
    """Frame Jacobian (6, n) into ``out`` (linear rows first) and the frame pose into T (4, 4)."""
    k = pose_into(im, fm, q, body, Tf, T, path, W)
    o0, o1, o2 = T[0, 3], T[1, 3], T[2, 3]
    for r in range(6):
        for c in range(out.shape[1]):
            out[r, c] = 0.0
    for m in range(k):
        j = path[m]
        a0, a1, a2 = _axis(fm, W, j)
        if im[j, 1] == REVOLUTE:
            l0, l1, l2 = cross(a0, a1, a2, o0 - W[j, 9], o1 - W[j, 10], o2 - W[j, 11])
            w0, w1, w2 = a0, a1, a2
        else:
            l0, l1, l2, w0, w1, w2 = a0, a1, a2, 0.0, 0.0, 0.0
        if local:
            l0, l1, l2 = T[0, 0] * l0 + T[1, 0] * l1 + T[2, 0] * l2, T[0, 1] * l0 + T[1, 1] * l1 + T[2, 1] * l2, \
                T[0, 2] * l0 + T[1, 2] * l1 + T[2, 2] * l2
            w0, w1, w2 = T[0, 0] * w0 + T[1, 0] * w1 + T[2, 0] * w2, T[0, 1] * w0 + T[1, 1] * w1 + T[2, 1] * w2, \
                T[0, 2] * w0 + T[1, 2] * w1 + T[2, 2] * w2
        out[0, j], out[1, j], out[2, j], out[3, j], out[4, j], out[5, j] = l0, l1, l2, w0, w1, w2


@njit(cache=True)
def _to_local(T, out):
    """Rotate both halves of the 6-vector ``out`` by R^T (R = T[:3, :3])."""
    for h in (0, 3):
        x0, x1, x2 = out[h], out[h + 1], out[h + 2]
        for c in range(3):
            out[h + c] = T[0, c] * x0 + T[1, c] * x1 + T[2, c] * x2


@njit(cache=True)
def acceleration_into(im, fm, q, qd, qdd, body, Tf, local, out, T, path, W):
    """Classical acceleration (6,) of the frame origin into ``out`` (linear first); qdd = 0
    gives Jdot qd.  The frame pose goes into T (4, 4)."""
    k = pose_into(im, fm, q, body, Tf, T, path, W)
    w0 = w1 = w2 = d0 = d1 = d2 = c0 = c1 = c2 = 0.0  # w, dw, origin acceleration
    x0 = x1 = x2 = 0.0  # previous origin
    for m in range(k - 1, -1, -1):
        j = path[m]
        r0, r1, r2 = W[j, 9] - x0, W[j, 10] - x1, W[j, 11] - x2
        e0, e1, e2 = cross(w0, w1, w2, r0, r1, r2)
        f0, f1, f2 = cross(d0, d1, d2, r0, r1, r2)
        g0, g1, g2 = cross(w0, w1, w2, e0, e1, e2)
        c0, c1, c2 = c0 + f0 + g0, c1 + f1 + g1, c2 + f2 + g2
        a0, a1, a2 = _axis(fm, W, j)
        s, sd = qd[j], qdd[j]
        h0, h1, h2 = cross(w0, w1, w2, a0 * s, a1 * s, a2 * s)
        if im[j, 1] == REVOLUTE:
            d0, d1, d2 = d0 + h0 + a0 * sd, d1 + h1 + a1 * sd, d2 + h2 + a2 * sd
            w0, w1, w2 = w0 + a0 * s, w1 + a1 * s, w2 + a2 * s
        else:
            c0, c1, c2 = c0 + 2.0 * h0 + a0 * sd, c1 + 2.0 * h1 + a1 * sd, c2 + 2.0 * h2 + a2 * sd
        x0, x1, x2 = W[j, 9], W[j, 10], W[j, 11]
    if k > 0:
        r0, r1, r2 = T[0, 3] - x0, T[1, 3] - x1, T[2, 3] - x2
        e0, e1, e2 = cross(w0, w1, w2, r0, r1, r2)
        f0, f1, f2 = cross(d0, d1, d2, r0, r1, r2)
        g0, g1, g2 = cross(w0, w1, w2, e0, e1, e2)
        c0, c1, c2 = c0 + f0 + g0, c1 + f1 + g1, c2 + f2 + g2
    out[0], out[1], out[2], out[3], out[4], out[5] = c0, c1, c2, d0, d1, d2
    if local:
        _to_local(T, out)


@njit(cache=True)
def velocity_into(im, fm, q, qd, body, Tf, local, out, T, path, W):
    """Frame twist (6,) = J qd into ``out`` (origin velocity, angular velocity)."""
    k = pose_into(im, fm, q, body, Tf, T, path, W)
    for c in range(6):
        out[c] = 0.0
    for m in range(k):
        j = path[m]
        a0, a1, a2 = _axis(fm, W, j)
        s = qd[j]
        if im[j, 1] == REVOLUTE:
            l0, l1, l2 = cross(a0, a1, a2, T[0, 3] - W[j, 9], T[1, 3] - W[j, 10], T[2, 3] - W[j, 11])
            out[0] += l0 * s
            out[1] += l1 * s
            out[2] += l2 * s
            out[3] += a0 * s
            out[4] += a1 * s
            out[5] += a2 * s
        else:
            out[0] += a0 * s
            out[1] += a1 * s
            out[2] += a2 * s
    if local:
        _to_local(T, out)


@njit(cache=True)
def finite(x):
    """Whether every entry of the vector x is finite (the single-sample kernels' input check)."""
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def pose_one(im, fm, q, body, Tf, out):
    """Single sample of :func:`pose_into`; returns 1 (nothing computed) for non-finite q, else 0."""
    if not finite(q):
        return 1
    n = max(q.shape[0], 1)
    pose_into(im, fm, q, body, Tf, out, np.empty(n, np.int64), np.empty((n, 12)))
    return 0


@njit(cache=True)
def jacobian_one(im, fm, q, body, Tf, local, out):
    """Single sample of :func:`jacobian_into`; status as :func:`pose_one`."""
    if not finite(q):
        return 1
    n = max(q.shape[0], 1)
    jacobian_into(im, fm, q, body, Tf, local, out, np.empty((4, 4)), np.empty(n, np.int64), np.empty((n, 12)))
    return 0


@njit(cache=True)
def velocity_one(im, fm, q, qd, body, Tf, local, out):
    """Single sample of :func:`velocity_into`; status as :func:`pose_one`."""
    if not (finite(q) and finite(qd)):
        return 1
    n = max(q.shape[0], 1)
    velocity_into(im, fm, q, qd, body, Tf, local, out, np.empty((4, 4)), np.empty(n, np.int64), np.empty((n, 12)))
    return 0


@njit(cache=True)
def acceleration_one(im, fm, q, qd, qdd, body, Tf, local, out):
    """Single sample of :func:`acceleration_into`; status as :func:`pose_one`."""
    if not (finite(q) and finite(qd) and finite(qdd)):
        return 1
    n = max(q.shape[0], 1)
    acceleration_into(im, fm, q, qd, qdd, body, Tf, local, out, np.empty((4, 4)), np.empty(n, np.int64),
                      np.empty((n, 12)))
    return 0


def _pose_loop(im, fm, Q, body, Tf, OUT):
    """Samples Q (N, n) -> OUT (N, 4, 4), blocks with their own scratch."""
    N, n = Q.shape[0], max(Q.shape[1], 1)
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        path, W = np.empty(n, np.int64), np.empty((n, 12))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            pose_into(im, fm, Q[s], body, Tf, OUT[s], path, W)


def _jacobian_loop(im, fm, Q, body, Tf, local, OUT):
    """Samples Q (N, n) -> OUT (N, 6, n)."""
    N, n = Q.shape[0], max(Q.shape[1], 1)
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        T, path, W = np.empty((4, 4)), np.empty(n, np.int64), np.empty((n, 12))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            jacobian_into(im, fm, Q[s], body, Tf, local, OUT[s], T, path, W)


def _velocity_loop(im, fm, Q, QD, body, Tf, local, OUT):
    """Samples Q, QD (N, n) -> OUT (N, 6)."""
    N, n = Q.shape[0], max(Q.shape[1], 1)
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        T, path, W = np.empty((4, 4)), np.empty(n, np.int64), np.empty((n, 12))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            velocity_into(im, fm, Q[s], QD[s], body, Tf, local, OUT[s], T, path, W)


def _acceleration_loop(im, fm, Q, QD, QDD, body, Tf, local, OUT):
    """Samples Q, QD, QDD (N, n) -> OUT (N, 6)."""
    N, n = Q.shape[0], max(Q.shape[1], 1)
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        T, path, W = np.empty((4, 4)), np.empty(n, np.int64), np.empty((n, 12))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            acceleration_into(im, fm, Q[s], QD[s], QDD[s], body, Tf, local, OUT[s], T, path, W)


pose_serial, pose_parallel = serial_and_parallel(_pose_loop)
jacobian_serial, jacobian_parallel = serial_and_parallel(_jacobian_loop)
velocity_serial, velocity_parallel = serial_and_parallel(_velocity_loop)
acceleration_serial, acceleration_parallel = serial_and_parallel(_acceleration_loop)
