"""The compiled articulated-body algorithm (forward dynamics) in its form for a free flyer at the root followed by
revolute and prismatic joints (body 0 through straight-line code, its 6x6 D factorised on scratch): random
trees against Pinocchio's ABA (with and without external wrenches), with armature, damping and Coulomb
friction against the array-API engine, against the kernel's general form, as the inverse of the compiled
inverse dynamics, and legged robots' free-flyer trees against Pinocchio's ABA on the free-flyer model of the same
URDF (the robot's armature in the model, its friction torques taken from the applied forces)."""

from __future__ import annotations

import numpy as np
import pytest

from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled.layout import ARM, FORM, IO, MASS, H, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import (
    FLOATING_URDFS,
    array_model,
    floating_robot,
    random_configuration,
    random_tree,
)
from pin_oracle import legged_pair, pin
from test_compiled_joint_kinds_aba import (  # noqa: F401  (collected here again, on this module's trees)
    _err,
    _fd,
    test_armature_and_friction_equal_the_array_api_engine,
    test_external_wrenches_equal_pinocchio,
    test_forward_dynamics_inverts_the_compiled_inverse_dynamics,
)

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module", params=SEEDS)
def tree(request):
    """(rng, Pinocchio model, array model) of a random 12-body tree: a free flyer, then revolute and prismatic
    joints."""
    rng = np.random.default_rng(request.param)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root="free_flyer")
    am = array_model(model)
    assert [j.kind for j in am.joints][0] == "free_flyer"
    assert {j.kind for j in am.joints[1:]} == {"revolute", "prismatic"}
    return rng, model, am


def _general(im):
    """``im`` packed for the kernel's form for any joints."""
    im = im.copy()
    im[:, FORM] = int(TreeForm.GENERAL)
    return im


def test_the_tree_takes_the_free_root_form(tree):
    im, _ = pack_tree(tree[2])
    assert im[0, FORM] == int(TreeForm.FREE_ROOT)


def test_forward_dynamics_equals_pinocchio(tree):
    rng, model, am = tree
    data = model.createData()
    im, fm = pack_tree(am)
    for _ in range(5):
        q = random_configuration(am, rng)
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        status, qdd = _fd(im, fm, model.nv, q, v, tau)
        assert status == 0
        assert _err(qdd, pin.aba(model, data, q, v, tau)) < 1e-12
        assert _err(qdd, _fd(_general(im), fm, model.nv, q, v, tau)[1]) < 1e-12  # the general form
        scaled = q.copy()
        scaled[3:7] *= 2.5  # a quaternion of any norm: the kernel normalises it
        assert _err(_fd(im, fm, model.nv, scaled, v, tau)[1], qdd) < 1e-12


def test_a_massless_free_body_is_singular_and_a_zero_quaternion_not_a_pose():
    """A lone free flyer without mass has no positive pivot in its 6x6 D (the singular status, 3); armature
    makes it definite.  A zero quaternion is refused (status 4), never an acceleration of some pose."""
    rng = np.random.default_rng(8)
    am = array_model(random_tree(rng, 3, kinds=("revolute",), root="free_flyer"))
    im, fm = pack_tree(am)
    nv = len(am.armature)
    q = random_configuration(am, rng)
    v, tau = rng.normal(size=nv), rng.normal(size=nv)
    bad = q.copy()
    bad[3:7] = 0.0
    status, qdd = _fd(im, fm, nv, bad, v, tau)
    assert status == 4
    one = array_model(random_tree(rng, 1, kinds=("revolute",), root="free_flyer"))
    im, fm = pack_tree(one)
    assert im[0, FORM] == int(TreeForm.FREE_ROOT)
    fm = fm.copy()
    fm[0, MASS], fm[0, H:H + 3], fm[0, IO:IO + 9] = 0.0, 0.0, 0.0  # no inertia at all
    q1 = random_configuration(one, rng)
    assert _fd(im, fm, 6, q1, np.zeros(6), np.ones(6))[0] == 3
    fm[:6, ARM] = 0.5
    status, qdd = _fd(im, fm, 6, q1, np.zeros(6), np.ones(6))
    assert status == 0
    assert _err(qdd, np.r_[np.ones(6) / 0.5]) < 1e-12  # only the armature: a = tau / armature, no gravity pull


def _pinocchio_forward_dynamics(robot, pp, q, v, tau, smooth=None):
    """The robot's forward dynamics (in its coordinate order) by Pinocchio's ABA on the free-flyer model ``pp``
    (:func:`pin_oracle.legged_pair`, the robot's armature in it), friction damping v + coulomb sgn(v) (tanh(v /
    ``smooth``) with ``smooth``) taken from ``tau``: the robot's own law, coefficients of its tree."""
    am = from_robot(robot)
    friction = am.damping * v + am.coulomb * (np.sign(v) if smooth is None else np.tanh(v / smooth))
    qdd = np.empty(robot.nv)
    qdd[pp.vperm] = pin.aba(pp.model, pp.data, pp.q(q), pp.v(v), pp.v(tau - friction))
    return qdd


@pytest.mark.parametrize("name", list(FLOATING_URDFS))
def test_a_floating_robot_as_a_free_flyer_tree_equals_pinocchio(name):
    robot = floating_robot(name)
    im, fm = pack_tree(from_robot(robot))
    assert im[0, FORM] == int(TreeForm.FREE_ROOT)
    pp = legged_pair(name, robot)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, tau = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        status, qdd = _fd(im, fm, robot.nv, q, v, tau, fric=1)
        assert status == 0
        assert _err(qdd, _pinocchio_forward_dynamics(robot, pp, q, v, tau)) < 1e-10
        status, qdd = _fd(im, fm, robot.nv, q, v, tau, fric=1, smooth=0.05)
        assert _err(qdd, _pinocchio_forward_dynamics(robot, pp, q, v, tau, smooth=0.05)) < 1e-10
        assert _err(robot.forward_dynamics(q, v, tau, smooth_friction=0.05), qdd) < 1e-10
