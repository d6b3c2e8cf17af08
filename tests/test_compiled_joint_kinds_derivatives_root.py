"""The compiled derivatives of inverse and forward dynamics in their form for a free flyer, planar or spherical
joint at the root followed by revolute and prismatic joints (the root's columns, perturbed on the right as
Pinocchio's): random trees, forests among them (bodies hanging from the world beside the root), against
Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives``; a quaternion or (cos, sin) pair of any
norm is normalised, a zero one refused (status 4); trees with other joints with several coordinates are
refused (status 5)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics.compiled import fd_derivatives
from composedyn.dynamics.compiled.layout import ARM, FORM, MASS, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.dynamics.schema import add_joint, add_link
from composedyn.testing.pinocchio_trees import array_model, random_configuration, random_tree
from pin_oracle import pin, rel_err
from test_floating_derivatives import _central, _group_central

SEEDS = (0, 1, 2, 3)
ROOTS = {"free_flyer": slice(3, 7), "planar": slice(2, 4), "spherical": slice(0, 4)}  # -> the root's orientation


def _derivatives(im, fm, nv, q, v, a):
    """(status, d tau / d q, d tau / d v) of the declared quantity's C entry (the kernel the Robot methods
    run), friction off, results and scratch full of NaN beforehand."""
    status, dq, dv = entry(fd_derivatives.INVERSE_DYNAMICS_DERIVATIVES, (im, fm), q, v, a, options=(0,))
    assert dq.shape == (nv, nv)
    return status, dq, dv


def _fd_derivatives(im, fm, nv, q, v, tau):
    """(status, d a / d q, d a / d v, M^-1) of the declared quantity's C entry, as :func:`_derivatives`."""
    status, aq, av, minv = entry(fd_derivatives.FORWARD_DYNAMICS_DERIVATIVES, (im, fm), q, v, tau, options=(0,))
    assert aq.shape == (nv, nv)
    return status, aq, av, minv


@pytest.fixture(scope="module", params=[(s, r) for r in ROOTS for s in SEEDS[:4 if r == "free_flyer" else 2]],
                ids=lambda p: f"{p[1]}-{p[0]}")
def tree(request):
    seed, root = request.param
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root=root)
    return rng, model, array_model(model), ROOTS[root]


def test_some_trees_are_forests():
    """The world carries other bodies beside the free flyer in some of the trees tested."""
    parents = [list(random_tree(np.random.default_rng(s), 12, kinds=("revolute", "prismatic"),
                                root="free_flyer").parents) for s in SEEDS]
    assert any(0 in p[2:] for p in parents), parents


def test_derivatives_equal_pinocchio(tree):
    rng, model, am, turn = tree
    data = model.createData()
    im, fm = pack_tree(am)
    assert im[0, FORM] == int(TreeForm.FREE_ROOT if turn == ROOTS["free_flyer"] else TreeForm.GENERAL)
    for _ in range(4):
        q = random_configuration(am, rng)
        v, a = rng.normal(size=(2, model.nv))
        status, dq, dv = _derivatives(im, fm, model.nv, q, v, a)
        assert status == 0
        pq, pv, _ = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a))
        assert rel_err(dq, pq) < 1e-11 and rel_err(dv, pv) < 1e-11
        scaled = q.copy()
        scaled[turn] *= 2.5  # a quaternion or (cos, sin) of any norm: the kernel normalises it
        assert rel_err(_derivatives(im, fm, model.nv, scaled, v, a)[1], dq) < 1e-12


def test_a_zero_quaternion_and_other_joint_kinds_are_refused(tree):
    rng, model, am, turn = tree
    im, fm = pack_tree(am)
    q = random_configuration(am, rng)
    v = np.zeros(model.nv)
    q[turn] = 0.0
    assert _derivatives(im, fm, model.nv, q, v, v)[0] == 4
    other = random_tree(np.random.default_rng(5), 6, kinds=("spherical", "revolute"), root="free_flyer")
    oam = array_model(other)
    oim, ofm = pack_tree(oam)
    assert oim[0, FORM] == int(TreeForm.GENERAL)
    z = np.zeros(other.nv)
    assert _derivatives(oim, ofm, other.nv, random_configuration(oam, rng), z, z)[0] == 5


