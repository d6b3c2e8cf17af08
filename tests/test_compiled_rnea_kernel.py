"""Bit-level properties of the compiled RNEA kernel (``dynamics/compiled/rnea.py``).

Its value against the NumPy reference is tested in ``test_compiled.py``; here:
the same bits with f_ext = 0 as without f_ext, the armature and friction
added inside the kernel as the general path adds them in NumPy, a batch row
as a single call, and a scratch array reused between robots and calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.reference.friction import friction_torques
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
from compiled_calls import RNEA, rnea_one  # noqa: E402
from composedyn.dynamics.compiled import rnea as k  # noqa: E402

CASES = FIXED_SEEDS[1:]  # 2 to 30 joints, prismatic ones from 3 joints on


def packed(seed, n):
    """(model, im, fm) of a random branched tree with prismatic joints, damping, friction, armature."""
    m = cd.from_urdf(random_urdf(seed, n, damping=True, friction=True, armature=True)).model
    im, fm = pack(m)
    return m, im, fm


@pytest.mark.parametrize("seed,n", CASES)
def test_zero_world_forces_change_no_bit(seed, n):
    m, im, fm = packed(seed, n)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, m.n))
    a, b = np.empty(m.n), np.empty(m.n)
    for grav in (0, 1):
        rnea_one(im, fm, q, qd, qdd, np.empty((0, 6)), grav, 3, a)
        rnea_one(im, fm, q, qd, qdd, np.zeros((m.n, 6)), grav, 3, b)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed,n", CASES)
def test_extras_as_numpy_adds_them(seed, n):
    m, im, fm = packed(seed, n)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, m.n))
    qd[::3] = 0.0  # sgn(0) = 0
    base, full, arm = np.empty(m.n), np.empty(m.n), np.empty(m.n)
    rnea_one(im, fm, q, qd, qdd, np.empty((0, 6)), 1, 0, base)
    rnea_one(im, fm, q, qd, qdd, np.empty((0, 6)), 1, 1, arm)
    rnea_one(im, fm, q, qd, qdd, np.empty((0, 6)), 1, 3, full)
    np.testing.assert_array_equal(arm, base + m.armature * qdd)
    np.testing.assert_array_equal(full, base + m.armature * qdd + friction_torques(m, qd))


@pytest.mark.parametrize("seed,n", CASES)
def test_batch_rows_and_reused_scratch_equal_single_calls(seed, n):
    m, im, fm = packed(seed, n)
    rng = np.random.default_rng(seed)
    N = 7
    Q, QD, QDD = rng.uniform(-2, 2, (3, N, m.n))
    FW = rng.normal(size=(N, m.n, 6))
    for fw_batch in (FW, np.empty((0, m.n, 6))):
        serial, parallel = np.empty((N, m.n)), np.empty((N, m.n))
        RNEA[0](im, fm, Q, QD, QDD, fw_batch, 1, 3, serial)
        RNEA[1](im, fm, Q, QD, QDD, fw_batch, 1, 3, parallel)
        w = np.full((m.n + 1, k.SCRATCH), np.nan)  # stale contents must not leak in
        for s in range(N):
            fw = fw_batch[s] if fw_batch.shape[0] else np.empty((0, 6))
            one, into = np.empty(m.n), np.empty(m.n)
            rnea_one(im, fm, Q[s], QD[s], QDD[s], fw, 1, 3, one)
            k.rnea_into(im, fm, Q[s], QD[s], QDD[s], fw, 1, 3, into, w)
            np.testing.assert_array_equal(serial[s], one)
            np.testing.assert_array_equal(parallel[s], one)
            np.testing.assert_array_equal(into, one)
