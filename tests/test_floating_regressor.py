"""The regressor, inertial parameters and base parameters of a floating robot.

Oracles: Pinocchio's ``computeJointTorqueRegressor`` and
``Inertia.toDynamicParameters`` on the same URDF with a free flyer (vendor
robots, random trees, URDF floating and planar root joints), column for column;
composedyn's own inverse dynamics (Y pi = tau, with and without joint terms);
NumPy's SVD rank for the number of base parameters.
"""

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.parameters import parameters, random_states
from pin_oracle import FreeFlyerPair, erd_urdf, pin, rel_err
from random_robots import random_urdf


def _pin_layout(robot, pp):
    """(our body blocks in Pinocchio's joint order, Pinocchio's columns of those joints, their ids)."""
    ids = [1] + [i for i in range(2, pp.model.njoints) if pp.model.joints[i].nv > 0]
    ours = [0] + [1 + int(i) for i in pp.perm]
    blocks = np.concatenate([np.arange(10 * b, 10 * b + 10) for b in ours])
    cols = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in ids])
    return blocks, cols, ids


def _compare(robot, pp, seed):
    blocks, cols, ids = _pin_layout(robot, pp)
    pi = robot.inertial_parameters()
    assert pi.shape == (len(robot.parameter_names()),) == (10 * len(ids),)
    assert rel_err(pi[blocks], np.concatenate([pp.model.inertias[j].toDynamicParameters() for j in ids])) < 1e-12
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, a = rng.normal(size=(2, robot.nv))
        Yp = pin.computeJointTorqueRegressor(pp.model, pp.data, pp.q(q), pp.v(v), pp.v(a))[:, cols]
        Y = robot.regressor(q, v, a)
        assert rel_err(Y[pp.vperm][:, blocks], Yp) < 1e-10
        assert rel_err(Y @ pi, robot.inverse_dynamics(q, v, a, friction=False)) < 1e-10


@pytest.mark.parametrize("key", ["solo12", "talos", "hyq", "a1"])
def test_vendor_floating_regressor_equals_pinocchio(key):
    path = erd_urdf(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = cd.load(path, floating=True)
    _compare(robot, FreeFlyerPair(robot, path, pin.JointModelFreeFlyer()), 0)


@pytest.mark.parametrize("seed", range(3))
def test_random_floating_tree_regressor_equals_pinocchio(seed):
    xml = random_urdf(seed, 3 + 3 * seed, p_fixed=0.3)
    robot = cd.from_urdf(xml, floating=True)
    _compare(robot, FreeFlyerPair(robot, xml, pin.JointModelFreeFlyer()), seed)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_urdf_root_joint_regressor_equals_pinocchio(kind):
    xml = random_urdf(4, 6, p_fixed=0.3).replace("</robot>", (
        f'<link name="world"/><joint name="base_joint" type="{kind}"><parent link="world"/>'
        '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint></robot>'))
    robot = cd.from_urdf(xml)
    assert robot.floating
    _compare(robot, FreeFlyerPair(robot, xml), 3)


def test_joint_terms_give_the_full_inverse_dynamics_and_batches():
    robot = cd.from_urdf(random_urdf(5, 7, types=("revolute", "prismatic")), floating=True)
    q, v, a = random_states(robot, 4, seed=2)
    for offset in (False, True):
        Y = robot.regressor(q, v, a, joint_terms=True, offset=offset)
        names = robot.parameter_names(joint_terms=True, offset=offset)
        assert Y.shape == (4, robot.nv, len(names))
        assert names[-1] == ("off" if offset else "Ia") + str(len(robot.array_model.joints))  # the last body's joint
        tau = np.einsum("bip,p->bi", Y, parameters(robot, joint_terms=True, offset=offset))
        assert rel_err(tau, robot.inverse_dynamics(q, v, a)) < 1e-10
        assert np.all(Y[..., :robot.base.nv, robot.inertial_parameters().size:] == 0)  # no base friction
        np.testing.assert_allclose(Y[2], robot.regressor(q[2], v[2], a[2], joint_terms=True, offset=offset),
                                   atol=1e-12)


@pytest.mark.parametrize("joint_terms", [False, True])
def test_floating_base_parameter_count_is_svd_rank(joint_terms):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = cd.load(erd_urdf("solo12"), floating=True)
    bp = robot.base_parameters(joint_terms=joint_terms)
    Y = robot.regressor(*random_states(robot, 100, seed=5), joint_terms=joint_terms)
    W = Y.reshape(-1, Y.shape[-1])
    assert bp.rank == np.linalg.matrix_rank(W)
    pi = parameters(robot, joint_terms=joint_terms)
    assert rel_err(W @ pi, bp.base_regressor(W) @ (bp.beta @ pi)) < 1e-9  # the base parameters explain Y pi


def test_identification_from_joint_logs_refuses_a_floating_robot():
    robot = cd.from_urdf(random_urdf(1, 4), floating=True)
    with pytest.raises(ValueError, match="floating base"):
        cd.identify(robot, [])
    with pytest.raises(ValueError, match="floating base"):
        cd.excitation_trajectory(robot, 1.0)
