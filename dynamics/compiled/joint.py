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
from composedyn.dynamics.compiled.layout import (
    AX,
    AX2,
    DAMP,
    FORM,
    FRIC,
    IQ,
    IV,
    JTYPE,
    NV,
    PITCH,
    RA,
    TA,
    TK,
    TP,
    TR,
)
from composedyn.dynamics.compiled.sincos import sincos
from composedyn.dynamics.joint_types import (
    FREE_FLYER,
    HELICAL,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    TreeForm,
)

_FMA = {"contract"}  # fused multiply-add only (module docstring)
_SCALAR_FORM, _FREE_ROOT_FORM = int(TreeForm.SCALAR), int(TreeForm.FREE_ROOT)


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


# ---- every joint kind: joints with their own configuration and velocity sizes ----
# Body i's joint reads its nq coordinates q[im[i, IQ]:] and its nv rates x[im[i, IV]:]; its motion
# subspace has nv columns (angular first, body frame).  Pinocchio's conventions (the array-API joint
# model, :mod:`composedyn.dynamics.array_api.joints`, has the table): a helical joint turns about its
# axis and slides PITCH per radian along it, S = (a, PITCH a); a universal joint turns about AX by q0,
# then about AX2 by q1, S = ((Rot(AX2, q1)^T AX, 0), (AX2, 0)); a spherical joint's q is a quaternion
# (x, y, z, w) and its rates the angular velocity in the child frame; a planar joint's q is (x, y,
# cos, sin) in the joint frame's xy plane and its rates (vx, vy, wz), child frame; a free flyer's q is
# the position and a quaternion, its rates (linear, angular), child frame.  Quaternions and (cos,
# sin) pairs are divided by their norms; a zero one gives NaN.


@njit(cache=True, fastmath=_FMA)
def _quat_rows(q, k):
    """Rotation (9-tuple, row-major) of the quaternion q[k:k + 4] = (x, y, z, w), normalised; NaN if 0."""
    return quaternion_rows(q[k], q[k + 1], q[k + 2], q[k + 3])


@njit(cache=True, fastmath=_FMA)
def quaternion_rows(x, y, z, w):
    """Rotation (9-tuple, row-major) of the quaternion (x, y, z, w), normalised; NaN if 0."""
    m = max(abs(x), abs(y), abs(z), abs(w))
    if not m > 0.0:
        m = math.nan
    x, y, z, w = x / m, y / m, z / m, w / m
    s = x * x + y * y + z * z + w * w
    s = 2.0 / s  # R = 1 + s (w [v] + [v]^2) for the unnormalised quaternion
    return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y))


@njit(cache=True, fastmath=_FMA)
def _planar_cs(q, k):
    """(cos, sin) of a planar joint's angle from q[k + 2], q[k + 3], normalised; NaN if both are 0."""
    c, s = q[k + 2], q[k + 3]
    r = math.hypot(c, s)
    if not r > 0.0:
        r = math.nan
    return c / r, s / r


@njit(cache=True, fastmath=_FMA)
def _universal_first(fm, i, q1):
    """A universal joint's first axis in the child frame, Rot(AX2, q1)^T AX."""
    s, c = sincos(q1)
    return _rodrigues(-s, c, fm[i, AX2], fm[i, AX2 + 1], fm[i, AX2 + 2], fm[i, AX], fm[i, AX + 1], fm[i, AX + 2])


