"""The compiled kernels that take every joint kind (inverse dynamics, the mass matrix) on random trees
mixing free-flyer, spherical, universal, helical, planar, revolute and prismatic joints anywhere in the
tree, against Pinocchio built with the same joint models (:mod:`composedyn.testing.pinocchio_trees`), and
with armature and friction against the array-API engine; a floating robot's free-flyer tree (which its
inverse dynamics and mass matrix run on) against Pinocchio's free-flyer model of the same URDF."""

from __future__ import annotations

from dataclasses import replace

import array_api_compat
import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics import array_api as A
from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled.crba import MASS_MATRIX
from composedyn.dynamics.compiled.layout import ARM, FORM, PARENT, pack_tree
from composedyn.dynamics.compiled.rnea import INVERSE_DYNAMICS
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import (
    FLOATING_URDFS,
    array_model,
    floating_robot,
    random_configuration,
    random_tree,
    seeded_tree,
)
from pin_oracle import legged_pair, pin

XP = array_api_compat.array_namespace(np.zeros(1))
TREES = {  # seed, bodies, root kind
    "floating": (6, 16, "free_flyer"),
    "fixed": (7, 16, None),
    "planar_root": (3, 16, "planar"),
    "spherical_root": (11, 9, "spherical"),
}


def _err(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _id(im, fm, n, nv, q, v, a, extra=0):
    """Inverse dynamics by the declared C entry (the kernel the Robot methods run; scratch full of NaN):
    ``extra`` bit 1 the armature (which the entry always adds: without it the tree must have none), bit 2
    damping and Coulomb friction."""
    assert extra & 1 or not fm[:, ARM].any()
    status, tau = entry(INVERSE_DYNAMICS, (im, fm), q, v, a, options=((extra >> 1) & 1,))
    assert status == 0 and tau.shape == (nv,) and im.shape[0] == n
    return tau


def _mass(im, fm, nv, q, arm=0):
    """The mass matrix by the declared C entry (armature included: with ``arm`` 0 the tree must have none)."""
    assert arm or not fm[:, ARM].any()
    status, M = entry(MASS_MATRIX, (im, fm), q)
    assert status == 0 and M.shape == (nv, nv)
    return M


@pytest.fixture(scope="module", params=list(TREES))
def tree(request):
    return seeded_tree(request.param, *TREES[request.param])


def test_inverse_dynamics_and_mass_matrix_equal_pinocchio(tree):
    rng, model, am = tree
    data = model.createData()
    im, fm = pack_tree(am)
    assert {"spherical", "universal", "planar", "helical", "revolute", "prismatic"} <= {j.kind for j in am.joints}
    for _ in range(5):
        q = random_configuration(am, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        tau = _id(im, fm, am.n, model.nv, q, v, a)
        assert _err(tau, pin.rnea(model, data, q, v, a)) < 1e-12
        M = _mass(im, fm, model.nv, q)
        upper = np.triu(pin.crba(model, data, q))
        assert _err(M, upper + np.triu(upper, 1).T) < 1e-12
        assert np.array_equal(M, M.T)
        # a quaternion or (cos, sin) pair of any norm: the kernels normalise it
        scaled = q.copy()
        for j in am.joints:
            if j.kind in ("spherical", "free_flyer", "planar"):
                k = j.idx_q + (3 if j.kind == "free_flyer" else 2 if j.kind == "planar" else 0)
                scaled[k:k + (4 if j.kind != "planar" else 2)] *= 2.5
        assert _err(_id(im, fm, am.n, model.nv, scaled, v, a), tau) < 1e-12


def test_armature_and_friction_equal_the_array_api_engine(tree):
    rng, model, am = tree
    nv = model.nv
    am = replace(am, armature=rng.uniform(0, 0.3, nv), damping=rng.uniform(0, 0.5, nv),
                 coulomb=rng.uniform(0, 0.4, nv))
    im, fm = pack_tree(am)
    bm = A.on(am, XP)
    q = random_configuration(am, rng)
    v, a = rng.normal(size=nv), rng.normal(size=nv)
    want = A.inverse_dynamics(bm, q, v, a, friction=True)
    assert _err(_id(im, fm, am.n, nv, q, v, a, extra=3), want) < 1e-12
    assert _err(_mass(im, fm, nv, q, arm=1), A.mass_matrix(bm, q)) < 1e-12


def test_a_zero_quaternion_is_refused_not_a_pose():
    rng = np.random.default_rng(2)
    model = random_tree(rng, 4, kinds=("revolute", "spherical"), root="free_flyer")
    am = array_model(model)
    im, fm = pack_tree(am)
    q = random_configuration(am, rng)
    q[3:7] = 0.0
    assert entry(INVERSE_DYNAMICS, (im, fm), q, np.ones(model.nv), np.ones(model.nv), options=(0,))[0] == 4
    assert entry(MASS_MATRIX, (im, fm), q)[0] == 4


_FREE_ROOT_SEEDS = [21, 22, 23]


def test_the_free_flyer_root_trees_hang_bodies_from_the_world_and_from_the_free_flyer():
    """The random trees of the free-flyer root form have both: bodies on subtrees fixed to the world beside
    the free flyer's (no coupling with it), and bodies below the free flyer."""
    roots = []
    for seed in _FREE_ROOT_SEEDS:
        model = random_tree(np.random.default_rng(seed), 12, kinds=("revolute", "prismatic"), root="free_flyer")
        im, _ = pack_tree(array_model(model))
        roots += [int(im[i, PARENT]) for i in range(1, im.shape[0])]
    assert -1 in roots and 0 in roots


@pytest.mark.parametrize("seed", _FREE_ROOT_SEEDS)
def test_a_free_flyer_root_with_one_coordinate_joints_equals_pinocchio(seed):
    """The kernels' form for floating robots (free flyer at the root, then revolute and prismatic
    joints: straight-line root code) against Pinocchio, with a root placement that is not the identity;
    armature and friction against the array-API engine."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root="free_flyer")
    data = model.createData()
    nv = model.nv
    am = replace(array_model(model), armature=rng.uniform(0, 0.3, nv), damping=rng.uniform(0, 0.5, nv),
                 coulomb=rng.uniform(0, 0.4, nv))
    im, fm = pack_tree(am)
    assert im[0, FORM] == TreeForm.FREE_ROOT
    bare = pack_tree(array_model(model))
    bm = A.on(am, XP)
    for _ in range(4):
        q = random_configuration(am, rng)
        v, a = rng.normal(size=nv), rng.normal(size=nv)
        tau = _id(*bare, am.n, nv, q, v, a)
        assert _err(tau, pin.rnea(model, data, q, v, a)) < 1e-12
        scaled = q.copy()
        scaled[3:7] *= rng.uniform(0.1, 10.0)  # any norm: the kernels normalise the quaternion
        assert _err(_id(*bare, am.n, nv, scaled, v, a), tau) < 1e-12
        upper = np.triu(pin.crba(model, data, q))
        assert _err(_mass(*bare, nv, q), upper + np.triu(upper, 1).T) < 1e-12
        assert _err(_id(im, fm, am.n, nv, q, v, a, extra=3), A.inverse_dynamics(bm, q, v, a, friction=True)) < 1e-12
        assert _err(_mass(im, fm, nv, q, arm=1), A.mass_matrix(bm, q)) < 1e-12


@pytest.mark.parametrize("name", list(FLOATING_URDFS))
def test_a_floating_robot_as_a_free_flyer_tree_equals_the_robot(name):
    robot = floating_robot(name)
    am = from_robot(robot)
    im, fm = pack_tree(am)
    pp = legged_pair(name, robot)  # the independent route: Pinocchio's free flyer (the robot's armature included)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        qp = pp.q(q)  # Pinocchio's arrays are in its joint order: ours mapped by pp.v, pp.mat
        want = pin.rnea(pp.model, pp.data, qp, pp.v(v), pp.v(a))
        friction = am.damping * v + am.coulomb * np.sign(v)  # the robot's inverse dynamics has friction
        tau = _id(im, fm, am.n, robot.nv, q, v, a, extra=1)
        assert _err(pp.v(tau), want) < 1e-11
        assert _err(pp.v(robot.inverse_dynamics(q, v, a)), want + pp.v(friction)) < 1e-11
        upper = np.triu(pin.crba(pp.model, pp.data, qp))
        M = upper + np.triu(upper, 1).T
        assert _err(pp.mat(_mass(im, fm, robot.nv, q, arm=1)), M) < 1e-11
        assert _err(pp.mat(robot.mass_matrix(q)), M) < 1e-11


def test_bundled_fixed_base_robots_pack_the_same_from_either_model():
    robot = cd.load("panda")
    im, fm = pack_tree(from_robot(robot))
    rng = np.random.default_rng(1)
    q, v, a = (rng.normal(size=robot.dof) for _ in range(3))
    assert _err(_id(im, fm, im.shape[0], robot.dof, q, v, a, extra=3), robot.inverse_dynamics(q, v, a)) < 1e-12
    assert _err(_mass(im, fm, robot.dof, q, arm=1), robot.mass_matrix(q)) < 1e-12
