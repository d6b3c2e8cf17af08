"""Spatial algebra on split 3-vectors in a components-first layout, on the Python array API.

Convention of the whole package: spatial vectors are **linear first**, as in Pinocchio.  A
motion vector is ``(v, w)`` (linear velocity of the frame origin, angular velocity) and a force
vector ``(f, n)`` (force, moment about the frame origin), both in the axes of one body frame.
The algorithms keep the two halves as separate 3-vectors.

Layout.  Inside the algorithms the batch is flattened to one axis of N samples and put
**last**: a 3-vector is (3, N), a 3 x 3 matrix (3, 3, N), a block of k column vectors
(3, k, N), a scalar (N,); model constants have N = 1 and broadcast.  Every product is then a
few elementwise operations on contiguous rows of N numbers (fast on CPU and GPU alike), rather
than N tiny matrix products.  :mod:`composedyn.dynamics.array_api.kinematics` converts the
public (..., k) arrays to this layout and back.  On JAX (:func:`unrolled`) the products are
written without broadcasting a factor across a component axis (:func:`spread`,
:func:`combine`): its reverse mode would turn every such broadcast into a reduction.

A rigid transform ``(R, p)`` is the pose of a child frame in its parent frame: ``R`` the child
axes in parent axes, ``p`` the child origin in parent coordinates (m).  Featherstone's ``Xup``
(parent -> child motion transform) is :func:`motion_to_child`, its dual ``Xup^T`` (child ->
parent force transform) :func:`force_to_parent`.  A rigid-body inertia is kept as ``(m, h,
I)``: mass kg, first moment ``h = m c`` kg m and rotational inertia ``I`` kg m^2 about the frame
origin, in the frame's axes.

Only array-API operations of the namespace ``xp`` are used (no item assignment; on PyTorch a
tensor's ``unbind`` stands for ``unstack``, :func:`rows`), so every function runs on NumPy,
PyTorch (autograd) and JAX (jit, vmap, grad).

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 2.8-2.13 (cross
products, eqs. 2.31-2.32; transforms, eq. 2.24; rigid-body inertia, eq. 2.63) and Table 2.5
(efficient spatial arithmetic on (R, p) pairs).
"""

from __future__ import annotations

import functools
import operator

import numpy as np


@functools.cache
def unrolled(xp) -> bool:
    """Whether products are written without broadcasting a factor across a component axis:
    on JAX, whose reverse mode turns each such broadcast into a reduction that XLA's CPU
    backend runs several times slower than the elementwise programs around it, and which
    traces a program once, so that more, smaller operations cost nothing per call.  Eager
    libraries (NumPy, PyTorch) pay per operation and broadcast."""
    if xp is np:  # the NumPy backend of the core install, which has no array-API package
        return False
    from array_api_compat import is_jax_namespace

    return is_jax_namespace(xp)


@functools.cache
def is_torch(xp) -> bool:
    """Whether ``xp`` is PyTorch's namespace (whose tensors :func:`rows` splits by ``unbind``)."""
    if xp is np:
        return False
    from array_api_compat import is_torch_namespace

    return is_torch_namespace(xp)


def rows(xp, x, axis: int = 0) -> tuple:
    """The sub-arrays of ``x`` along ``axis`` (``xp.unstack``).  On PyTorch the tensor's own
    ``unbind``: array-api-compat's ``unstack`` adds a ``moveaxis`` and a Python iteration, which
    cost as much as the arithmetic of the small products here."""
    return x.unbind(axis) if is_torch(xp) else xp.unstack(x, axis=axis)


def spread(xp, x, n: int, axis: int = 0):
    """``x`` with a new ``axis`` of length ``n`` for a product: ``n`` stacked copies when
    :func:`unrolled`, else length 1 (the product broadcasts)."""
    return xp.stack([x] * n, axis=axis) if unrolled(xp) else xp.expand_dims(x, axis=axis)


def combine(xp, A, x):
    """A x: (r, k, N) and (k, N) -> (r, N) (a 3 x 3 matrix times a vector, a joint's motion
    subspace times its rates).  Entry by entry on (N,) rows when :func:`unrolled`, else a
    sum of broadcast columns."""
    xs = rows(xp, x, axis=0)
    if unrolled(xp):
        return xp.stack([_sum(a * b for a, b in zip(rows(xp, row, axis=0), xs)) for row in rows(xp, A, axis=0)])
    return _sum(column * b for column, b in zip(rows(xp, A, axis=1), xs))


def combine_t(xp, A, x):
    """A^T x: (r, k, N) and (r, N) -> (k, N) (a rotation's inverse on a vector, a force
    projected on a joint's motion subspace)."""
    return combine(xp, xp.permute_dims(A, (1, 0, 2)), x)


