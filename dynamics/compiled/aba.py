"""Compiled articulated-body algorithm (Featherstone's ``FDab``) in body coordinates.

Forward dynamics qdd = M(q)^-1 (tau - h(q, qd) - friction + J^T f_ext) in O(n),
with the conventions of :mod:`.rnea`: spatial vectors angular first, each in
its body's (joint) frame; X_i is the motion transform parent -> body i given
by the joint's pose (R body axes in parent axes, p body origin in the parent
frame): X_i m = (R^T w, R^T (v - p x w)).  The joint pose, its motion subspace
S_i (6 x nv_i, nv_i the joint's velocity coordinates, one to six) and S_i^T f
come from the joint model (:mod:`.joint`), for joints of every kind.

Pass 1, base -> leaves (base velocity 0):
    v_i  = X_i v_p + S_i qd_i
    c_i  = v_i x S_i qd_i + S'_i qd_i           (velocity-product acceleration)
    IA_i = I_i                                  (rigid-body inertia)
    pA_i = v_i x* I_i v_i - f_ext_i             (bias force, f_ext in body axes)
Pass 2, leaves -> base (Featherstone, Rigid Body Dynamics Algorithms, Table 7.1):
    U_i = IA_i S_i (6 x nv_i),  D_i = S_i^T U_i + armature_i (nv_i x nv_i),
    u_i = tau_i - friction_i - S_i^T pA_i
    Ia  = IA_i - U_i D_i^-1 U_i^T
    pa  = pA_i + Ia c_i + U_i D_i^-1 u_i
    IA_p += X_i^T Ia X_i,  pA_p += X_i^T pa     (X_i^T: force transform body -> parent)
Pass 3, base -> leaves (base acceleration a_0 = (0, -g), gravity as a fictitious lift):
    a'_i  = X_i a_p + c_i
    qdd_i = D_i^-1 (u_i - U_i^T a'_i)
    a_i   = a'_i + S_i qdd_i

A joint with one coordinate (revolute, prismatic, helical) has a scalar D_i
and runs the scalar form (:func:`_articulate`: U / D and u / D stored).  A
joint with several coordinates (universal, spherical, planar, free flyer)
factorises D_i = L L^T (Cholesky, :func:`_articulate_joint`) and keeps, in
the scratch rows of its velocity coordinates, L, Y = U L^-T and z = L^-1 u:
then U D^-1 U^T = Y Y^T, U D^-1 u = Y z and qdd_i = L^-T (z - Y^T a'_i).
Friction and armature are per velocity coordinate.

Articulated inertias are symmetric 6x6 and kept as 21 numbers in block form
IA = [[A, B], [B^T, C]] with A, C symmetric 3x3 (upper triangles
a00 a01 a02 a11 a12 a22) and B general 3x3 (row-major).  A rigid body
(mass m, first moment h = m c, rotational inertia Io about its origin) is
A = Io, B = skew(h) (the matrix of h x), C = m 1.  IA is symmetric, so
U = IA S has the entries S^T (column k of IA).

The armature enters D_i only (a rotor spinning with the joint, as in
Pinocchio and :func:`composedyn.dynamics.reference.aba.aba`).  The pivots of
the D_i (D_i itself for one coordinate, the squares of L's diagonal for
several) are the pivots of a factorisation of M, so M is positive definite
iff every pivot is > 0.  Where M is singular a computed pivot is round-off, so
each must exceed its coordinate's floor (``PIVOT``, a small fraction of a bound
of M_kk: :mod:`composedyn.dynamics.pivots`): the kernel returns status 1 as soon
as one does not (or is not finite), leaving ``out`` incomplete, and the caller
raises ``ModelError``.

Implementation: one scratch row of ``w`` per body and every helper addressed
by (w, row, column) rather than by row views: a view handed to a function
costs an atomic reference-count pair (as much time as a joint's arithmetic),
so the pose, motion/force transform and world-force helpers are written here
in that form.  The helpers are inlined into ``aba_into`` (``inline="always"``)
and compiled with FMA contraction.
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    free_root,
    free_root_axis,
    free_root_placement,
    free_root_velocity,
    joint_angle_of,
    joint_column,
    joint_force_of,
    joint_friction,
    joint_motion_of,
    joint_offset,
    joint_offset_of,
    joint_rotation_row,
    joint_sincos,
    joint_turn,
    joint_velocity,
    joint_velocity_product,
    joint_velocity_product_of,
)
from composedyn.dynamics.compiled.layout import ARM, GRAV, IO, IQ, IV, MASS, NV, PARENT, PIVOT, H
from composedyn.dynamics.pivots import model_pivot_floors
from composedyn.dynamics.reference import forward
from composedyn.dynamics.reference.crba import crba
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.dynamics.reference.rnea import rnea

# columns of a body's scratch row (row n is the base): pose row X 0:12, world pose Xw
# 12:24 (only with external forces), v 24:30 (overwritten by a in pass 3), c 30:36,
# pA 36:42, IA 42:63 (A 6, B 9, C 6), U / D 63:69, u / D 69 (one-coordinate joints).
# Columns of a velocity coordinate's row (joints with several coordinates): its row of
# Y = U L^-T 70:76, its row of L (D = L L^T) 76:82, its entry of z = L^-1 u 82
XW, V, C, PA, IA, UD, UU = 12, 24, 30, 36, 42, 63, 69
Y, L, Z = 70, 76, 82
SCRATCH = 83
FMA = {"contract"}  # let LLVM fuse a * b + c into one FMA instruction (~6% faster, no less accurate)
_helper = njit(cache=True, inline="always", fastmath=FMA)  # inlined in numba IR: one flat kernel


@_helper
def _pose(im, fm, i, q, w, tree, root):
    """Pose row of body i into w[i, 0:12]: the joint transform (R row-major, p) of :mod:`.joint`
    (a one-coordinate joint through the scalar forms, which inline; no early return, which would
    make numba keep reference counts; ``root``: every joint but body 0's has one coordinate)."""
    if not tree or root or im[i, NV] == 1:
        qi = q[im[i, IQ]] if tree else q[i]  # one coordinate each: q[i]
        s, c = joint_angle_of(im, i, qi)
        R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
        R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
        R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
        p0, p1, p2 = joint_offset_of(im, fm, i, qi)
        w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5] = R0, R1, R2, R3, R4, R5
        w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11] = R6, R7, R8, p0, p1, p2
    else:
        _joint_pose(im, fm, i, q, w)


