"""Sparse LᵀL factorisation of a kinematic tree's mass matrix, and solves with it.

For a tree's coordinates numbered parents first (``par[i]`` the parent coordinate of
coordinate i, -1 at a root: for one-coordinate joints the parent body's joint ``im[:, 0]``;
inside a joint of several coordinates the one before, see
:func:`composedyn.dynamics.compiled.fd_derivatives.coordinate_parents`), M[i, j] is zero
unless one of i, j is an ancestor of the other, and the factorisation M = Lᵀ L (L lower
triangular) taken from the last coordinate to the first keeps that pattern: L[i, j] != 0
only for j an ancestor of i or j = i.
Factor and solves then walk ancestor chains only: O(n d²) and O(n d) per
right-hand side (d the depth of the tree) instead of O(n³) and O(n²) for a
dense Cholesky factorisation.

References
----------
R. Featherstone, "Efficient factorization of the joint-space inertia matrix
for branched kinematic trees", Int. J. Robotics Research 24(6), 2005,
algorithms LTL, and *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 6.5,
Table 6.3 (factorisation) and the back- and forward-substitutions with L and Lᵀ.
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import PIVOT


@njit(cache=True)
def ltl_factor(par, H, fm):
    """L with H = Lᵀ L, in place in the lower triangle of the symmetric H (n, n) (entries for
    non-ancestor pairs are not read).  Returns 0, or 1 when a pivot is not above coordinate k's floor
    ``fm[k, PIVOT]`` (the packed model, :mod:`composedyn.dynamics.pivots`) or not finite."""
    n = H.shape[0]
    for jj in range(n):
        k = n - 1 - jj
        d = H[k, k]
        if not (d > fm[k, PIVOT] and d < math.inf):
            return 1
        d = math.sqrt(d)
        H[k, k] = d
        i = par[k]
        while i >= 0:
            H[k, i] /= d
            i = par[i]
        i = par[k]
        while i >= 0:
            hki = H[k, i]
            j = i
            while j >= 0:
                H[i, j] -= hki * H[k, j]
                j = par[j]
            i = par[i]
    return 0


@njit(cache=True, fastmath={"contract"})
def ltl_solve(par, L, x):
    """x := M⁻¹ x (x (n,)) with M = Lᵀ L from :func:`ltl_factor`: :func:`ltl_solve_columns` for one
    right-hand side, each row of the second substitution summed in a register instead of memory."""
    n = L.shape[0]
    for ii in range(n):
        i = n - 1 - ii
        xi = x[i] / L[i, i]
        x[i] = xi
        j = par[i]
        while j >= 0:
            x[j] -= L[i, j] * xi
            j = par[j]
    for i in range(n):
        s = x[i]
        j = par[i]
        while j >= 0:
            s -= L[i, j] * x[j]
            j = par[j]
        x[i] = s / L[i, i]


@njit(cache=True, fastmath={"contract"})
def ltl_solve_columns(par, L, X, scale):
    """X := scale M⁻¹ X (X (n, m)) with M = Lᵀ L from :func:`ltl_factor`: Lᵀ Y = scale X from the
    last row up, then L Z = Y from the first row down, whole rows at a time."""
    n, m = L.shape[0], X.shape[1]
    if scale != 1.0:
        for i in range(n):
            for c in range(m):
                X[i, c] *= scale
    for ii in range(n):
        i = n - 1 - ii
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d
        j = par[i]
        while j >= 0:
            lij = L[i, j]
            for c in range(m):
                X[j, c] -= lij * X[i, c]
            j = par[j]
    for i in range(n):
        j = par[i]
        while j >= 0:
            lij = L[i, j]
            for c in range(m):
                X[i, c] -= lij * X[j, c]
            j = par[j]
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d


@njit(cache=True, inline="always")
def solves_scratch(LW):
    """(L (n, n), W (n, 3n)): the factor's and :func:`ltl_derivative_solves`'s scratch, C-contiguous
    views of one scratch array LW (n, 4n)."""
    n = LW.shape[0]
    flat = LW.reshape(4 * n * n)
    return flat[:n * n].reshape((n, n)), flat[n * n:].reshape((n, 3 * n))


@njit(cache=True, fastmath={"contract"})
def ltl_derivative_solves(par, L, aq, av, minv, W):
    """aq := -M⁻¹ aq, av := -M⁻¹ av and minv := M⁻¹ (each (n, n)) with M = Lᵀ L from
    :func:`ltl_factor`, through one :func:`ltl_solve_columns` on the scratch W (n, 3n) = [-aq, -av, 1]
    (one wide right-hand side instead of three narrow ones: fewer loop ends per row); M⁻¹ exactly
    symmetric, its lower triangle mirrored from the upper."""
    n = L.shape[0]
    for i in range(n):
        for c in range(n):
            W[i, c] = -aq[i, c]
            W[i, n + c] = -av[i, c]
            W[i, 2 * n + c] = 1.0 if i == c else 0.0
    ltl_solve_columns(par, L, W, 1.0)
    for i in range(n):
        for c in range(n):
            aq[i, c] = W[i, c]
            av[i, c] = W[i, n + c]
        for c in range(i, n):
            minv[i, c] = W[i, 2 * n + c]
            minv[c, i] = W[i, 2 * n + c]
