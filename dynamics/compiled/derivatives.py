"""Compiled analytical derivatives of the inverse dynamics (world frame).

The algorithm of :mod:`composedyn.dynamics.reference.derivatives` (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018,
Algorithm 1), over the packed model: joint kinematics from the shared joint
model :func:`composedyn.dynamics.compiled.joint.joint_pose`; spatial vectors
angular first, world axes, moments about the world origin; a rigid-body
inertia in world axes as (m, h = m c, Io about the origin, 3x3).

1. Forward, parent -> child: world pose, S_i, v_i, a_i (a_base = (0, -g)),
   world inertia, f_i = I_i a_i + v_i x* I_i v_i - fx_i, psi_i = v_p x S_i,
   alpha_i = a_p x S_i + v_p x psi_i, and the blocks of B_i (B11 3x3 and l, see :func:`bmul6`).
2. Backward, child -> parent: with the subtree sums IC_i, BC_i, F_i (and the
   external ones) complete, the row vectors IC_i S_i, BC_i^T S_i, e_i and the
   column vectors Phi_i, Phid_i; then add the sums into the parent's.
3. Pairs: for every body i and each j in i and its ancestors, entry [i, j]
   from i's row vectors and j's psi, alpha, S; entry [j, i] = S_j . Phi_i.

The scratch ``w`` (n, SCRATCH) holds one row per body (columns below).  The
helpers on 6-tuples are small separately compiled functions that LLVM inlines;
the helpers that read or write ``w`` are ``inline="always"`` (numba inlines
them: a call passing an array is not inlined and costs reference counting).  The kernels
and the tuple helpers fuse multiply-adds (``fastmath={"contract"}``, named on
each helper: one compiled on its own keeps its own flags, :mod:`.jit`).
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    cross,
    free_root_world_column,
    joint_chained_columns,
    joint_motion_world,
    joint_placement,
    joint_pose,
    joint_world_column,
    rigid_root_column,
    rigid_root_placement,
    rigid_root_rates,
    rot,
)
from composedyn.dynamics.compiled.layout import DAMP, FRIC, GRAV, IO, IQ, IV, MASS, NV, H

# scratch columns: world pose, S, v, a, f (-> F), psi, alpha, inertia (m, h, Io) (-> IC), B11 (row-major) and l (-> BC),
# external force (-> X) and lever-arm matrix (-> PC), row vectors rI, rB, e, column vectors Phi, Phid
RW, PW, S, V, A, F, PSI, ALPHA, M, HH, IOW, BB, BL = 0, 9, 12, 18, 24, 30, 36, 42, 48, 49, 52, 61, 70
X, PC, RI, RB, E, PHI, PHID = 73, 79, 88, 94, 100, 103, 109
# the general form's columns (see its section below): row c holds velocity coordinate c's S, psi, alpha, d a / d v
CS, CPSI, CALPHA, CDADV = 115, 121, 127, 133
SCRATCH = 139


@njit(cache=True, inline="always")
def row6(w, i, c):
    """The 6-vector w[i, c:c+6] as a tuple."""
    return w[i, c], w[i, c + 1], w[i, c + 2], w[i, c + 3], w[i, c + 4], w[i, c + 5]


@njit(cache=True, inline="always")
def set_row6(w, i, c, x):
    """w[i, c:c+6] = x."""
    w[i, c], w[i, c + 1], w[i, c + 2], w[i, c + 3], w[i, c + 4], w[i, c + 5] = x


@njit(cache=True, fastmath={"contract"})
def mcross6(v, s):
    """Motion cross product v x s = (w x s_w, w x s_u + u x s_w)."""
    a0, a1, a2 = cross(v[0], v[1], v[2], s[0], s[1], s[2])
    b0, b1, b2 = cross(v[0], v[1], v[2], s[3], s[4], s[5])
    c0, c1, c2 = cross(v[3], v[4], v[5], s[0], s[1], s[2])
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@njit(cache=True, fastmath={"contract"})
def fcross6(v, f):
    """Force cross product v x* f = (w x n + u x f, w x f)."""
    a0, a1, a2 = cross(v[0], v[1], v[2], f[0], f[1], f[2])
    b0, b1, b2 = cross(v[3], v[4], v[5], f[3], f[4], f[5])
    c0, c1, c2 = cross(v[0], v[1], v[2], f[3], f[4], f[5])
    return a0 + b0, a1 + b1, a2 + b2, c0, c1, c2


@njit(cache=True, fastmath={"contract"})
def add6(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@njit(cache=True, fastmath={"contract"})
def scale6(x, s):
    return x[0] * s, x[1] * s, x[2] * s, x[3] * s, x[4] * s, x[5] * s


@njit(cache=True, fastmath={"contract"})
def _mul(A, B):
    """A B of row-major 3x3 9-tuples."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8], A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7], A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@njit(cache=True, fastmath={"contract"})
