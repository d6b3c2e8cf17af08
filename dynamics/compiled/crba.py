"""Compiled composite-rigid-body algorithm (mass matrix) in world coordinates.

Pinocchio's formulation of the CRBA: every quantity of the backward pass is
expressed in world (base) axes, so composite inertias are plain sums and each
ancestor costs one 6-vector dot product instead of a 6D force transform.

Representation.  Spatial vectors are angular first, taken about the point O =
tree_p of body 0 (the first joint's position in the base frame: lever arms
then stay at the size of the robot, not of its placement in the base frame;
M does not depend on the choice of O).  A rigid-body inertia is (mass m,
first moment h = m c, rotational inertia A about O), all in world axes; it
maps a motion S = (w, v) (v: velocity of the body point at O) to the force
I S = (A w + h x v, m v - h x w).  Joint i with world pose (R_i, p_i) (p_i
from O) has its motion subspace S_i in world axes about O
(:func:`.joint.joint_world_column`; e.g. (a, p_i x a) for a revolute joint
with world axis a).

1. Forward: sine and cosine of every joint angle (:func:`_sin_cos_rows`),
   then per body (:func:`_body_to_world`) the world pose R_i = R_k X_R,
   p_i = p_k + R_k X_p from the parent k's and the joint transform X
   (:mod:`.joint`), S_i, and the body inertia
   in world coordinates: hr = R h, h_w = hr + m p,
   A = R Io R^T + 2 (g . p) 1 - (g p^T + p g^T) with g = hr + m p / 2.
2. Backward, i = n-1 .. 0 (children have larger indices, so IC_i is complete
   when reached; :func:`_column`): F = IC_i S_i, M[i, i] = S_i . F
   (+ armature), M[i, j] = M[j, i] = S_j . F for every ancestor j, then
   IC_parent += IC_i.  Entries between different branches are zero: ``out``
   is zero-filled first unless the tree is a chain (every entry written).

Cost per body ~200 flops plus 11 per ancestor (body coordinates: ~45 per
ancestor).  Same result as :func:`composedyn.dynamics.reference.crba.crba` to ~1e-15
relative: the kernels use the ``contract``/``reassoc``/``nsz`` fast-math
flags (rounding order only; never ``nnan``/``ninf``, so nan and inf
propagate).  Like any world-frame algorithm it loses digits as |p_i| grows
(A ~ m |p|^2): a prismatic joint displaced by 1e5 m leaves ~1e-12.

A floating robot's tree (a free flyer at the root, then revolute and prismatic
joints) takes body 0's frame as the world: the free flyer's columns are then
the composite forces themselves (:func:`_root_crba`).

The helpers here are ``inline="always"`` (numba inlines them; LLVM does not
inline functions this large, and a call per body is markedly slower).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    free_root,
    joint_angle,
    joint_motion_world,
    joint_offset,
    joint_rotation_row,
    joint_scalar,
    joint_sincos,
    joint_translation,
    joint_turn,
    joint_world_column,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import ARM, IO, IQ, IV, MASS, NV, PARENT, TP, H
from composedyn.dynamics.joint_types import TreeForm
from composedyn.dynamics.reference.crba import crba

# scratch columns per body: world pose (R row-major, p), S (6), IC = (m, h, A upper triangle), sin q, cos q
_S, _IC, _SC = 12, 18, 28
SCRATCH = 30
_FAST = {"contract", "reassoc", "nsz"}


@njit(cache=True, fastmath=_FAST, inline="always")
def _body_to_world(im, fm, i, q, w, general, root):
    """Row w[i] from the parent's world pose: world pose (R, p) and the body inertia (m, h, A), and S_i's
    columns in the rows of its velocity coordinates.

    One function on purpose: split into pieces that pass the pose through ``w``
    or return it as a tuple, numba's generated code is markedly slower.
    """
    s, c = w[i, _SC], w[i, _SC + 1]  # joint transform X = (X_R, X_p) (joint model)
    other = general and not joint_scalar(im, i)  # a joint the scalar joint model does not take
    x0, x1, x2 = joint_rotation_row(im, fm, i, 0, s, c)
    x3, x4, x5 = joint_rotation_row(im, fm, i, 1, s, c)
    x6, x7, x8 = joint_rotation_row(im, fm, i, 2, s, c)
    if other:
        x0, x1, x2, x3, x4, x5, x6, x7, x8 = joint_turn(im, fm, i, q, (x0, x1, x2, x3, x4, x5, x6, x7, x8))
        y0, y1, y2 = joint_offset(im, fm, i, q)
    else:
        y0, y1, y2 = joint_translation(im, fm, i, q[im[i, IQ]] if general else (q[i + 6] if root else q[i]))
    k = im[i, PARENT]
    if root and k == 0:  # body 0 at the world origin, world axes its own (:func:`_root_body`)
        R0, R1, R2, R3, R4, R5, R6, R7, R8 = x0, x1, x2, x3, x4, x5, x6, x7, x8
        p0, p1, p2 = y0, y1, y2
    elif k < 0:  # world pose = X, position taken from O
        R0, R1, R2, R3, R4, R5, R6, R7, R8 = x0, x1, x2, x3, x4, x5, x6, x7, x8
        p0, p1, p2 = y0 - fm[0, TP], y1 - fm[0, TP + 1], y2 - fm[0, TP + 2]
    else:  # R = R_k X_R, p = p_k + R_k X_p
        K0, K1, K2, K3, K4, K5 = w[k, 0], w[k, 1], w[k, 2], w[k, 3], w[k, 4], w[k, 5]
        K6, K7, K8 = w[k, 6], w[k, 7], w[k, 8]
        R0, R1, R2 = K0 * x0 + K1 * x3 + K2 * x6, K0 * x1 + K1 * x4 + K2 * x7, K0 * x2 + K1 * x5 + K2 * x8
        R3, R4, R5 = K3 * x0 + K4 * x3 + K5 * x6, K3 * x1 + K4 * x4 + K5 * x7, K3 * x2 + K4 * x5 + K5 * x8
        R6, R7, R8 = K6 * x0 + K7 * x3 + K8 * x6, K6 * x1 + K7 * x4 + K8 * x7, K6 * x2 + K7 * x5 + K8 * x8
        p0 = w[k, 9] + K0 * y0 + K1 * y1 + K2 * y2
        p1 = w[k, 10] + K3 * y0 + K4 * y1 + K5 * y2
        p2 = w[k, 11] + K6 * y0 + K7 * y1 + K8 * y2
    w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5] = R0, R1, R2, R3, R4, R5
    w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11] = R6, R7, R8, p0, p1, p2
    if other:
        iv = im[i, IV]
        for e in range(im[i, NV]):
            d = iv + e
            s0, s1, s2, s3, s4, s5 = joint_world_column(im, fm, i, q, e, (R0, R1, R2, R3, R4, R5, R6, R7, R8),
                                                        p0, p1, p2)
            w[d, _S], w[d, _S + 1], w[d, _S + 2], w[d, _S + 3], w[d, _S + 4], w[d, _S + 5] = s0, s1, s2, s3, s4, s5
    else:
        d = im[i, IV] if general else (i + 5 if root else i)
        s0, s1, s2, s3, s4, s5 = joint_motion_world(im, fm, i, (R0, R1, R2, R3, R4, R5, R6, R7, R8), p0, p1, p2)
        w[d, _S], w[d, _S + 1], w[d, _S + 2], w[d, _S + 3], w[d, _S + 4], w[d, _S + 5] = s0, s1, s2, s3, s4, s5
    m, b0, b1, b2 = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    hr0 = R0 * b0 + R1 * b1 + R2 * b2  # hr = R h
    hr1 = R3 * b0 + R4 * b1 + R5 * b2
    hr2 = R6 * b0 + R7 * b1 + R8 * b2
    g0, g1, g2 = hr0 + 0.5 * m * p0, hr1 + 0.5 * m * p1, hr2 + 0.5 * m * p2
    d = 2.0 * (g0 * p0 + g1 * p1 + g2 * p2)
    J0, J1, J2 = fm[i, IO], fm[i, IO + 1], fm[i, IO + 2]  # Io, symmetric
    J4, J5, J8 = fm[i, IO + 4], fm[i, IO + 5], fm[i, IO + 8]
    t00, t10, t20 = J0 * R0 + J1 * R1 + J2 * R2, J1 * R0 + J4 * R1 + J5 * R2, J2 * R0 + J5 * R1 + J8 * R2  # T = Io R^T
    t01, t11, t21 = J0 * R3 + J1 * R4 + J2 * R5, J1 * R3 + J4 * R4 + J5 * R5, J2 * R3 + J5 * R4 + J8 * R5
    t02, t12, t22 = J0 * R6 + J1 * R7 + J2 * R8, J1 * R6 + J4 * R7 + J5 * R8, J2 * R6 + J5 * R7 + J8 * R8
    w[i, _IC] = m
    w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3] = hr0 + m * p0, hr1 + m * p1, hr2 + m * p2
    w[i, _IC + 4] = R0 * t00 + R1 * t10 + R2 * t20 + d - 2.0 * g0 * p0  # (R T)[r, c] + d 1 - g p^T - p g^T
    w[i, _IC + 5] = R0 * t01 + R1 * t11 + R2 * t21 - (g0 * p1 + p0 * g1)
    w[i, _IC + 6] = R0 * t02 + R1 * t12 + R2 * t22 - (g0 * p2 + p0 * g2)
    w[i, _IC + 7] = R3 * t01 + R4 * t11 + R5 * t21 + d - 2.0 * g1 * p1
    w[i, _IC + 8] = R3 * t02 + R4 * t12 + R5 * t22 - (g1 * p2 + p1 * g2)
    w[i, _IC + 9] = R6 * t02 + R7 * t12 + R8 * t22 + d - 2.0 * g2 * p2


@njit(cache=True, fastmath=_FAST, inline="always")
def _store(out, w, d, b, n0, n1, n2, f0, f1, f2):
    """M[d, b] = M[b, d] = S_b . F."""
    x = (w[b, _S] * n0 + w[b, _S + 1] * n1 + w[b, _S + 2] * n2
         + w[b, _S + 3] * f0 + w[b, _S + 4] * f1 + w[b, _S + 5] * f2)
    out[d, b] = x
    out[b, d] = x


@njit(cache=True, fastmath=_FAST, inline="always")
def _diagonal(fm, d, arm, out, w, m, h0, h1, h2, A00, A01, A02, A11, A12, A22):
    """F = IC S_d (6-tuple, returned) for the composite inertia IC = (m, h, A) and velocity coordinate
    d's column S_d, and M[d, d] = S_d . F (+ armature)."""
    s0, s1, s2, s3, s4, s5 = w[d, _S], w[d, _S + 1], w[d, _S + 2], w[d, _S + 3], w[d, _S + 4], w[d, _S + 5]
    n0 = A00 * s0 + A01 * s1 + A02 * s2 + h1 * s5 - h2 * s4  # F = (A w + h x v, m v - h x w)
    n1 = A01 * s0 + A11 * s1 + A12 * s2 + h2 * s3 - h0 * s5
    n2 = A02 * s0 + A12 * s1 + A22 * s2 + h0 * s4 - h1 * s3
    f0 = m * s3 - (h1 * s2 - h2 * s1)
    f1 = m * s4 - (h2 * s0 - h0 * s2)
    f2 = m * s5 - (h0 * s1 - h1 * s0)
    x = s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2
    out[d, d] = x + fm[d, ARM] if arm else x
    return n0, n1, n2, f0, f1, f2