@_helper
def _joint_pose(im, fm, i, q, w):
    """:func:`_pose` of a joint with several coordinates (:func:`.joint.joint_turn`, :func:`.joint.joint_offset`)."""
    s, c = joint_sincos(im, i, q)
    R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
    R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
    R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
    R0, R1, R2, R3, R4, R5, R6, R7, R8 = joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8))
    p0, p1, p2 = joint_offset(im, fm, i, q)
    w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5] = R0, R1, R2, R3, R4, R5
    w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11] = R6, R7, R8, p0, p1, p2


@_helper
def _joint_motion(im, fm, i, q, qd, w):
    """Pass 1's joint step for a joint with several coordinates: v += S qd, c = v x S qd + S' qd."""
    s0, s1, s2, s3, s4, s5 = joint_velocity(im, fm, i, q, qd)
    w0, w1, w2 = w[i, V] + s0, w[i, V + 1] + s1, w[i, V + 2] + s2
    u0, u1, u2 = w[i, V + 3] + s3, w[i, V + 4] + s4, w[i, V + 5] + s5
    w[i, V], w[i, V + 1], w[i, V + 2], w[i, V + 3], w[i, V + 4], w[i, V + 5] = w0, w1, w2, u0, u1, u2
    c0, c1, c2, c3, c4, c5 = joint_velocity_product(im, fm, i, q, w0, w1, w2, u0, u1, u2, qd)
    w[i, C], w[i, C + 1], w[i, C + 2], w[i, C + 3], w[i, C + 4], w[i, C + 5] = c0, c1, c2, c3, c4, c5


@_helper
def _motion_to_child(w, i, k):
    """w[i, V:V+6] = X_i w[k, V:V+6] = (R^T w, R^T (v + w x p)) (pose row of body i)."""
    w0, w1, w2 = w[k, V], w[k, V + 1], w[k, V + 2]
    p0, p1, p2 = w[i, 9], w[i, 10], w[i, 11]
    u0 = w[k, V + 3] + w1 * p2 - w2 * p1
    u1 = w[k, V + 4] + w2 * p0 - w0 * p2
    u2 = w[k, V + 5] + w0 * p1 - w1 * p0
    for c in range(3):
        w[i, V + c] = w[i, c] * w0 + w[i, 3 + c] * w1 + w[i, 6 + c] * w2
        w[i, V + 3 + c] = w[i, c] * u0 + w[i, 3 + c] * u1 + w[i, 6 + c] * u2


@_helper
def _add_motion(w, i, s0, s1, s2, s3, s4, s5):
    """w[i, V:V+6] += (s0, ..., s5)."""
    w[i, V] += s0
    w[i, V + 1] += s1
    w[i, V + 2] += s2
    w[i, V + 3] += s3
    w[i, V + 4] += s4
    w[i, V + 5] += s5


@_helper
def _force_to_parent(w, i, k):
    """w[k, PA:PA+6] += X_i^T w[i, PA:PA+6] = (R n + p x R f, R f)."""
    f0, f1, f2 = w[i, PA + 3], w[i, PA + 4], w[i, PA + 5]
    n0, n1, n2 = w[i, PA], w[i, PA + 1], w[i, PA + 2]
    F0 = w[i, 0] * f0 + w[i, 1] * f1 + w[i, 2] * f2
    F1 = w[i, 3] * f0 + w[i, 4] * f1 + w[i, 5] * f2
    F2 = w[i, 6] * f0 + w[i, 7] * f1 + w[i, 8] * f2
    p0, p1, p2 = w[i, 9], w[i, 10], w[i, 11]
    w[k, PA] += w[i, 0] * n0 + w[i, 1] * n1 + w[i, 2] * n2 + p1 * F2 - p2 * F1
    w[k, PA + 1] += w[i, 3] * n0 + w[i, 4] * n1 + w[i, 5] * n2 + p2 * F0 - p0 * F2
    w[k, PA + 2] += w[i, 6] * n0 + w[i, 7] * n1 + w[i, 8] * n2 + p0 * F1 - p1 * F0
    w[k, PA + 3] += F0
    w[k, PA + 4] += F1
    w[k, PA + 5] += F2


