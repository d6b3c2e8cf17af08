"""The compiled joint model: every kernel's one source of joint kinematics.

A body's joint is described by its row of the packed model (``im``, ``fm``,
see :mod:`.layout`): type ``im[i, 1]`` (a code of :mod:`composedyn.dynamics.joint_types`),
tree transform (``tree_R``, ``tree_p``: parent body frame -> joint frame at
q = 0) and unit axis ``a`` in the joint frame (= the body frame).  Spatial
vectors are angular first: a motion (w, u), a force (n, f).  For joint i at
coordinate qi:

* pose -- the body frame in the parent body frame, (R, p) with
  x_parent = R x_body + p: revolute R = tree_R Rot(a, qi), p = tree_p;
  prismatic R = tree_R, p = tree_p + qi tree_R a.  :func:`joint_pose` returns
  it whole; a kernel's inner loop uses its parts, which LLVM inlines (the
  whole is too large for it): :func:`joint_angle` (sine and cosine of the
  rotation angle, all joints first if the kernel likes), then
  :func:`joint_rotation_row` (R by rows) or :func:`joint_rotate` /
  :func:`joint_rotate_t` (R v, R^T v without forming R), and
  :func:`joint_translation` (p);
* :func:`joint_motion` -- S x, the motion subspace times a scalar in the body
  frame: S = (a, 0) revolute, (0, a) prismatic;
* :func:`joint_motion_at` -- S in world axes about a point, from the joint's
  world axis and the point relative to the joint's origin: (a, a x d)
  revolute, (0, a) prismatic (Jacobian columns at a frame);
  :func:`joint_motion_world` -- S in world axes about the world origin from
  the body's world pose (world subspaces, the centre of mass's Jacobian);
  :func:`joint_point_step` -- the joint's step of the classical (point)
  velocity and acceleration recursion in world axes;
* :func:`joint_force` -- S^T (n, f), the generalised force of a body-frame
  spatial force;
* :func:`joint_bias` (the velocity product v x S qd) and :func:`joint_friction`
  (damping and Coulomb friction, sign or tanh).

Only the ``joint_*`` functions look at the joint type (a test reads every
kernel to hold that): a new joint type is a code in
:mod:`composedyn.dynamics.joint_types` and a case in each ``joint_*`` function
here (and in the NumPy and symbolic joint models), never in a kernel.
The spatial-algebra helpers the kernels share are here too:
:func:`cross`, :func:`rot`, :func:`rot_t`, :func:`motion_cross`.
Everything takes and returns scalars and tuples, so that LLVM inlines it into
the calling kernel (no arrays created, no reference counting).  It is compiled
once, with its own fast-math flags whichever kernel calls it (:mod:`.jit`), so
every kernel gets the same joint arithmetic to the last bit: fused
multiply-add (``fastmath={"contract"}``, no other licence: nan and inf
propagate, the order of operations is kept), except :func:`joint_friction`,
which rounds as the NumPy reference does (the RNEA kernel adds friction to the
bit as :func:`composedyn.dynamics.reference.friction.friction_torques`).
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import AX, DAMP, FRIC, RA, TA, TK, TP, TR
from composedyn.dynamics.compiled.sincos import sincos
from composedyn.dynamics.joint_types import PRISMATIC, REVOLUTE

_FMA = {"contract"}  # fused multiply-add only (module docstring)


@njit(cache=True, fastmath=_FMA)
def cross(a0, a1, a2, b0, b1, b2):
    """a x b."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, fastmath=_FMA)
def rot(R, x0, x1, x2):
    """R x (R a row-major 9-tuple)."""
    return (R[0] * x0 + R[1] * x1 + R[2] * x2,
            R[3] * x0 + R[4] * x1 + R[5] * x2,
            R[6] * x0 + R[7] * x1 + R[8] * x2)


@njit(cache=True, fastmath=_FMA)
def rot_t(R, x0, x1, x2):
    """R^T x."""
    return (R[0] * x0 + R[3] * x1 + R[6] * x2,
            R[1] * x0 + R[4] * x1 + R[7] * x2,
            R[2] * x0 + R[5] * x1 + R[8] * x2)


@njit(cache=True, fastmath=_FMA)
def motion_cross(w0, w1, w2, u0, u1, u2, s0, s1, s2, s3, s4, s5):
    """(w, u) x (s, t) = (w x s, w x t + u x s) for motions (w, u), (s, t) = (s0..s2, s3..s5)."""
    a0, a1, a2 = cross(w0, w1, w2, s0, s1, s2)
    b0, b1, b2 = cross(w0, w1, w2, s3, s4, s5)
    c0, c1, c2 = cross(u0, u1, u2, s0, s1, s2)
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@njit(cache=True, fastmath=_FMA)
def joint_angle(im, i, qi):
    """(sin, cos) of joint i's rotation angle at coordinate qi: (sin qi, cos qi) revolute,
    (0, 1) prismatic.  Kernels may compute these first for all joints (they pipeline)."""
    if im[i, 1] == REVOLUTE:
        return sincos(qi)
    return 0.0, 1.0


