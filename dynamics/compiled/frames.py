"""Compiled frame kinematics: pose, Jacobian, velocity and classical acceleration
of one frame, on the shared joint model (:mod:`.joint`), for trees of joints of
every kind.

The kernels read ``im`` and ``fx`` (:func:`.layout.pack_frames`,
:func:`.layout.pack_tree_frames`): the max(n, nv) rows of ``fm`` followed by one
row per frame, its constant pose in the frame of the body ``b`` it rides on (-1:
the fixed base) and ``b`` (:func:`first_frame_row` finds frame 0 from ``im``).  A
frame and a reference are given together as one integer, ``code = 2 k + local``
(k the frame's index in ``Model.link_names``; ``local = 0`` world axes, Pinocchio
LOCAL_WORLD_ALIGNED, ``1`` frame axes, LOCAL): every array argument of a
compiled call costs time, an integer almost none.

Only the chain from the root to ``b`` is visited.  :func:`chain_into` runs it
root first (``parent[i] < i``) with the running pose in local scalars (the
joint angles' sines and cosines computed first, in a loop of their own: about
a third faster than inside the composition, whose latency they would add to) and
leaves, in the columns of a (6, nv) array, each chain joint's world origin
(rows 0:3) and world axis (rows 3:6), zeros elsewhere; the Jacobian kernel
then overwrites that array with its columns in place, so a Jacobian needs no
scratch.  That is the short path, taken when every joint on the chain is
revolute or prismatic with its coordinate at its body's index (every fixed-base
robot).  Otherwise :func:`chain_general` puts each chain joint's data in the
column of its first velocity coordinate: the world origin and, for a joint with
several coordinates, its body's world rotation (rows 3:6 and the next column),
from which :func:`jacobian_into` makes the joint's nv_i columns
(:func:`column_at`) in place.
A tree with a free flyer at the root and revolute or prismatic joints after it
(a floating robot's tree, :func:`.joint.free_root`) takes :func:`chain_root`:
body 0 placed by the straight-line :func:`.joint.free_root_placement`, the other
chain joints as on the short path at their coordinates q[i + 6], v[i + 5], and
the root's six Jacobian columns in closed form (:func:`jacobian_root`).

Conventions as :mod:`composedyn.dynamics.reference.frames` (the NumPy reference
these kernels equal to ~1e-15): linear rows first.  The Jacobian column of
joint j (origin p_j, world axis a_j) at the frame origin o is its motion
subspace about o (:func:`.joint.joint_motion_at`): (a_j x (o - p_j), a_j)
revolute, (a_j, 0) prismatic; in general (R t + R s x (o - p_j), R s) for the
body-frame column (s, t) and the body's world rotation R.  The classical
acceleration runs the textbook point recursion along the chain (Craig,
*Introduction to Robotics*, 3rd ed., eqs. 6.7-6.10 and 6.14-6.17, in world
axes), parent body k, r = p_j - p_k, the joint's step from
:func:`.joint.joint_point_step`::

    revolute   w_j = w_k + a qd,  dw_j = dw_k + w_k x a qd + a qdd,
               acc_j = acc_k + dw_k x r + w_k x (w_k x r)
    prismatic  w_j = w_k,  dw_j = dw_k,
               acc_j = acc_k + dw_k x r + w_k x (w_k x r) + 2 w_k x a qd + a qdd

and, for a joint of any kind with (s, t) = S qd and (x, y) = S qdd + S' qd in
its body frame (S' qd: the change of S with the joint's own coordinates,
:func:`.joint.joint_velocity_product` at v = 0), :func:`point_step`::

    w_j = w_k + R s,  dw_j = dw_k + w_k x R s + R x,
    acc_j = acc_k + dw_k x r + w_k x (w_k x r) + 2 w_k x R t + R (y + s x t)

and finally from body b's origin to the frame origin the same rigid-body step.

The compiled functions that run these (single samples, sample loops, the
checked entries of :mod:`.entry`) let LLVM fuse multiplications and additions
(``fastmath={"contract"}``, :data:`FASTMATH`: no other fast-math licence): about
10 % less time per sample, results within a few ulps of the unfused ones.
"""

