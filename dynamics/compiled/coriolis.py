"""Compiled Coriolis matrix in Christoffel form, world coordinates, for trees of joints of every kind.

The algorithm of :mod:`composedyn.dynamics.reference.coriolis` (Echeandia & Wensing
2021): world motion subspaces S_i, velocities v_i, dS_i/dt = v_i x S_i,
spatial inertias I_i and B_i = 1/2 (v_i x* I_i - I_i v_i x + A(I_i v_i)),
their subtree sums IC, BC, then for each body d and ancestor k:
C[k, d] = S_k . (IC_d dS_d + BC_d S_d), C[d, k] = S_d . (IC_d dS_k + BC_d S_k).

Representation (as in :mod:`.crba`).  Spatial vectors are angular first, in
world axes, about the point O = tree_p of body 0 (C does not depend on the
point; lever arms stay at the size of the robot).  An inertia is (m, h, A):
mass, first moment h = m c and rotational inertia A about O, all world axes;
it maps a motion (w, u) to I (w, u) = (A w + h x u, m u - h x w).  Body i
with world pose (R_i, p_i) (p_i from O) has its motion subspace S_i in world
axes about O, one column per velocity coordinate (:func:`.joint.joint_world_column`;
(a, p_i x a) for a revolute joint with world axis a).  A column's rate is
dS/dt = v_i x S + the rate of S from the joint's own coordinates
(:func:`.joint.joint_world_column_rate`: non-zero for a universal joint only,
whose first axis turns with its second angle in the child frame), so that
C qd = the velocity-product torques and dM/dt - 2C is skew-symmetric for every
kind (Pinocchio's ``computeCoriolisMatrix`` leaves that rate out; elsewhere the
two agree).

With v = (w, u) and I v = (k, l), B has two non-zero 3x3 blocks,
B = [[B11, 0], [-L, 0]], where (capitals: cross-product matrices)

    B11 = 1/2 (W A - A W - U H - H U - K) = W (A - tr(A)/2 1) - H U,
    H U = u h^T - (u . h) 1

(the second form from k = A w + h x u and, A symmetric,
A W + W A = ((tr A) w - A w) x).  A body stores (m, h, A upper triangle) and
(B11, l); subtree sums are plain sums of those.

1. Forward, i = 0 .. n-1, one body in local scalars: joint rotation
   (:mod:`.joint`; sin, cos of all joints first), world pose R_i = R_k X_R, p_i = p_k + R_k X_p,
   S_i, v_i = v_k + S_i qd_i, dS_i = v_i x S_i = (w x s1, w x s2 + u x s1)
   (+ the joint's own rate),
   the world inertia (hr = R h, h_w = hr + m p, A = R Io R^T + 2 (g . p) 1 -
   (g p^T + p g^T), g = hr + m p / 2), k, l and B11.  One store per body of
   what later passes read: pose and v (children), S, dS (a row per velocity
   coordinate), IC, BC (backward).
2. Backward, i = n-1 .. 0 (children have larger indices, so IC_i, BC_i are
   complete when reached): for each column b of S_i, with s = S_b, t = dS_b,
   F = IC t + BC s = IC t + (B11 s1, s1 x l), H = IC s (IC symmetric),
   K = BC^T s = (B11^T s1 + l x s2, 0); C[a, b] = S_a . F for the joint's own
   columns a (C[b, b] = s . F); for every column a of every ancestor:
   C[a, b] = S_a . F, C[b, a] = dS_a . H + S_a . K (IC_i, BC_i added to the
   parent's first, and read again per column: fewer values live in the
   loops).  Entries between different branches are zero: ``out`` is
   zero-filled first unless the tree is a chain.  A one-coordinate joint takes
   the joint model's inlinable forms (``im[i, NV] == 1``: :func:`.joint.joint_offset_of`,
   :func:`.joint.joint_world_column_of`) and keeps its column in registers.

How the code is written, for speed (as :mod:`.rnea` and :mod:`.crba`):

* every per-body quantity lives in local scalars, passed through small helpers
  that take and return tuples (inlined by LLVM; :func:`_world_inertia` is too
  big for LLVM's inliner and is inlined by numba, hence scalar and tuple
  arguments only); the scratch array, addressed as (w, row, column), is
  written once per body and read only for what later steps need;
* B11 in the closed form above (~30 multiplications instead of ~80);
* the subtree sums done in the backward pass, while IC_i and BC_i are in
  registers, instead of a separate pass;
* all sin/cos first (they pipeline), no allocation per call;
* no numba reference counting (12 atomic NRT_incref/NRT_decref calls per call,
  ~60 ns): no array views, no non-inlined calls with array arguments, no
  reversed ``range``, and every array argument used until the end of
  :func:`coriolis_into` (see there);
* ``fastmath={"contract"}`` (fused multiply-add): results differ from
  the NumPy reference in the last bits only (~1e-15 relative).
"""

