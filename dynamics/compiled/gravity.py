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

The joint rotation R_i = T Rot(a, q) (T = tree_R) is never formed: the
joint model applies it to a vector by Rodrigues' formula
(:func:`.joint.joint_rotate`, :func:`.joint.joint_rotate_t`), and the torque
is S^T of the subtree's force (g x h_i, -M_i g) about the joint origin
(:func:`.joint.joint_force`):

    forward   g_i = R_i^T g_parent                    (g_base = the model's gravity)
    backward  tau_i = S_i^T (g_i x h_i, -M_i g_i), then into the parent:
              M_p += M_i,  h_p += R_i h_i + M_i p_i    (p_i: :func:`.joint.joint_translation`)

About 120 flops and one sin/cos per joint and 9 scratch numbers per body,
versus ~250 flops for the RNEA kernel with qd = qdd = 0.

A tree with joints of other kinds (:mod:`.joint`) runs the same passes in
:func:`gravity_general`: the joint rotation from :func:`.joint.joint_rotate_of`
and :func:`.joint.joint_rotate_t_of`, the origin from :func:`.joint.joint_offset`
and one torque per velocity coordinate, (S^T f)[c] (:func:`.joint.joint_component`).
A free flyer at the root followed by revolute and prismatic joints (every floating robot,
:func:`.joint.free_root`) runs :func:`gravity_root`: body 0 through the straight-line
``free_root_*`` functions, the other bodies through the scalar parts at their offsets in q and v.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    free_root,
    free_root_force,
    free_root_placement,
    joint_angle,
    joint_component,
    joint_force,
    joint_offset,
    joint_rotate,
    joint_rotate_of,
    joint_rotate_t,
    joint_rotate_t_of,
    joint_sincos,
    joint_translation,
    rot_t,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import GRAV, IQ, IV, MASS, NV, PARENT, H
from composedyn.dynamics.reference.rnea import rnea

SCRATCH = 9  # per body: sin, cos of the joint angle 0:2; g_i 2:5; subtree mass M_i 5; subtree first moment h_i 6:9

@njit(cache=True)
def gravity_general(im, fm, q, out, w):
    """:func:`gravity_into` on a tree with joints of every kind (:mod:`.joint`): the same passes, one
    torque per velocity coordinate (S^T of the subtree's force), the general joint functions."""
    n = im.shape[0]
    for i in range(n):  # forward: joint angle's sin, cos; g_i = R^T g_parent; own (m, h)
        k = im[i, PARENT]
        if k < 0:
            v0, v1, v2 = fm[i, GRAV], fm[i, GRAV + 1], fm[i, GRAV + 2]
        else:
            v0, v1, v2 = w[k, 2], w[k, 3], w[k, 4]
        s, c = joint_sincos(im, i, q)
        w[i, 0], w[i, 1] = s, c
        w[i, 2], w[i, 3], w[i, 4] = joint_rotate_t_of(im, fm, i, q, s, c, v0, v1, v2)
        w[i, 5], w[i, 6], w[i, 7], w[i, 8] = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    for j in range(n):  # backward, i = n-1 .. 0: tau_i, then (M, h) into the parent
        i = n - 1 - j
        g0, g1, g2 = w[i, 2], w[i, 3], w[i, 4]
        m, h0, h1, h2 = w[i, 5], w[i, 6], w[i, 7], w[i, 8]
        n0, n1, n2 = cross(g0, g1, g2, h0, h1, h2)  # subtree force (g x h, -M g) about the joint
        iv = im[i, IV]
        for e in range(im[i, NV]):  # tau = S^T f, one component per velocity coordinate
            out[iv + e] = joint_component(im, fm, i, q, e, n0, n1, n2, -m * g0, -m * g1, -m * g2)
        k = im[i, PARENT]
        if k < 0:
            continue
        # into the parent: M_p += M, h_p += R h + M p
        r0, r1, r2 = joint_rotate_of(im, fm, i, q, w[i, 0], w[i, 1], h0, h1, h2)
        p0, p1, p2 = joint_offset(im, fm, i, q)
        w[k, 5] += m
        w[k, 6] += r0 + m * p0
        w[k, 7] += r1 + m * p1
        w[k, 8] += r2 + m * p2


@njit(cache=True)
def gravity_root(im, fm, q, out, w):
    """:func:`gravity_into` on a tree whose body 0 is a free flyer and whose other joints are revolute or
    prismatic (:func:`.joint.free_root`): body 0's rotation from its quaternion q[3:7] and its six torques
    S^T f = (f, n) inlined, body i > 0 the scalar joint model at q[im[i, IQ]], out[im[i, IV]]."""
    n = im.shape[0]
    R, _ = free_root_placement(fm, q)  # body 0 in the world (its position does not enter g)
    w[0, 0], w[0, 1] = 0.0, 1.0
    w[0, 2], w[0, 3], w[0, 4] = rot_t(R, fm[0, GRAV], fm[0, GRAV + 1], fm[0, GRAV + 2])
    w[0, 5], w[0, 6], w[0, 7], w[0, 8] = fm[0, MASS], fm[0, H], fm[0, H + 1], fm[0, H + 2]
    for i in range(1, n):  # forward: joint angle's sin, cos; g_i = R^T g_parent; own (m, h)
        k = im[i, PARENT]
        if k < 0:  # another root
            v0, v1, v2 = fm[i, GRAV], fm[i, GRAV + 1], fm[i, GRAV + 2]
        else:
            v0, v1, v2 = w[k, 2], w[k, 3], w[k, 4]
        s, c = joint_angle(im, i, q[im[i, IQ]])
        w[i, 0], w[i, 1] = s, c
        w[i, 2], w[i, 3], w[i, 4] = joint_rotate_t(im, fm, i, s, c, v0, v1, v2)
        w[i, 5], w[i, 6], w[i, 7], w[i, 8] = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    for j in range(n - 1):  # backward, i = n-1 .. 1: tau_i, then (M, h) into the parent
        i = n - 1 - j
        g0, g1, g2 = w[i, 2], w[i, 3], w[i, 4]
        m, h0, h1, h2 = w[i, 5], w[i, 6], w[i, 7], w[i, 8]
        n0, n1, n2 = cross(g0, g1, g2, h0, h1, h2)  # subtree force (g x h, -M g) about the joint
        out[im[i, IV]] = joint_force(im, fm, i, n0, n1, n2, -m * g0, -m * g1, -m * g2)
        k = im[i, PARENT]
        if k < 0:
            continue
        r0, r1, r2 = joint_rotate(im, fm, i, w[i, 0], w[i, 1], h0, h1, h2)
        p0, p1, p2 = joint_translation(im, fm, i, q[im[i, IQ]])
        w[k, 5] += m
        w[k, 6] += r0 + m * p0
        w[k, 7] += r1 + m * p1
        w[k, 8] += r2 + m * p2
    g0, g1, g2 = w[0, 2], w[0, 3], w[0, 4]  # body 0: the whole robot's force about the base origin
    m, h0, h1, h2 = w[0, 5], w[0, 6], w[0, 7], w[0, 8]
    n0, n1, n2 = cross(g0, g1, g2, h0, h1, h2)
    out[0], out[1], out[2], out[3], out[4], out[5] = free_root_force(n0, n1, n2, -m * g0, -m * g1, -m * g2)


@njit(cache=True, inline="always")
def gravity_into(im, fm, q, out, w):
    """g(q) (nv,) into ``out`` for one sample of q (nq,), scratch ``w`` (nv, SCRATCH).

    Both passes sit in this one function (a separate njit forward pass is not
    inlined, and slower); the joint model's small helpers are inlined by LLVM.
    A model with a joint other than revolute or prismatic goes to :func:`gravity_root` (a free
    flyer at the root, then such joints) or :func:`gravity_general` (functions of their own: this
    one, inlined into its callers, stays small).
    """
    if not scalar_joints(im):
        if free_root(im):
            gravity_root(im, fm, q, out, w)
        else:
            gravity_general(im, fm, q, out, w)
        return
    for i in range(q.shape[0]):  # forward: joint angle's sin, cos; g_i = R^T g_parent; own (m, h)
        k = im[i, 0]
        if k < 0:
            v0, v1, v2 = fm[i, GRAV], fm[i, GRAV + 1], fm[i, GRAV + 2]
        else:
            v0, v1, v2 = w[k, 2], w[k, 3], w[k, 4]
        s, c = joint_angle(im, i, q[i])
        w[i, 0], w[i, 1] = s, c
        w[i, 2], w[i, 3], w[i, 4] = joint_rotate_t(im, fm, i, s, c, v0, v1, v2)
        w[i, 5], w[i, 6], w[i, 7], w[i, 8] = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    for j in range(q.shape[0]):  # backward, i = n-1 .. 0: tau_i, then (M, h) into the parent
        i = q.shape[0] - 1 - j
        g0, g1, g2 = w[i, 2], w[i, 3], w[i, 4]
        m, h0, h1, h2 = w[i, 5], w[i, 6], w[i, 7], w[i, 8]
        n0, n1, n2 = cross(g0, g1, g2, h0, h1, h2)  # subtree force (g x h, -M g) about the joint
        out[i] = joint_force(im, fm, i, n0, n1, n2, -m * g0, -m * g1, -m * g2)
        k = im[i, 0]
        if k < 0:
            continue
        # into the parent: M_p += M, h_p += R h + M p
        r0, r1, r2 = joint_rotate(im, fm, i, w[i, 0], w[i, 1], h0, h1, h2)
        p0, p1, p2 = joint_translation(im, fm, i, q[i])
        w[k, 5] += m
        w[k, 6] += r0 + m * p0
        w[k, 7] += r1 + m * p1
        w[k, 8] += r2 + m * p2


# ---- declaration (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def gravity_torques(im, fm, q, out, w):
    """g(q) (nv,) into out; status 4: a joint without orientation (a zero quaternion)."""
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    gravity_into(im, fm, q, out, w)
    return 0


GRAVITY_TORQUES = Quantity("gravity_torques", gravity_torques, inputs=(("q", "nq"),), results=(("nv",),),
                           scratch=(("nv", SCRATCH),),
                           reference=lambda model, q: rnea(model, q, np.zeros(np.shape(q)), np.zeros(np.shape(q))))
