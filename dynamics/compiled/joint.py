"""Small compiled helpers shared by the kernels: joint transforms and 3-vector algebra.

A *pose row* X (12,) holds a rotation R row-major in X[0:9] and a translation
p in X[9:12].  For body ``i``, R has the body axes in parent axes and p is the
body origin in the parent frame (x_parent = R x_body + p); its frame is its
joint frame.  Kernels keep all scratch data in one array per call, since each
allocation costs ~60 ns, as much as a joint's arithmetic.
"""

from __future__ import annotations

import math
import types

from numba import njit

from composedyn.dynamics.compiled.layout import RA, TA, TK, TP, TR


@njit(cache=True)
def joint_transform(fm, jt, i, qi, X):
    """Pose row X of body i at joint position qi.

    Revolute: R = tree_R Rot(a, qi) = c tree_R + s tree_R K(a) + (1 - c) (tree_R a) a^T
    (Rodrigues, with the three matrices precomputed in ``fm``), p = tree_p.
    Prismatic: R = tree_R, p = tree_p + qi tree_R a.
    """
    if jt == 1:
        for k in range(9):
            X[k] = fm[i, TR + k]
        for r in range(3):
            X[9 + r] = fm[i, TP + r] + qi * fm[i, RA + r]
        return
    s, c = math.sin(qi), math.cos(qi)
    t = 1.0 - c
    for k in range(9):
        X[k] = c * fm[i, TR + k] + s * fm[i, TK + k] + t * fm[i, TA + k]
    for r in range(3):
        X[9 + r] = fm[i, TP + r]


@njit(cache=True)
def motion_to_child(X, m, out):
    """Parent-frame motion vector m (6,) -> child frame: (R^T w, R^T (v + w x p))."""
    w0, w1, w2 = m[0], m[1], m[2]
    u0 = m[3] + w1 * X[11] - w2 * X[10]
    u1 = m[4] + w2 * X[9] - w0 * X[11]
    u2 = m[5] + w0 * X[10] - w1 * X[9]
    for c in range(3):
        out[c] = X[c] * w0 + X[3 + c] * w1 + X[6 + c] * w2
        out[3 + c] = X[c] * u0 + X[3 + c] * u1 + X[6 + c] * u2


@njit(cache=True)
def force_to_parent(X, f, out):
    """Child-frame force vector f (6,) -> parent frame, *added* to out: (R n + p x R f, R f)."""
    F0 = X[0] * f[3] + X[1] * f[4] + X[2] * f[5]
    F1 = X[3] * f[3] + X[4] * f[4] + X[5] * f[5]
    F2 = X[6] * f[3] + X[7] * f[4] + X[8] * f[5]
    out[0] += X[0] * f[0] + X[1] * f[1] + X[2] * f[2] + X[10] * F2 - X[11] * F1
    out[1] += X[3] * f[0] + X[4] * f[1] + X[5] * f[2] + X[11] * F0 - X[9] * F2
    out[2] += X[6] * f[0] + X[7] * f[1] + X[8] * f[2] + X[9] * F1 - X[10] * F0
    out[3] += F0
    out[4] += F1
    out[5] += F2


@njit(cache=True)
def compose(Xk, X, Xw):
    """World pose row of a child from its parent's: R_w = R_k R, p_w = p_k + R_k p."""
    for r in range(3):
        for c in range(3):
            Xw[3 * r + c] = Xk[3 * r] * X[c] + Xk[3 * r + 1] * X[3 + c] + Xk[3 * r + 2] * X[6 + c]
        Xw[9 + r] = Xk[9 + r] + Xk[3 * r] * X[9] + Xk[3 * r + 1] * X[10] + Xk[3 * r + 2] * X[11]


@njit(cache=True)
def copy_pose(X, Xw):
    """Xw[:] = X for a pose row (no array-setitem overload: faster to compile)."""
    for c in range(12):
        Xw[c] = X[c]


def serial_and_parallel(loop):
    """Compile a sample loop (written with ``prange``) twice: serial and parallel.

    The two copies get distinct names because numba's on-disk cache keys its
    entries by function name and line only, not by the ``parallel`` flag: one
    Python function compiled both ways would load the other's machine code.
    """
    def renamed(suffix: str):
        f = types.FunctionType(loop.__code__, loop.__globals__, loop.__name__ + suffix,
                               loop.__defaults__, loop.__closure__)
        f.__qualname__, f.__doc__ = loop.__qualname__ + suffix, loop.__doc__
        return f
    return njit(cache=True)(renamed("_serial")), njit(cache=True, parallel=True)(renamed("_parallel"))
