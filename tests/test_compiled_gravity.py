"""The compiled gravity kernel g(q) equals RNEA with qd = qdd = 0.

Reference: the NumPy :func:`composedyn.dynamics.reference.rnea.rnea` (1e-12 relative)
on random branched trees with revolute, continuous and prismatic joints; one
sample (fresh and dirty scratch) and batches through the serial and parallel
loops (more and fewer samples than the loop's blocks); the UR5 against
Pinocchio's ``computeGeneralizedGravity``; a non-default gravity vector.
Speed is measured outside the tests.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.reference import rnea
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
from compiled_calls import GRAVITY, gravity_one  # noqa: E402
from composedyn.dynamics.compiled import gravity  # noqa: E402
from composedyn.dynamics.compiled.layout import BLOCKS, GRAV, pack  # noqa: E402

TOL = 1e-12


def rel(a, b) -> float:
    """max |a - b| / max(1, max |b|)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if b.size else 0.0


def robot_for(seed: int, n: int, **kwargs):
    return cd.from_urdf(random_urdf(seed, n, damping=True, friction=True, armature=True), **kwargs)


def reference(model, q):
    """g(q) = RNEA(q, 0, 0), any leading batch shape."""
    z = np.zeros_like(q)
    return rnea.rnea(model, q, z, z)


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_one_sample_equals_rnea(seed, n):
    m = robot_for(seed, n).model
    im, fm = pack(m)
    rng = np.random.default_rng(seed)
    dirty = np.full((m.n, gravity.SCRATCH), np.nan)  # the kernel must not read stale scratch
    for _ in range(3):
        q = rng.uniform(-3, 3, m.n)
        out, out2 = np.empty(m.n), np.empty(m.n)
        gravity_one(im, fm, q, out)
        gravity.gravity_into(im, fm, q, out2, dirty)
        ref = reference(m, q)
        assert rel(out, ref) < TOL, (seed, n, rel(out, ref))
        assert np.array_equal(out, out2)


def test_random_robots_cover_prismatic_and_branches():
    """The cases above exercise prismatic joints and branched trees."""
    ms = [robot_for(s, n).model for s, n in FIXED_SEEDS]
    assert any((m.jtype == 1).any() for m in ms)
    assert any(len(set(m.parent.tolist())) < m.n for m in ms)  # a parent with two children


@pytest.mark.parametrize("seed,n", [FIXED_SEEDS[i] for i in (0, 3, 6, 9)])
@pytest.mark.parametrize("N", [0, 1, 5, BLOCKS + 1, 3 * BLOCKS + 7])
def test_batch_equals_rnea(seed, n, N):
    m = robot_for(seed, n).model
    im, fm = pack(m)
    Q = np.random.default_rng(seed + N).uniform(-3, 3, (N, m.n))
    ref = reference(m, Q)
    for loop in GRAVITY:
        OUT = np.full((N, m.n), np.nan)
        loop(im, fm, Q, OUT)
        assert rel(OUT, ref) < TOL, (N, rel(OUT, ref))


def test_gravity_vector_is_the_models():
    """A tilted gravity in the URDF loader reaches the kernel (GRAV column), and g(q) is
    linear in it."""
    gvec = np.array([1.5, -2.0, -7.0])
    robot = robot_for(*FIXED_SEEDS[8], gravity=tuple(gvec))
    m = robot.model
    assert np.allclose(m.gravity, gvec)
    im, fm = pack(m)
    q = np.random.default_rng(3).uniform(-3, 3, m.n)
    out = np.empty(m.n)
    gravity_one(im, fm, q, out)
    assert rel(out, reference(m, q)) < TOL
    # linearity: g(q) = sum_k gvec_k g_k(q), g_k computed with gravity e_k in the GRAV columns
    im0, fm0 = pack(robot_for(*FIXED_SEEDS[8]).model)
    fm0 = fm0.copy()  # the packed arrays are read-only: a modified copy
    parts = []
    for e in np.eye(3):
        fm0[:, GRAV:GRAV + 3] = e
        o = np.empty(m.n)
        gravity_one(im0, fm0, q, o)
        parts.append(o)
    assert rel(np.array(parts).T @ gvec, out) < TOL


def test_zero_gravity_gives_zero():
    m = robot_for(*FIXED_SEEDS[5], gravity=(0.0, 0.0, 0.0)).model
    im, fm = pack(m)
    out = np.full(m.n, np.nan)
    gravity_one(im, fm, np.random.default_rng(0).uniform(-3, 3, m.n), out)
    assert np.array_equal(out, np.zeros(m.n))


@pytest.mark.parametrize("gvec", [None, (0.3, 2.0, -9.0)])
def test_ur5_equals_pinocchio(gvec):
    from pin_oracle import PinPair, erd_urdf, pin

    urdf = erd_urdf("ur5")
    robot = cd.from_urdf(urdf) if gvec is None else cd.from_urdf(urdf, gravity=gvec)
    pp = PinPair(robot, urdf)
    if gvec is not None:
        pp.model.gravity = pin.Motion(np.array(gvec, dtype=float), np.zeros(3))  # (linear, angular)
        pp.data = pp.model.createData()
    im, fm = pack(robot.model)
    rng = np.random.default_rng(5)
    Q = rng.uniform(-np.pi, np.pi, (20, robot.model.n))
    OUT = np.empty_like(Q)
    GRAVITY[0](im, fm, Q, OUT)
    for q, out in zip(Q, OUT):
        ref = pin.computeGeneralizedGravity(pp.model, pp.data, pp.q(q))
        assert rel(pp.v(out), ref) < TOL, rel(pp.v(out), ref)