@_helper
def _rigid_inertia(fm, i, w):
    """IA of body i = its rigid-body inertia: A = Io, B = skew(h), C = m 1."""
    w[i, IA], w[i, IA + 1], w[i, IA + 2] = fm[i, IO], fm[i, IO + 1], fm[i, IO + 2]
    w[i, IA + 3], w[i, IA + 4], w[i, IA + 5] = fm[i, IO + 4], fm[i, IO + 5], fm[i, IO + 8]
    h0, h1, h2 = fm[i, H], fm[i, H + 1], fm[i, H + 2]
    w[i, IA + 6], w[i, IA + 7], w[i, IA + 8] = 0.0, -h2, h1
    w[i, IA + 9], w[i, IA + 10], w[i, IA + 11] = h2, 0.0, -h0
    w[i, IA + 12], w[i, IA + 13], w[i, IA + 14] = -h1, h0, 0.0
    m = fm[i, MASS]
    w[i, IA + 15], w[i, IA + 16], w[i, IA + 17] = m, 0.0, 0.0
    w[i, IA + 18], w[i, IA + 19], w[i, IA + 20] = m, 0.0, m


@_helper
def _bias_force(fm, i, w):
    """pA_i = v x* (I_i v): momentum (k, l) = (Io w + h x u, m u - h x w), then (w x k + u x l, w x l)."""
    m, h0, h1, h2 = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    w0, w1, w2, u0, u1, u2 = w[i, V], w[i, V + 1], w[i, V + 2], w[i, V + 3], w[i, V + 4], w[i, V + 5]
    k0 = fm[i, IO] * w0 + fm[i, IO + 1] * w1 + fm[i, IO + 2] * w2 + h1 * u2 - h2 * u1
    k1 = fm[i, IO + 3] * w0 + fm[i, IO + 4] * w1 + fm[i, IO + 5] * w2 + h2 * u0 - h0 * u2
    k2 = fm[i, IO + 6] * w0 + fm[i, IO + 7] * w1 + fm[i, IO + 8] * w2 + h0 * u1 - h1 * u0
    l0, l1, l2 = m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0)
    w[i, PA] = w1 * k2 - w2 * k1 + u1 * l2 - u2 * l1
    w[i, PA + 1] = w2 * k0 - w0 * k2 + u2 * l0 - u0 * l2
    w[i, PA + 2] = w0 * k1 - w1 * k0 + u0 * l1 - u1 * l0
    w[i, PA + 3] = w1 * l2 - w2 * l1
    w[i, PA + 4] = w2 * l0 - w0 * l2
    w[i, PA + 5] = w0 * l1 - w1 * l0


@_helper
def _world_pose(w, i, k):
    """World pose row of body i into w[i, XW:XW+12]: X_i for a root, else R_w = R_k R, p_w = p_k + R_k p."""
    if k < 0:
        for c in range(12):
            w[i, XW + c] = w[i, c]
        return
    for r in range(3):
        R0, R1, R2 = w[k, XW + 3 * r], w[k, XW + 3 * r + 1], w[k, XW + 3 * r + 2]
        for c in range(3):
            w[i, XW + 3 * r + c] = R0 * w[i, c] + R1 * w[i, 3 + c] + R2 * w[i, 6 + c]
        w[i, XW + 9 + r] = w[k, XW + 9 + r] + R0 * w[i, 9] + R1 * w[i, 10] + R2 * w[i, 11]


@_helper
def _subtract_world_force(fw, i, w):
    """pA_i -= fw[i] (world axes, moment about the world origin) in body i coordinates:
    moment about the body origin n - p_w x f, then both parts by R_w^T."""
    f0, f1, f2 = fw[i, 3], fw[i, 4], fw[i, 5]
    p0, p1, p2 = w[i, XW + 9], w[i, XW + 10], w[i, XW + 11]
    n0 = fw[i, 0] - (p1 * f2 - p2 * f1)
    n1 = fw[i, 1] - (p2 * f0 - p0 * f2)
    n2 = fw[i, 2] - (p0 * f1 - p1 * f0)
    for c in range(3):
        w[i, PA + c] -= w[i, XW + c] * n0 + w[i, XW + 3 + c] * n1 + w[i, XW + 6 + c] * n2
        w[i, PA + 3 + c] -= w[i, XW + c] * f0 + w[i, XW + 3 + c] * f1 + w[i, XW + 6 + c] * f2


@_helper
def _rotate_sym(w, i, s00, s01, s02, s11, s12, s22):
    """Upper triangle of R S R^T for symmetric S (R of pose row i): T = S R^T, then R T."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8 = w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], w[i, 6], w[i, 7], w[i, 8]
    t00, t01, t02 = s00 * R0 + s01 * R1 + s02 * R2, s00 * R3 + s01 * R4 + s02 * R5, s00 * R6 + s01 * R7 + s02 * R8
    t10, t11, t12 = s01 * R0 + s11 * R1 + s12 * R2, s01 * R3 + s11 * R4 + s12 * R5, s01 * R6 + s11 * R7 + s12 * R8
    t20, t21, t22 = s02 * R0 + s12 * R1 + s22 * R2, s02 * R3 + s12 * R4 + s22 * R5, s02 * R6 + s12 * R7 + s22 * R8
    return (R0 * t00 + R1 * t10 + R2 * t20, R0 * t01 + R1 * t11 + R2 * t21, R0 * t02 + R1 * t12 + R2 * t22,
            R3 * t01 + R4 * t11 + R5 * t21, R3 * t02 + R4 * t12 + R5 * t22, R6 * t02 + R7 * t12 + R8 * t22)


@_helper
def _rotate(w, i, b):
    """R B R^T (row-major) for the general B at w[i, b:b+9] (R of pose row i)."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8 = w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], w[i, 6], w[i, 7], w[i, 8]
    b00, b01, b02, b10, b11, b12 = w[i, b], w[i, b + 1], w[i, b + 2], w[i, b + 3], w[i, b + 4], w[i, b + 5]
    b20, b21, b22 = w[i, b + 6], w[i, b + 7], w[i, b + 8]
    t00, t01, t02 = b00 * R0 + b01 * R1 + b02 * R2, b00 * R3 + b01 * R4 + b02 * R5, b00 * R6 + b01 * R7 + b02 * R8
    t10, t11, t12 = b10 * R0 + b11 * R1 + b12 * R2, b10 * R3 + b11 * R4 + b12 * R5, b10 * R6 + b11 * R7 + b12 * R8
    t20, t21, t22 = b20 * R0 + b21 * R1 + b22 * R2, b20 * R3 + b21 * R4 + b22 * R5, b20 * R6 + b21 * R7 + b22 * R8
    return (R0 * t00 + R1 * t10 + R2 * t20, R0 * t01 + R1 * t11 + R2 * t21, R0 * t02 + R1 * t12 + R2 * t22,
            R3 * t00 + R4 * t10 + R5 * t20, R3 * t01 + R4 * t11 + R5 * t21, R3 * t02 + R4 * t12 + R5 * t22,
            R6 * t00 + R7 * t10 + R8 * t20, R6 * t01 + R7 * t11 + R8 * t21, R6 * t02 + R7 * t12 + R8 * t22)


