"""Base (identifiable) parameters of a linear-in-parameters model by QR with column pivoting.

Stack the regressor at random samples, W (K, P).  QR with column pivoting,
W E = Q [R1 R2] with R1 (r, r) upper triangular and r the numerical rank,
splits the parameters into r independent ones pi_1 (the first r pivoted
columns) and dependent ones pi_2, and

    W pi = W_1 (pi_1 + R1^-1 R2 pi_2) = W_1 pi_b,     pi_b = beta pi,

with beta (r, P) = [1, R1^-1 R2] E^T.  Each base parameter is pi_1,k plus a
linear combination of the parameters that cannot be told apart from it.
The pivoted QR gives the rank r; the independent parameters are then taken
in column order (each one independent of the columns before it, by an
unpivoted QR), so that combinations group later bodies' parameters onto
earlier ones (Izz1 + l1^2 m2, as in Khalil's regrouping), whatever the
random samples; should that choice not reach rank r numerically, the
pivoted columns are kept.

References
----------
M. Gautier, "Numerical calculation of the base inertial parameters of
robots", Journal of Robotic Systems 8(4), 1991, pp. 485-506 (the QR
decomposition of a regressor stacked at random points).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ZERO_COLUMN = 1e-10  # relative column norm treated as zero (rounding noise)
RELATIVE_PIVOT = 1e-8  # |R_kk| / max below which a column counts as dependent on the earlier ones
ZERO = 1e-10  # |coefficient| below which a combination term is dropped (after rounding noise)


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """Map from the P standard parameters to the r base parameters.

    Attributes: ``rank`` r; ``independent`` (r,) indices of the standard
    parameters whose regressor columns span the rest (so ``Y[..., independent]``
    is the base regressor); ``beta`` (r, P) with pi_b = beta @ pi;
    ``names`` (P,) standard parameter names; ``expressions`` (r,) readable
    strings of pi_b, e.g. ``"Izz2 + 0.425*mx3 + 0.180625*m3"``.
    """

    rank: int
    independent: np.ndarray
    beta: np.ndarray
    names: tuple
    expressions: tuple

    def base(self, pi: np.ndarray) -> np.ndarray:
        """Base parameters (..., r) of standard parameters (..., P)."""
        return np.einsum("rp,...p->...r", self.beta, np.asarray(pi, float))

    def base_regressor(self, Y: np.ndarray) -> np.ndarray:
        """Base regressor (..., r) columns of a standard regressor (..., P)."""
        return np.asarray(Y)[..., self.independent]


def rank_tolerance(diag_max: float, shape: tuple) -> float:
    """Numerical-rank threshold for |R_kk| or singular values: max(shape) eps max|R_kk| (NumPy's matrix_rank)."""
    return max(shape) * np.finfo(float).eps * diag_max


def base_parameters(W: np.ndarray, names) -> BaseParameters:
    """Base parameters of the stacked regressor ``W`` (K, P) with parameter ``names`` (P,).

    Columns are scaled to unit norm before the decomposition (the rank does not
    depend on units); columns of norm below :data:`ZERO_COLUMN` times the largest
    (zero, or rounding noise such as a vertical first joint's mz) are set to zero
    and never independent.
    """
    import scipy.linalg

    W = np.asarray(W, dtype=float)
    P = W.shape[1]
    norms = np.linalg.norm(W, axis=0)
    zero = norms <= ZERO_COLUMN * (norms.max() if P else 0.0)
    scale = np.where(zero, 1.0, norms)
    Ws = np.where(zero, 0.0, W / scale)
    _, R, piv = scipy.linalg.qr(Ws, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    tol = rank_tolerance(d.max() if d.size else 0.0, W.shape)
    r = int(np.sum(d > tol)) if d.size else 0
    ind, dep = _earliest_independent(Ws, r, tol)
    if ind is None:  # the column-order choice did not reach the rank: keep the pivoted one
        ind, dep = piv[:r], piv[r:]
    beta = np.zeros((r, P))
    beta[np.arange(r), ind] = 1.0
    if r and len(dep):
        # W_dep = W_ind C on the scaled columns; unscaled C_kj = C_s,kj scale_j / scale_k
        coef = np.linalg.lstsq(Ws[:, ind], Ws[:, dep], rcond=None)[0] * scale[dep][None, :] / scale[ind][:, None]
        coef[np.abs(coef) < ZERO * max(1.0, float(np.abs(coef).max()))] = 0.0
        beta[:, dep] = coef
    order = np.argsort(ind)  # base parameters in the standard parameters' order
    ind, beta = ind[order], beta[order]
    names = tuple(str(x) for x in names)
    exprs = tuple(expression(beta[k], names, int(ind[k])) for k in range(r))
    return BaseParameters(r, np.asarray(ind, dtype=int), beta, names, exprs)


def _earliest_independent(Ws: np.ndarray, r: int, tol: float):
    """Columns independent of the columns before them (unpivoted QR: |R_kk| > tol), if there are
    exactly ``r`` of them; else (None, None)."""
    import scipy.linalg

    R = scipy.linalg.qr(Ws, mode="r")[0]
    d = np.abs(np.diag(R))
    idx = np.arange(Ws.shape[1])
    ind = idx[: d.size][d > max(tol, RELATIVE_PIVOT * (d.max() if d.size else 0.0))]
    if ind.size != r:
        return None, None
    return ind, np.setdiff1d(idx, ind)


def expression(row: np.ndarray, names: tuple, lead: int) -> str:
    """``names[lead] + c1*name1 - c2*name2 ...`` for one row of beta (6 significant digits)."""
    out = names[lead]
    for j in np.flatnonzero(row):
        if j == lead:
            continue
        c = float(row[j])
        mag = f"{abs(c):.6g}"
        out += f" {'-' if c < 0 else '+'} {'' if mag == '1' else mag + '*'}{names[j]}"
    return out