@njit(cache=True, fastmath=_FAST, inline="always")
def _column_of(im, fm, i, d, iv, arm, out, w, general, m, h0, h1, h2, A00, A01, A02, A11, A12, A22):
    """Row and column d of M (body i's velocity coordinate d, its joint's first iv) from IC_i =
    (m, h, A): F = IC_i S_d, M[d, d] = S_d . F (+ armature), M[d, b] = S_b . F for the joint's own
    earlier coordinates and every ancestor's (in the form compiled, :func:`_column`)."""
    n0, n1, n2, f0, f1, f2 = _diagonal(fm, d, arm, out, w, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)
    for b in range(iv, d):  # the joint's own earlier coordinates
        _store(out, w, d, b, n0, n1, n2, f0, f1, f2)
    j = im[i, PARENT]
    while j >= 0:  # M[d, b] = S_b . F for the coordinates b of every ancestor
        if general:
            jv = im[j, IV]
            for b in range(jv, jv + im[j, NV]):
                _store(out, w, d, b, n0, n1, n2, f0, f1, f2)
        else:
            _store(out, w, d, j, n0, n1, n2, f0, f1, f2)
        j = im[j, PARENT]


@njit(cache=True, fastmath=_FAST, inline="always")
def _column(im, fm, i, arm, out, w, general):
    """The columns of M of body i's velocity coordinates from the complete IC_i (entries mirrored),
    then IC_i added to the parent's.  Body i's coordinates in the form compiled: im[i, IV] on
    (``general``) or i."""
    m, h0, h1, h2 = w[i, _IC], w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3]
    A00, A01, A02 = w[i, _IC + 4], w[i, _IC + 5], w[i, _IC + 6]
    A11, A12, A22 = w[i, _IC + 7], w[i, _IC + 8], w[i, _IC + 9]
    if general:
        iv = im[i, IV]
        for d in range(iv, iv + im[i, NV]):
            _column_of(im, fm, i, d, iv, arm, out, w, general, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)
    else:
        _column_of(im, fm, i, i, i, arm, out, w, general, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)
    j = im[i, PARENT]
    if j >= 0:
        _add_inertia(w, j, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)


