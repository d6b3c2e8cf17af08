"""The compiled articulated-body algorithm (forward dynamics) on random trees mixing free-flyer, spherical,
universal, helical, planar, revolute and prismatic joints anywhere in the tree, against Pinocchio's ABA built
with the same joint models (:mod:`composedyn.testing.pinocchio_trees`), with external wrenches against
Pinocchio's ABA with the same forces, with armature and friction against the array-API engine, as the inverse
of the compiled inverse dynamics, and a floating robot's free-flyer tree against the robot's own forward
dynamics."""

from __future__ import annotations

from dataclasses import replace

import array_api_compat
import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics import array_api as A
from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled.aba import FORWARD_DYNAMICS
from composedyn.dynamics.compiled.layout import ARM, IO, MASS, NO_FW, H, pack_tree
from composedyn.dynamics.compiled.rnea import INVERSE_DYNAMICS
from composedyn.testing.pinocchio_trees import (
    FLOATING_URDFS,
    array_model,
    floating_robot,
    random_configuration,
    random_tree,
    seeded_tree,
)
from pin_oracle import pin

XP = array_api_compat.array_namespace(np.zeros(1))
TREES = {  # seed, bodies, root kind (None: drawn from the kinds)
    "floating": (6, 16, "free_flyer"),
    "fixed": (12, 16, "revolute"),
    "drawn_root": (7, 16, None),
    "planar_root": (3, 16, "planar"),
    "spherical_root": (11, 9, "spherical"),
}
MULTI = {"spherical", "universal", "planar", "free_flyer"}