@njit(cache=True, fastmath=_FMA)
def _joint_rotation(im, fm, i, q):
    """R_J (9-tuple) of a joint with more than one coordinate: the child frame in the joint frame."""
    t, k = im[i, JTYPE], im[i, IQ]
    if t == UNIVERSAL:
        s, c = sincos(q[k])
        a0, a1, a2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
        b0, b1, b2 = fm[i, AX2], fm[i, AX2 + 1], fm[i, AX2 + 2]
        s2, c2 = sincos(q[k + 1])
        # Rot(a, q0) Rot(b, q1), column by column: Rot(a, q0) (Rot(b, q1) e_j)
        x0, x1, x2 = _rodrigues(s2, c2, b0, b1, b2, 1.0, 0.0, 0.0)
        y0, y1, y2 = _rodrigues(s2, c2, b0, b1, b2, 0.0, 1.0, 0.0)
        z0, z1, z2 = _rodrigues(s2, c2, b0, b1, b2, 0.0, 0.0, 1.0)
        x0, x1, x2 = _rodrigues(s, c, a0, a1, a2, x0, x1, x2)
        y0, y1, y2 = _rodrigues(s, c, a0, a1, a2, y0, y1, y2)
        z0, z1, z2 = _rodrigues(s, c, a0, a1, a2, z0, z1, z2)
        return x0, y0, z0, x1, y1, z1, x2, y2, z2
    if t == SPHERICAL:
        return _quat_rows(q, k)
    if t == FREE_FLYER:
        return _quat_rows(q, k + 3)
    c, s = _planar_cs(q, k)  # PLANAR
    return c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0


@njit(cache=True, fastmath=_FMA)
def _turned(im, fm, i, q, R):
    """R R_J (both 9-tuples) for a joint with more than one coordinate."""
    J = _joint_rotation(im, fm, i, q)
    out = (R[0] * J[0] + R[1] * J[3] + R[2] * J[6], R[0] * J[1] + R[1] * J[4] + R[2] * J[7],
           R[0] * J[2] + R[1] * J[5] + R[2] * J[8],
           R[3] * J[0] + R[4] * J[3] + R[5] * J[6], R[3] * J[1] + R[4] * J[4] + R[5] * J[7],
           R[3] * J[2] + R[4] * J[5] + R[5] * J[8],
           R[6] * J[0] + R[7] * J[3] + R[8] * J[6], R[6] * J[1] + R[7] * J[4] + R[8] * J[7],
           R[6] * J[2] + R[7] * J[5] + R[8] * J[8])
    return out


MIN_NORM = 1e-12  # a quaternion or (cos, sin) pair shorter than this is refused (no orientation)


@njit(cache=True, fastmath=_FMA)
def joint_readable(im, i, q):
    """False when body i's joint has no orientation: a quaternion or planar (cos, sin) pair of norm
    below :data:`MIN_NORM` (the kernels' callers refuse the sample; other norms are divided out)."""
    t, k = im[i, JTYPE], im[i, IQ]
    if t == SPHERICAL or t == FREE_FLYER:
        k = k + 3 if t == FREE_FLYER else k
        return quaternion_readable(q[k], q[k + 1], q[k + 2], q[k + 3])
    if t == PLANAR:
        return math.hypot(q[k + 2], q[k + 3]) >= MIN_NORM
    return True


@njit(cache=True, fastmath=_FMA)
def quaternion_readable(x, y, z, w):
    """False when the quaternion (x, y, z, w) is shorter than :data:`MIN_NORM` (no orientation)."""
    m = max(abs(x), abs(y), abs(z), abs(w))
    if not m > 0.0:
        return False
    x, y, z, w = x / m, y / m, z / m, w / m
    return m * math.sqrt(x * x + y * y + z * z + w * w) >= MIN_NORM


@njit(cache=True, inline="always")
def configuration_readable(im, q):
    """:func:`joint_readable` for every joint of the tree (a free flyer at the root: its quaternion)."""
    if free_root(im):
        return quaternion_readable(q[3], q[4], q[5], q[6])
    for i in range(im.shape[0]):
        if not joint_readable(im, i, q):
            return False
    return True


