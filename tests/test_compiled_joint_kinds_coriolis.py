"""The compiled joint-torque regressor and Coriolis matrix on random trees mixing free-flyer, spherical,
universal, helical, planar, revolute and prismatic joints anywhere in the tree (roots: a free flyer, a planar
joint, none), against Pinocchio built with the same joint models (:mod:`composedyn.testing.pinocchio_trees`):
``computeJointTorqueRegressor`` (10 columns per body, Pinocchio's dynamic-parameter order, which is the
regressor's) and ``computeCoriolisMatrix``.  Pinocchio's Coriolis matrix leaves out the rate of a universal
joint's motion subspace (it turns with the joint's second angle in the child frame), so it is the oracle for
trees without universal joints; on every tree the Coriolis matrix satisfies C qd = bias - gravity torques
(Pinocchio) and dM/dt = C + C^T (central differences of Pinocchio's mass matrix along ``integrate``).  The
declared quantities' C entries and batch loops give the kernels' numbers on a tree (bodies != coordinates); a
floating robot's free-flyer tree equals Pinocchio's ``computeJointTorqueRegressor`` and ``computeCoriolisMatrix``
on the free-flyer model of the same URDF (columns mapped body by body through the joints' names)."""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics import array_api as A
from composedyn.dynamics.array_api import joints as J
from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled import declare
from composedyn.dynamics.compiled.coriolis import CORIOLIS_MATRIX
from composedyn.dynamics.compiled.layout import model_dims, pack_tree
from composedyn.dynamics.compiled.regressor import REGRESSOR
from composedyn.testing.pinocchio_trees import FLOATING_URDFS, array_model, floating_robot, random_tree
from pin_oracle import legged_pair, pin, tree_regressor_columns

TOL = 1e-10
XP = array_api_compat.array_namespace(np.zeros(1))
TREES = {  # seed, bodies, root kind, kinds; the seeds put free-flyer, spherical, universal, planar joints inside
    "floating": (6, 16, "free_flyer", J.KINDS),
    "fixed": (7, 16, None, J.KINDS),
    "planar_root": (3, 16, "planar", J.KINDS),
    "no_universal": (5, 12, "free_flyer", tuple(k for k in J.KINDS if k != "universal")),
}


def _err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


class Tree:
    """A random tree of :data:`TREES` in Pinocchio (``model``, ``data``), as an array model ``am`` and packed
    (``im``, ``fm``), with its random generator for samples."""

    def __init__(self, name: str):
        seed, bodies, root, kinds = TREES[name]
        self.rng = np.random.default_rng(seed)
        self.model = random_tree(self.rng, bodies, kinds=kinds, root=root)
        self.data, self.am = self.model.createData(), array_model(self.model, name=f"{name} tree")
        self.im, self.fm = pack_tree(self.am)
        self.n, self.nv = self.am.n, self.model.nv

    def q(self) -> np.ndarray:
        return np.concatenate([J.random_configuration(j, self.rng) for j in self.am.joints])

    def v(self) -> np.ndarray:
        return self.rng.normal(size=self.nv)


@pytest.fixture(scope="module", params=list(TREES))
def tree(request) -> Tree:
    return Tree(request.param)


def _regressor(im, fm, q, v, a) -> np.ndarray:
    """The regressor by the declared C entry (the kernel the Robot methods run), result and scratch full of
    NaN beforehand: every entry written (zeros between branches), nothing read before it is written."""
    status, out = entry(REGRESSOR, (im, fm), q, v, a)
    assert status == 0
    return out


def _coriolis(im, fm, q, v) -> np.ndarray:
    """C(q, v) by the declared C entry, as :func:`_regressor`."""
    status, out = entry(CORIOLIS_MATRIX, (im, fm), q, v)
    assert status == 0
    return out


def _scratch(q, im) -> tuple:
    return tuple(np.zeros(q.shape(s, model_dims(im))) for s in q.scratch)


def test_trees_have_multi_coordinate_joints_inside():
    for name in ("floating", "fixed", "planar_root"):
        am = Tree(name).am
        assert {j.kind for j in am.joints} == set(J.KINDS) - {"continuous"}, name
        inside = {j.kind for i, j in enumerate(am.joints) if am.parent[i] >= 0 and i in am.parent}
        assert inside & {"free_flyer", "spherical", "universal", "planar"}, name


def test_regressor_equals_pinocchio(tree):
    m, d, am = tree.model, tree.data, tree.am
    pi = np.asarray(am.inertia, dtype=float).reshape(-1)
    for _ in range(4):
        q, v, a = tree.q(), tree.v(), tree.v()
        y = _regressor(tree.im, tree.fm, q, v, a)
        assert y.shape == (tree.nv, 10 * tree.n) and tree.nv != tree.n
        assert _err(y, pin.computeJointTorqueRegressor(m, d, q, v, a)) < TOL
        assert _err(y @ pi, pin.rnea(m, d, q, v, a)) < TOL