@njit(cache=True, fastmath=_FAST, inline="always")
def _add_inertia(w, j, m, h0, h1, h2, A00, A01, A02, A11, A12, A22):
    """IC_j += (m, h, A)."""
    w[j, _IC] += m
    w[j, _IC + 1] += h0
    w[j, _IC + 2] += h1
    w[j, _IC + 3] += h2
    w[j, _IC + 4] += A00
    w[j, _IC + 5] += A01
    w[j, _IC + 6] += A02
    w[j, _IC + 7] += A11
    w[j, _IC + 8] += A12
    w[j, _IC + 9] += A22


@njit(cache=True, inline="always")
def _sin_cos_rows(im, q, w, general, root):
    """w[i, _SC], w[i, _SC + 1] = the joint angles' sine and cosine, all first: independent of the
    tree, they pipeline."""
    for i in range(im.shape[0]):
        if general:
            w[i, _SC], w[i, _SC + 1] = joint_sincos(im, i, q)
        elif root:  # body 0's free flyer has no angle (:func:`_root_body`); body i's coordinate q[i + 6]
            if i > 0:
                w[i, _SC], w[i, _SC + 1] = joint_angle(im, i, q[i + 6])
        else:
            w[i, _SC], w[i, _SC + 1] = joint_angle(im, i, q[i])