@njit(cache=True, fastmath=_FMA)
def joint_sincos(im, i, q):
    """(sin, cos) of body i's joint angle for :func:`joint_rotation_row`: revolute and helical joints
    (sin q, cos q), every other kind (0, 1) (:func:`joint_turn` adds their rotation)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == HELICAL:
        return sincos(q[im[i, IQ]])
    return 0.0, 1.0


@njit(cache=True, fastmath=_FMA)
def joint_turn(im, fm, i, q, R):
    """Body i's rotation in its parent body frame from R = the rows of :func:`joint_rotation_row` at
    :func:`joint_sincos`: R itself for one-coordinate joints, R R_J(q) for the others."""
    if im[i, NV] == 1:
        return R
    return _turned(im, fm, i, q, R)


@njit(cache=True, inline="always")
def scalar_joints(im):
    """True when every joint of the packed model is revolute or prismatic (the kernels' scalar joint
    model, body i's coordinate q[i]: :data:`.layout.FORM`, set by the packer)."""
    return im.shape[0] == 0 or im[0, FORM] == _SCALAR_FORM


@njit(cache=True, inline="always")
def free_root(im):
    """True when body 0's joint is a free flyer and every other joint revolute or prismatic (a
    floating robot: :class:`composedyn.dynamics.joint_types.TreeForm`).  Kernels compiled for
    this form take body 0 through the ``free_root_*`` functions below, straight-line code that
    numba inlines, and the other bodies through the scalar joint model at their offsets IQ, IV."""
    return im.shape[0] > 0 and im[0, FORM] == _FREE_ROOT_FORM


@njit(cache=True, inline="always")
def joint_chained_columns(im, i):
    """True when body i's joint moves as its columns one after the other about one origin, a chain of
    one-coordinate joints with massless bodies between (a universal joint: Rot(AX, q0) then Rot(AX2, q1);
    its first column turns with q1 in the child frame).  The other joints' subspaces are constant in the
    child frame.  The derivative kernels' general form reads it (:mod:`.derivatives`)."""
    return im[i, JTYPE] == UNIVERSAL


@njit(cache=True, inline="always")
def joint_scalar(im, i):
    """True when body i's joint is revolute or prismatic (the scalar joint model's parts take it)."""
    t = im[i, JTYPE]
    return t == REVOLUTE or t == PRISMATIC


@njit(cache=True, fastmath=_FMA)
def joint_placement(im, fm, i, q):
    """Body i's pose in its parent body frame, (R 9-tuple, p 3-tuple), for a joint of any kind (kernels
    take revolute and prismatic joints through the inlined parts: :func:`joint_angle`,
    :func:`joint_rotation_row`, :func:`joint_translation`)."""
    s, c = joint_sincos(im, i, q)
    R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
    R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
    R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
    return joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8)), joint_offset(im, fm, i, q)


@njit(cache=True, fastmath=_FMA)
def joint_offset(im, fm, i, q):
    """p, body i's origin in its parent body frame: tree_p, plus tree_R times the joint's translation
    (q a prismatic, PITCH q a helical, (x, y, 0) planar, the position of a free flyer)."""
    t, k = im[i, JTYPE], im[i, IQ]
    if t == PRISMATIC or t == HELICAL:
        d = q[k] if t == PRISMATIC else fm[i, PITCH] * q[k]
        return fm[i, TP] + d * fm[i, RA], fm[i, TP + 1] + d * fm[i, RA + 1], fm[i, TP + 2] + d * fm[i, RA + 2]
    if t == PLANAR or t == FREE_FLYER:
        z = q[k + 2] if t == FREE_FLYER else 0.0
        x0, x1, x2 = rot((fm[i, TR], fm[i, TR + 1], fm[i, TR + 2], fm[i, TR + 3], fm[i, TR + 4], fm[i, TR + 5],
                          fm[i, TR + 6], fm[i, TR + 7], fm[i, TR + 8]), q[k], q[k + 1], z)
        return fm[i, TP] + x0, fm[i, TP + 1] + x1, fm[i, TP + 2] + x2
    return fm[i, TP], fm[i, TP + 1], fm[i, TP + 2]