from __future__ import annotations

from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    free_root,
    free_root_placement,
    free_root_world_column,
    joint_angle,
    joint_axis_column_at,
    joint_axis_point_step,
    joint_column,
    joint_motion_at,
    joint_offset,
    joint_point_step,
    joint_rotation_row,
    joint_scalar,
    joint_sincos,
    joint_translation,
    joint_turn,
    joint_velocity,
    joint_velocity_product,
    rot,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import AX, FBODY, IV, NV
from composedyn.dynamics.reference import frames as reference

FASTMATH = {"contract"}  # fused multiply-add only (see the module docstring)


@njit(cache=True, inline="always")
def first_frame_row(im):
    """Row of ``fx`` holding frame 0: after the max(n, nv) rows of ``fm`` (:func:`.layout.pack_frames`)."""
    n = im.shape[0]
    if n == 0:
        return 0
    nv = im[n - 1, IV] + im[n - 1, NV]
    return n if n >= nv else nv


@njit(cache=True, inline="always")
def frame_of(im, fx, code):
    """(body, row of fx, local) of the frame ``code`` = 2 k + local."""
    r = first_frame_row(im) + code // 2
    return int(fx[r, FBODY]), r, code % 2


@njit(cache=True, inline="always")
def _chain_joint(im, fm, i, qi, d, C, A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2):
    """One step of the short path: body i's world pose (R row-major, p; 12 floats) from its parent's
    (A, t), the joint at coordinate qi with its (sin, cos) in C[4:6, d]; its world origin and world axis
    into column d of C."""
    p0, p1, p2 = joint_translation(im, fm, i, qi)
    t0, t1, t2 = (t0 + A0 * p0 + A1 * p1 + A2 * p2, t1 + A3 * p0 + A4 * p1 + A5 * p2,
                  t2 + A6 * p0 + A7 * p1 + A8 * p2)
    s, c = C[4, d], C[5, d]
    R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
    R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
    R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
    A0, A1, A2, A3, A4, A5, A6, A7, A8 = (
        A0 * R0 + A1 * R3 + A2 * R6, A0 * R1 + A1 * R4 + A2 * R7, A0 * R2 + A1 * R5 + A2 * R8,
        A3 * R0 + A4 * R3 + A5 * R6, A3 * R1 + A4 * R4 + A5 * R7, A3 * R2 + A4 * R5 + A5 * R8,
        A6 * R0 + A7 * R3 + A8 * R6, A6 * R1 + A7 * R4 + A8 * R7, A6 * R2 + A7 * R5 + A8 * R8)
    x0, x1, x2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
    C[0, d], C[1, d], C[2, d] = t0, t1, t2
    C[3, d] = A0 * x0 + A1 * x1 + A2 * x2
    C[4, d] = A3 * x0 + A4 * x1 + A5 * x2
    C[5, d] = A6 * x0 + A7 * x1 + A8 * x2
    return A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2


@njit(cache=True, inline="always")
def chain_into(im, fm, q, body, C):
    """World pose of ``body`` (12-tuple: R row-major, p; identity for -1), then 1.0 if every joint on
    its chain is revolute or prismatic with its coordinate at its body's index (a fixed-base model: the
    short path) else 0.0, and, in C (6, nv), per chain joint: on the short path in column i (the body's
    index) its world origin (rows 0:3) and world axis (rows 3:6); otherwise as :func:`chain_general`;
    zeros elsewhere."""
    for r in range(6):
        for c in range(C.shape[1]):
            C[r, c] = 0.0
    i = body
    basic = True
    while i >= 0:  # mark the chain
        C[3, i] = 1.0
        basic = basic and joint_scalar(im, i) and im[i, IV] == i
        i = im[i, 0]
    if not basic:
        return chain_general(im, fm, q, body, C)
    for i in range(body + 1):  # the angles first (rows 4, 5 until overwritten): they pipeline
        if C[3, i] != 0.0:
            C[4, i], C[5, i] = joint_angle(im, i, q[i])
    A0, A1, A2, A3, A4, A5, A6, A7, A8 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    t0 = t1 = t2 = 0.0
    for i in range(body + 1):  # root first: the previous chain body is the parent
        if C[3, i] == 0.0:
            continue
        A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2 = _chain_joint(im, fm, i, q[i], i, C, A0, A1, A2, A3, A4,
                                                                      A5, A6, A7, A8, t0, t1, t2)
    return A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2, 1.0


