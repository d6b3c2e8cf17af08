"""Coordinate partitioning of a constrained tree: closure and reduced dynamics.

Coordinates q (n) split into independent (actuated) q_I (k) and dependent q_D
(m = n - k), with m constraint equations phi(q) = 0 and J = [J_I, J_D]:

* position closure: Newton on q_D with q_I fixed, dq_D = -J_D^-1 phi;
* velocity closure: qd = W qd_I, W = [I; -J_D^-1 J_I] (rows in q order);
* acceleration closure: qdd = W qdd_I + w, w_I = 0, w_D = J_D^-1 gamma;
* Kolev's modified Lagrange equations (Kolev, "Modified equations of Lagrange of II order", eq. 2.20, the dependent
  coordinates unactuated) are the projection tau_I = W^T tau_tree(q, qd, qdd)
  with tau_tree the tree's inverse dynamics; M_red = W^T M W;
* closure forces: J_D^T lambda = tau_tree,D  (the tree equations read
  M qdd + h = B tau_I + J^T lambda).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from composedyn.dynamics.errors import ModelError


def projection(J: np.ndarray, ind: np.ndarray, dep: np.ndarray) -> np.ndarray:
    """W (..., n, k) with qd = W qd_I on the constraint manifold; J (..., m, n)."""
    n = J.shape[-1]
    W = np.zeros(J.shape[:-2] + (n, len(ind)))
    W[..., ind, np.arange(len(ind))] = 1.0
    W[..., dep, :] = -np.linalg.solve(J[..., dep], J[..., ind])
    return W


def dependent_part(J: np.ndarray, dep: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """x (..., n) with x_I = 0 and J_D x_D = rhs (..., m)."""
    x = np.zeros(J.shape[:-2] + (J.shape[-1],))
    x[..., dep] = np.linalg.solve(J[..., dep], rhs[..., None])[..., 0]
    return x


def closure_forces(J: np.ndarray, dep: np.ndarray, tau_tree: np.ndarray) -> np.ndarray:
    """lambda (..., m) solving J_D^T lambda = tau_tree[dep]."""
    return np.linalg.solve(np.swapaxes(J[..., dep], -1, -2), tau_tree[..., dep, None])[..., 0]


def newton_close(residual: Callable, jacobian: Callable, q0: np.ndarray, dep: np.ndarray,
                 J0: np.ndarray | None = None, tol: float = 1e-13, max_iter: int = 60,
                 max_step: float = 0.5) -> tuple[np.ndarray, float, int]:
    """Solve phi(q) = 0 for q[dep] from q0 (n,) with the other entries fixed.

    ``residual(q) -> phi (m,)``, ``jacobian(q) -> J (m, n)``.  Chord iterations
    reuse J_D (from ``J0``, e.g. the Jacobian of a nearby closed configuration)
    while the residual contracts by 4 per step, and re-evaluate it otherwise
    (Newton).  Steps are clipped to ``max_step`` (rad or m, infinity norm).
    Returns (q, residual max|phi|, iterations); the caller decides what a
    failure means.
    """
    q = np.array(q0, dtype=float)
    JD = None if J0 is None else J0[:, dep]
    res, prev = np.inf, np.inf
    for it in range(max_iter + 1):
        phi = residual(q)
        res = float(np.abs(phi).max())
        if res <= tol or it == max_iter:
            break
        if JD is None or res > 0.25 * prev:
            JD = jacobian(q)[:, dep]
        prev = res
        try:
            dq = -np.linalg.solve(JD, phi)
        except np.linalg.LinAlgError:
            break
        big = np.abs(dq).max()
        q[dep] += dq if big <= max_step else dq * (max_step / big)
    return q, res, it


def rank_report(J: np.ndarray, names: tuple, dep: np.ndarray, rows: list[str], tol: float = 1e-9) -> str | None:
    """None when J_D is invertible, else a sentence naming the culprit joints or rows."""
    scale = max(1.0, float(np.abs(J).max()))
    sv = np.linalg.svd(J, compute_uv=False)
    if sv.size and sv[-1] <= tol * scale:
        u = np.linalg.svd(J)[0][:, -1]
        bad = [rows[i] for i in np.nonzero(np.abs(u) > 1e-6)[0]]
        return (f"the loop equations are redundant (rank {int((sv > tol * scale).sum())} < {J.shape[0]} rows); "
                f"rows involved: {bad} (for a planar mechanism use kind 'planar')")
    JD = J[:, dep]
    _, s, vt = np.linalg.svd(JD)
    if s[-1] > tol * scale:
        return None
    cols = [names[dep[i]] for i in np.nonzero(np.abs(vt[-1]) > 1e-6)[0]]
    return (f"with these independent joints the constraint Jacobian of the dependent joints is singular: "
            f"the columns of {cols} are linearly dependent (make one of them independent instead)")


def check_partition(n: int, m: int, names: tuple, independent: list[str], source: str) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (ind, dep) of the independent joints; ModelError on unknown names or wrong count."""
    unknown = [j for j in independent if j not in names]
    if unknown:
        raise ModelError(f"{source}: independent joints {unknown} are not joints of the robot ({', '.join(names)})")
    if len(set(independent)) != len(independent):
        raise ModelError(f"{source}: independent joints {independent} repeat a joint")
    ind = np.array([names.index(j) for j in independent], dtype=int)
    dep = np.array([i for i in range(n) if names[i] not in independent], dtype=int)
    if len(dep) != m:
        raise ModelError(f"{source}: the loops give {m} equations but {len(dep)} joints are dependent "
                         f"({[names[i] for i in dep]}); choose {n - m} independent joint(s)")
    return ind, dep