@njit(cache=True, fastmath=_FMA)
def joint_column(im, fm, i, q, c):
    """Column c of body i's motion subspace S (6-tuple, angular first, body frame)."""
    t = im[i, JTYPE]
    if t == REVOLUTE:
        return fm[i, AX], fm[i, AX + 1], fm[i, AX + 2], 0.0, 0.0, 0.0
    if t == PRISMATIC:
        return 0.0, 0.0, 0.0, fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
    if t == HELICAL:
        h = fm[i, PITCH]
        return fm[i, AX], fm[i, AX + 1], fm[i, AX + 2], h * fm[i, AX], h * fm[i, AX + 1], h * fm[i, AX + 2]
    if t == UNIVERSAL:
        if c == 0:
            a0, a1, a2 = _universal_first(fm, i, q[im[i, IQ] + 1])
            return a0, a1, a2, 0.0, 0.0, 0.0
        return fm[i, AX2], fm[i, AX2 + 1], fm[i, AX2 + 2], 0.0, 0.0, 0.0
    if t == PLANAR:  # rates (vx, vy, wz)
        c = c + 3 if c < 2 else 2
    elif t == FREE_FLYER:  # rates (linear, angular)
        c = c + 3 if c < 3 else c - 3
    return (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0,
            1.0 if c == 3 else 0.0, 1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)


@njit(cache=True, fastmath=_FMA)
def joint_velocity(im, fm, i, q, x):
    """S x_i in body i's frame (6-tuple, angular first), x_i = x[IV:IV + NV] (x: v, or an acceleration)."""
    t, k = im[i, JTYPE], im[i, IV]
    if t == REVOLUTE or t == PRISMATIC or t == HELICAL:
        return joint_motion_of(im, fm, i, x[k])
    if t == UNIVERSAL:
        a0, a1, a2 = _universal_first(fm, i, q[im[i, IQ] + 1])
        x0, x1 = x[k], x[k + 1]
        return a0 * x0 + fm[i, AX2] * x1, a1 * x0 + fm[i, AX2 + 1] * x1, a2 * x0 + fm[i, AX2 + 2] * x1, 0.0, 0.0, 0.0
    if t == SPHERICAL:
        return x[k], x[k + 1], x[k + 2], 0.0, 0.0, 0.0
    if t == PLANAR:
        return 0.0, 0.0, x[k + 2], x[k], x[k + 1], 0.0
    return x[k + 3], x[k + 4], x[k + 5], x[k], x[k + 1], x[k + 2]  # FREE_FLYER


@njit(cache=True, fastmath=_FMA)
def joint_motion_of(im, fm, i, x):
    """S x for a joint with one coordinate at rate x (revolute, prismatic, helical), body frame."""
    a0, a1, a2 = fm[i, AX] * x, fm[i, AX + 1] * x, fm[i, AX + 2] * x
    t = im[i, JTYPE]
    if t == REVOLUTE:
        return a0, a1, a2, 0.0, 0.0, 0.0
    if t == PRISMATIC:
        return 0.0, 0.0, 0.0, a0, a1, a2
    h = fm[i, PITCH]
    return a0, a1, a2, h * a0, h * a1, h * a2


@njit(cache=True, fastmath=_FMA)
def joint_velocity_product(im, fm, i, q, w0, w1, w2, u0, u1, u2, x):
    """v x (S x_i) + S' x_i: the velocity-product acceleration of body i moving at v = (w, u) (its own
    velocity, joint motion included) with joint rates x_i = x[IV:IV + NV], body frame (S' x_i: the
    change of S with the joint's own coordinates, non-zero for a universal joint only)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_bias(im, fm, i, w0, w1, w2, u0, u1, u2, x[im[i, IV]])
    s0, s1, s2, s3, s4, s5 = joint_velocity(im, fm, i, q, x)
    b0, b1, b2, b3, b4, b5 = motion_cross(w0, w1, w2, u0, u1, u2, s0, s1, s2, s3, s4, s5)
    if t == UNIVERSAL:  # d(Rot(AX2, q1)^T AX)/dt x0 = (a1' x AX2) x0 x1
        a0, a1, a2 = _universal_first(fm, i, q[im[i, IQ] + 1])
        k = im[i, IV]
        r = x[k] * x[k + 1]
        c0, c1, c2 = cross(a0, a1, a2, fm[i, AX2], fm[i, AX2 + 1], fm[i, AX2 + 2])
        b0, b1, b2 = b0 + c0 * r, b1 + c1 * r, b2 + c2 * r
    return b0, b1, b2, b3, b4, b5


@njit(cache=True, fastmath=_FMA)
def joint_component(im, fm, i, q, c, n0, n1, n2, f0, f1, f2):
    """Component c of S^T (n, f): body i's joint's generalised force from a body-frame spatial force."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_force(im, fm, i, n0, n1, n2, f0, f1, f2)
    s0, s1, s2, s3, s4, s5 = joint_column(im, fm, i, q, c)
    return s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2