def _mul_t(A, B):
    """A B^T of row-major 3x3 9-tuples."""
    return (A[0] * B[0] + A[1] * B[1] + A[2] * B[2], A[0] * B[3] + A[1] * B[4] + A[2] * B[5],
            A[0] * B[6] + A[1] * B[7] + A[2] * B[8], A[3] * B[0] + A[4] * B[1] + A[5] * B[2],
            A[3] * B[3] + A[4] * B[4] + A[5] * B[5], A[3] * B[6] + A[4] * B[7] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[1] + A[8] * B[2], A[6] * B[3] + A[7] * B[4] + A[8] * B[5],
            A[6] * B[6] + A[7] * B[7] + A[8] * B[8])


@njit(cache=True, fastmath={"contract"})
def dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(cache=True, fastmath={"contract"})
def _apply(m, h0, h1, h2, j00, j01, j02, j11, j12, j22, x):
    """I x = (Io x_w + h x x_u, m x_u - h x x_w) for Io symmetric (upper triangle j)."""
    c0, c1, c2 = cross(h0, h1, h2, x[3], x[4], x[5])
    d0, d1, d2 = cross(h0, h1, h2, x[0], x[1], x[2])
    return (j00 * x[0] + j01 * x[1] + j02 * x[2] + c0, j01 * x[0] + j11 * x[1] + j12 * x[2] + c1,
            j02 * x[0] + j12 * x[1] + j22 * x[2] + c2, m * x[3] - d0, m * x[4] - d1, m * x[5] - d2)


@njit(cache=True, inline="always")
def inertia6(w, i, x):
    """I x = (Io w + h x u, m u - h x w) with body i's (m, h, Io) in w (or its subtree sum)."""
    m, h0, h1, h2 = w[i, M], w[i, HH], w[i, HH + 1], w[i, HH + 2]
    c0, c1, c2 = cross(h0, h1, h2, x[3], x[4], x[5])
    d0, d1, d2 = cross(h0, h1, h2, x[0], x[1], x[2])
    return (w[i, IOW] * x[0] + w[i, IOW + 1] * x[1] + w[i, IOW + 2] * x[2] + c0,
            w[i, IOW + 3] * x[0] + w[i, IOW + 4] * x[1] + w[i, IOW + 5] * x[2] + c1,
            w[i, IOW + 6] * x[0] + w[i, IOW + 7] * x[1] + w[i, IOW + 8] * x[2] + c2,
            m * x[3] - d0, m * x[4] - d1, m * x[5] - d2)


@njit(cache=True, inline="always")
def bmul6(w, i, x, transpose):
    """BC_i x = (B11 x_w, -2 l x x_w), or BC_i^T x = (B11^T x_w + 2 l x x_u, 0) with ``transpose``.

    B = v x* I - I v x + A(I v) has, for I = [[Io, [h]x], [-[h]x, m]], v = (w, u) and
    I v = (k, l), the blocks B11 = [w]x Io - Io [w]x - h u^T - u h^T + 2 (u . h) 1 - [k]x,
    B12 = [w x h + m u - l]x = 0, B21 = -[w x h + m u + l]x = -2 [l]x, B22 = 0.
    """
    c = BB
    if transpose:
        l0, l1, l2 = cross(w[i, BL], w[i, BL + 1], w[i, BL + 2], x[3], x[4], x[5])
        return (w[i, c] * x[0] + w[i, c + 3] * x[1] + w[i, c + 6] * x[2] + 2.0 * l0,
                w[i, c + 1] * x[0] + w[i, c + 4] * x[1] + w[i, c + 7] * x[2] + 2.0 * l1,
                w[i, c + 2] * x[0] + w[i, c + 5] * x[1] + w[i, c + 8] * x[2] + 2.0 * l2, 0.0, 0.0, 0.0)
    l0, l1, l2 = cross(w[i, BL], w[i, BL + 1], w[i, BL + 2], x[0], x[1], x[2])
    return (w[i, c] * x[0] + w[i, c + 1] * x[1] + w[i, c + 2] * x[2],
            w[i, c + 3] * x[0] + w[i, c + 4] * x[1] + w[i, c + 5] * x[2],
            w[i, c + 6] * x[0] + w[i, c + 7] * x[1] + w[i, c + 8] * x[2], -2.0 * l0, -2.0 * l1, -2.0 * l2)


