"""Compiled inverse kinematics: the whole Levenberg-Marquardt solve in one call.

Each iteration evaluates the frame pose and world Jacobian in one pass
(:func:`.frames.jacobian_into`), the error e = (p* - p, log(R* R^T)) (world
axes; the rotation part is the SO(3) logarithm, :func:`log3`), and the damped
step (Sugihara's choice of damping, lambda = E + wbar with E = e^T e / 2)

    dq = J^T (J J^T + lambda I)^-1 e        (r x r system, r = 6 or 3)

then projects q + dq onto the joint limits.  A coordinate at a limit that the step
would push beyond it is frozen for that iteration: its Jacobian column is set to
zero and the step solved again (:func:`free_step`), so that the other coordinates
take up the motion instead of a step spent on the limit (the active-set rule of
bound-constrained least squares).  A start that has not converged
after ``per_start`` iterations, or whose error stopped decreasing (no 1 %
improvement of the best error in ``STALL`` iterations), is abandoned for the
next row of ``starts`` (random in-limit configurations drawn by the caller).
The NumPy reference with the same iteration is
:func:`composedyn.dynamics.reference.ik.solve`.

References
----------
T. Sugihara, "Solvability-unconcerned inverse kinematics by the
Levenberg-Marquardt method", IEEE Trans. Robotics 27(5), 2011, eq. (13)-(15).
P. Beeson and B. Ames, "TRAC-IK: an open-source library for improved solving
of generic inverse kinematics", IEEE-RAS Humanoids 2015 (random restarts).
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.compiled.forward import cholesky_solve
from composedyn.dynamics.compiled.frames import jacobian_into
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.reference.ik import STALL, WBAR


@njit(cache=True)
def log3(R):
    """SO(3) logarithm (3-tuple: axis * angle) of a rotation matrix R (3, 3)."""
    s0, s1, s2 = 0.5 * (R[2, 1] - R[1, 2]), 0.5 * (R[0, 2] - R[2, 0]), 0.5 * (R[1, 0] - R[0, 1])
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    th = math.atan2(sn, c)
    if th < 1e-5:
        f = 1.0 + th * th / 6.0  # th / sin(th)
        return f * s0, f * s1, f * s2
    if th < math.pi - 1e-4:
        f = th / sn
        return f * s0, f * s1, f * s2
    # near pi: a a^T = ((R + R^T) / 2 - c I) / (1 - c); the column of the largest diagonal
    k = 0
    if R[1, 1] > R[k, k]:
        k = 1
    if R[2, 2] > R[k, k]:
        k = 2
    u = 1.0 - c
    d = math.sqrt(max((R[k, k] - c) / u, 1e-300))
    a0 = (0.5 * (R[0, k] + R[k, 0]) - (c if k == 0 else 0.0)) / (u * d)
    a1 = (0.5 * (R[1, k] + R[k, 1]) - (c if k == 1 else 0.0)) / (u * d)
    a2 = (0.5 * (R[2, k] + R[k, 2]) - (c if k == 2 else 0.0)) / (u * d)
    if a0 * s0 + a1 * s1 + a2 * s2 < 0.0:
        a0, a1, a2 = -a0, -a1, -a2
    return th * a0, th * a1, th * a2


@njit(cache=True)
def pose_error(T, target, rows, e):
    """e (rows,) = (p* - p, log(R* R^T)); returns (|position error|, |rotation error|)."""
    e[0], e[1], e[2] = target[0, 3] - T[0, 3], target[1, 3] - T[1, 3], target[2, 3] - T[2, 3]
    ep = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    if rows == 3:
        return ep, 0.0
    D = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            D[i, j] = target[i, 0] * T[j, 0] + target[i, 1] * T[j, 1] + target[i, 2] * T[j, 2]
    e[3], e[4], e[5] = log3(D)
    return ep, math.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])


@njit(cache=True)
def damped_step(J, e, lam, A, b, y, dq):
    """dq = J^T (J J^T + lam I)^-1 e over the first r = len(b) rows of J (Cholesky: A, b, y (r,) scratch)."""
    n, r = J.shape[1], b.shape[0]
    for i in range(r):
        b[i] = e[i]
        for j in range(i + 1):
            s = 0.0
            for c in range(n):
                s += J[i, c] * J[j, c]
            A[i, j] = A[j, i] = s + (lam if i == j else 0.0)
    cholesky_solve(A, b, y)  # lam > 0: positive definite
    for c in range(n):
        s = 0.0
        for i in range(r):
            s += J[i, c] * y[i]
        dq[c] = s


@njit(cache=True)
def free_step(J, e, lam, q, lower, upper, Jf, A, b, y, dq):
    """:func:`damped_step` on the columns of J (r, n) whose coordinates are free: a coordinate at its
    lower (upper) limit that the step would move down (up) is frozen, its column of the copy Jf (r, n)
    zero, and the step solved again until no other one is (at most n + 1 solves)."""
    n, r = J.shape[1], b.shape[0]
    for i in range(r):
        for c in range(n):
            Jf[i, c] = J[i, c]
    for _ in range(n + 1):
        damped_step(Jf, e, lam, A, b, y, dq)
        frozen = False
        for c in range(n):
            if ((q[c] <= lower[c] and dq[c] < 0.0) or (q[c] >= upper[c] and dq[c] > 0.0)) and dq[c] != 0.0:
                for i in range(r):
                    Jf[i, c] = 0.0
                frozen = True
        if not frozen:
            return


@njit(cache=True)
def solve(im, fx, G, b, code, target, rows, lower, upper, q0, starts, per_start, max_iter, tol_p, tol_r, q):
    """Solve from q0, then from each row of ``starts``; the best q goes into ``q``.

    Coordinates q (n,) map to the model's joints by q_all = G q + b (dependent
    mimic joints; G = I, b = 0 without), so the Jacobian is J_all G.  ``fx`` and
    ``code`` (= 2 k, world axes) as in :mod:`.frames`.
    Returns (converged 0/1, iterations, position error, rotation error).
    """
    n, na = q0.shape[0], G.shape[0]
    J, Jf, Ja, T, e = np.empty((6, n)), np.empty((rows, n)), np.empty((6, na)), np.empty((4, 4)), np.empty(6)
    A, b6, y = np.empty((rows, rows)), np.empty(rows), np.empty(rows)
    dq, qc, qa = np.empty(n), np.empty(n), np.empty(na)
    best_p, best_r, best = np.inf, np.inf, np.inf
    total = 0
    for start in range(starts.shape[0] + 1):
        for c in range(n):
            qc[c] = min(max(q0[c] if start == 0 else starts[start - 1, c], lower[c]), upper[c])
        run_best, since = np.inf, 0
        for _ in range(per_start):
            for i in range(na):
                s = b[i]
                for c in range(n):
                    s += G[i, c] * qc[c]
                qa[i] = s
            F = jacobian_into(im, fx, qa, code, Ja)
            T[0, 0], T[0, 1], T[0, 2], T[0, 3] = F[0], F[1], F[2], F[9]
            T[1, 0], T[1, 1], T[1, 2], T[1, 3] = F[3], F[4], F[5], F[10]
            T[2, 0], T[2, 1], T[2, 2], T[2, 3] = F[6], F[7], F[8], F[11]
            for i in range(rows):
                for c in range(n):
                    s = 0.0
                    for j in range(na):
                        s += Ja[i, j] * G[j, c]
                    J[i, c] = s
            ep, er = pose_error(T, target, rows, e)
            total += 1
            err = ep + er
            if err < best:
                best, best_p, best_r = err, ep, er
                for c in range(n):
                    q[c] = qc[c]
            if ep <= tol_p and er <= tol_r:
                return 1, total, ep, er
            if total >= max_iter:
                return 0, total, best_p, best_r
            if err < 0.99 * run_best:
                run_best, since = err, 0
            else:
                since += 1
                if since >= STALL:
                    break
            E = 0.0
            for i in range(rows):
                E += 0.5 * e[i] * e[i]
            free_step(J, e, E + WBAR, qc, lower, upper, Jf, A, b6, y, dq)
            for c in range(n):
                qc[c] = min(max(qc[c] + dq[c], lower[c]), upper[c])
    return 0, total, best_p, best_r