@njit(cache=True, fastmath=_FMA)
def joint_world_column(im, fm, i, q, c, R, p0, p1, p2):
    """Column c of S in world axes about the world point O, for body i's world pose (R, p) (p from
    O): (R s, R t + p x R s) for the body-frame column (s, t)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_motion_world(im, fm, i, R, p0, p1, p2)
    s0, s1, s2, t0, t1, t2 = joint_column(im, fm, i, q, c)
    a0, a1, a2 = rot(R, s0, s1, s2)
    b0, b1, b2 = rot(R, t0, t1, t2)
    d0, d1, d2 = cross(p0, p1, p2, a0, a1, a2)
    return a0, a1, a2, b0 + d0, b1 + d1, b2 + d2


# ---- a free flyer at the root (kernels compiled for :func:`free_root`; body 0, q[0:7], v[0:6]) ----


@njit(cache=True, inline="always")
def free_root_placement(fm, q):
    """Body 0's pose in the world frame, (R 9-tuple, p 3-tuple): tree_R R(quaternion q[3:7]) and
    tree_p + tree_R q[0:3] (as :func:`joint_placement` of a free flyer)."""
    J = quaternion_rows(q[3], q[4], q[5], q[6])
    T = (fm[0, TR], fm[0, TR + 1], fm[0, TR + 2], fm[0, TR + 3], fm[0, TR + 4], fm[0, TR + 5],
         fm[0, TR + 6], fm[0, TR + 7], fm[0, TR + 8])
    x0, x1, x2 = rot(T, q[0], q[1], q[2])
    R = (T[0] * J[0] + T[1] * J[3] + T[2] * J[6], T[0] * J[1] + T[1] * J[4] + T[2] * J[7],
         T[0] * J[2] + T[1] * J[5] + T[2] * J[8],
         T[3] * J[0] + T[4] * J[3] + T[5] * J[6], T[3] * J[1] + T[4] * J[4] + T[5] * J[7],
         T[3] * J[2] + T[4] * J[5] + T[5] * J[8],
         T[6] * J[0] + T[7] * J[3] + T[8] * J[6], T[6] * J[1] + T[7] * J[4] + T[8] * J[7],
         T[6] * J[2] + T[7] * J[5] + T[8] * J[8])
    return R, (fm[0, TP] + x0, fm[0, TP + 1] + x1, fm[0, TP + 2] + x2)


@njit(cache=True, inline="always")
def free_root_velocity(x):
    """S x_0 of the root's free flyer, angular first: its rates x[0:6] are (linear, angular)."""
    return x[3], x[4], x[5], x[0], x[1], x[2]


@njit(cache=True, inline="always")
def free_root_force(n0, n1, n2, f0, f1, f2):
    """S^T (n, f) of the root's free flyer: its six generalised forces (f, n), linear first."""
    return f0, f1, f2, n0, n1, n2


@njit(cache=True, inline="always")
def free_root_world_column(c, R, p0, p1, p2):
    """Column c of the root free flyer's S in world axes about the world point O, body 0 at world
    pose (R, p) (p from O): (0, R e_c) for c < 3, (R e_j, p x R e_j) for c = 3 + j."""
    if c < 3:
        return 0.0, 0.0, 0.0, R[c], R[3 + c], R[6 + c]
    a0, a1, a2 = R[c - 3], R[c], R[c + 3]
    d0, d1, d2 = cross(p0, p1, p2, a0, a1, a2)
    return a0, a1, a2, d0, d1, d2