from __future__ import annotations

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    joint_angle,
    joint_offset,
    joint_offset_of,
    joint_rotation_row,
    joint_sincos,
    joint_turn,
    joint_world_column,
    joint_world_column_of,
    joint_world_column_rate,
    motion_cross,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import IO, IQ, IV, MASS, NV, PARENT, TP, H
from composedyn.dynamics.reference.coriolis import coriolis_matrix as reference

# scratch columns per body: world pose (R row-major, p) 0:12, v,
# IC = (m, h, A00 A01 A02 A11 A12 A22), BC = (B11 row-major, l), sin q, cos q;
# per velocity coordinate (row k < nv): its column of S and dS/dt
_S, _SD, _V, _IC, _BC, _SC = 12, 18, 24, 30, 40, 52
SCRATCH = 54
_FMA = {"contract"}  # fused multiply-add only (never nnan/ninf: nan and inf propagate)


@njit(cache=True, fastmath=_FMA)
def _parent_row(w, k, r, x0, x1, x2, x3, x4, x5, x6, x7, x8, y0, y1, y2):
    """Row r of the world pose (R_k X_R, p_k + R_k X_p) from parent k's pose in w."""
    j = 3 * r
    k0, k1, k2 = w[k, j], w[k, j + 1], w[k, j + 2]
    return (k0 * x0 + k1 * x3 + k2 * x6, k0 * x1 + k1 * x4 + k2 * x7, k0 * x2 + k1 * x5 + k2 * x8,
            w[k, 9 + r] + k0 * y0 + k1 * y1 + k2 * y2)