@njit(cache=True, fastmath=FASTMATH)
def chain_general(im, fm, q, body, C):
    """:func:`chain_into` for a chain with joints of any kind (pose, 0.0): in C, per chain joint in the
    column of its first velocity coordinate, its world origin (rows 0:3) and, for a one-coordinate joint,
    its world axis (rows 3:6); for the others its body's world rotation (rows 3:6, then rows 0:6 of the
    next column)."""
    for r in range(6):
        for c in range(C.shape[1]):
            C[r, c] = 0.0
    i = body
    while i >= 0:  # mark the chain
        C[3, im[i, IV]] = 1.0
        i = im[i, 0]
    A0, A1, A2, A3, A4, A5, A6, A7, A8 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    t0 = t1 = t2 = 0.0
    for i in range(body + 1):  # root first: the previous chain body is the parent
        iv = im[i, IV]
        if C[3, iv] == 0.0:
            continue
        s, c = joint_sincos(im, i, q)
        p0, p1, p2 = joint_offset(im, fm, i, q)
        R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
        R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
        R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
        R0, R1, R2, R3, R4, R5, R6, R7, R8 = joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8))
        t0, t1, t2 = (t0 + A0 * p0 + A1 * p1 + A2 * p2, t1 + A3 * p0 + A4 * p1 + A5 * p2,
                      t2 + A6 * p0 + A7 * p1 + A8 * p2)
        A0, A1, A2, A3, A4, A5, A6, A7, A8 = (
            A0 * R0 + A1 * R3 + A2 * R6, A0 * R1 + A1 * R4 + A2 * R7, A0 * R2 + A1 * R5 + A2 * R8,
            A3 * R0 + A4 * R3 + A5 * R6, A3 * R1 + A4 * R4 + A5 * R7, A3 * R2 + A4 * R5 + A5 * R8,
            A6 * R0 + A7 * R3 + A8 * R6, A6 * R1 + A7 * R4 + A8 * R7, A6 * R2 + A7 * R5 + A8 * R8)
        C[0, iv], C[1, iv], C[2, iv] = t0, t1, t2
        if im[i, NV] == 1:
            x0, x1, x2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
            C[3, iv] = A0 * x0 + A1 * x1 + A2 * x2
            C[4, iv] = A3 * x0 + A4 * x1 + A5 * x2
            C[5, iv] = A6 * x0 + A7 * x1 + A8 * x2
        else:
            C[3, iv], C[4, iv], C[5, iv] = A0, A1, A2
            C[0, iv + 1], C[1, iv + 1], C[2, iv + 1] = A3, A4, A5
            C[3, iv + 1], C[4, iv + 1], C[5, iv + 1] = A6, A7, A8
    return A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2, 0.0