def mv(xp, R, x):
    """R x: (3, 3, N) and (3, N) -> (3, N)."""
    return combine(xp, R, x)


def mtv(xp, R, x):
    """R^T x: (3, 3, N) and (3, N) -> (3, N)."""
    return combine_t(xp, R, x)


def mtm(xp, A, B):
    """A^T B: (r, m, N) and (r, k, N) -> (m, k, N): entry by entry on (N,) rows when
    :func:`unrolled` (stacked copies of whole rows would leave XLA copies in awkward layouts),
    else a sum of broadcast outer products."""
    m, k = A.shape[1], B.shape[1]
    if unrolled(xp):
        a = [rows(xp, r, axis=0) for r in rows(xp, A, axis=0)]
        b = [rows(xp, r, axis=0) for r in rows(xp, B, axis=0)]
        return xp.stack([xp.stack([_sum(ar[i] * br[j] for ar, br in zip(a, b)) for j in range(k)], axis=0)
                         for i in range(m)], axis=0)
    pairs = zip(rows(xp, A, axis=0), rows(xp, B, axis=0))
    return _sum(spread(xp, a, k, axis=1) * spread(xp, b, m) for a, b in pairs)


def subspace_times_columns(xp, S, F):
    """S^T F: a joint's motion subspace (6, nv, N) applied to force columns (6, k, N) -> (nv, k, N).
    S broadcasts (constant for one-DOF joints, so reverse mode reduces nothing across its axes);
    on JAX the six products are summed by additions, not a reduction (XLA's CPU backend hands
    float32 reductions to a library call several times slower than the fused programs)."""
    if unrolled(xp):
        return _sum(s[:, None, ...] * f[None, ...] for s, f in zip(rows(xp, S, axis=0), rows(xp, F, axis=0)))
    return xp.sum(S[:, :, None, ...] * F[:, None, ...], axis=0)


def columns_dot(xp, A, B):
    """A^T B: (r, m, N) and (r, k, N) -> (m, k, N), both factors varying (motion columns applied
    to force columns): :func:`mtm`'s stacked copies when :func:`unrolled`, else one broadcast
    product and a sum."""
    if unrolled(xp):
        return mtm(xp, A, B)
    return xp.sum(A[:, :, None, ...] * B[:, None, ...], axis=0)


def mm(xp, A, B):
    """A B: (3, 3, N) and (3, k, N) -> (3, k, N)."""
    return mtm(xp, transpose(xp, A), B)


def _sum(terms):
    return functools.reduce(operator.add, terms)


def transpose(xp, R):
    """R^T of (3, 3, N)."""
    return xp.permute_dims(R, (1, 0, 2))


def cross(xp, a, b):
    """a x b over the first axis: (3, ...) and (3, ...) broadcasting (vectors or column blocks)."""
    a0, a1, a2 = rows(xp, a, axis=0)
    b0, b1, b2 = rows(xp, b, axis=0)
    return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=0)


def _weighted(xp, pairs, like):
    """sum of c x over (c, x) pairs with c a Python number: terms with c = 0 left out (a
    product by a constant zero stays a product in a compiled program), c = -1 and 1 as signs."""
    out = None
    for c, x in pairs:
        if c == 0:
            continue
        term = x if c == 1 else -x if c == -1 else c * x
        out = term if out is None else out + term
    return xp.zeros_like(like) if out is None else out


def cross_const(xp, a, c):
    """a x c for a (3, ...) and a constant NumPy 3-vector c, written without the products by
    c's zero entries (a joint axis along a frame axis has two)."""
    a0, a1, a2 = rows(xp, a, axis=0)
    c0, c1, c2 = (float(x) for x in c)
    return xp.stack([_weighted(xp, ((c2, a1), (-c1, a2)), a0), _weighted(xp, ((c0, a2), (-c2, a0)), a0),
                     _weighted(xp, ((c1, a0), (-c0, a1)), a0)], axis=0)


def const_times(xp, c, x):
    """c x (3, N) for a constant NumPy 3-vector c and a row x (N,) (likewise without zero products)."""
    return xp.stack([_weighted(xp, ((float(ci), x),), x) for ci in c], axis=0)


def dot_const(xp, a, c):
    """a . c (...) for a (3, ...) and a constant NumPy 3-vector c (likewise)."""
    parts = rows(xp, a, axis=0)
    return _weighted(xp, ((float(ci), r) for ci, r in zip(c, parts)), parts[0])


def dot(xp, a, b):
    """a . b over the first axis: (3, ...) -> (...)."""
    a0, a1, a2 = rows(xp, a, axis=0)
    b0, b1, b2 = rows(xp, b, axis=0)
    return a0 * b0 + a1 * b1 + a2 * b2