@njit(cache=True, inline="always")
def _forward(im, fm, qi, qdi, qddi, fw, P, grav, w, i):
    """Row w[i] (step 1 of the module docstring) of a one-coordinate joint at position qi, rate
    qdi, acceleration qddi."""
    R, p = joint_pose(im, fm, i, qi)
    Rw, pw, vp, ap = _from_parent(im, fm, grav, w, i, R, p)
    s = joint_motion_world(im, fm, i, Rw, pw[0], pw[1], pw[2])
    v = add6(vp, scale6(s, qdi))
    a = add6(add6(ap, scale6(s, qddi)), scale6(mcross6(v, s), qdi))
    psi = mcross6(vp, s)
    alpha = add6(mcross6(ap, s), mcross6(vp, psi))
    _body_terms(fm, fw, P, w, i, Rw, pw, v, a)
    set_row6(w, i, S, s)
    set_row6(w, i, PSI, psi)
    set_row6(w, i, ALPHA, alpha)


@njit(cache=True, inline="always")
def _from_parent(im, fm, grav, w, i, R, p):
    """(world pose R, p; parent's twist and acceleration) of body i at pose (R, p) in its parent's frame;
    under the world: (R, p), zero and (0, -g) (g times ``grav``)."""
    k = im[i, 0]
    if k < 0:
        g = grav * fm[0, GRAV], grav * fm[0, GRAV + 1], grav * fm[0, GRAV + 2]
        return R, p, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
    Rk = (w[k, 0], w[k, 1], w[k, 2], w[k, 3], w[k, 4], w[k, 5], w[k, 6], w[k, 7], w[k, 8])
    c0 = rot(Rk, R[0], R[3], R[6])
    c1 = rot(Rk, R[1], R[4], R[7])
    c2 = rot(Rk, R[2], R[5], R[8])
    d = rot(Rk, p[0], p[1], p[2])
    return ((c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]),
            (w[k, PW] + d[0], w[k, PW + 1] + d[1], w[k, PW + 2] + d[2]), row6(w, k, V), row6(w, k, A))


@njit(cache=True, inline="always")
def _body_terms(fm, fw, P, w, i, Rw, pw, v, a):
    """The rest of row w[i] from body i's world pose (Rw, pw), twist v and acceleration a: world
    inertia, f, external force and lever arms, the blocks of B_i, pose, v, a."""
    # world inertia: h_w = m p + R h, Io_w = R Io R^T + m (|p|^2 1 - p p^T) + 2 (p . g) 1 - p g^T - g p^T
    m = fm[i, MASS]
    g0, g1, g2 = rot(Rw, fm[i, H], fm[i, H + 1], fm[i, H + 2])
    Io = (fm[i, IO], fm[i, IO + 1], fm[i, IO + 2], fm[i, IO + 3], fm[i, IO + 4], fm[i, IO + 5],
          fm[i, IO + 6], fm[i, IO + 7], fm[i, IO + 8])
    J = _mul(Rw, _mul_t(Io, Rw))
    p0, p1, p2 = pw
    d = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * g0 + p1 * g1 + p2 * g2)
    j00 = J[0] + d - m * p0 * p0 - 2.0 * p0 * g0
    j11 = J[4] + d - m * p1 * p1 - 2.0 * p1 * g1
    j22 = J[8] + d - m * p2 * p2 - 2.0 * p2 * g2
    j01 = J[1] - m * p0 * p1 - p0 * g1 - g0 * p1
    j02 = J[2] - m * p0 * p2 - p0 * g2 - g0 * p2
    j12 = J[5] - m * p1 * p2 - p1 * g2 - g1 * p2
    w[i, IOW], w[i, IOW + 1], w[i, IOW + 2] = j00, j01, j02
    w[i, IOW + 3], w[i, IOW + 4], w[i, IOW + 5] = j01, j11, j12
    w[i, IOW + 6], w[i, IOW + 7], w[i, IOW + 8] = j02, j12, j22
    h0, h1, h2 = m * p0 + g0, m * p1 + g1, m * p2 + g2
    w[i, M], w[i, HH], w[i, HH + 1], w[i, HH + 2] = m, h0, h1, h2
    hv = _apply(m, h0, h1, h2, j00, j01, j02, j11, j12, j22, v)
    f = add6(_apply(m, h0, h1, h2, j00, j01, j02, j11, j12, j22, a), fcross6(v, hv))
    if fw.shape[0] > 0:
        f = add6(f, scale6(row6(fw, i, 0), -1.0))
        set_row6(w, i, X, row6(fw, i, 0))
        for c in range(9):
            w[i, PC + c] = P[i, c]
    # B11 = [w]x Io - Io [w]x - h u^T - u h^T + 2 (u . h) 1 - [k]x (see bmul6), and l;
    # [w]x Io - Io [w]x = X + X^T with X = [w]x Io (Io symmetric), column c of X = w x Io[:, c]
    x00, x10, x20 = cross(v[0], v[1], v[2], j00, j01, j02)
    x01, x11, x21 = cross(v[0], v[1], v[2], j01, j11, j12)
    x02, x12, x22 = cross(v[0], v[1], v[2], j02, j12, j22)
    u0, u1, u2 = v[3], v[4], v[5]
    k0, k1, k2 = hv[0], hv[1], hv[2]
    uh2 = 2.0 * (u0 * h0 + u1 * h1 + u2 * h2)
    s01 = x01 + x10 - h0 * u1 - u0 * h1
    s02 = x02 + x20 - h0 * u2 - u0 * h2
    s12 = x12 + x21 - h1 * u2 - u1 * h2
    w[i, BB] = 2.0 * (x00 - h0 * u0) + uh2
    w[i, BB + 4] = 2.0 * (x11 - h1 * u1) + uh2
    w[i, BB + 8] = 2.0 * (x22 - h2 * u2) + uh2
    w[i, BB + 1], w[i, BB + 3] = s01 + k2, s01 - k2
    w[i, BB + 2], w[i, BB + 6] = s02 - k1, s02 + k1
    w[i, BB + 5], w[i, BB + 7] = s12 + k0, s12 - k0
    w[i, BL], w[i, BL + 1], w[i, BL + 2] = hv[3], hv[4], hv[5]
    w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], w[i, 6], w[i, 7], w[i, 8] = Rw
    w[i, PW], w[i, PW + 1], w[i, PW + 2] = pw
    set_row6(w, i, V, v)
    set_row6(w, i, A, a)
    set_row6(w, i, F, f)