@njit(cache=True, inline="always")
def chain_root(im, fm, q, body, C):
    """:func:`chain_into` for a free flyer at the root and revolute or prismatic joints after it
    (:func:`.joint.free_root`; ``body`` >= 0): the world pose of ``body`` and of its chain's root
    (12-tuples: R row-major, p), whether that root is body 0 (a forest's other roots hang from the
    fixed world frame) and, in C (6, nv), per chain joint i >= 1 in column i + 5 (its velocity
    coordinate; its position q[i + 6]) its world origin (rows 0:3) and world axis (rows 3:6), zeros
    in the other columns from 6 on; columns 0:6 (the root's) are left as they were."""
    for r in range(6):
        for c in range(6, C.shape[1]):
            C[r, c] = 0.0
    top = body
    while top > 0:  # mark the chain
        C[3, top + 5] = 1.0
        top = im[top, 0]
    for i in range(1, body + 1):  # the angles first (rows 4, 5 until overwritten): they pipeline
        if C[3, i + 5] != 0.0:
            C[4, i + 5], C[5, i + 5] = joint_angle(im, i, q[i + 6])
    B = _chain_start(fm, q, top)
    A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2 = B
    for i in range(1, body + 1):  # root first: the previous chain body is the parent
        d = i + 5
        if C[3, d] == 0.0:
            continue
        A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2 = _chain_joint(im, fm, i, q[i + 6], d, C, A0, A1, A2, A3, A4,
                                                                      A5, A6, A7, A8, t0, t1, t2)
    return (A0, A1, A2, A3, A4, A5, A6, A7, A8, t0, t1, t2), B, top == 0


@njit(cache=True)
def _chain_start(fm, q, top):
    """The world pose (12-tuple: R row-major, p) a free-root chain starts from: body 0's if its root
    ``top`` is body 0, else the world frame (another root of a forest). Not inlined: numba's parallel
    array analysis fails on this branch when it is (batch loops of frame quantities)."""
    if top == 0:
        R, p = free_root_placement(fm, q)
        return R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8], p[0], p[1], p[2]
    return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def _chain_rotation(C, iv):
    """The world rotation (9-tuple) :func:`chain_general` left for a joint with several coordinates."""
    return C[3, iv], C[4, iv], C[5, iv], C[0, iv + 1], C[1, iv + 1], C[2, iv + 1], C[3, iv + 1], C[4, iv + 1], \
        C[5, iv + 1]


@njit(cache=True, inline="always")
def column_at(im, fm, i, q, e, R, d0, d1, d2):
    """Column e of body i's S in world axes about the point at d from the body origin, angular first,
    for the body's world rotation R: (R s, R t + R s x d) for the body-frame column (s, t)."""
    s0, s1, s2, u0, u1, u2 = joint_column(im, fm, i, q, e)
    a0, a1, a2 = rot(R, s0, s1, s2)
    b0, b1, b2 = rot(R, u0, u1, u2)
    c0, c1, c2 = cross(a0, a1, a2, d0, d1, d2)
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@njit(cache=True, inline="always")
def point_step(im, fm, i, q, qd, qdd, R, w0, w1, w2, d0, d1, d2, c0, c1, c2):
    """:func:`.joint.joint_point_step` for a joint of any kind from its body's world rotation R: with
    the joint's motion (s, t) = S qd, its acceleration (x, y) = S qdd + S' qd (body frame, angular first),
    w + R s, d + w x R s + R x, c + 2 w x R t + R (y + s x t)."""
    s0, s1, s2, t0, t1, t2 = joint_velocity(im, fm, i, q, qd)
    x0, x1, x2, y0, y1, y2 = joint_velocity(im, fm, i, q, qdd)
    b0, b1, b2, b3, b4, b5 = joint_velocity_product(im, fm, i, q, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, qd)
    e0, e1, e2 = cross(s0, s1, s2, t0, t1, t2)
    o0, o1, o2 = rot(R, s0, s1, s2)
    v0, v1, v2 = rot(R, t0, t1, t2)
    h0, h1, h2 = rot(R, x0 + b0, x1 + b1, x2 + b2)
    k0, k1, k2 = rot(R, y0 + b3 + e0, y1 + b4 + e1, y2 + b5 + e2)
    f0, f1, f2 = cross(w0, w1, w2, o0, o1, o2)
    g0, g1, g2 = cross(w0, w1, w2, v0, v1, v2)
    return (w0 + o0, w1 + o1, w2 + o2, d0 + f0 + h0, d1 + f1 + h1, d2 + f2 + h2,
            c0 + 2.0 * g0 + k0, c1 + 2.0 * g1 + k1, c2 + 2.0 * g2 + k2)