# ---- a rigid root: a free flyer, planar or spherical joint at the root (the derivative kernels) ----
# Their motion subspaces are constant in the child frame and each column is one of the free flyer's, so
# the free flyer's world columns serve all three through :func:`rigid_root_column`.


@njit(cache=True, inline="always")
def rigid_root(im):
    """True when body 0's joint is a free flyer, a planar or a spherical joint and every other joint
    revolute or prismatic (at q[IQ], v[IV]): the derivative kernels' root form."""
    if free_root(im):
        return True
    n = im.shape[0]
    if n == 0 or (im[0, JTYPE] != PLANAR and im[0, JTYPE] != SPHERICAL):
        return False
    for i in range(1, n):
        if not joint_scalar(im, i):
            return False
    return True


@njit(cache=True, inline="always")
def rigid_root_column(im, c):
    """The free flyer's column (linear 0:3, angular 3:6, as :func:`free_root_world_column`) that
    column c of body 0's joint is: planar (vx, vy, wz) -> 0, 1, 5; spherical (w) -> 3, 4, 5."""
    t = im[0, JTYPE]
    if t == PLANAR:
        return 5 if c == 2 else c
    if t == SPHERICAL:
        return c + 3
    return c


@njit(cache=True, inline="always")
def rigid_root_rates(im, x):
    """Body 0's rates x[0:NV] as the free flyer's six (linear, angular; :func:`rigid_root_column`)."""
    y0 = y1 = y2 = y3 = y4 = y5 = 0.0
    for c in range(im[0, NV]):
        k = rigid_root_column(im, c)
        if k == 0:
            y0 = x[c]
        elif k == 1:
            y1 = x[c]
        elif k == 2:
            y2 = x[c]
        elif k == 3:
            y3 = x[c]
        elif k == 4:
            y4 = x[c]
        else:
            y5 = x[c]
    return y0, y1, y2, y3, y4, y5


@njit(cache=True, fastmath=_FMA)
def rigid_root_placement(im, fm, q):
    """Body 0's world pose (R 9-tuple, p 3-tuple) for :func:`rigid_root`.  Not inlined: numba's
    parallel array analysis fails on a branch merging an inlined call's tuples (batch loops)."""
    if free_root(im):
        return free_root_placement(fm, q)
    return joint_placement(im, fm, 0, q)


# ---- frames, gravity torques, centre of mass (compiled/frames.py, gravity.py, com.py) ----
# A one-coordinate joint (revolute, prismatic, helical) is described in world axes by its unit world axis
# a alone; the others by their body's world rotation R (9-tuple, row-major).


@njit(cache=True, fastmath=_FMA)
def joint_axis_column_at(im, fm, i, a0, a1, a2, d0, d1, d2):
    """S of a one-coordinate joint i in world axes about the point O at d from the joint's origin, angular
    first, from its unit world axis a: :func:`joint_motion_at` for revolute and prismatic joints,
    (a, PITCH a + a x d) helical."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_motion_at(im, i, a0, a1, a2, d0, d1, d2)
    h = fm[i, PITCH]
    c0, c1, c2 = cross(a0, a1, a2, d0, d1, d2)
    return a0, a1, a2, h * a0 + c0, h * a1 + c1, h * a2 + c2


@njit(cache=True, fastmath=_FMA)
def joint_axis_point_step(im, fm, i, a0, a1, a2, x, xd, w0, w1, w2, d0, d1, d2, c0, c1, c2):
    """:func:`joint_point_step` for a one-coordinate joint of any kind: revolute and prismatic joints as
    there; helical w + a x, d + w x a x + a xd, c + 2 w x (PITCH a x) + PITCH a xd."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_point_step(im, i, a0, a1, a2, x, xd, w0, w1, w2, d0, d1, d2, c0, c1, c2)
    h = fm[i, PITCH]
    e0, e1, e2 = cross(w0, w1, w2, a0 * x, a1 * x, a2 * x)
    return (w0 + a0 * x, w1 + a1 * x, w2 + a2 * x, d0 + e0 + a0 * xd, d1 + e1 + a1 * xd, d2 + e2 + a2 * xd,
            c0 + h * (2.0 * e0 + a0 * xd), c1 + h * (2.0 * e1 + a1 * xd), c2 + h * (2.0 * e2 + a2 * xd))