@_helper
def _inertia_to_parent(w, i, k):
    """IA_k += X_i^T Ia_i X_i for the 21-number articulated inertias in w[:, IA:IA+21].

    X = [[R^T, 0], [0, R^T]] [[1, 0], [-P, 1]] with P = skew(p), so first rotate
    the blocks, A' = R A R^T, B' = R B R^T, C' = R C R^T, then shift the origin:
    A'' = A' - Y - Y^T - W P,  B'' = B' + W,  C'' = C'  with Y = B' P, W = P C'.
    (M P has rows M[r, :] x p; P M has columns p x M[:, c].)
    """
    b = IA
    A00, A01, A02, A11, A12, A22 = _rotate_sym(w, i, w[i, b], w[i, b + 1], w[i, b + 2],
                                               w[i, b + 3], w[i, b + 4], w[i, b + 5])
    C00, C01, C02, C11, C12, C22 = _rotate_sym(w, i, w[i, b + 15], w[i, b + 16], w[i, b + 17],
                                               w[i, b + 18], w[i, b + 19], w[i, b + 20])
    B00, B01, B02, B10, B11, B12, B20, B21, B22 = _rotate(w, i, b + 6)
    p0, p1, p2 = w[i, 9], w[i, 10], w[i, 11]
    # Y = B' P (rows B'[r, :] x p)
    y00, y01, y02 = B01 * p2 - B02 * p1, B02 * p0 - B00 * p2, B00 * p1 - B01 * p0
    y10, y11, y12 = B11 * p2 - B12 * p1, B12 * p0 - B10 * p2, B10 * p1 - B11 * p0
    y20, y21, y22 = B21 * p2 - B22 * p1, B22 * p0 - B20 * p2, B20 * p1 - B21 * p0
    # W = P C' (columns p x C'[:, c]; C' symmetric)
    w00, w10, w20 = p1 * C02 - p2 * C01, p2 * C00 - p0 * C02, p0 * C01 - p1 * C00
    w01, w11, w21 = p1 * C12 - p2 * C11, p2 * C01 - p0 * C12, p0 * C11 - p1 * C01
    w02, w12, w22 = p1 * C22 - p2 * C12, p2 * C02 - p0 * C22, p0 * C12 - p1 * C02
    # upper triangle of W P (rows W[r, :] x p; symmetric)
    z00, z01, z02 = w01 * p2 - w02 * p1, w02 * p0 - w00 * p2, w00 * p1 - w01 * p0
    z11, z12, z22 = w12 * p0 - w10 * p2, w10 * p1 - w11 * p0, w20 * p1 - w21 * p0
    w[k, b] += A00 - 2.0 * y00 - z00
    w[k, b + 1] += A01 - y01 - y10 - z01
    w[k, b + 2] += A02 - y02 - y20 - z02
    w[k, b + 3] += A11 - 2.0 * y11 - z11
    w[k, b + 4] += A12 - y12 - y21 - z12
    w[k, b + 5] += A22 - 2.0 * y22 - z22
    w[k, b + 6] += B00 + w00
    w[k, b + 7] += B01 + w01
    w[k, b + 8] += B02 + w02
    w[k, b + 9] += B10 + w10
    w[k, b + 10] += B11 + w11
    w[k, b + 11] += B12 + w12
    w[k, b + 12] += B20 + w20
    w[k, b + 13] += B21 + w21
    w[k, b + 14] += B22 + w22
    w[k, b + 15] += C00
    w[k, b + 16] += C01
    w[k, b + 17] += C02
    w[k, b + 18] += C11
    w[k, b + 19] += C12
    w[k, b + 20] += C22