@njit(cache=True, inline="always")
def _external_e(w, i, s):
    """e = Xn x s_w + PC^T s_w + Xf x s_u for the column s, from body i's subtree sums of the
    external forces X and lever-arm matrices PC."""
    x = row6(w, i, X)
    n0, n1, n2 = cross(x[0], x[1], x[2], s[0], s[1], s[2])
    f0, f1, f2 = cross(x[3], x[4], x[5], s[3], s[4], s[5])
    t0, t1, t2 = rot((w[i, PC], w[i, PC + 3], w[i, PC + 6], w[i, PC + 1], w[i, PC + 4], w[i, PC + 7],
                      w[i, PC + 2], w[i, PC + 5], w[i, PC + 8]), s[0], s[1], s[2])
    return n0 + t0 + f0, n1 + t1 + f1, n2 + t2 + f2


@njit(cache=True, inline="always")
def _column_phi(w, i, s, psi, alpha, ext):
    """(Phi, e) of a column s (its psi, alpha) of body i's joint, from i's complete subtree sums:
    Phi = s x* F + IC alpha + BC psi, plus the external forces' (s_w x Xn + PC s_w, s_w x Xf) with
    ``ext``; e as :func:`_external_e` (zero without ``ext``)."""
    phi = add6(add6(fcross6(s, row6(w, i, F)), inertia6(w, i, alpha)), bmul6(w, i, psi, False))
    if not ext:
        return phi, (0.0, 0.0, 0.0)
    x = row6(w, i, X)
    n0, n1, n2 = cross(x[0], x[1], x[2], s[0], s[1], s[2])
    f0, f1, f2 = cross(x[3], x[4], x[5], s[0], s[1], s[2])
    u0, u1, u2 = rot((w[i, PC], w[i, PC + 1], w[i, PC + 2], w[i, PC + 3], w[i, PC + 4], w[i, PC + 5],
                      w[i, PC + 6], w[i, PC + 7], w[i, PC + 8]), s[0], s[1], s[2])
    return ((phi[0] - n0 + u0, phi[1] - n1 + u1, phi[2] - n2 + u2, phi[3] - f0, phi[4] - f1, phi[5] - f2),
            _external_e(w, i, s))


@njit(cache=True, inline="always")
def _backward(w, i, ext):
    """Row vectors and column vectors of body i from its complete subtree sums (step 2)."""
    s, psi, alpha = row6(w, i, S), row6(w, i, PSI), row6(w, i, ALPHA)
    set_row6(w, i, RI, inertia6(w, i, s))
    set_row6(w, i, RB, bmul6(w, i, s, True))
    set_row6(w, i, PHID, add6(inertia6(w, i, scale6(psi, 2.0)), bmul6(w, i, s, False)))
    phi, e = _column_phi(w, i, s, psi, alpha, ext)
    w[i, E], w[i, E + 1], w[i, E + 2] = e
    set_row6(w, i, PHI, phi)


