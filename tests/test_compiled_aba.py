"""The compiled articulated-body algorithm (``dynamics/compiled/aba.py``) against
independent forward-dynamics paths: the NumPy references (CRBA + Cholesky and
the NumPy ABA) and Pinocchio's ``aba``.

Random branched trees with revolute, continuous and prismatic joints, fixed
joints, damping, Coulomb friction (sign and tanh-smoothed) and armature, with
and without world wrenches; one sample, reused scratch, batches below and above
the 64 prange blocks (serial and parallel loops); status 1 for a singular mass
matrix.  Speed is never asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.reference import crba, forward, rnea
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.dynamics.schema import add_joint, add_link, new_graph
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
from compiled_calls import ABA, aba_one  # noqa: E402
from composedyn.dynamics.compiled.aba import (
    SCRATCH,
    aba_into,
)

# ABA and Cholesky round differently: the largest difference measured on FIXED_SEEDS and
# 40 more random trees (250 states, world wrenches, tanh friction) is 1.0e-13 relative
# (8e-15 against the NumPy ABA), so 1e-12 leaves a 10x margin.
TOL = 1e-12
NONE = np.empty((0, 6))


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def rel(a, b) -> float:
    """max |a - b| / max(1, max |b|)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if b.size else 0.0


def robot_for(seed: int, n: int) -> cd.Robot:
    return cd.from_urdf(random_urdf(seed, n, damping=True, friction=True, armature=True))


def reference_cholesky(model, q, qd, tau, fw, smooth, fric=True):
    """NumPy CRBA + Cholesky: M qdd = tau - h - friction, M with armature."""
    h = rnea.rnea(model, q, qd, np.zeros_like(q), f_world=fw)
    if fric:
        h = h + friction_torques(model, qd, smooth=smooth)
    return forward.solve_mass(model, crba.crba(model, q) + np.diag(model.armature), tau - h)


def state(model, rng, batch=()):
    q, qd, tau = rng.uniform(-2, 2, (3,) + batch + (model.n,))
    qd[..., 0] = 0.0  # Coulomb friction at rest: sgn(0) = 0
    return q, qd, tau, rng.normal(size=batch + (model.n, 6))


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_one_sample_equals_cholesky_and_numpy(seed, n):
    m = robot_for(seed, n).model
    im, fm = pack(m)
    q, qd, tau, fw = state(m, np.random.default_rng(seed))
    for f, fric, smooth in ((None, 1, 0.0), (fw, 1, 0.0), (fw, 1, 0.05), (None, 0, 0.0)):
        f_k = NONE if f is None else f
        got = np.empty(m.n)
        assert aba_one(im, fm, q, qd, tau, f_k, fric, smooth, got) == 0
        assert rel(got, reference_cholesky(m, q, qd, tau, f, smooth or None, fric)) < TOL, (f is None, fric, smooth)
        if fric:
            assert rel(got, forward.forward_dynamics(m, q, qd, tau, f_world=f, smooth=smooth or None)) < TOL
        else:
            assert rel(got, forward.forward_dynamics(m, q, qd, tau, f_world=f, friction=False)) < TOL


def test_scratch_carries_no_state():
    """aba_into with one scratch array for several samples and robots equals fresh calls."""
    rng = np.random.default_rng(7)
    w = np.full((31, SCRATCH), np.nan)  # large enough for 30 joints; rows past n + 1 unused
    for seed, n in (FIXED_SEEDS[9], FIXED_SEEDS[4], FIXED_SEEDS[6], FIXED_SEEDS[4]):
        m = robot_for(seed, n).model
        im, fm = pack(m)
        for f in (None, True):
            q, qd, tau, fw = state(m, rng)
            f_k = NONE if f is None else fw
            got, fresh = np.empty(m.n), np.empty(m.n)
            # the model and the wrenches read-only, as every compiled caller passes them (jit.readonly):
            # the argument types aba_into was compiled for at install
            assert aba_into(im, fm, q, qd, tau, _read_only(f_k), 1, 0.0, got, w[:m.n + 1]) == 0
            aba_one(im, fm, q, qd, tau, f_k, 1, 0.0, fresh)
            assert np.isfinite(got).all() and rel(got, fresh) < TOL


@pytest.mark.parametrize("seed,n", [FIXED_SEEDS[i] for i in (0, 5, 9)])
@pytest.mark.parametrize("N", [5, 150])  # below and above the 64 prange blocks
def test_batches_equal_one_sample(seed, n, N):
    m = robot_for(seed, n).model
    im, fm = pack(m)
    Q, QD, TAU, FW = state(m, np.random.default_rng(N), (N,))
    for F, smooth in ((np.empty((0, m.n, 6)), 0.0), (FW, 0.02)):
        want = np.empty((N, m.n))
        for s in range(N):
            aba_one(im, fm, Q[s], QD[s], TAU[s], F[s] if len(F) else NONE, 1, smooth, want[s])
        for s in (0, N - 1):
            chol = reference_cholesky(m, Q[s], QD[s], TAU[s], F[s] if len(F) else None, smooth or None)
            assert rel(want[s], chol) < TOL
        for loop in ABA:
            out, status = np.full((N, m.n), np.nan), np.full(N, 7, dtype=np.int64)
            loop(im, fm, Q, QD, TAU, F, 1, smooth, out, status)
            assert not status.any() and rel(out, want) < TOL, loop