@njit(cache=True, inline="always")
def frame_world(P, fx, r):
    """World pose (12-tuple) of the frame in row r of fx, riding on a body at world pose P."""
    f0, f1, f2, f3, f4, f5, f6, f7, f8 = fx[r, 0], fx[r, 1], fx[r, 2], fx[r, 3], fx[r, 4], fx[r, 5], \
        fx[r, 6], fx[r, 7], fx[r, 8]
    g0, g1, g2 = fx[r, 9], fx[r, 10], fx[r, 11]
    return (P[0] * f0 + P[1] * f3 + P[2] * f6, P[0] * f1 + P[1] * f4 + P[2] * f7, P[0] * f2 + P[1] * f5 + P[2] * f8,
            P[3] * f0 + P[4] * f3 + P[5] * f6, P[3] * f1 + P[4] * f4 + P[5] * f7, P[3] * f2 + P[4] * f5 + P[5] * f8,
            P[6] * f0 + P[7] * f3 + P[8] * f6, P[6] * f1 + P[7] * f4 + P[8] * f7, P[6] * f2 + P[7] * f5 + P[8] * f8,
            P[9] + P[0] * g0 + P[1] * g1 + P[2] * g2, P[10] + P[3] * g0 + P[4] * g1 + P[5] * g2,
            P[11] + P[6] * g0 + P[7] * g1 + P[8] * g2)


@njit(cache=True, inline="always")
def _to_local(F, x0, x1, x2):
    """R^T x for the rotation R of the pose F (12-tuple)."""
    return (F[0] * x0 + F[3] * x1 + F[6] * x2, F[1] * x0 + F[4] * x1 + F[7] * x2,
            F[2] * x0 + F[5] * x1 + F[8] * x2)


@njit(cache=True, inline="always")
def pose_into(im, fx, q, code, out, C):
    """World <- frame transform (4, 4) of frame ``code`` into ``out``; C (6, nv) scratch."""
    body, r, _ = frame_of(im, fx, code)
    if free_root(im) and body >= 0:  # a free flyer at the root (a floating robot's tree)
        F = frame_world(chain_root(im, fx, q, body, C)[0], fx, r)
    else:
        F = frame_world(chain_into(im, fx, q, body, C), fx, r)
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = F[0], F[1], F[2], F[9]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = F[3], F[4], F[5], F[10]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = F[6], F[7], F[8], F[11]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(cache=True, inline="always")
def _axis_column(im, i, d, F, local, out):
    """Column d of the Jacobian of the frame at world pose F (12-tuple), in place: the one-coordinate
    joint i whose world origin and world axis are in that column (:func:`chain_into`)."""
    w0, w1, w2, l0, l1, l2 = joint_motion_at(im, i, out[3, d], out[4, d], out[5, d],
                                             F[9] - out[0, d], F[10] - out[1, d], F[11] - out[2, d])
    if local:
        l0, l1, l2 = _to_local(F, l0, l1, l2)
        w0, w1, w2 = _to_local(F, w0, w1, w2)
    out[0, d], out[1, d], out[2, d], out[3, d], out[4, d], out[5, d] = l0, l1, l2, w0, w1, w2


@njit(cache=True, inline="always")
def jacobian_into(im, fx, q, code, out):
    """Jacobian (6, nv) of frame ``code`` into ``out`` (linear rows first); returns the frame's
    world pose (12-tuple: R row-major, p)."""
    body, r, local = frame_of(im, fx, code)
    if free_root(im) and body >= 0:  # a free flyer at the root (a floating robot's tree)
        return jacobian_root(im, fx, q, body, r, local, out)
    P = chain_into(im, fx, q, body, out)
    F = frame_world(P, fx, r)
    if P[12] == 0.0:
        columns_general(im, fx, q, body, F, local, out)
        return F
    i = body
    while i >= 0:
        _axis_column(im, i, i, F, local, out)
        i = im[i, 0]
    return F


