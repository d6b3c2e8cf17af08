"""Properties of the compiled Coriolis-matrix kernel (``dynamics/compiled/coriolis.py``).

Its value against the NumPy reference and Pinocchio is tested in
``test_compiled.py`` and ``test_dynamics_pinocchio.py``; here: random trees
(branched, prismatic joints, far from the base) against the NumPy reference,
C qd against the RNEA velocity terms, every entry of ``out`` written (stale
contents in ``out`` and the scratch array do not leak in), a batch row equal
to a single call, and nan propagation (no ``nnan`` fast-math flag).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.reference import coriolis, rnea
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
from compiled_calls import CORIOLIS, coriolis_one  # noqa: E402
from composedyn.dynamics.compiled import coriolis as k  # noqa: E402

TOL = 1e-12


def packed(seed, n):
    """(model, im, fm) of a random tree with prismatic joints."""
    m = cd.from_urdf(random_urdf(seed, n)).model
    im, fm = pack(m)
    return m, im, fm


def rel(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_matches_numpy_reference_and_rnea(seed, n):
    m, im, fm = packed(seed, n)
    rng = np.random.default_rng(seed)
    for scale in (1.0, 30.0):  # 30: large joint motions, bodies far from the first joint
        q, qd = scale * rng.uniform(-2, 2, (2, m.n))
        out = np.full((m.n, m.n), np.nan)  # every entry must be written
        coriolis_one(im, fm, q, qd, out)
        assert rel(out, coriolis.coriolis_matrix(m, q, qd)) < TOL
        z = np.zeros(m.n)
        cqd = rnea.rnea(m, q, qd, z) - rnea.rnea(m, q, z, z)
        assert rel(out @ qd, cqd) < 1e-10


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[1:])
def test_batch_rows_and_reused_scratch_equal_single_calls(seed, n):
    m, im, fm = packed(seed, n)
    rng = np.random.default_rng(seed)
    N = 7
    Q, QD = rng.uniform(-2, 2, (2, N, m.n))
    serial, parallel = np.full((N, m.n, m.n), np.nan), np.full((N, m.n, m.n), np.nan)
    CORIOLIS[0](im, fm, Q, QD, serial)
    CORIOLIS[1](im, fm, Q, QD, parallel)
    w = np.full((m.n, k.SCRATCH), np.nan)  # stale contents must not leak in
    for s in range(N):
        one, into = np.empty((m.n, m.n)), np.full((m.n, m.n), np.nan)
        coriolis_one(im, fm, Q[s], QD[s], one)
        k.coriolis_into(im, fm, Q[s], QD[s], into, w)
        np.testing.assert_array_equal(serial[s], one)
        np.testing.assert_array_equal(parallel[s], one)
        np.testing.assert_array_equal(into, one)


def test_nan_propagates():
    m, im, fm = packed(5, 10)
    q, qd = np.zeros(m.n), np.ones(m.n)
    qd[0] = np.nan
    out = np.zeros((m.n, m.n))
    coriolis_one(im, fm, q, qd, out)
    assert np.isnan(out).any()