@_helper
def _free_root_velocity(fm, q, qd, fw, w, use_fw):
    """Pass 1 at body 0, a free flyer at the root: pose X_0 (:func:`.joint.free_root_placement`),
    v = S qd (the base is at rest), c = v x S qd = 0, IA = I, pA = v x* I v - f_ext."""
    R, (p0, p1, p2) = free_root_placement(fm, q)
    w[0, 0], w[0, 1], w[0, 2], w[0, 3], w[0, 4], w[0, 5] = R[0], R[1], R[2], R[3], R[4], R[5]
    w[0, 6], w[0, 7], w[0, 8], w[0, 9], w[0, 10], w[0, 11] = R[6], R[7], R[8], p0, p1, p2
    s0, s1, s2, s3, s4, s5 = free_root_velocity(qd)
    w[0, V], w[0, V + 1], w[0, V + 2], w[0, V + 3], w[0, V + 4], w[0, V + 5] = s0, s1, s2, s3, s4, s5
    for c in range(C, C + 6):
        w[0, c] = 0.0
    _rigid_inertia(fm, 0, w)
    _bias_force(fm, 0, w)
    if use_fw:
        _world_pose(w, 0, -1)
        _subtract_world_force(fw, 0, w)


@_helper
def _velocity(im, fm, q, qd, fw, w, tree, root):
    """Pass 1, base -> leaves: pose X, v = X v_p + S qd, c = v x S qd + S' qd, IA = I, pA = v x* I v - f_ext
    (``root``: body 0 a free flyer, every other joint with one coordinate)."""
    n = im.shape[0]
    for c in range(V, V + 6):
        w[n, c] = 0.0
    use_fw = fw.shape[0] == n and n > 0
    if root:
        _free_root_velocity(fm, q, qd, fw, w, use_fw)
    for i in range(1 if root else 0, n):
        k = im[i, PARENT]
        _pose(im, fm, i, q, w, tree, root)
        _motion_to_child(w, i, n if k < 0 else k)
        if not tree or root or im[i, NV] == 1:
            x = qd[im[i, IV]] if tree else qd[i]
            s0, s1, s2, s3, s4, s5 = joint_motion_of(im, fm, i, x)  # v += S qd
            _add_motion(w, i, s0, s1, s2, s3, s4, s5)
            c0, c1, c2, c3, c4, c5 = joint_velocity_product_of(im, fm, i, w[i, V], w[i, V + 1], w[i, V + 2],
                                                   w[i, V + 3], w[i, V + 4], w[i, V + 5], x)  # c = v x S qd
            w[i, C], w[i, C + 1], w[i, C + 2], w[i, C + 3], w[i, C + 4], w[i, C + 5] = c0, c1, c2, c3, c4, c5
        else:
            _joint_motion(im, fm, i, q, qd, w)
        _rigid_inertia(fm, i, w)
        _bias_force(fm, i, w)
        if use_fw:
            _world_pose(w, i, k)
            _subtract_world_force(fw, i, w)


@_helper
def _articulate(im, fm, i, d, ui, w, root):
    """Pass 2 at body i, a joint with one coordinate (velocity coordinate d): U = IA S,
    D = S . U + armature, u = ui - S . pA; stores U / D and u / D; then, unless the body is a
    root, in place Ia = IA - U U^T / D and pa = pA + Ia c + U u / D.  ui = tau_d - friction_d.
    Returns D, or -1 (nothing stored) when D is not above the coordinate's pivot floor
    (``PIVOT``, :mod:`composedyn.dynamics.pivots`) or not finite.

    IA is symmetric, so U_k = S . (column k of IA) = :func:`.joint.joint_component` of that
    column (:func:`.joint.joint_force_of`); with IA = [[A, B], [B^T, C]] column k < 3 is (A[:, k], B[k, :]) and column
    3 + k is (B[:, k], C[:, k])."""
    b = IA
    A00, A01, A02, A11, A12, A22 = w[i, b], w[i, b + 1], w[i, b + 2], w[i, b + 3], w[i, b + 4], w[i, b + 5]
    B00, B01, B02, B10, B11, B12 = w[i, b + 6], w[i, b + 7], w[i, b + 8], w[i, b + 9], w[i, b + 10], w[i, b + 11]
    B20, B21, B22 = w[i, b + 12], w[i, b + 13], w[i, b + 14]
    C00, C01, C02, C11, C12, C22 = w[i, b + 15], w[i, b + 16], w[i, b + 17], w[i, b + 18], w[i, b + 19], w[i, b + 20]
    U0 = joint_force_of(im, fm, i, A00, A01, A02, B00, B01, B02)
    U1 = joint_force_of(im, fm, i, A01, A11, A12, B10, B11, B12)
    U2 = joint_force_of(im, fm, i, A02, A12, A22, B20, B21, B22)
    U3 = joint_force_of(im, fm, i, B00, B10, B20, C00, C01, C02)
    U4 = joint_force_of(im, fm, i, B01, B11, B21, C01, C11, C12)
    U5 = joint_force_of(im, fm, i, B02, B12, B22, C02, C12, C22)
    D = joint_force_of(im, fm, i, U0, U1, U2, U3, U4, U5) + fm[d, ARM]
    ui -= joint_force_of(im, fm, i, w[i, PA], w[i, PA + 1], w[i, PA + 2], w[i, PA + 3], w[i, PA + 4], w[i, PA + 5])
    if not (D > fm[d, PIVOT] and D < math.inf):
        return -1.0
    d = 1.0 / D
    Ud0, Ud1, Ud2, Ud3, Ud4, Ud5 = U0 * d, U1 * d, U2 * d, U3 * d, U4 * d, U5 * d  # U / D
    g = ui * d  # u / D
    w[i, UD], w[i, UD + 1], w[i, UD + 2], w[i, UD + 3], w[i, UD + 4], w[i, UD + 5] = Ud0, Ud1, Ud2, Ud3, Ud4, Ud5
    w[i, UU] = g
    if root:  # nothing to pass on
        return D
    # Ia = IA - U (U / D)^T on the 21 stored entries (A, B, C blocks)
    A00, A01, A02 = A00 - U0 * Ud0, A01 - U0 * Ud1, A02 - U0 * Ud2
    A11, A12, A22 = A11 - U1 * Ud1, A12 - U1 * Ud2, A22 - U2 * Ud2
    B00, B01, B02 = B00 - U0 * Ud3, B01 - U0 * Ud4, B02 - U0 * Ud5
    B10, B11, B12 = B10 - U1 * Ud3, B11 - U1 * Ud4, B12 - U1 * Ud5
    B20, B21, B22 = B20 - U2 * Ud3, B21 - U2 * Ud4, B22 - U2 * Ud5
    C00, C01, C02 = C00 - U3 * Ud3, C01 - U3 * Ud4, C02 - U3 * Ud5
    C11, C12, C22 = C11 - U4 * Ud4, C12 - U4 * Ud5, C22 - U5 * Ud5
    w[i, b], w[i, b + 1], w[i, b + 2], w[i, b + 3], w[i, b + 4], w[i, b + 5] = A00, A01, A02, A11, A12, A22
    w[i, b + 6], w[i, b + 7], w[i, b + 8] = B00, B01, B02
    w[i, b + 9], w[i, b + 10], w[i, b + 11] = B10, B11, B12
    w[i, b + 12], w[i, b + 13], w[i, b + 14] = B20, B21, B22
    w[i, b + 15], w[i, b + 16], w[i, b + 17], w[i, b + 18], w[i, b + 19], w[i, b + 20] = C00, C01, C02, C11, C12, C22
    # pa = pA + Ia c + U u / D,  Ia c = (A c_ang + B c_lin, B^T c_ang + C c_lin)
    e0, e1, e2, l0, l1, l2 = w[i, C], w[i, C + 1], w[i, C + 2], w[i, C + 3], w[i, C + 4], w[i, C + 5]
    w[i, PA] += A00 * e0 + A01 * e1 + A02 * e2 + B00 * l0 + B01 * l1 + B02 * l2 + U0 * g
    w[i, PA + 1] += A01 * e0 + A11 * e1 + A12 * e2 + B10 * l0 + B11 * l1 + B12 * l2 + U1 * g
    w[i, PA + 2] += A02 * e0 + A12 * e1 + A22 * e2 + B20 * l0 + B21 * l1 + B22 * l2 + U2 * g
    w[i, PA + 3] += B00 * e0 + B10 * e1 + B20 * e2 + C00 * l0 + C01 * l1 + C02 * l2 + U3 * g
    w[i, PA + 4] += B01 * e0 + B11 * e1 + B21 * e2 + C01 * l0 + C11 * l1 + C12 * l2 + U4 * g
    w[i, PA + 5] += B02 * e0 + B12 * e1 + B22 * e2 + C02 * l0 + C12 * l1 + C22 * l2 + U5 * g
    return D