@njit(cache=True, inline="always")
def jacobian_root(im, fx, q, body, r, local, out):
    """:func:`jacobian_into` for a free flyer at the root (:func:`chain_root`), frame row r on ``body``
    >= 0.  The root's six columns are closed-form (Pinocchio's free flyer: body-frame rates, linear
    first): for body 0 at world pose (R, p) and the frame origin o, column c < 3 moves the frame
    origin along R e_c, column 3 + j turns it about R e_j: (R e_j x (o - p), R e_j); in frame axes
    both are rotated by the frame's R_f^T (R_f^T R e_j and R_f^T (o - p))."""
    P, B, on_root = chain_root(im, fx, q, body, out)
    F = frame_world(P, fx, r)
    i = body
    while i > 0:
        _axis_column(im, i, i + 5, F, local, out)
        i = im[i, 0]
    e0, e1, e2 = B[9] - F[9], B[10] - F[10], B[11] - F[11]  # the root's origin from the frame's
    M = B
    if local:
        a0, a1, a2 = _to_local(F, B[0], B[3], B[6])
        b0, b1, b2 = _to_local(F, B[1], B[4], B[7])
        c0, c1, c2 = _to_local(F, B[2], B[5], B[8])
        M = (a0, b0, c0, a1, b1, c1, a2, b2, c2, 0.0, 0.0, 0.0)
        e0, e1, e2 = _to_local(F, e0, e1, e2)
    for c in range(6):
        w0, w1, w2, l0, l1, l2 = free_root_world_column(c, M, e0, e1, e2)
        if not on_root:  # the frame does not ride on body 0
            w0 = w1 = w2 = l0 = l1 = l2 = 0.0
        out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c] = l0, l1, l2, w0, w1, w2
    return F


@njit(cache=True, fastmath=FASTMATH)
def columns_general(im, fx, q, body, F, local, out):
    """:func:`jacobian_into`'s columns from what :func:`chain_general` left in ``out``, for the frame at
    world pose F (12-tuple) on ``body``."""
    i = body
    while i >= 0:
        iv = im[i, IV]
        e0, e1, e2 = F[9] - out[0, iv], F[10] - out[1, iv], F[11] - out[2, iv]
        if im[i, NV] == 1:
            w0, w1, w2, l0, l1, l2 = joint_axis_column_at(im, fx, i, out[3, iv], out[4, iv], out[5, iv],
                                                          e0, e1, e2)
            if local:
                l0, l1, l2 = _to_local(F, l0, l1, l2)
                w0, w1, w2 = _to_local(F, w0, w1, w2)
            out[0, iv], out[1, iv], out[2, iv], out[3, iv], out[4, iv], out[5, iv] = l0, l1, l2, w0, w1, w2
        else:
            R = _chain_rotation(out, iv)
            for e in range(im[i, NV]):
                w0, w1, w2, l0, l1, l2 = column_at(im, fx, i, q, e, R, e0, e1, e2)
                if local:
                    l0, l1, l2 = _to_local(F, l0, l1, l2)
                    w0, w1, w2 = _to_local(F, w0, w1, w2)
                d = iv + e
                out[0, d], out[1, d], out[2, d], out[3, d], out[4, d], out[5, d] = l0, l1, l2, w0, w1, w2
        i = im[i, 0]


@njit(cache=True, inline="always")
def velocity_into(im, fx, q, qd, code, out, C):
    """Frame twist (6,) = J qd into ``out`` (origin velocity, angular velocity); C (6, nv) scratch."""
    jacobian_into(im, fx, q, code, C)
    for r in range(6):
        s = 0.0
        for c in range(C.shape[1]):
            s += C[r, c] * qd[c]
        out[r] = s