@njit(cache=True, fastmath={"contract"})
def derivatives_into(im, fm, q, qd, qdd, fw, P, grav, fric, smooth, dq, dqd, w):
    """d tau / d q and d tau / d qd (n, n) into ``dq``, ``dqd`` for one sample.

    fw (n, 6) world body forces and P (n, 9) lever-arm matrices (row-major),
    or shapes (0, 6) and (0, 9) for none (see
    :func:`composedyn.dynamics.reference.derivatives.external_terms`).  grav: 1 to
    include gravity.  fric: 1 adds the friction derivative on the diagonal of
    ``dqd`` (tanh model when smooth > 0).  w: scratch (n, SCRATCH).
    """
    derivative_passes(im, fm, q, qd, qdd, fw, P, grav, w)
    derivative_pairs(im, fm, qd, fric, smooth, dq, dqd, w)


@njit(cache=True, fastmath={"contract"})
def derivative_passes(im, fm, q, qd, qdd, fw, P, grav, w):
    """Steps 1 and 2 of the module docstring into the scratch w (n, SCRATCH); arguments as
    :func:`derivatives_into`.  Afterwards w holds, per body i, the subtree sums IC_i, BC_i,
    F_i and the vectors of step 2 (so M[i, j] = IC_i S_i . S_j for j = i or an ancestor)."""
    n = q.shape[0]
    ext = fw.shape[0] == n and n > 0
    for i in range(n):
        _forward(im, fm, q[i], qd[i], qdd[i], fw, P, grav, w, i)
    _backward_pass(im, w, n, ext)


@njit(cache=True, inline="always")
def _backward_pass(im, w, n, ext):
    """Step 2 for bodies n - 1 ... 0: each body's row and column vectors, then its sums added into
    its parent's."""
    for jj in range(n):
        i = n - 1 - jj
        _backward(w, i, ext)
        _add_to_parent(im, w, i, ext)


@njit(cache=True, inline="always")
def _add_to_parent(im, w, i, ext):
    """Adds body i's subtree sums (inertia, B, F, and the external ones with ``ext``) into its parent's."""
    k = im[i, 0]
    if k >= 0:
        for c in range(13):  # (m, h, Io)
            w[k, M + c] += w[i, M + c]
        for c in range(12):  # B11, l
            w[k, BB + c] += w[i, BB + c]
        for c in range(6):
            w[k, F + c] += w[i, F + c]
        if ext:
            for c in range(15):  # X, PC
                w[k, X + c] += w[i, X + c]


@njit(cache=True, fastmath={"contract"})
def derivative_pairs(im, fm, qd, fric, smooth, dq, dqd, w):
    """Step 3 of the module docstring: d tau / d q and d tau / d qd (n, n) from the scratch w
    that :func:`derivative_passes` filled (friction as in :func:`derivatives_into`)."""
    n = qd.shape[0]
    for i in range(n):
        for j in range(n):
            dq[i, j] = 0.0
            dqd[i, j] = 0.0
    for i in range(n):
        _chain_pairs(im, w, i, 0, -1, dq, dqd)
        if fric:
            _friction_diagonal(fm, qd, i, smooth, dqd)


@njit(cache=True, inline="always")
def _chain_pairs(im, w, i, off, last, dq, dqd):
    """Step 3 for the one-coordinate joint of body i and its ancestors j down to (not including)
    body ``last``, at rows and columns body + ``off``; returns the body the walk stopped at."""
    r = i + off
    ri, rb = row6(w, i, RI), row6(w, i, RB)
    e0, e1, e2 = w[i, E], w[i, E + 1], w[i, E + 2]
    phi, phid = row6(w, i, PHI), row6(w, i, PHID)
    j = i
    while j > last:
        s, psi = row6(w, j, S), row6(w, j, PSI)
        d = j + off
        dq[r, d] = dot6(ri, row6(w, j, ALPHA)) + dot6(rb, psi) + (e0 * s[0] + e1 * s[1] + e2 * s[2])
        dqd[r, d] = 2.0 * dot6(ri, psi) + dot6(rb, s)
        if j != i:
            dq[d, r] = dot6(s, phi)
            dqd[d, r] = dot6(s, phid)
        j = im[j, 0]
    return j