@njit(cache=True, fastmath=_FMA)
def joint_rotation_row(im, fm, i, r, s, c):
    """Row r of R = tree_R Rot(a, angle) from the angle's (s, c) = :func:`joint_angle`:
    c T + s T K(a) + (1 - c) (T a) a^T (Rodrigues; T = tree_R; s, c = 0, 1 gives T)."""
    j = 3 * r
    t = 1.0 - c
    return (c * fm[i, TR + j] + s * fm[i, TK + j] + t * fm[i, TA + j],
            c * fm[i, TR + j + 1] + s * fm[i, TK + j + 1] + t * fm[i, TA + j + 1],
            c * fm[i, TR + j + 2] + s * fm[i, TK + j + 2] + t * fm[i, TA + j + 2])


@njit(cache=True, fastmath=_FMA)
def _rodrigues(s, c, a0, a1, a2, v0, v1, v2):
    """Rot(a, angle) v = c v + s (a x v) + (1 - c) (a . v) a; pass -s for Rot^T v."""
    d = (1.0 - c) * (a0 * v0 + a1 * v1 + a2 * v2)
    return (c * v0 + s * (a1 * v2 - a2 * v1) + d * a0,
            c * v1 + s * (a2 * v0 - a0 * v2) + d * a1,
            c * v2 + s * (a0 * v1 - a1 * v0) + d * a2)


@njit(cache=True, fastmath=_FMA)
def joint_rotate(im, fm, i, s, c, v0, v1, v2):
    """R v for joint i's rotation R = tree_R Rot(a, angle) at the angle's (s, c) = :func:`joint_angle`,
    without forming R (Rodrigues' formula on v, then tree_R)."""
    x0, x1, x2 = v0, v1, v2
    if im[i, 1] == REVOLUTE:
        x0, x1, x2 = _rodrigues(s, c, fm[i, AX], fm[i, AX + 1], fm[i, AX + 2], v0, v1, v2)
    return (fm[i, TR] * x0 + fm[i, TR + 1] * x1 + fm[i, TR + 2] * x2,
            fm[i, TR + 3] * x0 + fm[i, TR + 4] * x1 + fm[i, TR + 5] * x2,
            fm[i, TR + 6] * x0 + fm[i, TR + 7] * x1 + fm[i, TR + 8] * x2)


@njit(cache=True, fastmath=_FMA)
def joint_rotate_t(im, fm, i, s, c, v0, v1, v2):
    """R^T v (see :func:`joint_rotate`): tree_R^T, then Rodrigues' formula with -s."""
    x0 = fm[i, TR] * v0 + fm[i, TR + 3] * v1 + fm[i, TR + 6] * v2
    x1 = fm[i, TR + 1] * v0 + fm[i, TR + 4] * v1 + fm[i, TR + 7] * v2
    x2 = fm[i, TR + 2] * v0 + fm[i, TR + 5] * v1 + fm[i, TR + 8] * v2
    if im[i, 1] == REVOLUTE:
        return _rodrigues(-s, c, fm[i, AX], fm[i, AX + 1], fm[i, AX + 2], x0, x1, x2)
    return x0, x1, x2


@njit(cache=True, fastmath=_FMA)
def joint_translation(im, fm, i, qi):
    """p, body i's origin in its parent body frame: tree_p, plus qi tree_R a if prismatic."""
    if im[i, 1] == PRISMATIC:
        return fm[i, TP] + qi * fm[i, RA], fm[i, TP + 1] + qi * fm[i, RA + 1], fm[i, TP + 2] + qi * fm[i, RA + 2]
    return fm[i, TP], fm[i, TP + 1], fm[i, TP + 2]


@njit(cache=True, fastmath=_FMA)
def joint_pose(im, fm, i, qi):
    """Body i's frame in its parent body frame at coordinate qi: (R 9-tuple, p 3-tuple) with
    x_parent = R x_body + p.  Revolute: R = tree_R Rot(a, qi), p = tree_p; prismatic:
    R = tree_R, p = tree_p + qi tree_R a.

    Too big for LLVM to inline into a large kernel: a kernel's inner loop calls the
    parts (:func:`joint_angle`, :func:`joint_rotation_row`, :func:`joint_translation`)."""
    s, c = joint_angle(im, i, qi)
    R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
    R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
    R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
    return (R0, R1, R2, R3, R4, R5, R6, R7, R8), joint_translation(im, fm, i, qi)


