"""The tree-sparse L^T L factor's solves (:mod:`composedyn.dynamics.compiled.ltl`) against dense
NumPy on random trees: one right-hand side, the forward-dynamics derivatives' wide substitution
(-M^-1 A, -M^-1 B, M^-1 exactly symmetric) and its scratch views."""

from __future__ import annotations

import numpy as np
import pytest

from composedyn.dynamics.compiled.layout import PIVOT
from composedyn.dynamics.compiled.ltl import ltl_derivative_solves, ltl_factor, ltl_solve, solves_scratch


def _tree_mass_matrix(rng, n):
    """(parents, M): a random parents-first tree of n coordinates (chains and branches) and a
    symmetric positive-definite M with its sparsity (M[i, j] != 0 only for i, j on one path)."""
    par = np.array([-1] + [int(rng.integers(-1 if k < 3 else 0, k)) for k in range(1, n)], np.int64)
    L = np.zeros((n, n))
    for k in range(n):
        L[k, k] = rng.uniform(0.5, 2.0)
        j = par[k]
        while j >= 0:
            L[k, j] = rng.normal()
            j = par[j]
    return par, L.T @ L


@pytest.mark.parametrize("seed", range(6))
def test_solves_equal_dense_linear_algebra(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    par, M = _tree_mass_matrix(rng, n)
    fm = np.zeros((n, PIVOT + 1))
    LW = np.full((n, 4 * n), np.nan)  # scratch holding garbage: every number read is written first
    L, W = solves_scratch(LW)
    assert L.shape == (n, n) and W.shape == (n, 3 * n) and L.flags.c_contiguous and W.flags.c_contiguous
    L[:] = M
    assert ltl_factor(par, L, fm) == 0
    Minv = np.linalg.inv(M)

    x = rng.normal(size=n)
    y = x.copy()
    ltl_solve(par, L, y)
    np.testing.assert_allclose(y, Minv @ x, rtol=1e-10, atol=1e-12 * np.abs(Minv @ x).max())

    A, B = rng.normal(size=(2, n, n))
    aq, av, minv = A.copy(), B.copy(), np.full((n, n), np.nan)
    ltl_derivative_solves(par, L, aq, av, minv, W)
    scale = np.abs(Minv).max() * max(np.abs(A).max(), np.abs(B).max())
    np.testing.assert_allclose(aq, -Minv @ A, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(av, -Minv @ B, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(minv, Minv, rtol=0, atol=1e-11 * np.abs(Minv).max())
    assert np.array_equal(minv, minv.T)


def test_a_pivot_below_its_floor_is_refused():
    rng = np.random.default_rng(7)
    par, M = _tree_mass_matrix(rng, 5)
    fm = np.zeros((5, PIVOT + 1))
    fm[:, PIVOT] = 1e6  # every pivot below the floor
    assert ltl_factor(par, M.copy(), fm) == 1
