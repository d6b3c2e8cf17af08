"""Spatial algebra on split 3-vectors, written once against the Python array API.

Convention of the whole package: spatial vectors are **linear first**, as in
Pinocchio.  A motion vector is ``(v, w)`` (linear velocity of the frame
origin, angular velocity) and a force vector ``(f, n)`` (force, moment about
the frame origin), both in the axes of one body frame.  The algorithms keep
the two halves as separate (..., 3) arrays, so that every step is a few
batched 3-vector operations rather than a 6 x 6 product.

A rigid transform ``(R, p)`` is the pose of a child frame in its parent frame:
``R`` (..., 3, 3) the child axes in parent axes, ``p`` (..., 3) the child
origin in parent coordinates (m).  Featherstone's ``Xup`` (parent -> child
motion transform) is :func:`motion_to_child`, its dual ``Xup^T`` (child ->
parent force transform) :func:`force_to_parent`.

A rigid-body inertia is kept as ``(m, h, I)``: mass (...,) kg, first moment
``h = m c`` (..., 3) kg m and the rotational inertia ``I`` (..., 3, 3) kg m^2
about the frame origin, all in the frame's axes.

Every function broadcasts over leading batch axes and uses only array-API
operations of the namespace ``xp`` it is given (no item assignment), so it runs
on NumPy, PyTorch (autograd) and JAX (jit, vmap, grad).

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 2.8-2.13
(cross products, eqs. 2.31-2.32; transforms, eq. 2.24; rigid-body inertia,
eq. 2.63) and Table 2.5 (efficient spatial arithmetic on (R, p) pairs).
"""

from __future__ import annotations


def mv(R, x):
    """R x: (..., 3, 3) @ (..., 3) -> (..., 3)."""
    return (R @ x[..., None])[..., 0]


def mtv(R, x):
    """R^T x: (..., 3, 3), (..., 3) -> (..., 3)."""
    return (x[..., None, :] @ R)[..., 0, :]


def cross(xp, a, b):
    """a x b over the last axis (..., 3), broadcasting."""
    return xp.linalg.cross(a, b)


def skew(xp, w):
    """[w] (..., 3, 3) with [w] x = w x x, for w (..., 3)."""
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    o = xp.zeros_like(x)
    return xp.stack([xp.stack([o, -z, y], axis=-1), xp.stack([z, o, -x], axis=-1),
                     xp.stack([-y, x, o], axis=-1)], axis=-2)


def motion_to_child(xp, R, p, v, w):
    """Featherstone's X_up m: a motion (v, w) at the parent origin in parent axes, expressed
    at the child origin in child axes: (R^T (v + w x p), R^T w)."""
    return mtv(R, v + cross(xp, w, p)), mtv(R, w)


def force_to_parent(xp, R, p, f, n):
    """X_up^T f: a force (f, n) at the child origin in child axes, expressed at the parent
    origin in parent axes: (R f, R n + p x R f)."""
    Rf = mv(R, f)
    return Rf, mv(R, n) + cross(xp, p, Rf)


def motion_cross(xp, v, w, mv_, mw):
    """Motion cross product (v, w) x (mv, mw) = (w x mv + v x mw, w x mw) (Featherstone eq. 2.31, linear first)."""
    return cross(xp, w, mv_) + cross(xp, v, mw), cross(xp, w, mw)


def force_cross(xp, v, w, f, n):
    """Force cross product (v, w) x* (f, n) = (w x f, w x n + v x f) (Featherstone eq. 2.32, linear first)."""
    return cross(xp, w, f), cross(xp, w, n) + cross(xp, v, f)


def inertia_times(xp, m, h, I, v, w):
    """Spatial inertia (m, h, I) times motion (v, w): (m v + w x h, I w + h x v)."""
    return m[..., None] * v + cross(xp, w, h), mv(I, w) + cross(xp, h, v)


def inertia_times_columns(xp, m, h, I, Sv, Sw):
    """Spatial inertia (m, h, I) times the columns of a motion matrix (Sv, Sw) (..., 3, k):
    (m Sv - [h] Sw, I Sw + [h] Sv), each (..., 3, k)."""
    H = skew(xp, h)
    return m[..., None, None] * Sv - H @ Sw, I @ Sw + H @ Sv


def inertia_to_parent(xp, R, p, m, h, I):
    """The inertia (m, h, I) of a child frame expressed in its parent frame (about the parent
    origin, parent axes): h' = R h + m p and, with u = R h + m p / 2,
    I' = R I R^T + 2 (p . u) 1 - u p^T - p u^T (parallel-axis theorem, Featherstone eq. 2.63)."""
    Rh = mv(R, h)
    u = Rh + 0.5 * m[..., None] * p
    pu = xp.sum(p * u, axis=-1)[..., None, None]
    eye = xp.eye(3, dtype=p.dtype)
    I2 = R @ I @ xp.matrix_transpose(R) + 2.0 * pu * eye - u[..., :, None] * p[..., None, :] \
        - p[..., :, None] * u[..., None, :]
    return m, Rh + m[..., None] * p, I2


def symmetric(xp, xx, xy, yy, xz, yz, zz):
    """The symmetric 3 x 3 matrix (..., 3, 3) of its six entries (...,)."""
    return xp.stack([xp.stack([xx, xy, xz], axis=-1), xp.stack([xy, yy, yz], axis=-1),
                     xp.stack([xz, yz, zz], axis=-1)], axis=-2)


def inertia_from_parameters(xp, pi):
    """(m (...,), h (..., 3), I (..., 3, 3)) of parameter blocks pi (..., 10) in the regressor
    layout [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about the frame origin)."""
    return pi[..., 0], pi[..., 1:4], symmetric(xp, *(pi[..., k] for k in range(4, 10)))
