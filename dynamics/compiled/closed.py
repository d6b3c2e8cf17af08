"""Compiled closed-chain dynamics: loop closure, projection and reduced dynamics in one kernel.

The same quantities as :mod:`composedyn.dynamics.constraints.loops` and
:mod:`composedyn.dynamics.constraints.reduced` (the NumPy reference), for a
tree of n joints whose loops give m equations phi(q) = 0, k = n - m
independent joints (layout: :mod:`.closed_layout`):

1. position closure: from the last closed configuration, the independent
   coordinates move in continuation steps of at most ``STEP`` (periodic
   angles the short way round); at each step Newton on the dependent ones,
   dq_D = -J_D^-1 phi (steps clipped to ``MAX_STEP``), until max |phi| <= tol;
2. world poses of the bodies by the compiled joint model (:mod:`.joint`),
   world motion vectors S_j (angular first, about the world origin), the
   constraint Jacobian J (m, n): a point x fixed to body i moves with column
   v_j + w_j x x of every ancestor j; orientation rows w_a - w_b;
3. W (n, k) with W_I = 1, W_D = -J_D^-1 J_I; qd = W qd_I; the acceleration
   bias gamma = -(dJ/dt) qd from the body velocities V_i and
   dS_j/dt = V_j x S_j; qdd = W qdd_I + w, J_D w_D = gamma;
4. Kolev's projection: tau_I = W^T tau_tree(q, qd, qdd) with the tree's
   inverse dynamics by :func:`.rnea.rnea_into`; M_red = W^T M W with M by
   :func:`.crba.crba_into`; forward dynamics M_red qdd_I = tau - W^T
   tau_tree(q, qd, w) by :func:`.forward.cholesky_solve`; closure forces
   J_D^T lambda = tau_tree,D.

References: Kolev, "Modified equations of Lagrange of II order" (eq. 2.20,
dependent coordinates unactuated); Wehage & Haug, "Generalized coordinate
partitioning for dimension reduction in analysis of constrained dynamic
systems", J. Mech. Design 104 (1982).

:func:`closed_one` returns a status: 0 done; 1 an argument has the wrong
length; 2 NaN or inf; 3 M_red not positive definite; 4 the loops do not
close (Newton failed); 5 J_D singular; 6 all-joint positions that do not
close the loops.  The caller re-runs the NumPy path on a non-zero status,
which raises the error naming joints and loop rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types as nbtypes

from composedyn.dynamics.compiled.closed_layout import (
    ACCELERATIONS,
    FD,
    FORCES,
    HEAD,
    ID,
    LOOP_FLOATS,
    LOOP_INTS,
    MASS,
    POSITIONS,
    VELOCITIES,
    wrap_angles,
)
from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.forward import cholesky_solve
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import cross, joint_motion_world, joint_pose, rot
from composedyn.dynamics.compiled.layout import NO_FW
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into

STEP, MAX_STEP, MAX_ITER, CLOSED = 0.2, 0.5, 60, 1e-8  # as ClosedChain.STEP and reduced.newton_close


@njit(cache=True, inline="always")
def _poses(im, fm, q, P):
    """P[i] = world pose of body i: R row-major (0:9), p (9:12)."""
    for i in range(q.shape[0]):
        R, p = joint_pose(im, fm, i, q[i])
        k = im[i, 0]
        if k < 0:
            for c in range(9):
                P[i, c] = R[c]
            P[i, 9], P[i, 10], P[i, 11] = p
            continue
        K = (P[k, 0], P[k, 1], P[k, 2], P[k, 3], P[k, 4], P[k, 5], P[k, 6], P[k, 7], P[k, 8])
        for r in range(3):
            for c in range(3):
                P[i, 3 * r + c] = K[3 * r] * R[c] + K[3 * r + 1] * R[3 + c] + K[3 * r + 2] * R[6 + c]
        x0, x1, x2 = rot(K, p[0], p[1], p[2])
        P[i, 9], P[i, 10], P[i, 11] = P[k, 9] + x0, P[k, 10] + x1, P[k, 11] + x2


@njit(cache=True, inline="always")
def _subspaces(im, fm, P, S):
    """S[i] = world motion vector of joint i, angular first: (a, p x a) revolute, (0, a) prismatic."""
    for i in range(P.shape[0]):
        R = (P[i, 0], P[i, 1], P[i, 2], P[i, 3], P[i, 4], P[i, 5], P[i, 6], P[i, 7], P[i, 8])
        S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5] = joint_motion_world(im, fm, i, R, P[i, 9], P[i, 10],
                                                                                P[i, 11])


@njit(cache=True, inline="always")
def _end(cf, f, b, P):
    """World point x and rotation (9-tuple) of a closure frame: (c, Rc) at cf[f:f+12] on body b."""
    c0, c1, c2 = cf[f], cf[f + 1], cf[f + 2]
    Rc = (cf[f + 3], cf[f + 4], cf[f + 5], cf[f + 6], cf[f + 7], cf[f + 8], cf[f + 9], cf[f + 10], cf[f + 11])
    if b < 0:
        return (c0, c1, c2), Rc
    R = (P[b, 0], P[b, 1], P[b, 2], P[b, 3], P[b, 4], P[b, 5], P[b, 6], P[b, 7], P[b, 8])
    x0, x1, x2 = rot(R, c0, c1, c2)
    Rw = (R[0] * Rc[0] + R[1] * Rc[3] + R[2] * Rc[6], R[0] * Rc[1] + R[1] * Rc[4] + R[2] * Rc[7],
          R[0] * Rc[2] + R[1] * Rc[5] + R[2] * Rc[8], R[3] * Rc[0] + R[4] * Rc[3] + R[5] * Rc[6],
          R[3] * Rc[1] + R[4] * Rc[4] + R[5] * Rc[7], R[3] * Rc[2] + R[4] * Rc[5] + R[5] * Rc[8],
          R[6] * Rc[0] + R[7] * Rc[3] + R[8] * Rc[6], R[6] * Rc[1] + R[7] * Rc[4] + R[8] * Rc[7],
          R[6] * Rc[2] + R[7] * Rc[5] + R[8] * Rc[8])
    return (P[b, 9] + x0, P[b, 10] + x1, P[b, 11] + x2), Rw


@njit(cache=True)
def _rotvec(A, B):
    """rotvec(A B^T) for rotations A, B (9-tuples): the angle-axis vector of the relative rotation."""
    R = np.empty(9)
    for r in range(3):
        for c in range(3):
            R[3 * r + c] = A[3 * r] * B[3 * c] + A[3 * r + 1] * B[3 * c + 1] + A[3 * r + 2] * B[3 * c + 2]
    v0, v1, v2 = R[7] - R[5], R[2] - R[6], R[3] - R[1]  # 2 sin(t) axis
    co = min(1.0, max(-1.0, 0.5 * (R[0] + R[4] + R[8] - 1.0)))
    s = 0.5 * math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    t = math.atan2(s, co)
    if t < 1e-6:
        f = 0.5 * (1.0 + t * t / 6.0)
        return f * v0, f * v1, f * v2
    if t < 3.0:
        f = 0.5 * t / s
        return f * v0, f * v1, f * v2
    # near pi: axis from the symmetric part, R + R^T = 2 cos t 1 + 2 (1 - cos t) a a^T
    i = 0
    if R[4] > R[3 * i + i]:
        i = 1
    if R[8] > R[3 * i + i]:
        i = 2
    a = np.empty(3)
    a[i] = math.sqrt(max(0.0, (R[4 * i] - co) / (1.0 - co)))
    for j in range(3):
        if j != i:
            a[j] = (R[3 * i + j] + R[3 * j + i]) / (2.0 * (1.0 - co) * a[i])
    if a[0] * v0 + a[1] * v1 + a[2] * v2 < 0.0:
        a[0], a[1], a[2] = -a[0], -a[1], -a[2]
    return t * a[0], t * a[1], t * a[2]


@njit(cache=True, inline="always")
def _loop_base(cm):
    return HEAD + cm[1] + cm[2]


@njit(cache=True, inline="always")
def _residual(cm, cf, P, phi):
    """phi (m,) at the poses P; returns max |phi| (NaN propagates)."""
    o0, row, worst = _loop_base(cm), 0, 0.0
    e = np.empty(6)
    for lp in range(cm[3]):
        o, f = o0 + LOOP_INTS * lp, 1 + LOOP_FLOATS * lp
        xa, Ra = _end(cf, f, cm[o], P)
        xb, Rb = _end(cf, f + 12, cm[o + 1], P)
        e[0], e[1], e[2] = xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]
        if cm[o + 3]:
            e[3], e[4], e[5] = _rotvec(Ra, Rb)
        for r in range(cm[o + 2]):
            x = e[cm[o + 4 + r]]
            phi[row] = x
            if not abs(x) <= worst:
                worst = abs(x)
            row += 1
    return worst


@njit(cache=True, inline="always")
def _jacobian(im, cm, cf, P, S, J):
    """J (m, n) = d phi / d q (orientation rows: w_a - w_b) at the poses P, motion vectors S."""
    J[:, :] = 0.0
    o0, row = _loop_base(cm), 0
    for lp in range(cm[3]):
        o, f = o0 + LOOP_INTS * lp, 1 + LOOP_FLOATS * lp
        for end in range(2):
            b = cm[o + end]
            x, _ = _end(cf, f + 12 * end, b, P)
            sg = 1.0 - 2.0 * end
            j = b
            while j >= 0:
                u0, u1, u2 = cross(S[j, 0], S[j, 1], S[j, 2], x[0], x[1], x[2])
                col = (S[j, 3] + u0, S[j, 4] + u1, S[j, 5] + u2, S[j, 0], S[j, 1], S[j, 2])
                for r in range(cm[o + 2]):
                    J[row + r, j] += sg * col[cm[o + 4 + r]]
                j = im[j, 0]
        row += cm[o + 2]


@njit(cache=True)
def _bias(im, cm, cf, P, S, qd, V, gam):
    """gamma (m,) = -(dJ/dt) qd: V[i] world body velocities, dS_j/dt = V_j x S_j."""
    n = qd.shape[0]
    for i in range(n):
        k = im[i, 0]
        for c in range(6):
            V[i, c] = S[i, c] * qd[i] + (V[k, c] if k >= 0 else 0.0)
    o0, row = _loop_base(cm), 0
    acc = np.empty((2, 6))
    for lp in range(cm[3]):
        o, f = o0 + LOOP_INTS * lp, 1 + LOOP_FLOATS * lp
        for end in range(2):
            b = cm[o + end]
            for c in range(6):
                acc[end, c] = 0.0
            if b < 0:
                continue
            x, _ = _end(cf, f + 12 * end, b, P)
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0  # sum of (V_j x S_j) qd_j over the ancestors
            j = b
            while j >= 0:
                w0, w1, w2, u0, u1, u2 = V[j, 0], V[j, 1], V[j, 2], V[j, 3], V[j, 4], V[j, 5]
                s0, s1, s2, t0, t1, t2 = S[j, 0], S[j, 1], S[j, 2], S[j, 3], S[j, 4], S[j, 5]
                c0, c1, c2 = cross(w0, w1, w2, s0, s1, s2)
                d0, d1, d2 = cross(w0, w1, w2, t0, t1, t2)
                e0, e1, e2 = cross(u0, u1, u2, s0, s1, s2)
                qj = qd[j]
                a0, a1, a2 = a0 + c0 * qj, a1 + c1 * qj, a2 + c2 * qj
                a3, a4, a5 = a3 + (d0 + e0) * qj, a4 + (d1 + e1) * qj, a5 + (d2 + e2) * qj
                j = im[j, 0]
            w0, w1, w2 = V[b, 0], V[b, 1], V[b, 2]
            y0, y1, y2 = cross(w0, w1, w2, x[0], x[1], x[2])
            y0, y1, y2 = cross(w0, w1, w2, V[b, 3] + y0, V[b, 4] + y1, V[b, 5] + y2)
            z0, z1, z2 = cross(a0, a1, a2, x[0], x[1], x[2])
            acc[end, 0], acc[end, 1], acc[end, 2] = a3 + z0 + y0, a4 + z1 + y1, a5 + z2 + y2
            acc[end, 3], acc[end, 4], acc[end, 5] = a0, a1, a2
        for r in range(cm[o + 2]):
            c = cm[o + 4 + r]
            gam[row + r] = acc[1, c] - acc[0, c]
        row += cm[o + 2]


@njit(cache=True)
def _lu(A, piv):
    """In-place LU with partial pivoting of A (m, m); 1 when a pivot is zero or not finite."""
    m = A.shape[0]
    for j in range(m):
        p, big = j, abs(A[j, j])
        for i in range(j + 1, m):
            if abs(A[i, j]) > big:
                p, big = i, abs(A[i, j])
        if not big > 0.0 or not math.isfinite(big):
            return 1
        piv[j] = p
        if p != j:
            for c in range(m):
                A[j, c], A[p, c] = A[p, c], A[j, c]
        for i in range(j + 1, m):
            A[i, j] /= A[j, j]
            x = A[i, j]
            for c in range(j + 1, m):
                A[i, c] -= x * A[j, c]
    return 0


@njit(cache=True, inline="always")
def _lu_solve(A, piv, b):
    """Solve in place (LU of A from :func:`_lu`) A x = b."""
    m = A.shape[0]
    for j in range(m):
        p = piv[j]
        if p != j:
            b[j], b[p] = b[p], b[j]
    for i in range(m):
        for c in range(i):
            b[i] -= A[i, c] * b[c]
    for i in range(m - 1, -1, -1):
        for c in range(i + 1, m):
            b[i] -= A[i, c] * b[c]
        b[i] /= A[i, i]


@njit(cache=True, inline="always")
def _lu_solve_t(A, piv, b):
    """Solve in place A^T x = b (LU of A from :func:`_lu`)."""
    m = A.shape[0]
    for i in range(m):  # U^T y = b
        for c in range(i):
            b[i] -= A[c, i] * b[c]
        b[i] /= A[i, i]
    for i in range(m - 1, -1, -1):  # L^T z = y
        for c in range(i + 1, m):
            b[i] -= A[c, i] * b[c]
    for j in range(m - 1, -1, -1):  # x = P^T z
        p = piv[j]
        if p != j:
            b[j], b[p] = b[p], b[j]


@njit(cache=True)
def _factor_dependent(cm, J, LU, piv):
    """LU of J_D (the dependent columns of J); 1 when singular."""
    k, m = cm[1], cm[2]
    for r in range(m):
        for c in range(m):
            LU[r, c] = J[r, cm[HEAD + k + c]]
    return _lu(LU, piv)


@njit(cache=True)
def _newton(im, fm, cm, cf, q, P, S, J, phi, LU, piv):
    """Newton on the dependent entries of q (n,) until max |phi| <= tol; returns that residual."""
    k, m = cm[1], cm[2]
    tol = cf[0]
    res = np.inf
    for it in range(MAX_ITER + 1):
        _poses(im, fm, q, P)
        res = _residual(cm, cf, P, phi)
        if res <= tol or it == MAX_ITER or not math.isfinite(res):
            break
        _subspaces(im, fm, P, S)
        _jacobian(im, cm, cf, P, S, J)
        if _factor_dependent(cm, J, LU, piv):
            break
        for r in range(m):
            phi[r] = -phi[r]
        _lu_solve(LU, piv, phi)
        big = 0.0
        for r in range(m):
            big = max(big, abs(phi[r]))
        scale = 1.0 if big <= MAX_STEP else MAX_STEP / big
        for r in range(m):
            q[cm[HEAD + k + r]] += scale * phi[r]
    return res


_wrap = njit(cache=True, inline="always")(wrap_angles)


@njit(cache=True, inline="always")
def _periodic(cm):
    """Per joint (n,) 1 when its coordinate is a periodic angle (the tail of cm)."""
    return cm[cm.shape[0] - cm[0]:]


@njit(cache=True)
def assemble(im, fm, cm, cf, qi, start, q, P, S, J, phi, LU, piv):
    """q (n,) closed at independent positions qi (k,), continuing from the closed ``start`` (n,)
    in steps of at most STEP; 0, or 4 when Newton fails.  As ``ClosedChain``'s NumPy closure:
    Newton runs on periodic angles reduced to [-pi, pi) (an independent angle whole turns away
    is reached the short way round), and the result is ``start`` plus the steps' changes, the
    independent entries exactly qi."""
    n, k = cm[0], cm[1]
    per = _periodic(cm)
    w0, delta, acc, prev = np.empty(k), np.empty(k), np.zeros(n), np.empty(n)
    for j in range(n):
        q[j] = _wrap(start[j]) if per[j] else start[j]
    d = 0.0
    for c in range(k):
        j = cm[HEAD + c]
        w0[c] = q[j]
        delta[c] = _wrap(_wrap(qi[c]) - q[j]) if per[j] else qi[c] - start[j]
        d = max(d, abs(delta[c]))
    steps = max(1, math.ceil(d / STEP))
    for s in range(1, steps + 1):
        for j in range(n):
            prev[j] = q[j]
        for c in range(k):
            q[cm[HEAD + c]] = w0[c] + delta[c] * (s / steps)
        if not _newton(im, fm, cm, cf, q, P, S, J, phi, LU, piv) <= cf[0]:
            return 4
        for j in range(n):
            if per[j]:
                acc[j] += _wrap(q[j] - prev[j])
                q[j] = _wrap(q[j])
            else:
                acc[j] += q[j] - prev[j]
    for j in range(n):
        q[j] = start[j] + acc[j]
    for c in range(k):
        q[cm[HEAD + c]] = qi[c]
    return 0


@njit(cache=True)
def evaluate(im, fm, cm, cf, mode, fric, q, qd, x, out, P, S, J, phi, LU, piv):
    """``mode`` (see :mod:`.closed_layout`) at the closed configuration q (n,); qd, x (k,); out flat."""
    n, k, m = cm[0], cm[1], cm[2]
    ind, dep = cm[HEAD:HEAD + k], cm[HEAD + k:HEAD + k + m]
    if mode == POSITIONS:
        for j in range(n):
            out[j] = q[j]
        return 0
    _poses(im, fm, q, P)
    _subspaces(im, fm, P, S)
    _jacobian(im, cm, cf, P, S, J)
    if _factor_dependent(cm, J, LU, piv):
        return 5
    W = np.zeros((n, k))
    col = np.empty(m)
    for c in range(k):
        W[ind[c], c] = 1.0
        for r in range(m):
            col[r] = -J[r, ind[c]]
        _lu_solve(LU, piv, col)
        for r in range(m):
            W[dep[r], c] = col[r]
    if mode == MASS:
        M = np.empty((n, n))
        crba_into(im, fm, q, 1, M, np.empty((n, CRBA_SCRATCH)))
        _reduce_matrix(M, W, out)
        return 0
    qda = np.zeros(n)
    for j in range(n):
        for c in range(k):
            qda[j] += W[j, c] * qd[c]
    if mode == VELOCITIES:
        for j in range(n):
            out[j] = qda[j]
        return 0
    _bias(im, cm, cf, P, S, qda, np.empty((n, 6)), phi)
    _lu_solve(LU, piv, phi)
    qdd = np.zeros(n)  # W x + w (FD: w only)
    for r in range(m):
        qdd[dep[r]] = phi[r]
    if mode != FD:
        for j in range(n):
            for c in range(k):
                qdd[j] += W[j, c] * x[c]
    if mode == ACCELERATIONS:
        for j in range(n):
            out[j] = qdd[j]
        return 0
    tau = np.empty(n)
    rnea_into(im, fm, q, qda, qdd, NO_FW, 1, 3 if fric else 1, tau, np.empty((n + 1, RNEA_SCRATCH)))
    if mode == FORCES:
        for r in range(m):
            out[r] = tau[dep[r]]
        _lu_solve_t(LU, piv, out)
        return 0
    if mode == ID:
        for c in range(k):
            s = 0.0
            for j in range(n):
                s += W[j, c] * tau[j]
            out[c] = s
        return 0
    M = np.empty((n, n))
    crba_into(im, fm, q, 1, M, np.empty((n, CRBA_SCRATCH)))
    Mr = np.empty((k, k))
    _reduce_matrix(M, W, Mr.reshape(k * k))
    b = np.empty(k)
    for c in range(k):
        s = x[c]
        for j in range(n):
            s -= W[j, c] * tau[j]
        b[c] = s
    return 3 if cholesky_solve(Mr, b, out) else 0


@njit(cache=True)
def _reduce_matrix(M, W, out):
    """out (k * k,) = W^T M W, row-major."""
    n, k = W.shape
    MW = np.zeros((n, k))
    for i in range(n):
        for j in range(n):
            x = M[i, j]
            for b in range(k):
                MW[i, b] += x * W[j, b]
    for a in range(k):
        for b in range(k):
            s = 0.0
            for j in range(n):
                s += W[j, a] * MW[j, b]
            out[a * k + b] = s


@njit(cache=True, inline="always")
def _finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def _scratch(cm):
    n, m = cm[0], cm[2]
    return np.empty((n, 12)), np.empty((n, 6)), np.empty((m, n)), np.empty(m), np.empty((m, m)), \
        np.empty(m, dtype=np.int64)


@njit(cache=True, inline="always")
def _start(cm, cf):
    """The last closed configuration (view of cf's tail)."""
    n = cm[0]
    return cf[cf.shape[0] - n:]


def closed_one(im, fm, cm, cf, mode, fric, q, qd, x, out):
    """One sample: q (k,) independent (closed by :func:`assemble` from the last configuration,
    which is then updated) or (n,) all joints (checked closed); qd, x (k,); see the module
    docstring for the status."""
    n, k = cm[0], cm[1]
    if (q.shape[0] != k and q.shape[0] != n) or qd.shape[0] != k or x.shape[0] != k:
        return 1
    if not (_finite(q) and _finite(qd) and _finite(x)):
        return 2
    P, S, J, phi, LU, piv = _scratch(cm)
    qa = np.empty(n)
    last = _start(cm, cf)
    if q.shape[0] == n:
        for j in range(n):
            qa[j] = q[j]
        _poses(im, fm, qa, P)
        if not _residual(cm, cf, P, phi) <= CLOSED:
            return 6
    else:
        if assemble(im, fm, cm, cf, q, last, qa, P, S, J, phi, LU, piv):
            return 4
        for j in range(n):
            last[j] = qa[j]
    return evaluate(im, fm, cm, cf, mode, fric, qa, qd, x, out, P, S, J, phi, LU, piv)


def closed_batch(im, fm, cm, cf, mode, fric, Q, QD, X, OUT):
    """Samples Q (N, k) as a path (closed in order from the sample nearest the last
    configuration, forwards then backwards; the last configuration is updated for N = 1 only),
    or Q (N, n) all joints; QD, X (N, k); OUT (N, width).  Serial: each closure starts from
    its neighbour's.  Returns the first non-zero status."""
    n, k = cm[0], cm[1]
    N = Q.shape[0]
    if (Q.shape[1] != k and Q.shape[1] != n) or QD.shape[1] != k or X.shape[1] != k:
        return 1
    for s in range(N):
        if not (_finite(Q[s]) and _finite(QD[s]) and _finite(X[s])):
            return 2
    P, S, J, phi, LU, piv = _scratch(cm)
    QA = np.empty((N, n))
    last = _start(cm, cf)
    if Q.shape[1] == n:
        for s in range(N):
            QA[s] = Q[s]
            _poses(im, fm, QA[s], P)
            if not _residual(cm, cf, P, phi) <= CLOSED:
                return 6
    elif N > 0:
        s0, best, per = 0, np.inf, _periodic(cm)
        for s in range(N):
            d = 0.0
            for c in range(k):
                j = cm[HEAD + c]
                d += abs(_wrap(Q[s, c] - last[j]) if per[j] else Q[s, c] - last[j])
            if d < best:
                s0, best = s, d
        if assemble(im, fm, cm, cf, Q[s0], last, QA[s0], P, S, J, phi, LU, piv):
            return 4
        for s in range(s0 + 1, N):
            if assemble(im, fm, cm, cf, Q[s], QA[s - 1], QA[s], P, S, J, phi, LU, piv):
                return 4
        for s in range(s0 - 1, -1, -1):
            if assemble(im, fm, cm, cf, Q[s], QA[s + 1], QA[s], P, S, J, phi, LU, piv):
                return 4
        if N == 1:
            last[:] = QA[0]
    for s in range(N):
        st = evaluate(im, fm, cm, cf, mode, fric, QA[s], QD[s], X[s], OUT[s], P, S, J, phi, LU, piv)
        if st:
            return st
    return 0


# im, fm: the packed model arrays, read-only (robot.arrays.bodies); cm, cf: the chain's own arrays
_IM, _FM = nbtypes.Array(nbtypes.int64, 2, "C", readonly=True), nbtypes.Array(nbtypes.float64, 2, "C", readonly=True)
_CM, _CF = nbtypes.Array(nbtypes.int64, 1, "C"), nbtypes.Array(nbtypes.float64, 1, "C")
_V, _A = nbtypes.Array(nbtypes.float64, 1, "A"), nbtypes.Array(nbtypes.float64, 2, "C")
_HEAD = (_IM, _FM, _CM, _CF, nbtypes.int64, nbtypes.boolean)
_SIGNATURES = {
    "one": (nbtypes.int64(*_HEAD, _V, _V, _V, _CF), closed_one),
    "batch": (nbtypes.int64(*_HEAD, _A, _A, _A, _A), closed_batch),
}
_compiled: dict = {}


def kernel(name: str):
    """The compiled ``"one"`` or ``"batch"`` entry (compiled now, or loaded from the disk cache)."""
    k = _compiled.get(name)
    if k is None:
        sig, func = _SIGNATURES[name]
        k = _compiled[name] = njit(sig, cache=True)(func)
    return k