# ---- the free-flyer root form: body 0 is the world frame ----
# M = sum J^T I J does not depend on the world frame, nor (the free flyer's rates being in the body
# frame: the robot moves as one rigid body) on the free flyer's configuration: the root form takes
# world = body 0's frame, O = its origin.  Then the free flyer's columns of S are unit vectors, linear
# (0, e_b) for coordinate b < 3, angular (e_b, 0) for 3 + b, so a body's row of M over them is its
# F = IC S_d itself, (f, n), and M[0:6, 0:6] is IC_0 in body 0's frame (as Pinocchio's crba).  Bodies
# on subtrees fixed to the world beside body 0's keep world axes about body 0's tree position (no
# coupling with body 0's subtree).  Rows are written on and left of the diagonal only, each
# contiguous, and mirrored once at the end.


@njit(cache=True, fastmath=_FAST, inline="always")
def _root_body(fm, w):
    """Row w[0] of the root form: body 0's world pose (identity) and its inertia (m, h, A = Io) in its
    own frame."""
    for c in range(12):
        w[0, c] = 0.0
    w[0, 0], w[0, 4], w[0, 8] = 1.0, 1.0, 1.0
    w[0, _IC] = fm[0, MASS]
    w[0, _IC + 1], w[0, _IC + 2], w[0, _IC + 3] = fm[0, H], fm[0, H + 1], fm[0, H + 2]
    w[0, _IC + 4], w[0, _IC + 5], w[0, _IC + 6] = fm[0, IO], fm[0, IO + 1], fm[0, IO + 2]
    w[0, _IC + 7], w[0, _IC + 8], w[0, _IC + 9] = fm[0, IO + 4], fm[0, IO + 5], fm[0, IO + 8]


@njit(cache=True, fastmath=_FAST, inline="always")
def _root_row(im, fm, i, arm, out, w):
    """Row d = i + 5 of M left of and on the diagonal (body i > 0 of the root form) from the complete
    IC_i: F = IC_i S_d, M[d, d] = S_d . F (+ armature), M[d, j + 5] = S_{j + 5} . F for every ancestor
    j > 0, M[d, 0:6] = (f, n) (0 on a subtree fixed to the world); then IC_i added to the parent's."""
    d = i + 5
    m, h0, h1, h2 = w[i, _IC], w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3]
    A00, A01, A02 = w[i, _IC + 4], w[i, _IC + 5], w[i, _IC + 6]
    A11, A12, A22 = w[i, _IC + 7], w[i, _IC + 8], w[i, _IC + 9]
    n0, n1, n2, f0, f1, f2 = _diagonal(fm, d, arm, out, w, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)
    j = im[i, PARENT]
    while j > 0:
        b = j + 5
        out[d, b] = (w[b, _S] * n0 + w[b, _S + 1] * n1 + w[b, _S + 2] * n2
                     + w[b, _S + 3] * f0 + w[b, _S + 4] * f1 + w[b, _S + 5] * f2)
        j = im[j, PARENT]
    if j < 0:  # a body on a fixed subtree of the world, not body 0's: no coupling with the free flyer
        f0, f1, f2, n0, n1, n2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    out[d, 0], out[d, 1], out[d, 2], out[d, 3], out[d, 4], out[d, 5] = f0, f1, f2, n0, n1, n2
    j = im[i, PARENT]
    if j >= 0:
        _add_inertia(w, j, m, h0, h1, h2, A00, A01, A02, A11, A12, A22)