def massless_tip_robot(armature: float = 0.0) -> cd.Robot:
    """Two revolute joints; the second moves a massless link: M is singular without armature."""
    g = new_graph("tip")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    add_link(g, "l2")
    add_joint(g, "j1", "base", "l1", axis=(0, 0, 1))
    add_joint(g, "j2", "l1", "l2", axis=(0, 1, 0), origin=np.eye(4), armature=armature)
    return cd.from_graph(g)


def test_singular_mass_matrix_gives_a_status():
    m = massless_tip_robot().model
    im, fm = pack(m)
    z = np.zeros(2)
    assert aba_one(im, fm, z, z, z, NONE, 1, 0.0, np.empty(2)) == 1
    with pytest.raises(cd.ModelError, match="singular"):
        reference_cholesky(m, z, z, z, None, None)
    Z = np.zeros((70, 2))
    for loop in ABA:
        status = np.zeros(70, dtype=np.int64)
        loop(im, fm, Z, Z, Z, np.empty((0, 2, 6)), 1, 0.0, np.empty((70, 2)), status)
        assert status.all()


def test_armature_makes_the_massless_tip_solvable():
    m = massless_tip_robot(armature=0.1).model
    im, fm = pack(m)
    q, qd, tau = np.random.default_rng(3).normal(size=(3, 2))
    got = np.empty(2)
    assert aba_one(im, fm, q, qd, tau, NONE, 1, 0.0, got) == 0
    assert rel(got, reference_cholesky(m, q, qd, tau, None, None)) < TOL


def test_no_moving_joints():
    g = new_graph("welded")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, inertia=np.eye(3) * 0.1)
    add_joint(g, "j", "base", "l1", type="fixed")
    im, fm = pack(cd.from_graph(g).model)
    z = np.zeros(0)
    assert aba_one(im, fm, z, z, z, NONE, 1, 0.0, np.empty(0)) == 0


# --- Pinocchio -------------------------------------------------------------------------

def pin_aba(pp, robot, q, qd, tau, fw=None):
    """Pinocchio's aba in composedyn joint order; fw (n, 6) world wrenches (moment about
    the world origin first) become forces on the joints in their local frames."""
    from pin_oracle import pin

    qp = pp.q(q)
    args = [pp.model, pp.data, qp, pp.v(qd), pp.v(tau)]
    if fw is not None:
        pin.forwardKinematics(pp.model, pp.data, qp)
        fext = [pin.Force.Zero() for _ in range(pp.model.njoints)]
        for k, i in enumerate(pp.perm):
            jid = pp.joint_ids[k]
            fext[jid] = pp.data.oMi[jid].actInv(pin.Force(fw[i, 3:], fw[i, :3]))
        args.append(fext)
    out = np.empty(robot.dof)
    out[pp.perm] = pin.aba(*args)
    return out


@pytest.mark.parametrize("key", ["ur5", "panda"])
def test_vendor_robots_equal_pinocchio(key):
    from pin_oracle import PinPair, erd_urdf

    robot = cd.from_urdf(erd_urdf(key), mimic="independent")
    pp = PinPair(robot, erd_urdf(key))
    im, fm = pack(robot.model)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, tau, fw = state(robot.model, rng)
        for f in (None, fw):
            got = np.empty(robot.dof)
            assert aba_one(im, fm, q, qd, tau, NONE if f is None else f, 0, 0.0, got) == 0
            assert rel(got, pin_aba(pp, robot, q, qd, tau, f)) < TOL


@pytest.mark.parametrize("seed,n", [FIXED_SEEDS[i] for i in (3, 6, 9)])
def test_random_trees_with_armature_equal_pinocchio(seed, n):
    from pin_oracle import PinPair

    xml = random_urdf(seed, n, armature=True)
    robot = cd.from_urdf(xml)
    pp = PinPair(robot, xml)
    pp.model.armature = robot.model.armature[pp.perm]
    pp.data = pp.model.createData()
    im, fm = pack(robot.model)
    q, qd, tau, fw = state(robot.model, np.random.default_rng(seed))
    for f in (None, fw):
        got = np.empty(robot.dof)
        assert aba_one(im, fm, q, qd, tau, NONE if f is None else f, 0, 0.0, got) == 0
        assert rel(got, pin_aba(pp, robot, q, qd, tau, f)) < TOL