def test_forward_dynamics_derivatives_equal_pinocchio(tree):
    rng, model, am, turn = tree
    data = model.createData()
    im, fm = pack_tree(am)
    for _ in range(4):
        q = random_configuration(am, rng)
        v, tau = rng.normal(size=(2, model.nv))
        status, aq, av, minv = _fd_derivatives(im, fm, model.nv, q, v, tau)
        assert status == 0
        pq, pv, pm = (np.array(x) for x in pin.computeABADerivatives(model, data, q, v, tau))
        pm = np.triu(pm) + np.triu(pm, 1).T  # Pinocchio fills the upper triangle of M^-1
        assert rel_err(aq, pq) < 1e-9 and rel_err(av, pv) < 1e-9 and rel_err(minv, pm) < 1e-9
        assert np.array_equal(minv, minv.T)
        scaled = q.copy()
        scaled[turn] *= 0.3
        assert rel_err(_fd_derivatives(im, fm, model.nv, scaled, v, tau)[1], aq) < 1e-12


def test_forward_dynamics_derivatives_refusals(tree):
    rng, model, am, turn = tree
    im, fm = pack_tree(am)
    q = random_configuration(am, rng)
    z = np.zeros(model.nv)
    q[turn] = 0.0
    assert _fd_derivatives(im, fm, model.nv, q, z, z)[0] == 4
    massless = fm.copy()
    massless[:, MASS:ARM] = 0.0  # every body massless: M is singular
    assert _fd_derivatives(im, massless, model.nv, random_configuration(am, rng), z, z)[0] == 3
    other = random_tree(np.random.default_rng(5), 6, kinds=("spherical", "revolute"), root="free_flyer")
    oam = array_model(other)
    oim, ofm = pack_tree(oam)
    z = np.zeros(other.nv)
    assert _fd_derivatives(oim, ofm, other.nv, random_configuration(oam, rng), z, z)[0] == 5


def test_a_spherical_root_with_friction_and_rotor_inertia_equals_finite_differences():
    """A spherical root joint with damping, Coulomb friction and armature (a free-flyer or planar joint has
    none): the forward derivatives of the public method equal central differences of forward dynamics along
    ``integrate``, M^-1 the inverse of the mass matrix."""
    rng = np.random.default_rng(5)
    g = nx.DiGraph(name="rooted", gravity=np.array([0.2, 0.1, -9.81]))
    add_link(g, "base")
    for k, (parent, kind) in enumerate([("base", "spherical"), ("l0", "revolute"), ("l1", "revolute"),
                                        ("l0", "prismatic")]):
        add_link(g, f"l{k}", mass=rng.uniform(0.5, 2.0), com=0.1 * rng.normal(size=3),
                 inertia=np.diag(rng.uniform(0.02, 0.05, 3)))
        T = np.eye(4)
        T[:3, 3] = 0.3 * rng.normal(size=3)
        add_joint(g, f"j{k}", parent, f"l{k}", type=kind, origin=T, axis=rng.normal(size=3), damping=0.4,
                  friction=0.3, armature=0.05)
    robot = cd.from_graph(g)
    assert robot.joints[0].kind == "spherical" and robot.array_model.damping[0] > 0
    assert robot.array_model.armature[0] > 0
    q = robot.random_configuration(seed=2)
    v, tau = rng.normal(size=(2, robot.nv))
    kw = {"smooth_friction": 0.3}
    aq, av, Minv = robot.forward_dynamics_derivatives(q, v, tau, **kw)
    assert rel_err(aq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, **kw), q)) < 1e-6
    assert rel_err(av, _central(lambda w: robot.forward_dynamics(q, w, tau, **kw), v)) < 1e-6
    assert rel_err(Minv, np.linalg.inv(robot.mass_matrix(q))) < 1e-10