def test_declared_regressor_on_a_tree_sizes_columns_by_bodies(tree):
    """The C entry and the batch loops size the result (nv, 10 n) from the packed tree and give the kernel's
    numbers."""
    model = (tree.im, tree.fm)
    q, v, a = tree.q(), tree.v(), tree.v()
    want = _regressor(tree.im, tree.fm, q, v, a)
    assert REGRESSOR.shape(REGRESSOR.results[0], model_dims(tree.im)) == (tree.nv, 10 * tree.n)
    assert np.array_equal(declare.caller(REGRESSOR, model, _scratch(REGRESSOR, tree.im))(q, v, a), want)
    Q, V, A = (np.stack([x, x]) for x in (q, v, a))
    for parallel in (False, True):
        (got,), status = declare.run_batch(REGRESSOR, model, (Q, V, A), parallel=parallel)
        assert got.shape == (2, tree.nv, 10 * tree.n) and not status.any()
        assert np.array_equal(got[1], want)


def test_coriolis_matrix_equals_pinocchio_without_universal_joints():
    """Pinocchio's computeCoriolisMatrix leaves out the rate of a universal joint's motion subspace (it turns with
    the joint's second angle in the child frame; there its C qd differs from nonLinearEffects - gravity), so it is
    the oracle for the tree without them; the identities below cover every tree."""
    tree = Tree("no_universal")
    assert {"free_flyer", "spherical", "planar", "helical"} <= {j.kind for j in tree.am.joints}
    for _ in range(4):
        q, v = tree.q(), tree.v()
        assert _err(_coriolis(tree.im, tree.fm, q, v), pin.computeCoriolisMatrix(tree.model, tree.data, q, v)) < TOL


def _mass(tree: Tree, q) -> np.ndarray:
    upper = np.triu(pin.crba(tree.model, tree.data, q))
    return upper + np.triu(upper, 1).T


def test_coriolis_matrix_identities(tree):
    """C qd = nonLinearEffects - gravity (Pinocchio), dM/dt = C + C^T (central differences of Pinocchio's M along
    integrate), so dM/dt - 2C is skew-symmetric; and the array-API engine's matrix (the same definition)."""
    m, d = tree.model, tree.data
    bm = A.on(tree.am, XP)
    for _ in range(2):
        q, v = tree.q(), tree.v()
        c = _coriolis(tree.im, tree.fm, q, v)
        velocity_terms = pin.nonLinearEffects(m, d, q, v) - pin.computeGeneralizedGravity(m, d, q)
        assert _err(c @ v, velocity_terms) < TOL
        h = 1e-6
        mdot = (_mass(tree, pin.integrate(m, q, h * v)) - _mass(tree, pin.integrate(m, q, -h * v))) / (2 * h)
        assert _err(c + c.T, mdot) < 1e-7
        skew = mdot - 2 * c
        assert _err(skew + skew.T, np.zeros_like(skew)) < 1e-7
        assert _err(c, A.coriolis_matrix(bm, q, v)) < TOL


def test_declared_coriolis_matrix_on_a_tree(tree):
    model = (tree.im, tree.fm)
    q, v = tree.q(), tree.v()
    want = _coriolis(tree.im, tree.fm, q, v)
    assert np.array_equal(declare.caller(CORIOLIS_MATRIX, model, _scratch(CORIOLIS_MATRIX, tree.im))(q, v), want)
    for parallel in (False, True):
        (got,), status = declare.run_batch(CORIOLIS_MATRIX, model, (np.stack([q, q]), np.stack([v, v])),
                                           parallel=parallel)
        assert got.shape == (2, tree.nv, tree.nv) and not status.any()
        assert np.array_equal(got[1], want)


def test_a_zero_quaternion_is_refused_not_a_pose():
    tree = Tree("floating")  # free-flyer root: its quaternion is q[3:7]
    q, ones = tree.q(), np.ones(tree.nv)
    q[3:7] = 0.0
    assert entry(REGRESSOR, (tree.im, tree.fm), q, ones, ones)[0] == 4
    assert entry(CORIOLIS_MATRIX, (tree.im, tree.fm), q, ones)[0] == 4


@pytest.fixture(scope="module", params=list(FLOATING_URDFS))
def floating(request):
    robot = floating_robot(request.param)
    am = from_robot(robot)
    im, fm = pack_tree(am)
    return robot, am, im, fm, legged_pair(request.param, robot)


def test_a_floating_robot_as_a_free_flyer_tree_equals_the_robot(floating):
    robot, am, im, fm, pp = floating
    ours, theirs = tree_regressor_columns(pp, am)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        # the robot's methods run on this tree: the independent route is Pinocchio's free flyer (its joint order:
        # rows and columns of coordinates through pp.vperm, the regressor's body blocks through the joints' names)
        qp, vp = pp.q(q), pp.v(v)
        Y = pin.computeJointTorqueRegressor(pp.model, pp.data, qp, vp, pp.v(a))
        assert _err(_regressor(im, fm, q, v, a)[pp.vperm][:, ours], Y[:, theirs]) < TOL
        assert _err(pp.mat(_coriolis(im, fm, q, v)), pin.computeCoriolisMatrix(pp.model, pp.data, qp, vp)) < TOL


def test_bundled_fixed_base_robot_packs_the_same_from_either_model():
    robot = cd.load("panda")
    im, fm = pack_tree(from_robot(robot))
    rng = np.random.default_rng(1)
    q, v, a = (rng.normal(size=robot.dof) for _ in range(3))
    assert _err(_regressor(im, fm, q, v, a), robot.regressor(q, v, a)) < 1e-12
    assert _err(_coriolis(im, fm, q, v), robot.coriolis_matrix(q, v)) < 1e-12