@_helper
def _sym(r, c):
    """Offset in the 21 stored entries of an articulated inertia (A 6, B 9, C 6) of its entry (r, c)."""
    if r > c:
        r, c = c, r
    if r < 3 <= c:  # B row-major
        return 3 + 3 * r + c
    k = 0 if c < 3 else 15  # A's or C's upper triangle (x00 x01 x02 x11 x12 x22)
    r, c = r % 3, c % 3
    return k + 2 * r - r * (r - 1) // 2 + c


@_helper
def _articulate_joint(im, fm, i, q, qd, tau, fric, smooth, w, root):
    """Pass 2 at body i, a joint with m = nv_i > 1 coordinates (d = IV + e, e < m): U = IA S,
    D = S^T U + armature, u = tau - friction - S^T pA; factorises D = L L^T and stores, in row d,
    row e of L (columns L:L+e+1), of Y = U L^-T (Y:Y+6, Y's column e) and z_e of z = L^-1 u (Z);
    then, unless the body is a root, in place Ia = IA - Y Y^T and pa = pA + Ia c + Y z.  Returns
    False, or True (Ia and pa untouched) when a pivot of D is not above its coordinate's floor
    (``PIVOT``) or not finite."""
    iv, m = im[i, IV], im[i, NV]
    for e in range(m):  # U's column e (IA S_e), D's row e up to the diagonal, u_e
        d = iv + e
        s0, s1, s2, s3, s4, s5 = joint_column(im, fm, i, q, e)
        for r in range(6):
            w[d, Y + r] = (w[i, IA + _sym(r, 0)] * s0 + w[i, IA + _sym(r, 1)] * s1 + w[i, IA + _sym(r, 2)] * s2
                           + w[i, IA + _sym(r, 3)] * s3 + w[i, IA + _sym(r, 4)] * s4 + w[i, IA + _sym(r, 5)] * s5)
        for f in range(e + 1):  # D[e, f] = S_e . U_f
            r = iv + f
            w[d, L + f] = (s0 * w[r, Y] + s1 * w[r, Y + 1] + s2 * w[r, Y + 2]
                           + s3 * w[r, Y + 3] + s4 * w[r, Y + 4] + s5 * w[r, Y + 5])
        w[d, L + e] += fm[d, ARM]
        x = tau[d]
        if fric:  # tau - damping qd - friction sgn(qd), per coordinate
            x -= joint_friction(fm, d, qd[d], smooth)
        w[d, Z] = x - (s0 * w[i, PA] + s1 * w[i, PA + 1] + s2 * w[i, PA + 2]
                       + s3 * w[i, PA + 3] + s4 * w[i, PA + 4] + s5 * w[i, PA + 5])
    for e in range(m):  # Cholesky D = L L^T row by row, with Y = U L^-T and z = L^-1 u
        d = iv + e
        for f in range(e + 1):
            r = iv + f
            x = w[d, L + f]
            for t in range(f):
                x -= w[d, L + t] * w[r, L + t]
            if f < e:
                w[d, L + f] = x / w[r, L + f]
            elif not (x > fm[d, PIVOT] and x < math.inf):
                return True
            else:
                w[d, L + e] = math.sqrt(x)
        x = w[d, Z]
        for f in range(e):
            x -= w[d, L + f] * w[iv + f, Z]
        g = 1.0 / w[d, L + e]
        w[d, Z] = x * g
        for c in range(6):
            x = w[d, Y + c]
            for f in range(e):
                x -= w[d, L + f] * w[iv + f, Y + c]
            w[d, Y + c] = x * g
    if root:  # nothing to pass on
        return False
    for e in range(m):  # Ia = IA - Y Y^T on the 21 stored entries, pa += Y z
        d = iv + e
        z = w[d, Z]
        for r in range(6):
            y = w[d, Y + r]
            w[i, PA + r] += y * z
            for c in range(r, 6):
                w[i, IA + _sym(r, c)] -= y * w[d, Y + c]
    for r in range(6):  # pa += Ia c
        x = 0.0
        for c in range(6):
            x += w[i, IA + _sym(r, c)] * w[i, C + c]
        w[i, PA + r] += x
    return False