@njit(cache=True, fastmath=_FMA, inline="always")
def _world_inertia(m, b0, b1, b2, J, R, p0, p1, p2):
    """Inertia (m, h = (b0, b1, b2), Io = J upper triangle) of pose (R, p) in world axes about O:
    (m, h_w, A upper triangle), with hr = R h, h_w = hr + m p,
    A = R Io R^T + d 1 - (g p^T + p g^T), g = hr + m p / 2, d = 2 g . p.

    Scalars and tuples only, and inlined by numba (LLVM leaves a function this large as a call)."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8 = R
    J0, J1, J2, J4, J5, J8 = J
    hr0 = R0 * b0 + R1 * b1 + R2 * b2
    hr1 = R3 * b0 + R4 * b1 + R5 * b2
    hr2 = R6 * b0 + R7 * b1 + R8 * b2
    g0, g1, g2 = hr0 + 0.5 * m * p0, hr1 + 0.5 * m * p1, hr2 + 0.5 * m * p2
    d = 2.0 * (g0 * p0 + g1 * p1 + g2 * p2)
    t00, t10, t20 = J0 * R0 + J1 * R1 + J2 * R2, J1 * R0 + J4 * R1 + J5 * R2, J2 * R0 + J5 * R1 + J8 * R2  # T = Io R^T
    t01, t11, t21 = J0 * R3 + J1 * R4 + J2 * R5, J1 * R3 + J4 * R4 + J5 * R5, J2 * R3 + J5 * R4 + J8 * R5
    t02, t12, t22 = J0 * R6 + J1 * R7 + J2 * R8, J1 * R6 + J4 * R7 + J5 * R8, J2 * R6 + J5 * R7 + J8 * R8
    return (m, hr0 + m * p0, hr1 + m * p1, hr2 + m * p2,
            R0 * t00 + R1 * t10 + R2 * t20 + d - 2.0 * g0 * p0,
            R0 * t01 + R1 * t11 + R2 * t21 - (g0 * p1 + p0 * g1),
            R0 * t02 + R1 * t12 + R2 * t22 - (g0 * p2 + p0 * g2),
            R3 * t01 + R4 * t11 + R5 * t21 + d - 2.0 * g1 * p1,
            R3 * t02 + R4 * t12 + R5 * t22 - (g1 * p2 + p1 * g2),
            R6 * t02 + R7 * t12 + R8 * t22 + d - 2.0 * g2 * p2)


@njit(cache=True, fastmath=_FMA)
def _b11(A00, A01, A02, A11, A12, A22, h0, h1, h2, w0, w1, w2, u0, u1, u2):
    """B11 = W (A - tr(A)/2 1) - (u h^T - (u . h) 1), row-major."""
    e = 0.5 * (A00 + A11 + A22)
    a00, a11, a22 = A00 - e, A11 - e, A22 - e
    uh = u0 * h0 + u1 * h1 + u2 * h2
    # W Â column by column: w x Â[:, c]
    return (w1 * A02 - w2 * A01 - u0 * h0 + uh, w1 * A12 - w2 * a11 - u0 * h1, w1 * a22 - w2 * A12 - u0 * h2,
            w2 * a00 - w0 * A02 - u1 * h0, w2 * A01 - w0 * A12 - u1 * h1 + uh, w2 * A02 - w0 * a22 - u1 * h2,
            w0 * A01 - w1 * a00 - u2 * h0, w0 * a11 - w1 * A01 - u2 * h1, w0 * A12 - w1 * A02 - u2 * h2 + uh)


@njit(cache=True, fastmath=_FMA)
def _sym_apply(m, h0, h1, h2, A00, A01, A02, A11, A12, A22, x0, x1, x2, x3, x4, x5):
    """I x = (A x1 + h x x2, m x2 - h x x1) for an inertia (m, h, A upper triangle)."""
    return (A00 * x0 + A01 * x1 + A02 * x2 + (h1 * x5 - h2 * x4),
            A01 * x0 + A11 * x1 + A12 * x2 + (h2 * x3 - h0 * x5),
            A02 * x0 + A12 * x1 + A22 * x2 + (h0 * x4 - h1 * x3),
            m * x3 - (h1 * x2 - h2 * x1), m * x4 - (h2 * x0 - h0 * x2), m * x5 - (h0 * x1 - h1 * x0))


def _coriolis(general: bool):
    """The Coriolis kernel compiled for revolute and prismatic joints only (``general`` False: body
    i's coordinate is q[i], v[i], one column per body) or for joints of every kind (True); one
    source, two machine codes (as :func:`.rnea._rnea`)."""

    @njit(cache=True, fastmath=_FMA)
    def coriolis_into(im, fm, q, qd, out, w):
        """C(q, qd) (nv, nv) into ``out`` for one sample of n bodies, q (nq,), qd (nv,) (joints of every
        kind: :mod:`.joint`), scratch ``w`` (nv, SCRATCH) (nv >= n); see the module docstring for the
        formulas and the scratch layout.

        The last line, a call that does nothing, keeps ``fm``, ``q`` and ``qd`` alive to the
        end.  Without it numba drops their references after the forward pass, LLVM duplicates
        that point along the n = 0 path, and numba's reference-count pruning (which needs one
        place after which all arrays are released) then keeps the incref/decref of every
        array argument.
        """
        n = im.shape[0]
        for i in range(n):  # the joint angles' sin, cos first: independent of the tree, they pipeline
            w[i, _SC], w[i, _SC + 1] = joint_sincos(im, i, q) if general else joint_angle(im, i, q[i])
        chain = True
        for i in range(n):  # 1. forward
            k = im[i, PARENT]
            if k != i - 1:
                chain = False
            one = not general or im[i, NV] == 1  # one coordinate: the joint model's functions that LLVM inlines
            iv = im[i, IV] if general else i
            s, c = w[i, _SC], w[i, _SC + 1]  # joint transform X = (X_R, X_p) (joint model)
            x0, x1, x2 = joint_rotation_row(im, fm, i, 0, s, c)
            x3, x4, x5 = joint_rotation_row(im, fm, i, 1, s, c)
            x6, x7, x8 = joint_rotation_row(im, fm, i, 2, s, c)
            if one:
                y0, y1, y2 = joint_offset_of(im, fm, i, q[im[i, IQ] if general else i])
            else:
                x0, x1, x2, x3, x4, x5, x6, x7, x8 = joint_turn(im, fm, i, q, (x0, x1, x2, x3, x4, x5, x6, x7, x8))
                y0, y1, y2 = joint_offset(im, fm, i, q)
            if k < 0:  # world pose = X, position taken from O; v_parent = 0
                R0, R1, R2, R3, R4, R5, R6, R7, R8 = x0, x1, x2, x3, x4, x5, x6, x7, x8
                p0, p1, p2 = y0 - fm[0, TP], y1 - fm[0, TP + 1], y2 - fm[0, TP + 2]
                w0, w1, w2, u0, u1, u2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            else:
                R0, R1, R2, p0 = _parent_row(w, k, 0, x0, x1, x2, x3, x4, x5, x6, x7, x8, y0, y1, y2)
                R3, R4, R5, p1 = _parent_row(w, k, 1, x0, x1, x2, x3, x4, x5, x6, x7, x8, y0, y1, y2)
                R6, R7, R8, p2 = _parent_row(w, k, 2, x0, x1, x2, x3, x4, x5, x6, x7, x8, y0, y1, y2)
                w0, w1, w2, u0, u1, u2 = w[k, _V], w[k, _V + 1], w[k, _V + 2], w[k, _V + 3], w[k, _V + 4], w[k, _V + 5]
            R = (R0, R1, R2, R3, R4, R5, R6, R7, R8)
            # S (world, about O), one row per velocity coordinate; v += S qd
            if one:
                s0, s1, s2, s3, s4, s5 = joint_world_column_of(im, fm, i, R, p0, p1, p2)
                w[iv, _S], w[iv, _S + 1], w[iv, _S + 2] = s0, s1, s2
                w[iv, _S + 3], w[iv, _S + 4], w[iv, _S + 5] = s3, s4, s5
                qdi = qd[iv]
                w0, w1, w2, u0, u1, u2 = (w0 + s0 * qdi, w1 + s1 * qdi, w2 + s2 * qdi,
                                          u0 + s3 * qdi, u1 + s4 * qdi, u2 + s5 * qdi)
            else:
                for d in range(iv, iv + im[i, NV]):
                    s0, s1, s2, s3, s4, s5 = joint_world_column(im, fm, i, q, d - iv, R, p0, p1, p2)
                    w[d, _S], w[d, _S + 1], w[d, _S + 2] = s0, s1, s2
                    w[d, _S + 3], w[d, _S + 4], w[d, _S + 5] = s3, s4, s5
                    qdi = qd[d]
                    w0, w1, w2, u0, u1, u2 = (w0 + s0 * qdi, w1 + s1 * qdi, w2 + s2 * qdi,
                                              u0 + s3 * qdi, u1 + s4 * qdi, u2 + s5 * qdi)
            # dS = v x S (+ the rate of S from the joint's own coordinates: a universal joint's)
            if one:
                d0, d1, d2, d3, d4, d5 = motion_cross(w0, w1, w2, u0, u1, u2, s0, s1, s2, s3, s4, s5)
                w[iv, _SD], w[iv, _SD + 1], w[iv, _SD + 2] = d0, d1, d2
                w[iv, _SD + 3], w[iv, _SD + 4], w[iv, _SD + 5] = d3, d4, d5
            else:
                for d in range(iv, iv + im[i, NV]):
                    d0, d1, d2, d3, d4, d5 = motion_cross(w0, w1, w2, u0, u1, u2, w[d, _S], w[d, _S + 1], w[d, _S + 2],
                                                          w[d, _S + 3], w[d, _S + 4], w[d, _S + 5])
                    e0, e1, e2, e3, e4, e5 = joint_world_column_rate(im, fm, i, q, d - iv, R, p0, p1, p2, qd)
                    w[d, _SD], w[d, _SD + 1], w[d, _SD + 2] = d0 + e0, d1 + e1, d2 + e2
                    w[d, _SD + 3], w[d, _SD + 4], w[d, _SD + 5] = d3 + e3, d4 + e4, d5 + e5
            m, h0, h1, h2, A00, A01, A02, A11, A12, A22 = _world_inertia(
                fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2],
                (fm[i, IO], fm[i, IO + 1], fm[i, IO + 2], fm[i, IO + 4], fm[i, IO + 5], fm[i, IO + 8]),
                R, p0, p1, p2)
            l0, l1, l2 = m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0)
            B0, B1, B2, B3, B4, B5, B6, B7, B8 = _b11(A00, A01, A02, A11, A12, A22, h0, h1, h2, w0, w1, w2, u0, u1, u2)
            # stores: pose and v (children), IC, BC (backward); S and dS above
            w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5] = R0, R1, R2, R3, R4, R5
            w[i, 6], w[i, 7], w[i, 8], w[i, 9], w[i, 10], w[i, 11] = R6, R7, R8, p0, p1, p2
            w[i, _V], w[i, _V + 1], w[i, _V + 2], w[i, _V + 3], w[i, _V + 4], w[i, _V + 5] = w0, w1, w2, u0, u1, u2
            w[i, _IC], w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3] = m, h0, h1, h2
            w[i, _IC + 4], w[i, _IC + 5], w[i, _IC + 6], w[i, _IC + 7], w[i, _IC + 8] = A00, A01, A02, A11, A12
            w[i, _IC + 9] = A22
            w[i, _BC], w[i, _BC + 1], w[i, _BC + 2], w[i, _BC + 3], w[i, _BC + 4] = B0, B1, B2, B3, B4
            w[i, _BC + 5], w[i, _BC + 6], w[i, _BC + 7], w[i, _BC + 8] = B5, B6, B7, B8
            w[i, _BC + 9], w[i, _BC + 10], w[i, _BC + 11] = l0, l1, l2
        if not chain:  # entries between different branches stay 0; a chain writes all of them
            for r in range(out.shape[0]):
                for c in range(out.shape[0]):
                    out[r, c] = 0.0
        for jj in range(n):  # 2. backward, i = n-1 .. 0 (a forward range: see the module docstring)
            i = n - 1 - jj
            j = im[i, PARENT]
            if j >= 0:  # IC_i, BC_i (complete) added to the parent's first: not live in the loops below
                for c in range(_IC, _BC + 12):
                    w[j, c] += w[i, c]
            iv, nvi = (im[i, IV], im[i, NV]) if general else (i, 1)
            one = nvi == 1
            for b in range(iv, iv + nvi):  # the columns (and rows) of body i's velocity coordinates
                m, h0, h1, h2 = w[i, _IC], w[i, _IC + 1], w[i, _IC + 2], w[i, _IC + 3]
                A00, A01, A02, A11, A12 = w[i, _IC + 4], w[i, _IC + 5], w[i, _IC + 6], w[i, _IC + 7], w[i, _IC + 8]
                A22 = w[i, _IC + 9]
                B0, B1, B2, B3, B4 = w[i, _BC], w[i, _BC + 1], w[i, _BC + 2], w[i, _BC + 3], w[i, _BC + 4]
                B5, B6, B7, B8 = w[i, _BC + 5], w[i, _BC + 6], w[i, _BC + 7], w[i, _BC + 8]
                l0, l1, l2 = w[i, _BC + 9], w[i, _BC + 10], w[i, _BC + 11]
                s0, s1, s2, s3, s4, s5 = w[b, _S], w[b, _S + 1], w[b, _S + 2], w[b, _S + 3], w[b, _S + 4], w[b, _S + 5]
                t0, t1, t2 = w[b, _SD], w[b, _SD + 1], w[b, _SD + 2]
                t3, t4, t5 = w[b, _SD + 3], w[b, _SD + 4], w[b, _SD + 5]
                # H = IC s;  F = IC t + (B11 s1, s1 x l);  K = B11^T s1 + l x s2
                H0, H1, H2, H3, H4, H5 = _sym_apply(m, h0, h1, h2, A00, A01, A02, A11, A12, A22, s0, s1, s2, s3, s4, s5)
                F0, F1, F2, F3, F4, F5 = _sym_apply(m, h0, h1, h2, A00, A01, A02, A11, A12, A22, t0, t1, t2, t3, t4, t5)
                c0, c1, c2 = cross(s0, s1, s2, l0, l1, l2)
                F0 = F0 + (B0 * s0 + B1 * s1 + B2 * s2)
                F1 = F1 + (B3 * s0 + B4 * s1 + B5 * s2)
                F2 = F2 + (B6 * s0 + B7 * s1 + B8 * s2)
                F3, F4, F5 = F3 + c0, F4 + c1, F5 + c2
                c0, c1, c2 = cross(l0, l1, l2, s3, s4, s5)
                K0 = B0 * s0 + B3 * s1 + B6 * s2 + c0
                K1 = B1 * s0 + B4 * s1 + B7 * s2 + c1
                K2 = B2 * s0 + B5 * s1 + B8 * s2 + c2
                if one:
                    out[b, b] = s0 * F0 + s1 * F1 + s2 * F2 + s3 * F3 + s4 * F4 + s5 * F5
                else:
                    for a in range(iv, iv + nvi):  # C[a, b] = S_a . F for the joint's own coordinates
                        out[a, b] = (w[a, _S] * F0 + w[a, _S + 1] * F1 + w[a, _S + 2] * F2
                                     + w[a, _S + 3] * F3 + w[a, _S + 4] * F4 + w[a, _S + 5] * F5)
                j = im[i, PARENT]
                while j >= 0:  # C[a, b] = S_a . F,  C[b, a] = dS_a . H + S_a . K for every ancestor's a
                    jv, nvj = (im[j, IV], im[j, NV]) if general else (j, 1)
                    for a in range(jv, jv + nvj):
                        out[a, b] = (w[a, _S] * F0 + w[a, _S + 1] * F1 + w[a, _S + 2] * F2
                                     + w[a, _S + 3] * F3 + w[a, _S + 4] * F4 + w[a, _S + 5] * F5)
                        out[b, a] = (w[a, _SD] * H0 + w[a, _SD + 1] * H1 + w[a, _SD + 2] * H2
                                     + w[a, _SD + 3] * H3 + w[a, _SD + 4] * H4 + w[a, _SD + 5] * H5
                                     + w[a, _S] * K0 + w[a, _S + 1] * K1 + w[a, _S + 2] * K2)
                    j = im[j, PARENT]
        _keep_alive(fm, q, qd)

    return coriolis_into


_CORIOLIS_SCALAR, _CORIOLIS_GENERAL = _coriolis(False), _coriolis(True)


@njit(cache=True, inline="always")
def coriolis_into(im, fm, q, qd, out, w):
    """C(q, qd) (nv, nv) into ``out`` for one sample (see the kernel of :func:`_coriolis`)."""
    if scalar_joints(im):
        _CORIOLIS_SCALAR(im, fm, q, qd, out, w)
    else:
        _CORIOLIS_GENERAL(im, fm, q, qd, out, w)


@njit(cache=True)
def _keep_alive(*arrays):
    """Does nothing; called at the end of :func:`coriolis_into` (see there)."""


# ---- declaration (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def coriolis_matrix(im, fm, q, v, out, w):
    """C(q, v) (nv, nv), Christoffel form, into out; status 4: a zero quaternion."""
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    coriolis_into(im, fm, q, v, out, w)
    return 0


CORIOLIS_MATRIX = Quantity("coriolis_matrix", coriolis_matrix, inputs=(("q", "nq"), ("v", "nv")),
                           results=(("nv", "nv"),), scratch=(("nv", SCRATCH),), reference=reference)
