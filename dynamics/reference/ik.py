"""Inverse kinematics in NumPy: the reference of :func:`composedyn.dynamics.compiled.ik.solve`.

The same iteration (see that module's docstring for the method and references)
written against a callable ``pose_jacobian(q) -> (T (4, 4), J (6, n))`` (world
Jacobian, linear rows first), so that it serves any coordinates (e.g. a robot
with dependent mimic joints) and the NumPy backend.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

STALL = 12  # iterations without a 1 % improvement of the best error: restart
WBAR = 1e-9  # constant part of the damping (m^2, rad^2)


def log3(R: np.ndarray) -> np.ndarray:
    """SO(3) logarithm (3,) (axis times angle) of a rotation matrix (3, 3)."""
    s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    c = 0.5 * (np.trace(R) - 1.0)
    sn = float(np.linalg.norm(s))
    th = float(np.arctan2(sn, c))
    if th < 1e-5:
        return (1.0 + th * th / 6.0) * s
    if th < np.pi - 1e-4:
        return th / sn * s
    aa = (0.5 * (R + R.T) - c * np.eye(3)) / (1.0 - c)  # a a^T
    k = int(np.argmax(np.diag(aa)))
    a = aa[:, k] / np.sqrt(max(aa[k, k], 1e-300))
    return th * (a if a @ s >= 0.0 else -a)


def pose_error(T: np.ndarray, target: np.ndarray, rows: int) -> np.ndarray:
    """(p* - p, log(R* R^T)) truncated to ``rows`` (3 or 6)."""
    ep = target[:3, 3] - T[:3, 3]
    return ep if rows == 3 else np.concatenate([ep, log3(target[:3, :3] @ T[:3, :3].T)])


def free_step(J: np.ndarray, e: np.ndarray, lam: float, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """dq = J^T (J J^T + lam I)^-1 e (J (r, n)) with the coordinates at a limit that it would push beyond
    frozen (their columns zero, solved again): ``low``/``high`` (n,) mark those at their lower/upper limit
    (:func:`composedyn.dynamics.compiled.ik.free_step`)."""
    Jf = J.copy()
    for _ in range(J.shape[1] + 1):
        dq = Jf.T @ np.linalg.solve(Jf @ Jf.T + lam * np.eye(len(e)), e)
        frozen = ((low & (dq < 0.0)) | (high & (dq > 0.0))) & (dq != 0.0)
        if not frozen.any():
            break
        Jf[:, frozen] = 0.0
    return dq


def solve(pose_jacobian: Callable, target: np.ndarray, rows: int, lower, upper, q0, starts,
          per_start: int, max_iter: int, tol_p: float, tol_r: float, step: Callable | None = None,
          at_limits: Callable | None = None):
    """Returns (q, converged, iterations, position error, rotation error).

    ``step(q, dq)``: the configuration moved by the tangent step ``dq`` and brought back within the
    limits (default: ``clip(q + dq, lower, upper)``; a robot whose joints have configuration spaces
    of their own integrates on them); starts are ``step(start, 0)``.  ``at_limits(q)``: (low, high)
    boolean (n_v,) of the velocity coordinates at their lower / upper limit (default: q against
    ``lower``, ``upper``), frozen by :func:`free_step` when the step would push them beyond it."""
    if step is None:
        def step(q, dq):
            return np.clip(q + dq, lower, upper)
    if at_limits is None:
        def at_limits(q):
            return q <= lower, q >= upper
    best, best_q, best_p, best_r, total = np.inf, np.asarray(q0, float).copy(), np.inf, np.inf, 0
    for start in [q0, *starts]:
        qc = step(np.asarray(start, float), 0.0)
        run_best, since = np.inf, 0
        for _ in range(per_start):
            T, J = pose_jacobian(qc)
            e = pose_error(T, target, rows)
            ep, er = float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))
            total += 1
            if ep + er < best:
                best, best_p, best_r, best_q = ep + er, ep, er, qc.copy()
            if ep <= tol_p and er <= tol_r:
                return qc, True, total, ep, er
            if total >= max_iter:
                return best_q, False, total, best_p, best_r
            if ep + er < 0.99 * run_best:
                run_best, since = ep + er, 0
            else:
                since += 1
                if since >= STALL:
                    break
            qc = step(qc, free_step(J[:rows], e, 0.5 * float(e @ e) + WBAR, *at_limits(qc)))
    return best_q, False, total, best_p, best_r