@_helper
def _joint_accelerations(im, fm, i, q, out, w):
    """Pass 3 at body i, a joint with several coordinates, a' in w[i, V:V+6]: its qdd into out
    (at IV:IV+NV), qdd = L^-T (z - Y^T a') (forward the rows of z - Y^T a', back L^T); then
    a = a' + S qdd into w[i, V:V+6]."""
    iv, m = im[i, IV], im[i, NV]
    for e in range(m):
        d = iv + e
        x = w[d, Z]
        for c in range(6):
            x -= w[d, Y + c] * w[i, V + c]
        out[d] = x
    for j in range(m):
        e = m - 1 - j
        d = iv + e
        x = out[d]
        for f in range(e + 1, m):
            x -= w[iv + f, L + e] * out[iv + f]
        out[d] = x / w[d, L + e]
    s0, s1, s2, s3, s4, s5 = joint_velocity(im, fm, i, q, out)
    w[i, V], w[i, V + 1], w[i, V + 2] = w[i, V] + s0, w[i, V + 1] + s1, w[i, V + 2] + s2
    w[i, V + 3], w[i, V + 4], w[i, V + 5] = w[i, V + 3] + s3, w[i, V + 4] + s4, w[i, V + 5] + s5


@_helper
def _articulate_free_root(fm, qd, tau, fric, smooth, w):
    """Pass 2 at body 0, a free flyer at the root (S the identity up to order,
    :func:`.joint.free_root_axis`): D = S^T IA S + armature is IA reordered, factorised D = L L^T in
    rows 0..5 (columns L:L+6), u = tau - friction - S^T pA in their column Z.  Returns True when a
    pivot of D is not above its coordinate's floor (``PIVOT``) or not finite."""
    for e in range(6):
        r = free_root_axis(e)
        for f in range(e + 1):
            w[e, L + f] = w[0, IA + _sym(r, free_root_axis(f))]
        w[e, L + e] += fm[e, ARM]
        x = tau[e]
        if fric:  # tau - damping qd - friction sgn(qd), per coordinate
            x -= joint_friction(fm, e, qd[e], smooth)
        w[e, Z] = x - w[0, PA + r]
    for e in range(6):  # Cholesky D = L L^T row by row
        for f in range(e + 1):
            x = w[e, L + f]
            for t in range(f):
                x -= w[e, L + t] * w[f, L + t]
            if f < e:
                w[e, L + f] = x / w[f, L + f]
            elif not (x > fm[e, PIVOT] and x < math.inf):
                return True
            else:
                w[e, L + e] = math.sqrt(x)
    return False


@_helper
def _free_root_accelerations(out, w):
    """Pass 3 at body 0, a free flyer at the root, a' in w[0, V:V+6]: qdd = D^-1 (u - S^T IA a')
    into out[0:6] (L of :func:`_articulate_free_root`: forward, then back substitution), then
    a = a' + S qdd into w[0, V:V+6]."""
    for e in range(6):
        r = free_root_axis(e)
        x = w[e, Z]
        for c in range(6):
            x -= w[0, IA + _sym(r, c)] * w[0, V + c]
        for f in range(e):
            x -= w[e, L + f] * out[f]
        out[e] = x / w[e, L + e]
    for j in range(6):
        e = 5 - j
        x = out[e]
        for f in range(e + 1, 6):
            x -= w[f, L + e] * out[f]
        out[e] = x / w[e, L + e]
    for e in range(6):
        w[0, V + free_root_axis(e)] += out[e]


