"""The compiled joint model: every kernel's one source of joint kinematics.

A body's joint is described by its row of the packed model (``im``, ``fm``,
see :mod:`.layout`): type ``im[i, 1]``, tree transform (``tree_R``,
``tree_p``: parent body frame -> joint frame at q = 0) and unit axis ``a`` in
the joint frame.  The helpers below give, for one joint and one coordinate,

* :func:`joint_pose` -- the body frame in the parent body frame, (R, p) with
  x_parent = R x_body + p, R as a row-major 9-tuple;
* :func:`joint_motion` -- S qd, the joint's spatial velocity in the body frame
  (w, u), angular first (S = (a, 0) revolute, (0, a) prismatic);
* :func:`joint_force` -- S^T f, the generalised force of a body-frame spatial
  force (n, f);

plus the small 3-vector helpers the kernels share (:func:`cross`, :func:`rot`,
:func:`rot_t`).  Everything works on scalars and tuples so that LLVM inlines
it into the calling kernel (no arrays created, no reference counting).  A new
joint type is added here (and in :mod:`composedyn.dynamics.model`), not in the
kernels.
"""

from __future__ import annotations

import math

from numba import njit

from composedyn.dynamics.compiled.layout import AX, RA, TA, TK, TP, TR

REVOLUTE, PRISMATIC = 0, 1


@njit(cache=True)
def cross(a0, a1, a2, b0, b1, b2):
    """a x b."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def rot(R, x0, x1, x2):
    """R x (R a row-major 9-tuple)."""
    return (R[0] * x0 + R[1] * x1 + R[2] * x2,
            R[3] * x0 + R[4] * x1 + R[5] * x2,
            R[6] * x0 + R[7] * x1 + R[8] * x2)


@njit(cache=True)
def rot_t(R, x0, x1, x2):
    """R^T x."""
    return (R[0] * x0 + R[3] * x1 + R[6] * x2,
            R[1] * x0 + R[4] * x1 + R[7] * x2,
            R[2] * x0 + R[5] * x1 + R[8] * x2)


@njit(cache=True)
def _rotation_row(fm, i, r, c, s, t):
    """Row r of R = c T + s T K(a) + t (T a) a^T (Rodrigues, t = 1 - c; c, s, t = 1, 0, 0: R = T)."""
    j = 3 * r
    return (c * fm[i, TR + j] + s * fm[i, TK + j] + t * fm[i, TA + j],
            c * fm[i, TR + j + 1] + s * fm[i, TK + j + 1] + t * fm[i, TA + j + 1],
            c * fm[i, TR + j + 2] + s * fm[i, TK + j + 2] + t * fm[i, TA + j + 2])


@njit(cache=True)
def joint_pose(im, fm, i, qi):
    """Body i's frame in its parent body frame at coordinate qi: (R 9-tuple, p 3-tuple).

    Revolute: R = tree_R Rot(a, qi), p = tree_p; prismatic: R = tree_R,
    p = tree_p + qi tree_R a.
    """
    if im[i, 1] == REVOLUTE:
        s, c = math.sin(qi), math.cos(qi)
        t = 1.0 - c
    else:
        c, s, t = 1.0, 0.0, 0.0
    R0, R1, R2 = _rotation_row(fm, i, 0, c, s, t)
    R3, R4, R5 = _rotation_row(fm, i, 1, c, s, t)
    R6, R7, R8 = _rotation_row(fm, i, 2, c, s, t)
    p0, p1, p2 = fm[i, TP], fm[i, TP + 1], fm[i, TP + 2]
    if im[i, 1] == PRISMATIC:
        p0, p1, p2 = p0 + qi * fm[i, RA], p1 + qi * fm[i, RA + 1], p2 + qi * fm[i, RA + 2]
    return (R0, R1, R2, R3, R4, R5, R6, R7, R8), (p0, p1, p2)


@njit(cache=True)
def joint_motion(im, fm, i, x):
    """S x in body i's frame, angular first (x = qd for the velocity, qdd for the acceleration)."""
    a0, a1, a2 = fm[i, AX] * x, fm[i, AX + 1] * x, fm[i, AX + 2] * x
    if im[i, 1] == REVOLUTE:
        return a0, a1, a2, 0.0, 0.0, 0.0
    return 0.0, 0.0, 0.0, a0, a1, a2


@njit(cache=True)
def joint_force(im, fm, i, n0, n1, n2, f0, f1, f2):
    """S^T (n, f): the joint's generalised force from a body-frame spatial force (moment first)."""
    if im[i, 1] == REVOLUTE:
        return fm[i, AX] * n0 + fm[i, AX + 1] * n1 + fm[i, AX + 2] * n2
    return fm[i, AX] * f0 + fm[i, AX + 1] * f1 + fm[i, AX + 2] * f2
