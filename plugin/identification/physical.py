"""Physically consistent inertial parameters: a semidefinite program on pseudo-inertia matrices.

Body parameters pi_i = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (h = m c, inertia
I_o about the body origin) are physically consistent (a mass distribution of
non-negative density exists) exactly when the pseudo-inertia

    J(pi_i) = [[Sigma, h], [h^T, m]],   Sigma = tr(I_o)/2 1 - I_o   (4, 4)

is positive semidefinite (Wensing, Kim & Slotine 2017); J > 0 gives a
positive mass and principal moments that satisfy the triangle inequality.
The fit solves (cvxpy, Clarabel)

    min_pi  || A pi - b ||^2 + gamma sum_i d(J(pi_i) || J(pi_i,prior))
    s.t.    J(pi_i) > 0,  viscous, Coulomb, armature >= 0,

with the weighted regressor A and torques b, and d the log-determinant
(entropic, Bregman) divergence of Lee, Wensing & Park 2020 between pseudo-inertias:

    d(J || J0) = -log det(J0^-1 J) + tr(J0^-1 J) - 4,

which is zero at the prior, convex in J, and keeps J away from singularity
(a prior that is itself inconsistent or massless is first projected onto
J0 > 0 by raising its eigenvalues to a small floor).
The least-squares term enters through the normal equations (A^T A = R^T R),
so the program has the size of the parameter vector, not of the log.

References
----------
P. M. Wensing, S. Kim and J.-J. E. Slotine, "Linear matrix inequalities for
physically consistent inertial parameter identification: a statistical
perspective on the mass distribution", IEEE RA-L 3(1), 2017.
T. Lee, P. M. Wensing and F. C. Park, "Geometric robot dynamic
identification: a convex programming approach", IEEE T-RO 36(2), 2020.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.extras import require

PRIOR_FLOOR = 1e-6  # prior pseudo-inertia eigenvalues raised to this x (largest or 1): invertible, J0 > 0

# J(pi) = sum_k pi_k E[k]  (E: (10, 4, 4))
E = np.zeros((10, 4, 4))
E[0, 3, 3] = 1.0
for _k in range(3):
    E[1 + _k, _k, 3] = E[1 + _k, 3, _k] = 1.0
for _k, (_r, _c) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
    if _r == _c:  # Sigma = tr/2 - I: a diagonal moment adds 1/2 to the other two diagonal entries
        E[4 + _k] += 0.5 * np.diag([1.0, 1.0, 1.0, 0.0])
        E[4 + _k, _r, _r] -= 1.0
    else:
        E[4 + _k, _r, _c] = E[4 + _k, _c, _r] = -1.0


def pseudo_inertia(pi: np.ndarray) -> np.ndarray:
    """J (..., 4, 4) of parameter blocks (..., 10)."""
    return np.einsum("...k,kij->...ij", np.asarray(pi, float), E)


def inconsistent_bodies(pi: np.ndarray, tol: float = 1e-9) -> list[int]:
    """Indices of the blocks (n, 10) whose pseudo-inertia has an eigenvalue below -tol x its scale,
    or whose mass is not positive."""
    J = pseudo_inertia(np.asarray(pi, float).reshape(-1, 10))
    out = []
    for i, Ji in enumerate(J):
        ev = np.linalg.eigvalsh(Ji)
        if Ji[3, 3] <= 0 or ev[0] < -tol * max(np.abs(ev).max(), 1e-12):
            out.append(i)
    return out


def fit_physical(G: np.ndarray, g: np.ndarray, prior: np.ndarray, bodies: int, joint_terms: int,
                 gamma: float = 1.0) -> np.ndarray:
    """Standard parameters (P,) = 10 bodies + joint terms (``joint_terms`` per joint) solving the
    program of the module docstring, given the normal equations G = A^T A (P, P), g = A^T b (P,);
    ``prior`` (P,) the regularisation centre for the bodies.

    Raises RuntimeError when the solver fails; MissingExtra (``[identify]``) without cvxpy and Clarabel.
    """
    require("clarabel", "physical identification")
    cp = require("cvxpy", "physical identification")

    P = G.shape[0]
    ev, V = np.linalg.eigh(0.5 * (G + G.T))  # |A x - b|^2 = |R x - c|^2 + const on range(A^T)
    keep = ev > 1e-12 * max(float(ev[-1]), 1e-300)
    R = np.sqrt(ev[keep])[:, None] * V[:, keep].T
    c = (V[:, keep].T @ g) / np.sqrt(ev[keep])
    x = cp.Variable(P)
    objective = cp.sum_squares(R @ x - c)
    constraints = []
    for i in range(bodies):
        J0 = pseudo_inertia(prior[10 * i:10 * i + 10])
        ev, V = np.linalg.eigh(0.5 * (J0 + J0.T))  # an inconsistent prior is projected onto J > 0
        ev = np.maximum(ev, PRIOR_FLOOR * max(float(np.abs(ev).max()), 1.0))
        J0inv = (V / ev) @ V.T
        J = sum(x[10 * i + k] * E[k] for k in range(10))
        Jsym = cp.Variable((4, 4), symmetric=True)
        constraints += [Jsym == J, Jsym >> 0]
        objective = objective + gamma * (-cp.log_det(Jsym) + cp.trace(J0inv @ Jsym))
    if joint_terms:
        k = joint_terms
        for j in range((P - 10 * bodies) // k):
            constraints += [x[10 * bodies + k * j + m] >= 0 for m in range(3)]
    prob = cp.Problem(cp.Minimize(objective), constraints)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as e:
        raise RuntimeError(f"physical identification: the conic solver failed: {e}") from None
    if x.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"physical identification: the semidefinite program ended {prob.status!r}")
    return np.asarray(x.value, dtype=float)