@njit(cache=True, inline="always")
def _friction_diagonal(fm, qd, r, smooth, dqd):
    """Adds the friction derivative of velocity coordinate r to dqd[r, r] (tanh model when smooth > 0)."""
    dqd[r, r] += fm[r, DAMP]
    if smooth > 0.0:
        t = math.tanh(qd[r] / smooth)
        dqd[r, r] += fm[r, FRIC] * (1.0 - t * t) / smooth

# ---- a rigid root (:func:`.joint.rigid_root`): body 0 moved by a free flyer, planar or spherical joint
# with nv0 = 6, 3, 3 coordinates (v[0:nv0]), then one-coordinate joints at q[IQ], v[i + nv0 - 1].  The
# root's world columns are S_0c = Ad(R_0, p_0) e_c (:func:`.joint.free_root_world_column` of
# :func:`.joint.rigid_root_column`), perturbed on the right (q ⊕ dq, Pinocchio's convention); its
# parent is the fixed world, so psi_0c = 0, alpha_0c = (0, -g) x S_0c, and its columns of d a / d v are
# v_0 x S_0c (for a one-coordinate joint v_i x S_i = psi_i, hence the 2 psi of derivative_pairs).  Every
# pair is then the formula of step 3 column by column; within the root's own block the rows are
# IC_0 S_0c and BC_0^T S_0c (Carpentier & Mansard, Algorithm 1, with Pinocchio's joint columns).


@njit(cache=True, inline="always")
def world_twist(R, p, x):
    """The world twist (angular first, moment about the world origin) of a free flyer's rates x
    (6-tuple: linear, angular; body axes) for the body at world pose (R, p)."""
    w0, w1, w2 = rot(R, x[3], x[4], x[5])
    u0, u1, u2 = rot(R, x[0], x[1], x[2])
    c0, c1, c2 = cross(p[0], p[1], p[2], w0, w1, w2)
    return w0, w1, w2, u0 + c0, u1 + c1, u2 + c2


@njit(cache=True, inline="always")
def _root_forward(im, fm, q, qd, qdd, fw, P, grav, w):
    """Row w[0] of the rigid root (step 1): v_0 = S_0 v[0:nv0], a_0 = (0, -g) + S_0 a[0:nv0]
    (its v_0 x S_0 v[0:nv0] is zero); its single-column entries S, psi, alpha are zero (unused)."""
    R, p = rigid_root_placement(im, fm, q)
    v = world_twist(R, p, rigid_root_rates(im, qd))
    b = world_twist(R, p, rigid_root_rates(im, qdd))
    g0, g1, g2 = grav * fm[0, GRAV], grav * fm[0, GRAV + 1], grav * fm[0, GRAV + 2]
    _body_terms(fm, fw, P, w, 0, R, p, v, (b[0], b[1], b[2], b[3] - g0, b[4] - g1, b[5] - g2))
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    set_row6(w, 0, S, zero)
    set_row6(w, 0, PSI, zero)
    set_row6(w, 0, ALPHA, zero)


@njit(cache=True, inline="always")
def root_column(w, c):
    """(S_0c, alpha_0c, v_0 x S_0c) of the root's column c in world axes, as
    :func:`derivative_passes_root` left them in row w[c]."""
    return row6(w, c, CS), row6(w, c, CALPHA), row6(w, c, CDADV)


@njit(cache=True, inline="always")
def _root_columns(im, fm, grav, w):
    """Rows w[c] (CS, CALPHA, CDADV) of the root's columns c (:func:`root_column`) from row w[0]."""
    g0, g1, g2 = grav * fm[0, GRAV], grav * fm[0, GRAV + 1], grav * fm[0, GRAV + 2]
    R = (w[0, 0], w[0, 1], w[0, 2], w[0, 3], w[0, 4], w[0, 5], w[0, 6], w[0, 7], w[0, 8])
    v = row6(w, 0, V)
    for c in range(im[0, NV]):
        s = free_root_world_column(rigid_root_column(im, c), R, w[0, PW], w[0, PW + 1], w[0, PW + 2])
        t0, t1, t2 = cross(-g0, -g1, -g2, s[0], s[1], s[2])
        set_row6(w, c, CS, s)
        set_row6(w, c, CALPHA, (0.0, 0.0, 0.0, t0, t1, t2))
        set_row6(w, c, CDADV, mcross6(v, s))


@njit(cache=True, fastmath={"contract"})
def derivative_passes_root(im, fm, q, qd, qdd, fw, P, grav, w):
    """:func:`derivative_passes` for a rigid root (see above); w (nv, SCRATCH) for nv velocity
    coordinates (the root's columns in its first rows: :func:`root_column`)."""
    n = im.shape[0]
    ext = fw.shape[0] == n and n > 0
    o = im[0, NV] - 1
    _root_forward(im, fm, q, qd, qdd, fw, P, grav, w)
    _root_columns(im, fm, grav, w)
    for i in range(1, n):
        _forward(im, fm, q[im[i, IQ]], qd[i + o], qdd[i + o], fw, P, grav, w, i)
    _backward_pass(im, w, n, ext)


