"""The fast paths of the compiled world-frame CRBA (``dynamics/compiled/crba.py``).

The mass matrix against the
NumPy reference on chains (no zero fill: every entry written) and branched
trees (entries between branches zeroed), with a garbage-filled output and a
reused scratch array, and through the batch loops.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.reference import crba
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
from compiled_calls import CRBA, crba_one  # noqa: E402
from composedyn.dynamics.compiled import crba as ccrba  # noqa: E402

TOL = 1e-12


def rel(a, b) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def _check(robot, q, out=None, tol=TOL):
    m = robot.model
    im, fm = pack(m)
    ref = crba.crba(m, q) + np.diag(m.armature)
    out = np.full((m.n, m.n), np.nan) if out is None else out
    w = np.full((m.n, ccrba.SCRATCH), 1e300)
    ccrba.crba_into(im, fm, q, 1, out, w)
    assert rel(out, ref) < tol
    ccrba.crba_into(im, fm, q * 0.5, 0, out, w)  # scratch and output reused
    assert rel(out, crba.crba(m, q * 0.5)) < tol
    return out


@pytest.mark.parametrize("seed,n", [FIXED_SEEDS[i] for i in (0, 2, 4, 6, 9)])
def test_mass_matrix_branched_and_chain(seed, n):
    rng = np.random.default_rng(seed)
    for p_fixed, p_branch in ((0.2, 0.35), (0.0, 0.0)):  # branched tree, then a chain
        robot = cd.from_urdf(random_urdf(seed, n, p_fixed=p_fixed, p_branch=p_branch, armature=True))
        if p_branch == 0.0:
            assert list(robot.model.parent) == list(range(-1, robot.model.n - 1))
        q = rng.uniform(-4, 4, robot.model.n)
        _check(robot, q)
        jump = rng.choice([-1, 1], q.size) * rng.uniform(0.5, 2, q.size) * 1e5
        big = q + (robot.model.jtype == 0) * jump
        # large angles (prismatic joints unchanged): sin and cos of |q| ~ 1e5 agree with NumPy's to the last
        # bit, but the products of ~30 rotations then round differently in the kernel and the reference
        _check(robot, big, tol=1e-10)


def test_base_far_from_origin():
    """Lever arms are taken from the first joint's position: a robot mounted 1 km away keeps its digits."""
    seed, n = FIXED_SEEDS[8]
    robot = cd.from_urdf(random_urdf(seed, n, armature=True))
    m = robot.model
    roots = m.parent < 0
    tree_p = m.tree_p.copy()
    tree_p[roots] += np.array([1000.0, -700.0, 300.0])
    far = dataclasses.replace(m, tree_p=tree_p)
    q = np.random.default_rng(2).uniform(-3, 3, m.n)
    im, fm = pack(far)
    out = np.empty((m.n, m.n))
    crba_one(im, fm, q, 0, out)
    assert rel(out, crba.crba(m, q)) < TOL


def test_nan_angle_gives_nan_entries():
    robot = cd.from_urdf(random_urdf(*FIXED_SEEDS[4]))
    m = robot.model
    im, fm = pack(m)
    rev = int(np.flatnonzero(m.jtype == 0)[0])
    q = np.zeros(m.n)
    q[rev] = np.nan
    out = np.zeros((m.n, m.n))
    crba_one(im, fm, q, 1, out)
    assert np.isnan(out).any()


@pytest.mark.parametrize("loop", [0, 1])
def test_batch_loops(loop):
    seed, n = FIXED_SEEDS[6]
    robot = cd.from_urdf(random_urdf(seed, n, armature=True))
    m = robot.model
    im, fm = pack(m)
    Q = np.random.default_rng(1).uniform(-3, 3, (70, m.n))
    OUT = np.full((70, m.n, m.n), np.nan)
    CRBA[loop](im, fm, Q, 1, OUT)
    for s in (0, 33, 69):
        assert rel(OUT[s], crba.crba(m, Q[s]) + np.diag(m.armature)) < TOL