def skew(xp, w):
    """[w] (3, 3, N) with [w] x = w x x, for w (3, N)."""
    x, y, z = rows(xp, w, axis=0)
    o = xp.zeros_like(x)
    return xp.stack([xp.stack([o, -z, y], axis=0), xp.stack([z, o, -x], axis=0),
                     xp.stack([-y, x, o], axis=0)], axis=0)


def motion_to_child(xp, R, p, v, w):
    """Featherstone's X_up m: a motion (v, w) at the parent origin in parent axes, expressed
    at the child origin in child axes: (R^T (v + w x p), R^T w)."""
    return mtv(xp, R, v + cross(xp, w, p)), mtv(xp, R, w)


def force_to_parent(xp, R, p, f, n):
    """X_up^T f: a force (f, n) at the child origin in child axes (vectors or column blocks),
    expressed at the parent origin in parent axes: (R f, R n + p x R f)."""
    if len(f.shape) == 2:
        Rf = mv(xp, R, f)
        return Rf, mv(xp, R, n) + cross(xp, p, Rf)
    Rf = mm(xp, R, f)
    return Rf, mm(xp, R, n) + cross(xp, spread(xp, p, f.shape[1], axis=1), Rf)


def motion_to_parent(xp, R, p, v, w):
    """X_up^-1 m: a motion (v, w) at the child origin in child axes (vectors or column blocks),
    expressed at the parent origin in parent axes: (R v + p x R w, R w) (the dual of
    :func:`force_to_parent`)."""
    Rw, Rv = force_to_parent(xp, R, p, w, v)
    return Rv, Rw


def motion_cross(xp, v, w, mv_, mw):
    """Motion cross product (v, w) x (mv, mw) = (w x mv + v x mw, w x mw) (Featherstone eq. 2.31, linear first)."""
    return cross(xp, w, mv_) + cross(xp, v, mw), cross(xp, w, mw)


def force_cross(xp, v, w, f, n):
    """Force cross product (v, w) x* (f, n) = (w x f, w x n + v x f) (Featherstone eq. 2.32, linear first)."""
    return cross(xp, w, f), cross(xp, w, n) + cross(xp, v, f)


def inertia_times(xp, m, h, I, v, w):
    """Spatial inertia (m, h, I) times the motion (v, w) (3, N) each: (m v + w x h, I w + h x v)."""
    return m * v + cross(xp, w, h), mv(xp, I, w) + cross(xp, h, v)


def inertia_times_columns(xp, m, h, I, Sv, Sw):
    """Spatial inertia (m, h, I) times the columns of a motion block (Sv, Sw) (3, k, N):
    (m Sv + Sw x h, I Sw + h x Sv), each (3, k, N)."""
    hc = spread(xp, h, Sv.shape[1], axis=1)
    return m * Sv + cross(xp, Sw, hc), mm(xp, I, Sw) + cross(xp, hc, Sv)


def inertia_to_parent(xp, R, p, m, h, I):
    """The inertia (m, h, I) of a child frame expressed in its parent frame (about the parent
    origin, parent axes): h' = R h + m p and, with u = R h + m p / 2,
    I' = R I R^T + 2 (p . u) 1 - u p^T - p u^T (parallel-axis theorem, Featherstone eq. 2.63)."""
    Rh = mv(xp, R, h)
    u = Rh + 0.5 * m * p
    up = outer(xp, u, p)
    I2 = mm(xp, mm(xp, R, I), transpose(xp, R)) + scaled_eye(xp, 2.0 * dot(xp, p, u)) - up - transpose(xp, up)
    return m, Rh + m * p, I2


def outer(xp, a, b):
    """a b^T (3, 3, N) of two 3-vectors (3, N)."""
    return spread(xp, a, 3, axis=1) * spread(xp, b, 3)


def scaled_eye(xp, s):
    """s 1 (3, 3, N) for a scalar row s (N,)."""
    o = xp.zeros_like(s)
    return symmetric(xp, s, o, s, o, o, s)


def symmetric(xp, xx, xy, yy, xz, yz, zz):
    """The symmetric 3 x 3 matrix (3, 3, N) of its six entries (N,)."""
    return xp.stack([xp.stack([xx, xy, xz], axis=0), xp.stack([xy, yy, yz], axis=0),
                     xp.stack([xz, yz, zz], axis=0)], axis=0)


def inertia_from_parameters(xp, pi):
    """(m (N,), h (3, N), I (3, 3, N)) of parameter blocks pi (10, N) in the regressor layout
    [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about the frame origin)."""
    return pi[0], pi[1:4], symmetric(xp, *(pi[k] for k in range(4, 10)))