def _err(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _fd(im, fm, nv, q, v, tau, fw=NO_FW, fric=0, smooth=0.0):
    """(status, qdd) of the declared forward dynamics' C entry (the kernel the Robot methods run), scratch
    and output full of NaN (nothing read before it is written): 3 for a singular mass matrix, 4 for a
    joint without orientation."""
    status, qdd = entry(FORWARD_DYNAMICS, (im, fm), q, v, tau, options=(fric,), number=smooth,
                        extras=(fw,) if fw.shape[0] else None)
    assert qdd.shape == (nv,)
    return status, qdd


def _id(im, fm, nv, q, v, a, fw=NO_FW, friction=0):
    """Inverse dynamics by the declared C entry (armature included; damping and Coulomb friction with
    ``friction``)."""
    status, tau = entry(INVERSE_DYNAMICS, (im, fm), q, v, a, options=(friction,), extras=(fw,) if fw.shape[0] else None)
    assert status == 0 and tau.shape == (nv,)
    return tau


_configuration = random_configuration


@pytest.fixture(scope="module", params=list(TREES))
def tree(request):
    return seeded_tree(request.param, *TREES[request.param])


def test_forward_dynamics_equals_pinocchio(tree):
    rng, model, am = tree
    data = model.createData()
    im, fm = pack_tree(am)
    kinds = [j.kind for j in am.joints]
    assert MULTI <= set(kinds) and {"helical", "revolute", "prismatic"} <= set(kinds)
    assert any(k in MULTI for k in kinds[1:])  # several-coordinate joints inside the tree, not only at the root
    for _ in range(5):
        q = _configuration(am, rng)
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        status, qdd = _fd(im, fm, model.nv, q, v, tau)
        assert status == 0
        assert _err(qdd, pin.aba(model, data, q, v, tau)) < 1e-10
        # a quaternion or (cos, sin) pair of any norm: the kernel normalises it
        scaled = q.copy()
        for j in am.joints:
            if j.kind in ("spherical", "free_flyer", "planar"):
                k = j.idx_q + (3 if j.kind == "free_flyer" else 2 if j.kind == "planar" else 0)
                scaled[k:k + (4 if j.kind != "planar" else 2)] *= 2.5
        assert _err(_fd(im, fm, model.nv, scaled, v, tau)[1], qdd) < 1e-12


def test_external_wrenches_equal_pinocchio(tree):
    """f_world (n, 6): per body, world axes, moment about the world origin first; Pinocchio takes each in its
    joint's frame."""
    rng, model, am = tree
    data = model.createData()
    im, fm = pack_tree(am)
    q = _configuration(am, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    fw = rng.normal(size=(am.n, 6))
    pin.forwardKinematics(model, data, q)
    fext = pin.StdVec_Force()
    fext.append(pin.Force.Zero())
    for i in range(am.n):
        fext.append(data.oMi[i + 1].actInv(pin.Force(fw[i, 3:], fw[i, :3])))
    status, qdd = _fd(im, fm, model.nv, q, v, tau, fw=fw)
    assert status == 0
    want = pin.aba(model, data, q, v, tau, fext)
    assert _err(qdd, want) < 1e-10
    assert _err(qdd, pin.aba(model, data, q, v, tau)) > 1e-3  # the wrenches matter


def _with_joint_terms(am, rng):
    """``am`` with random armature, damping and Coulomb friction on every velocity coordinate."""
    nv = len(am.armature)
    return replace(am, armature=rng.uniform(0.01, 0.3, nv), damping=rng.uniform(0.1, 0.5, nv),
                   coulomb=rng.uniform(0.1, 0.4, nv))


def test_armature_and_friction_equal_the_array_api_engine(tree):
    rng, model, am = tree
    nv = model.nv
    am = _with_joint_terms(am, rng)
    im, fm = pack_tree(am)
    bm = A.on(am, XP)
    for _ in range(2):
        q = _configuration(am, rng)
        v, tau = rng.normal(size=nv), rng.normal(size=nv)
        status, qdd = _fd(im, fm, nv, q, v, tau, fric=1)
        assert status == 0
        assert _err(qdd, A.forward_dynamics(bm, q, v, tau, friction=True)) < 1e-10
        status, smooth = _fd(im, fm, nv, q, v, tau, fric=1, smooth=0.05)
        assert _err(smooth, A.forward_dynamics(bm, q, v, tau, friction=True, smooth_friction=0.05)) < 1e-10
        status, bare = _fd(im, fm, nv, q, v, tau)
        assert _err(bare, A.forward_dynamics(bm, q, v, tau, friction=False)) < 1e-10
        assert _err(bare, qdd) > 1e-3 and _err(smooth, qdd) > 1e-6  # each term matters


def test_forward_dynamics_inverts_the_compiled_inverse_dynamics(tree):
    rng, model, am = tree
    nv = model.nv
    im, fm = pack_tree(_with_joint_terms(am, rng))
    for fw in (NO_FW, rng.normal(size=(am.n, 6))):
        q = _configuration(am, rng)
        v, a = rng.normal(size=nv), rng.normal(size=nv)
        tau = _id(im, fm, nv, q, v, a, fw=fw, friction=1)  # armature, damping and Coulomb friction
        status, qdd = _fd(im, fm, nv, q, v, tau, fw=fw, fric=1)
        assert status == 0
        assert _err(qdd, a) < 1e-10


def test_one_coordinate_trees_with_helical_joints_equal_pinocchio():
    """A tree whose joints all have one coordinate runs the kernel's one-coordinate copy, helical joints too."""
    rng = np.random.default_rng(4)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic", "helical"), root="helical")
    am = array_model(model)
    im, fm = pack_tree(am)
    assert model.nv == am.n
    data = model.createData()
    for _ in range(3):
        q, v, tau = (rng.normal(size=model.nv) for _ in range(3))
        status, qdd = _fd(im, fm, model.nv, q, v, tau)
        assert status == 0
        assert _err(qdd, pin.aba(model, data, q, v, tau)) < 1e-10


def test_a_massless_leaf_with_several_coordinates_is_singular():
    """A non-positive pivot of a joint's D gives the kernel's singular status; armature makes it definite."""
    rng = np.random.default_rng(8)
    model = random_tree(rng, 4, kinds=("spherical",), root="free_flyer")
    am = array_model(model)
    im, fm = pack_tree(am)
    leaf = am.n - 1  # bodies in depth-first order: the last one has no children
    fm = fm.copy()
    fm[leaf, MASS] = 0.0
    fm[leaf, H:H + 3] = 0.0
    fm[leaf, IO:IO + 9] = 0.0
    q = _configuration(am, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    assert _fd(im, fm, model.nv, q, v, tau)[0] == 3
    iv = am.joints[leaf].idx_v
    fm[iv:iv + 3, ARM] = 0.1
    status, qdd = _fd(im, fm, model.nv, q, v, tau)
    assert status == 0 and np.isfinite(qdd).all()


def test_zero_quaternion_gives_nan_or_singular_not_a_pose():
    rng = np.random.default_rng(2)
    model = random_tree(rng, 4, kinds=("revolute", "spherical"), root="free_flyer")
    am = array_model(model)
    im, fm = pack_tree(am)
    q = _configuration(am, rng)
    for j in am.joints:
        if j.kind in ("spherical", "free_flyer"):
            bad = q.copy()
            k = j.idx_q + (3 if j.kind == "free_flyer" else 0)
            bad[k:k + 4] = 0.0
            status, qdd = _fd(im, fm, model.nv, bad, np.ones(model.nv), np.ones(model.nv))
            assert status == 4


@pytest.mark.parametrize("name", list(FLOATING_URDFS))
def test_a_floating_robot_as_a_free_flyer_tree_equals_the_robot(name):
    robot = floating_robot(name)
    am = from_robot(robot)
    im, fm = pack_tree(am)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, tau = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        status, qdd = _fd(im, fm, robot.nv, q, v, tau, fric=1)
        assert status == 0
        assert _err(qdd, robot.forward_dynamics(q, v, tau)) < 1e-10


@pytest.mark.parametrize("name", ["panda", "stanford"])
def test_bundled_fixed_base_robots_from_the_tree_model_equal_the_robot(name):
    robot = cd.load(name)
    im, fm = pack_tree(from_robot(robot))
    rng = np.random.default_rng(1)
    q, v, tau = (rng.normal(size=robot.dof) for _ in range(3))
    status, qdd = _fd(im, fm, robot.dof, q, v, tau, fric=1)
    assert status == 0
    assert _err(qdd, robot.forward_dynamics(q, v, tau)) < 1e-12
