"""Operational-space (task-space) inertia Lambda = (J M^-1 J^T)^-1.

With the Cholesky factor M = L L^T and X = L^-1 J^T (n, r), J M^-1 J^T = X^T X,
whose eigenvalues are the squared singular values s of X^T = J L^-T.  Lambda
exists when all r of them are positive; a frame at (or near) a kinematic
singularity, or a task with more rows than joints, has s_min ~ 0 and Lambda is
refused with an error naming the frame and s_min, unless a damping
lambda > 0 is given: then Lambda = (J M^-1 J^T + lambda^2 I)^-1, finite
everywhere (the damped least-squares form; equal to the exact one up to
O(lambda^2 / s_min^2)).

References
----------
O. Khatib, "A unified approach for motion and force control of robot
manipulators: the operational space formulation", IEEE J. Robotics and
Automation 3(1), 1987, eq. (8) (Lambda = (J A^-1 J^T)^-1).
C. W. Wampler, "Manipulator inverse kinematic solutions based on vector
formulations and damped least-squares methods", IEEE Trans. SMC 16(1), 1986
(the damped inverse).
"""

from __future__ import annotations

import numpy as np

RCOND = 1e-8  # s_min / s_max below which J M^-1 J^T counts as singular


def task_inertia(J: np.ndarray, M: np.ndarray, frame: str, damping: float = 0.0,
                 three_rows: str = "translational=True") -> np.ndarray:
    """Lambda (..., r, r) from J (..., r, n) and M (..., n, n) (positive definite).

    ``damping`` (lambda >= 0): 0 for the exact inverse (ValueError at a
    singularity or when r > n), > 0 for (J M^-1 J^T + lambda^2 I)^-1.
    ``three_rows``: the caller's option for a task of the 3 translation rows,
    which the error suggests for a task of more rows.
    """
    J, M = np.asarray(J, float), np.asarray(M, float)
    r, n = J.shape[-2], J.shape[-1]
    L = np.linalg.cholesky(M)
    X = np.linalg.solve(L, np.swapaxes(J, -1, -2))  # L^-1 J^T (..., n, r)
    A = np.swapaxes(X, -1, -2) @ X
    if damping > 0.0:
        return np.linalg.inv(A + damping * damping * np.eye(r))
    if r > n:
        rows = f"{three_rows} (3 rows) or " if r > 3 else ""
        raise ValueError(f"task_inertia: frame {frame!r} has a {r}-row task but the robot only {n} joints, so "
                         f"J M^-1 J^T is singular; use {rows}damping > 0")
    s = np.linalg.svd(X, compute_uv=False)  # (..., r), descending
    bad = s[..., -1] <= RCOND * s[..., 0]
    if np.any(bad):
        idx = np.argwhere(np.atleast_1d(bad))[0]
        smin, smax = np.atleast_2d(s)[tuple(idx)][-1], np.atleast_2d(s)[tuple(idx)][0]
        where = f" (sample {tuple(int(i) for i in idx)})" if s.ndim > 1 else ""
        raise ValueError(f"task_inertia: frame {frame!r} is at a singular configuration{where}: smallest singular "
                         f"value of J M^-1/2 is {smin:.3g} (largest {smax:.3g}); use damping > 0"
                         + (f" or {three_rows}" if r > 3 else ""))
    return np.linalg.inv(A)