@njit(cache=True, fastmath={"contract"})
def derivative_pairs_root(im, fm, qd, grav, fric, smooth, ext, dq, dqd, w):
    """:func:`derivative_pairs` for a rigid root: d tau / d q, d tau / d v (nv, nv) from the scratch
    :func:`derivative_passes_root` filled (``ext``: it had external forces)."""
    n, nv, nr = im.shape[0], qd.shape[0], im[0, NV]
    for i in range(nv):
        for j in range(nv):
            dq[i, j] = 0.0
            dqd[i, j] = 0.0
    for i in range(1, n):
        r = i + nr - 1
        if _chain_pairs(im, w, i, nr - 1, 0, dq, dqd) == 0:  # the chain hangs from the root (else from the world:
            ri, rb = row6(w, i, RI), row6(w, i, RB)  # another root of a forest)
            e0, e1, e2 = w[i, E], w[i, E + 1], w[i, E + 2]
            phi, phid = row6(w, i, PHI), row6(w, i, PHID)
            for c in range(nr):
                s, alpha, dadv = root_column(w, c)
                dq[r, c] = dot6(ri, alpha) + (e0 * s[0] + e1 * s[1] + e2 * s[2])
                dqd[r, c] = dot6(ri, dadv) + dot6(rb, s)
                dq[c, r] = dot6(s, phi)
                dqd[c, r] = dot6(s, phid)
        if fric:
            _friction_diagonal(fm, qd, r, smooth, dqd)
    for c in range(nr):  # the root's own block
        sc = row6(w, c, CS)
        rc, rbc = inertia6(w, 0, sc), bmul6(w, 0, sc, True)
        ec = _external_e(w, 0, sc) if ext else (0.0, 0.0, 0.0)
        for d in range(nr):
            s, alpha, dadv = root_column(w, d)
            dq[c, d] = dot6(rc, alpha) + (ec[0] * s[0] + ec[1] * s[1] + ec[2] * s[2])
            dqd[c, d] = dot6(rc, dadv) + dot6(rbc, s)
        if fric:  # the root's coordinates' friction (a spherical root may have some; a free flyer has none)
            _friction_diagonal(fm, qd, c, smooth, dqd)


@njit(cache=True, fastmath={"contract"})
def derivatives_root(im, fm, q, qd, qdd, fw, P, grav, fric, smooth, dq, dqd, w):
    """:func:`derivatives_into` for a rigid root: d tau / d q, d tau / d v (nv, nv)."""
    derivative_passes_root(im, fm, q, qd, qdd, fw, P, grav, w)
    derivative_pairs_root(im, fm, qd, grav, fric, smooth, fw.shape[0] == im.shape[0] and im.shape[0] > 0, dq, dqd,
                          w)


# ---- the general form: joints of any kind anywhere in the tree.  Body i's joint has
# velocity coordinates c = IV_i ... IV_i + NV_i - 1, each a column S_c = Ad(R_i, p_i) S_local,c in world axes
# (:func:`.joint.joint_world_column`), perturbed on the right (q ⊕ dq, Pinocchio's convention).  Per column:
# psi_c = v_p x S_c, alpha_c = a_p x S_c + v_p x psi_c and d a_i / d v_c = v_i x S_c + psi_c (2 psi_c for a
# joint of one column); the body's twist v_i = v_p + v_J and a_i = a_p + a_J + v_i x v_J (v_J = sum S_c v_c,
# a_J likewise: the bias of a subspace constant in the child frame is zero).  Every pair of step 3 is then
# taken column by column, the joint's own block with its rows' IC_i S_c, BC_i^T S_c (Carpentier & Mansard,
# Algorithm 1, every joint contributing its nv columns).  A joint whose columns act one after the other
# (:func:`.joint.joint_chained_columns`: a universal joint, Rot(AX, q0) then Rot(AX2, q1) about one origin)
# is taken as that many one-coordinate joints in a row with massless bodies between: column c's psi and alpha
# from the twist and acceleration after the columns before it, d a / d v_c = 2 psi_c, and within the joint's
# block column d < c is an ancestor of c (what the subspace's turning with q1 adds, with no extra term).
# Row c of the scratch holds column c's vectors (CS ...).


