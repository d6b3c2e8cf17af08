"""Compiled gravity torques g(q): the joint torques that hold the robot still.

g(q) is what RNEA returns with qd = qdd = 0 (:func:`composedyn.dynamics.reference.rnea.rnea`),
but it needs no spatial algebra.  Every body accelerates at -g (the fictitious
base acceleration), so its spatial force about a point o is
f = I (0, -g) = (-(m (c - o)) x g, -m g), c its centre of mass.  Summed over the
subtree of body i (bodies i and below) about the joint origin o = p_i, with
M_i the subtree mass and h_i = sum m (c - p_i) its first moment there, the
joint torque is that force projected on the motion subspace (a, 0) or (0, a):

    revolute   tau_i = -a . (h_i x g) = a . (g x h_i)
    prismatic  tau_i = -M_i (a . g)

(sign as in RNEA: tau is the torque the motor applies to hold the subtree up).
In world coordinates, with body poses (R_i, p_i), world first moments
Hw_i = sum m c and world axis R_i a, this reads tau_i = -(R_i a) . ((Hw_i -
M_i p_i) x g); every term is a rotated vector, so the scalar is the same in
body axes.  The kernel uses body axes: no world poses (one 3x3 product per
body saved) and no cancellation in Hw_i - M_i p_i far from the base.

A revolute joint's rotation R_i = T Rot(a, q) (T = tree_R, fixed) is never
formed; vectors are rotated with Rodrigues' formula
Rot(a, q) v = c v + s (a x v) + (1 - c) (a . v) a  (c = cos q, s = sin q;
Rot^T: s -> -s):

    forward   g_i = Rot(a, q_i)^T T_i^T g_parent      (g_base = the model's gravity)
    backward  tau_i from (M_i, h_i, g_i), then into the parent:
              M_p += M_i,  h_p += T_i Rot(a, q_i) h_i + M_i p_i
              (p_i = tree_p, plus q_i T_i a for a prismatic joint)

About 120 flops and one sin/cos per joint and 9 scratch numbers per body,
versus ~250 flops for the RNEA kernel with qd = qdd = 0.  Measured in an njit
loop (UR5 / Panda / Talos reduced): ~150 / 190 / 750 ns per call, against
~550 / 770 / 2600 ns for the RNEA kernel and ~380 / 530 / 1800 ns for the
world-coordinate version (world poses by ``compose``, then Hw_i - M_i p_i).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from composedyn.dynamics.compiled.loops import serial_and_parallel
from composedyn.dynamics.compiled.layout import AX, BLOCKS, GRAV, H, MASS, RA, TP, TR

SCRATCH = 9  # per body: cos q, sin q 0:2; g_i 2:5; subtree mass M_i 5; subtree first moment h_i 6:9


@njit(cache=True)
def _rodrigues(c, s, a0, a1, a2, v0, v1, v2):
    """Rot(a, q) v = c v + s (a x v) + (1 - c) (a . v) a; pass -s for Rot^T v."""
    d = (1.0 - c) * (a0 * v0 + a1 * v1 + a2 * v2)
    return (c * v0 + s * (a1 * v2 - a2 * v1) + d * a0,
            c * v1 + s * (a2 * v0 - a0 * v2) + d * a1,
            c * v2 + s * (a0 * v1 - a1 * v0) + d * a2)


@njit(cache=True)
def _tree_rot(fm, i, v0, v1, v2):
    """T_i v (T_i = tree_R row-major)."""
    return (fm[i, TR] * v0 + fm[i, TR + 1] * v1 + fm[i, TR + 2] * v2,
            fm[i, TR + 3] * v0 + fm[i, TR + 4] * v1 + fm[i, TR + 5] * v2,
            fm[i, TR + 6] * v0 + fm[i, TR + 7] * v1 + fm[i, TR + 8] * v2)


@njit(cache=True)
def _tree_rot_t(fm, i, v0, v1, v2):
    """T_i^T v."""
    return (fm[i, TR] * v0 + fm[i, TR + 3] * v1 + fm[i, TR + 6] * v2,
            fm[i, TR + 1] * v0 + fm[i, TR + 4] * v1 + fm[i, TR + 7] * v2,
            fm[i, TR + 2] * v0 + fm[i, TR + 5] * v1 + fm[i, TR + 8] * v2)


@njit(cache=True)
def gravity_one(im, fm, q, out):
    """g(q) (n,) into ``out`` for one sample."""
    gravity_into(im, fm, q, out, np.empty((q.shape[0], SCRATCH)))


@njit(cache=True)
def gravity_into(im, fm, q, out, w):
    """:func:`gravity_one` with caller-provided scratch ``w`` (n, SCRATCH).

    Both passes sit in this one function: with the forward pass as a separate
    njit function the UR5 call was ~25% slower (not inlined).  The small
    helpers above are inlined by LLVM; marking them numba ``inline="always"``
    made the kernel ~1.5x slower.
    """
    for i in range(q.shape[0]):  # forward: cos, sin; g_i = Rot^T T^T g_parent; own (m, h)
        k = im[i, 0]
        if k < 0:
            u0, u1, u2 = _tree_rot_t(fm, i, fm[i, GRAV], fm[i, GRAV + 1], fm[i, GRAV + 2])
        else:
            u0, u1, u2 = _tree_rot_t(fm, i, w[k, 2], w[k, 3], w[k, 4])
        if im[i, 1] == 0:
            c, s = math.cos(q[i]), math.sin(q[i])
            w[i, 0], w[i, 1] = c, s
            u0, u1, u2 = _rodrigues(c, -s, fm[i, AX], fm[i, AX + 1], fm[i, AX + 2], u0, u1, u2)
        w[i, 2], w[i, 3], w[i, 4] = u0, u1, u2
        w[i, 5], w[i, 6], w[i, 7], w[i, 8] = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    for i in range(q.shape[0] - 1, -1, -1):  # backward: tau_i, then (M, h) into the parent
        a0, a1, a2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
        g0, g1, g2 = w[i, 2], w[i, 3], w[i, 4]
        m, h0, h1, h2 = w[i, 5], w[i, 6], w[i, 7], w[i, 8]
        revolute = im[i, 1] == 0
        if revolute:  # a . (g x h)
            out[i] = a0 * (g1 * h2 - g2 * h1) + a1 * (g2 * h0 - g0 * h2) + a2 * (g0 * h1 - g1 * h0)
        else:  # -M a . g
            out[i] = -m * (a0 * g0 + a1 * g1 + a2 * g2)
        k = im[i, 0]
        if k < 0:
            continue
        # into the parent: M_p += M, h_p += T Rot h + M p
        p0, p1, p2 = fm[i, TP], fm[i, TP + 1], fm[i, TP + 2]
        if revolute:
            h0, h1, h2 = _rodrigues(w[i, 0], w[i, 1], a0, a1, a2, h0, h1, h2)
        else:  # p = tree_p + q T a
            p0, p1, p2 = p0 + q[i] * fm[i, RA], p1 + q[i] * fm[i, RA + 1], p2 + q[i] * fm[i, RA + 2]
        r0, r1, r2 = _tree_rot(fm, i, h0, h1, h2)
        w[k, 5] += m
        w[k, 6] += r0 + m * p0
        w[k, 7] += r1 + m * p1
        w[k, 8] += r2 + m * p2


def _gravity_loop(im, fm, Q, OUT):
    """Samples Q (N, n) -> OUT (N, n), in blocks with one scratch array each that
    ``prange`` spreads over the threads."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        w = np.empty((n, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            gravity_into(im, fm, Q[s], OUT[s], w)


gravity_serial, gravity_parallel = serial_and_parallel(_gravity_loop)