@_helper
def _aba(im, fm, q, qd, tau, fw, fric, smooth, out, w, tree, root):
    """qdd (nv,) into ``out`` for one sample, q (nq,), qd and tau (nv,) (joints of every kind:
    :mod:`.joint`), C-contiguous scratch ``w`` (nv + 1, SCRATCH) (n + 1 rows suffice when every
    joint has one coordinate); returns 0, or 1 if M(q) (with armature) is not positive definite.

    fric: 1 subtracts damping qd + friction sgn(qd), per velocity coordinate, with
    sgn(x) = tanh(x / smooth) when smooth > 0.  fw: (n, 6) world forces on the n bodies
    (moment about the world origin) or (0, 6).
    """
    n = im.shape[0]
    _velocity(im, fm, q, qd, fw, w, tree, root)
    for i in range(n - 1, 0 if root else -1, -1):  # pass 2, leaves -> base (``root``: body 0 below)
        k = im[i, PARENT]
        if not tree or root or im[i, NV] == 1:
            d = im[i, IV] if tree else i
            ui = tau[d]
            if fric:  # tau - damping qd - friction sgn(qd)
                ui -= joint_friction(fm, d, qd[d], smooth)
            D = _articulate(im, fm, i, d, ui, w, k < 0)
            if not (D > 0.0 and D < math.inf):
                return 1
        elif _articulate_joint(im, fm, i, q, qd, tau, fric, smooth, w, k < 0):
            return 1
        if k >= 0:
            _inertia_to_parent(w, i, k)
            _force_to_parent(w, i, k)
    if root and _articulate_free_root(fm, qd, tau, fric, smooth, w):
        return 1
    for c in range(3):  # a_0 = (0, -g) in the base row
        w[n, V + c] = 0.0
        w[n, V + 3 + c] = -fm[0, GRAV + c] if n > 0 else 0.0
    if root:  # a' = X_0 a_base (c_0 = 0)
        _motion_to_child(w, 0, n)
        _free_root_accelerations(out, w)
    for i in range(1 if root else 0, n):  # pass 3, base -> leaves; a_i overwrites v_i
        k = im[i, PARENT]
        _motion_to_child(w, i, n if k < 0 else k)  # a' = X a_p + c
        for c in range(6):
            w[i, V + c] += w[i, C + c]
        if not tree or root or im[i, NV] == 1:
            x = w[i, UU]  # qdd = u / D - (U / D) . a'
            for c in range(6):
                x -= w[i, UD + c] * w[i, V + c]
            out[im[i, IV] if tree else i] = x
            s0, s1, s2, s3, s4, s5 = joint_motion_of(im, fm, i, x)  # a = a' + S qdd
            _add_motion(w, i, s0, s1, s2, s3, s4, s5)
        else:
            _joint_accelerations(im, fm, i, q, out, w)
    return 0


@njit(cache=True, fastmath=FMA)
def aba_into(im, fm, q, qd, tau, fw, fric, smooth, out, w):
    """qdd (nv,) into ``out`` for one sample, q (nq,), qd and tau (nv,) (joints of every kind:
    :mod:`.joint`), C-contiguous scratch ``w`` (nv + 1, SCRATCH) (n + 1 rows suffice when every
    joint has one coordinate); returns 0, or 1 if M(q) (with armature) is not positive definite.

    fric: 1 subtracts damping qd + friction sgn(qd), per velocity coordinate, with
    sgn(x) = tanh(x / smooth) when smooth > 0.  fw: (n, 6) world forces on the n bodies
    (moment about the world origin) or (0, 6).

    Three copies of the algorithm: one for trees whose joints all have one coordinate (the
    several-coordinate steps compiled out), one for a free flyer at the root followed by such
    joints (:func:`.joint.free_root`: body 0 through straight-line code), one for any tree (see
    the module docstring).
    """
    n = im.shape[0]
    if n == 0 or im[n - 1, IV] + im[n - 1, NV] == n:
        return _aba(im, fm, q, qd, tau, fw, fric, smooth, out, w, False, False)
    if free_root(im):
        return _aba(im, fm, q, qd, tau, fw, fric, smooth, out, w, True, True)
    return _aba(im, fm, q, qd, tau, fw, fric, smooth, out, w, True, False)


# ---- declaration (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def forward_dynamics(im, fm, q, v, tau, f_world, friction, smooth, out, w):
    """a (nv,) solving M a = tau - C v - g - friction (when ``friction`` is not 0; tanh Coulomb of
    width ``smooth`` > 0) + the external wrenches ``f_world`` (n, 6) (or (0, 6)) into out;
    status 3 when M(q) is not positive definite, 4 for a joint without orientation (a zero
    quaternion)."""
    if not configuration_readable(im, q):
        return 4
    return 3 if aba_into(im, fm, q, v, tau, f_world, 1 if friction else 0, smooth, out, w) else 0


def _reference(model, q, v, tau, f_world, friction, smooth=None):
    return forward.forward_dynamics(model, q, v, tau, f_world=f_world, friction=bool(friction), smooth=smooth)


def _solved(model, q, v, tau, f_world, friction, smooth=None):
    """Where the kernel found a pivot below its floor: CRBA + Cholesky in NumPy with the same floors,
    which raises the ModelError naming the joints (or, at the edge, solves)."""
    h = rnea(model, q, v, np.zeros_like(q), f_world=f_world)
    if friction:
        h = h + friction_torques(model, v, smooth=smooth)
    return forward.solve_mass(model, crba(model, q) + np.diag(model.armature), tau - h, model_pivot_floors(model))


FORWARD_DYNAMICS = Quantity("forward_dynamics", forward_dynamics, inputs=(("q", "nq"), ("v", "nv"), ("tau", "nv")),
                            extras=(("f_world", 6),), results=(("nv",),), options=(("friction", 1),),
                            number="smooth_friction", scratch=(("nv+1", SCRATCH),), reference=_reference,
                            fallback=_solved)