@njit(cache=True, inline="always")
def carry(w0, w1, w2, d0, d1, d2, c0, c1, c2, r0, r1, r2):
    """The acceleration c of a point carried rigidly by r on a body turning at w, accelerating at d:
    c + d x r + w x (w x r)."""
    e0, e1, e2 = cross(w0, w1, w2, r0, r1, r2)
    f0, f1, f2 = cross(d0, d1, d2, r0, r1, r2)
    g0, g1, g2 = cross(w0, w1, w2, e0, e1, e2)
    return c0 + f0 + g0, c1 + f1 + g1, c2 + f2 + g2


@njit(cache=True, inline="always")
def acceleration_into(im, fx, q, qd, qdd, code, out, C):
    """Classical acceleration (6,) of the frame origin into ``out`` (linear first); qdd = 0
    gives Jdot qd.  C (6, nv) scratch."""
    body, r, local = frame_of(im, fx, code)
    P = chain_into(im, fx, q, body, C)
    F = frame_world(P, fx, r)
    if P[12] == 0.0:
        c0, c1, c2, d0, d1, d2 = acceleration_general(im, fx, q, qd, qdd, body, F, C)
    else:
        w0 = w1 = w2 = d0 = d1 = d2 = c0 = c1 = c2 = 0.0  # w, dw, origin acceleration
        x0, x1, x2 = 0.0, 0.0, 0.0  # previous origin
        for j in range(body + 1):
            a0, a1, a2 = C[3, j], C[4, j], C[5, j]
            if a0 == 0.0 and a1 == 0.0 and a2 == 0.0:  # not on the chain (a chain joint has a unit axis)
                continue
            c0, c1, c2 = carry(w0, w1, w2, d0, d1, d2, c0, c1, c2, C[0, j] - x0, C[1, j] - x1, C[2, j] - x2)
            s, sd = qd[j], qdd[j]
            w0, w1, w2, d0, d1, d2, c0, c1, c2 = joint_point_step(im, j, a0, a1, a2, s, sd,
                                                                  w0, w1, w2, d0, d1, d2, c0, c1, c2)
            x0, x1, x2 = C[0, j], C[1, j], C[2, j]
        if body >= 0:
            c0, c1, c2 = carry(w0, w1, w2, d0, d1, d2, c0, c1, c2, F[9] - x0, F[10] - x1, F[11] - x2)
    if local:
        c0, c1, c2 = _to_local(F, c0, c1, c2)
        d0, d1, d2 = _to_local(F, d0, d1, d2)
    out[0], out[1], out[2], out[3], out[4], out[5] = c0, c1, c2, d0, d1, d2


@njit(cache=True, fastmath=FASTMATH)
def acceleration_general(im, fx, q, qd, qdd, body, F, C):
    """:func:`acceleration_into`'s point recursion on what :func:`chain_general` left in C, for the frame
    at world pose F on ``body``: (origin acceleration, angular acceleration), world axes."""
    w0 = w1 = w2 = d0 = d1 = d2 = c0 = c1 = c2 = 0.0  # w, dw, origin acceleration
    x0, x1, x2 = 0.0, 0.0, 0.0  # previous origin
    for j in range(body + 1):
        jv = im[j, IV]
        a0, a1, a2 = C[3, jv], C[4, jv], C[5, jv]
        if a0 == 0.0 and a1 == 0.0 and a2 == 0.0:  # not on the chain (a unit axis or rotation row on it)
            continue
        c0, c1, c2 = carry(w0, w1, w2, d0, d1, d2, c0, c1, c2, C[0, jv] - x0, C[1, jv] - x1, C[2, jv] - x2)
        if im[j, NV] == 1:
            w0, w1, w2, d0, d1, d2, c0, c1, c2 = joint_axis_point_step(im, fx, j, a0, a1, a2, qd[jv], qdd[jv],
                                                                       w0, w1, w2, d0, d1, d2, c0, c1, c2)
        else:
            w0, w1, w2, d0, d1, d2, c0, c1, c2 = point_step(im, fx, j, q, qd, qdd, _chain_rotation(C, jv),
                                                            w0, w1, w2, d0, d1, d2, c0, c1, c2)
        x0, x1, x2 = C[0, jv], C[1, jv], C[2, jv]
    if body >= 0:
        c0, c1, c2 = carry(w0, w1, w2, d0, d1, d2, c0, c1, c2, F[9] - x0, F[10] - x1, F[11] - x2)
    return c0, c1, c2, d0, d1, d2