@njit(cache=True, fastmath=_FMA)
def joint_motion(im, fm, i, x):
    """S x in body i's frame, angular first (x = qd for the velocity, qdd for the acceleration)."""
    a0, a1, a2 = fm[i, AX] * x, fm[i, AX + 1] * x, fm[i, AX + 2] * x
    if im[i, 1] == REVOLUTE:
        return a0, a1, a2, 0.0, 0.0, 0.0
    return 0.0, 0.0, 0.0, a0, a1, a2


@njit(cache=True, fastmath=_FMA)
def joint_force(im, fm, i, n0, n1, n2, f0, f1, f2):
    """S^T (n, f): the joint's generalised force from a body-frame spatial force (moment first)."""
    if im[i, 1] == REVOLUTE:
        return fm[i, AX] * n0 + fm[i, AX + 1] * n1 + fm[i, AX + 2] * n2
    return fm[i, AX] * f0 + fm[i, AX + 1] * f1 + fm[i, AX + 2] * f2


@njit(cache=True, fastmath=_FMA)
def joint_bias(im, fm, i, w0, w1, w2, u0, u1, u2, x):
    """v x (S x): the velocity-product acceleration of body i moving at v = (w, u) (its own
    velocity, joint motion included) with joint rate x, body frame."""
    s0, s1, s2 = fm[i, AX] * x, fm[i, AX + 1] * x, fm[i, AX + 2] * x
    c0, c1, c2 = cross(w0, w1, w2, s0, s1, s2)
    if im[i, 1] == REVOLUTE:  # (w, u) x (s, 0) = (w x s, u x s)
        d0, d1, d2 = cross(u0, u1, u2, s0, s1, s2)
        return c0, c1, c2, d0, d1, d2
    return 0.0, 0.0, 0.0, c0, c1, c2  # (w, u) x (0, s) = (0, w x s)


@njit(cache=True, fastmath=_FMA)
def joint_motion_at(im, i, a0, a1, a2, d0, d1, d2):
    """S of joint i in world axes about a point O, angular first, from the joint's unit world
    axis a and O measured from the joint's origin, d: (a, a x d) revolute, (0, a) prismatic.
    The linear half is the velocity of the body's point at O per unit joint rate."""
    if im[i, 1] == REVOLUTE:
        c0, c1, c2 = cross(a0, a1, a2, d0, d1, d2)
        return a0, a1, a2, c0, c1, c2
    return 0.0, 0.0, 0.0, a0, a1, a2


@njit(cache=True, fastmath=_FMA)
def joint_point_step(im, i, a0, a1, a2, x, xd, w0, w1, w2, d0, d1, d2, c0, c1, c2):
    """Joint i's step of the classical point recursion, world axes: its body's angular velocity
    w, angular acceleration d and origin acceleration c (9 floats) from the parent body's w, d
    and the parent's c carried rigidly to the body origin, which lies on the joint axis; a the
    unit world axis, x and xd the joint rate and acceleration.  Revolute: w + a x,
    d + w x a x + a xd, c; prismatic: w, d, c + 2 w x a x + a xd."""
    h0, h1, h2 = cross(w0, w1, w2, a0 * x, a1 * x, a2 * x)
    if im[i, 1] == REVOLUTE:
        return (w0 + a0 * x, w1 + a1 * x, w2 + a2 * x, d0 + h0 + a0 * xd, d1 + h1 + a1 * xd, d2 + h2 + a2 * xd,
                c0, c1, c2)
    return w0, w1, w2, d0, d1, d2, c0 + 2.0 * h0 + a0 * xd, c1 + 2.0 * h1 + a1 * xd, c2 + 2.0 * h2 + a2 * xd


@njit(cache=True, fastmath=_FMA)
def joint_motion_world(im, fm, i, R, p0, p1, p2):
    """S of body i in world axes about the world point O, for the body's world pose (R, p)
    (p from O): (a, p x a) revolute, (0, a) prismatic with a = R axis (:func:`joint_motion_at`
    with d = -p)."""
    a0, a1, a2 = rot(R, fm[i, AX], fm[i, AX + 1], fm[i, AX + 2])
    if im[i, 1] == REVOLUTE:
        c0, c1, c2 = cross(p0, p1, p2, a0, a1, a2)
        return a0, a1, a2, c0, c1, c2
    return 0.0, 0.0, 0.0, a0, a1, a2


@njit(cache=True, fastmath=False)
def joint_friction(fm, i, x, smooth):
    """Friction torque (or force) of joint i at rate x: damping x + friction sgn(x), or with
    smooth > 0 the tanh model damping x + friction tanh(x / smooth)."""
    if smooth > 0.0:
        sgn = math.tanh(x / smooth)
    else:
        sgn = 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
    return fm[i, DAMP] * x + fm[i, FRIC] * sgn