@njit(cache=True, fastmath=_FMA)
def _joint_matrix(im, fm, i, q, s, c):
    """Body i's rotation in its parent body frame (9-tuple, row-major), (s, c) = :func:`joint_sincos`."""
    R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
    R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
    R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
    return joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8))


@njit(cache=True, fastmath=_FMA)
def joint_rotate_of(im, fm, i, q, s, c, v0, v1, v2):
    """R v for body i's rotation R in its parent body frame, joints of every kind; (s, c) =
    :func:`joint_sincos`.  Revolute and prismatic joints: :func:`joint_rotate` (R never formed)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_rotate(im, fm, i, s, c, v0, v1, v2)
    return rot(_joint_matrix(im, fm, i, q, s, c), v0, v1, v2)


@njit(cache=True, fastmath=_FMA)
def joint_rotate_t_of(im, fm, i, q, s, c, v0, v1, v2):
    """R^T v (see :func:`joint_rotate_of`); revolute and prismatic joints: :func:`joint_rotate_t`."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_rotate_t(im, fm, i, s, c, v0, v1, v2)
    return rot_t(_joint_matrix(im, fm, i, q, s, c), v0, v1, v2)


# ---- the regressor and the Coriolis matrix (compiled/regressor.py, compiled/coriolis.py) ----


@njit(cache=True, fastmath=_FMA)
def motion_dot(s0, s1, s2, s3, s4, s5, n0, n1, n2, f0, f1, f2):
    """s . (n, f): a motion (angular first) times a force (moment first), e.g. a column of S (from
    :func:`joint_column`, taken once per coordinate) times a spatial force: that coordinate's
    generalised force (for a one-coordinate joint the same number as :func:`joint_force`)."""
    return s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2


# The general functions above are too large for LLVM to inline into a large kernel (a call per use,
# each passing several arrays).  A kernel that calls them per body may branch on the coordinate count
# (``im[i, NV] == 1``) to these, the one-coordinate kinds' (revolute, prismatic, helical) numbers in
# functions small enough to inline: :func:`joint_motion_of` (S x, and the column of S at x = 1),
# :func:`joint_offset_of`, :func:`joint_velocity_product_of`; a one-coordinate joint's rotation is
# the rows of :func:`joint_rotation_row` itself.


@njit(cache=True, fastmath=_FMA)
def joint_offset_of(im, fm, i, x):
    """p of a one-coordinate joint at coordinate x: tree_p, plus x tree_R a (prismatic) or PITCH x tree_R a
    (helical) (:func:`joint_offset`'s numbers)."""
    t = im[i, JTYPE]
    if t == PRISMATIC or t == HELICAL:
        d = x if t == PRISMATIC else fm[i, PITCH] * x
        return fm[i, TP] + d * fm[i, RA], fm[i, TP + 1] + d * fm[i, RA + 1], fm[i, TP + 2] + d * fm[i, RA + 2]
    return fm[i, TP], fm[i, TP + 1], fm[i, TP + 2]