# ---- single samples (the general path; the Robot methods call the checked entries of .entry) ----


# ---- declarations (composedyn.dynamics.compiled.declare): a frame by its index, the reference 0 world, 1 local
from composedyn.dynamics.compiled.declare import Quantity  # noqa: E402


@njit(cache=True, inline="always")
def frame_code(im, fx, frame, local):
    """The kernels' code 2 k + local of frame k, or -1 when k names no frame or local is not 0 or 1."""
    ok = 0 <= frame < fx.shape[0] - first_frame_row(im) and (local == 0 or local == 1)
    return 2 * frame + local if ok else -1


@njit(cache=True, fastmath=FASTMATH, inline="always")
def frame_pose(im, fx, q, frame, out, C):
    """World <- frame transform (4, 4) into out; status 1 when ``frame`` names no frame, 4 for a joint
    without orientation (a zero quaternion)."""
    code = frame_code(im, fx, frame, 0)
    if code < 0:
        return 1
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    pose_into(im, fx, q, code, out, C)
    return 0


@njit(cache=True, fastmath=FASTMATH, inline="always")
def jacobian(im, fx, q, frame, local, out):
    """Frame Jacobian (6, n), linear rows first, into out; status as :func:`frame_pose`."""
    code = frame_code(im, fx, frame, local)
    if code < 0:
        return 1
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    jacobian_into(im, fx, q, code, out)
    return 0


@njit(cache=True, fastmath=FASTMATH, inline="always")
def frame_velocity(im, fx, q, v, frame, local, out, C):
    """Frame twist J v (6,) into out; status as :func:`frame_pose`."""
    code = frame_code(im, fx, frame, local)
    if code < 0:
        return 1
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    velocity_into(im, fx, q, v, code, out, C)
    return 0


@njit(cache=True, fastmath=FASTMATH, inline="always")
def frame_acceleration(im, fx, q, v, a, frame, local, out, C):
    """Classical acceleration of the frame origin and angular acceleration (6,) into out."""
    code = frame_code(im, fx, frame, local)
    if code < 0:
        return 1
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    acceleration_into(im, fx, q, v, a, code, out, C)
    return 0


_FRAME, _LOCAL, _C = ("frame", -1), ("local", 0), (6, "nv")
FRAME_POSE = Quantity("frame_pose", frame_pose, inputs=(("q", "nq"),), results=((4, 4),), options=(_FRAME,),
                      scratch=(_C,), model="frames", fastmath=FASTMATH,
    reference=reference.frame_pose)
JACOBIAN = Quantity("jacobian", jacobian, inputs=(("q", "nq"),), results=((6, "nv"),), options=(_FRAME, _LOCAL),
                    model="frames", fastmath=FASTMATH,
    reference=reference.jacobian)
FRAME_VELOCITY = Quantity("frame_velocity", frame_velocity, inputs=(("q", "nq"), ("v", "nv")), results=((6,),),
                          options=(_FRAME, _LOCAL), scratch=(_C,), model="frames", fastmath=FASTMATH,
    reference=reference.frame_velocity)
FRAME_ACCELERATION = Quantity("frame_acceleration", frame_acceleration,
                              inputs=(("q", "nq"), ("v", "nv"), ("a", "nv")), results=((6,),),
                              options=(_FRAME, _LOCAL), scratch=(_C,), model="frames", fastmath=FASTMATH,
    reference=reference.frame_acceleration)