@njit(cache=True, fastmath=_FAST, inline="always")
def _root_block(fm, arm, out, w):
    """M[0:6, 0:6] on and left of the diagonal from the complete IC_0 = (m, h, A) in body 0's frame:
    m 1 (linear, linear), h x (angular, linear), A (angular, angular) (+ armature)."""
    m, h0, h1, h2 = w[0, _IC], w[0, _IC + 1], w[0, _IC + 2], w[0, _IC + 3]
    out[0, 0] = m
    out[1, 0], out[1, 1] = 0.0, m
    out[2, 0], out[2, 1], out[2, 2] = 0.0, 0.0, m
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, -h2, h1, w[0, _IC + 4]
    out[4, 0], out[4, 1], out[4, 2], out[4, 3], out[4, 4] = h2, 0.0, -h0, w[0, _IC + 5], w[0, _IC + 7]
    out[5, 0], out[5, 1], out[5, 2] = -h1, h0, 0.0
    out[5, 3], out[5, 4], out[5, 5] = w[0, _IC + 6], w[0, _IC + 8], w[0, _IC + 9]
    if arm:
        for d in range(6):
            out[d, d] += fm[d, ARM]


@njit(cache=True, fastmath=_FAST, inline="always")
def _root_crba(im, fm, q, arm, out, w):
    """:func:`crba_into` of the root form."""
    n, nv = im.shape[0], out.shape[0]
    _sin_cos_rows(im, q, w, False, True)
    _root_body(fm, w)
    for i in range(1, n):
        _body_to_world(im, fm, i, q, w, False, True)
    for r in range(6, nv):  # entries between different branches stay 0
        for c in range(6, r):
            out[r, c] = 0.0
    for i in range(n - 1, 0, -1):
        _root_row(im, fm, i, arm, out, w)
    _root_block(fm, arm, out, w)
    for r in range(nv):  # mirror
        for c in range(r):
            out[c, r] = out[r, c]


def _crba(form: TreeForm):
    """The CRBA kernel compiled for one form of tree (revolute and prismatic joints only, a free flyer
    at the root and such joints after it, joints of every kind); one source, three machine codes
    (as :func:`.rnea._rnea`)."""
    general, root = form == TreeForm.GENERAL, form == TreeForm.FREE_ROOT

    @njit(cache=True, fastmath=_FAST)
    def crba_into(im, fm, q, arm, out, w):
        if root:
            _root_crba(im, fm, q, arm, out, w)
            return
        n = im.shape[0]
        _sin_cos_rows(im, q, w, general, root)
        chain = True
        for i in range(n):
            chain = chain and im[i, PARENT] == i - 1
        for i in range(n):
            _body_to_world(im, fm, i, q, w, general, root)
        if not chain:  # entries between different branches stay 0; a chain writes all of them
            for r in range(out.shape[0]):
                for c in range(out.shape[0]):
                    out[r, c] = 0.0
        for i in range(n - 1, -1, -1):
            _column(im, fm, i, arm, out, w, general)

    return crba_into


_CRBA_SCALAR, _CRBA_ROOT, _CRBA_GENERAL = _crba(TreeForm.SCALAR), _crba(TreeForm.FREE_ROOT), _crba(TreeForm.GENERAL)


@njit(cache=True, inline="always")
def crba_into(im, fm, q, arm, out, w):
    """M(q) (nv, nv) into ``out`` for one sample of q (nq,) (arm = 1 adds the armature on the
    diagonal), scratch ``w`` (nv, SCRATCH): per body the world pose 0:12, the composite inertia (m,
    h, A upper triangle) 18:28, sin, cos of the joint angle 28:30; per velocity coordinate its
    column of S 12:18."""
    if scalar_joints(im):
        _CRBA_SCALAR(im, fm, q, arm, out, w)
    elif free_root(im):
        _CRBA_ROOT(im, fm, q, arm, out, w)
    else:
        _CRBA_GENERAL(im, fm, q, arm, out, w)


# ---- declaration (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def mass_matrix(im, fm, q, out, w):
    """M(q) (nv, nv) with the armature on the diagonal into out; status 4: a joint without
    orientation (a zero quaternion)."""
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    crba_into(im, fm, q, 1, out, w)
    return 0


MASS_MATRIX = Quantity("mass_matrix", mass_matrix, inputs=(("q", "nq"),), results=(("nv", "nv"),),
                       scratch=(("nv", SCRATCH),),
                       reference=lambda model, q: crba(model, q) + np.diag(model.armature))