@njit(cache=True, inline="always")
def _forward_general(im, fm, q, qd, qdd, fw, P, grav, w, i):
    """Row w[i] and the column rows of body i's joint (any kind; a chained one's columns in turn)."""
    R, p = joint_placement(im, fm, i, q)
    Rw, pw, vp, ap = _from_parent(im, fm, grav, w, i, R, p)
    o = im[i, IV]
    vj = aj = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for c in range(im[i, NV]):
        s = joint_world_column(im, fm, i, q, c, Rw, pw[0], pw[1], pw[2])
        set_row6(w, o + c, CS, s)
        vj = add6(vj, scale6(s, qd[o + c]))
        aj = add6(aj, scale6(s, qdd[o + c]))
    v = add6(vp, vj)
    chained = joint_chained_columns(im, i)
    vb, ab = vp, ap  # a chain's twist and acceleration before column c
    for c in range(im[i, NV]):
        s = row6(w, o + c, CS)
        psi = mcross6(vb, s)
        set_row6(w, o + c, CPSI, psi)
        set_row6(w, o + c, CALPHA, add6(mcross6(ab, s), mcross6(vb, psi)))
        if chained:
            x = scale6(s, qd[o + c])
            vb = add6(vb, x)
            ab = add6(add6(ab, scale6(s, qdd[o + c])), mcross6(vb, x))
            set_row6(w, o + c, CDADV, scale6(psi, 2.0))
        else:
            set_row6(w, o + c, CDADV, add6(mcross6(v, s), psi))
    _body_terms(fm, fw, P, w, i, Rw, pw, v, ab if chained else add6(add6(ap, aj), mcross6(v, vj)))


@njit(cache=True, fastmath={"contract"})
def derivatives_general(im, fm, q, qd, qdd, fw, P, grav, fric, smooth, dq, dqd, w):
    """:func:`derivatives_into` for a tree of joints of any kind (the general form above): d tau / d q,
    d tau / d v (nv, nv); w (nv, SCRATCH)."""
    general_passes(im, fm, q, qd, qdd, fw, P, grav, w)
    general_pairs(im, fm, qd, fric, smooth, fw.shape[0] == im.shape[0] and im.shape[0] > 0, dq, dqd, w)


@njit(cache=True, fastmath={"contract"})
def general_passes(im, fm, q, qd, qdd, fw, P, grav, w):
    """The general form's forward pass and subtree sums into w (nv, SCRATCH): afterwards w holds each body's
    subtree sums IC_i, BC_i, F_i and each column's S, psi, alpha, d a / d v (M[r, d] = IC_i S_r . S_d for
    column r of body i's joint and d one of i's or an ancestor's)."""
    n = im.shape[0]
    ext = fw.shape[0] == n and n > 0
    for i in range(n):
        _forward_general(im, fm, q, qd, qdd, fw, P, grav, w, i)
    for jj in range(n):
        _add_to_parent(im, w, n - 1 - jj, ext)


@njit(cache=True, fastmath={"contract"})
def general_pairs(im, fm, qd, fric, smooth, ext, dq, dqd, w):
    """d tau / d q, d tau / d v (nv, nv) from the scratch :func:`general_passes` filled (``ext``: it had
    external forces; friction as :func:`derivatives_into`)."""
    n, nv = im.shape[0], qd.shape[0]
    for i in range(nv):
        for j in range(nv):
            dq[i, j] = 0.0
            dqd[i, j] = 0.0
    for i in range(n):
        for r in range(im[i, IV], im[i, IV] + im[i, NV]):
            s = row6(w, r, CS)
            ri, rb = inertia6(w, i, s), bmul6(w, i, s, True)
            phi, e = _column_phi(w, i, s, row6(w, r, CPSI), row6(w, r, CALPHA), ext)
            phid = add6(inertia6(w, i, row6(w, r, CDADV)), bmul6(w, i, s, False))
            chained = joint_chained_columns(im, i)
            j = i
            while j >= 0:
                for d in range(im[j, IV], r + 1 if chained and j == i else im[j, IV] + im[j, NV]):
                    sd = row6(w, d, CS)
                    dq[r, d] = dot6(ri, row6(w, d, CALPHA)) + dot6(rb, row6(w, d, CPSI)) + \
                        (e[0] * sd[0] + e[1] * sd[1] + e[2] * sd[2])
                    dqd[r, d] = dot6(ri, row6(w, d, CDADV)) + dot6(rb, sd)
                    if d != r and (j != i or chained):  # column d acts before r: r's subtree moves with d
                        dq[d, r] = dot6(sd, phi)
                        dqd[d, r] = dot6(sd, phid)
                j = im[j, 0]
            if fric:
                _friction_diagonal(fm, qd, r, smooth, dqd)