@njit(cache=True, fastmath=_FMA)
def joint_velocity_product_of(im, fm, i, w0, w1, w2, u0, u1, u2, x):
    """:func:`joint_velocity_product` of a one-coordinate joint at rate x (S' = 0)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_bias(im, fm, i, w0, w1, w2, u0, u1, u2, x)
    s0, s1, s2, s3, s4, s5 = joint_motion_of(im, fm, i, x)
    return motion_cross(w0, w1, w2, u0, u1, u2, s0, s1, s2, s3, s4, s5)


@njit(cache=True, fastmath=_FMA)
def joint_world_column_of(im, fm, i, R, p0, p1, p2):
    """:func:`joint_world_column` of a one-coordinate joint: S in world axes about the world point O for
    body i's world pose (R, p)."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_motion_world(im, fm, i, R, p0, p1, p2)
    s0, s1, s2, t0, t1, t2 = joint_motion_of(im, fm, i, 1.0)
    a0, a1, a2 = rot(R, s0, s1, s2)
    b0, b1, b2 = rot(R, t0, t1, t2)
    d0, d1, d2 = cross(p0, p1, p2, a0, a1, a2)
    return a0, a1, a2, b0 + d0, b1 + d1, b2 + d2


@njit(cache=True, fastmath=_FMA)
def joint_world_column_rate(im, fm, i, q, c, R, p0, p1, p2, x):
    """The rate of column c of body i's S from the joint's own coordinates at rates x_i = x[IV:IV + NV]
    (dS/dt in the child frame, (ds, dt)), in world axes about O for the body's world pose (R, p):
    (R ds, R dt + p x R ds).  Zero but for a universal joint's first column, whose child-frame axis
    Rot(AX2, q1)^T AX turns with q1: ds = (Rot(AX2, q1)^T AX x AX2) x1."""
    if im[i, JTYPE] != UNIVERSAL or c != 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    a0, a1, a2 = _universal_first(fm, i, q[im[i, IQ] + 1])
    r = x[im[i, IV] + 1]
    e0, e1, e2 = cross(a0, a1, a2, fm[i, AX2], fm[i, AX2 + 1], fm[i, AX2 + 2])
    b0, b1, b2 = rot(R, e0 * r, e1 * r, e2 * r)
    d0, d1, d2 = cross(p0, p1, p2, b0, b1, b2)
    return b0, b1, b2, d0, d1, d2


# ---- forward dynamics (aba.py): joints with one coordinate, scalar forms small enough to inline ----
# The articulated-body kernel runs its one-coordinate joints (revolute, prismatic, helical) through
# these and :func:`joint_offset_of`, :func:`joint_velocity_product_of` above, at the rate or
# coordinate itself rather than an array and an offset: the general functions, with every kind's
# case, are too big for LLVM to inline into it.  Revolute and prismatic joints get exactly the
# arithmetic of :func:`joint_angle`, :func:`joint_translation`, :func:`joint_force` and
# :func:`joint_bias`.


@njit(cache=True, fastmath=_FMA)
def joint_angle_of(im, i, qi):
    """(sin, cos) of a one-coordinate joint's rotation angle at qi: revolute and helical
    (sin qi, cos qi), prismatic (0, 1)."""
    if im[i, JTYPE] == PRISMATIC:
        return 0.0, 1.0
    return sincos(qi)


@njit(cache=True, fastmath=_FMA)
def joint_force_of(im, fm, i, n0, n1, n2, f0, f1, f2):
    """S^T (n, f) of a one-coordinate joint: a . n revolute, a . f prismatic, a . n + PITCH a . f
    helical."""
    t = im[i, JTYPE]
    if t == REVOLUTE or t == PRISMATIC:
        return joint_force(im, fm, i, n0, n1, n2, f0, f1, f2)
    a0, a1, a2 = fm[i, AX], fm[i, AX + 1], fm[i, AX + 2]
    return a0 * n0 + a1 * n1 + a2 * n2 + fm[i, PITCH] * (a0 * f0 + a1 * f1 + a2 * f2)


# ---- forward dynamics (aba.py): a free flyer at the root ----
# Its S is the identity up to order: rate e (linear first) moves the spatial component
# free_root_axis(e) (angular first), so the root's D = S^T IA S is IA reordered.


@njit(cache=True, inline="always")
def free_root_axis(e):
    """The spatial component (angular first, 0..5) that the root free flyer's rate e (linear first,
    0..5) moves: column e of its S is that unit vector."""
    return e + 3 if e < 3 else e - 3
