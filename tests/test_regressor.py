"""The joint torque regressor Y (tau = Y pi) and the base parameters.

Oracles: composedyn's own inverse dynamics (NumPy RNEA, compiled RNEA, the
Robot's inverse dynamics with friction and armature) on random trees and
vendor URDFs; Pinocchio's ``computeJointTorqueRegressor`` and
``Inertia.toDynamicParameters`` column for column on example-robot-data URDFs
(Pinocchio's joint frame is the URDF child-link frame and it merges links on
fixed joints into their parent body, as composedyn does); NumPy's SVD rank
for the number of base parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.reference import regressor as npreg
from composedyn.dynamics.reference.rnea import rnea
from composedyn.parameters import random_states
from pin_oracle import PinPair, erd_urdf, pin, rel_err
from random_robots import FIXED_SEEDS, random_urdf


def _states(n, batch=(4,), seed=0):
    return np.random.default_rng(seed).normal(size=(3, *batch, n))


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_regressor_times_parameters_is_rnea_on_random_trees(seed, n):
    robot = cd.from_urdf(random_urdf(seed, n))
    m = robot.model
    q, qd, qdd = _states(m.n, (2, 3), seed)
    tau = rnea(m, q, qd, qdd)
    pi = robot.inertial_parameters()
    general = dispatch.call("regressor", m, None, q, qd, qdd)
    for Y in (npreg.regressor(m, q, qd, qdd), general, robot.regressor(q, qd, qdd)):
        assert Y.shape == (2, 3, m.n, 10 * m.n)
        assert rel_err(Y @ pi, tau) < 1e-10
    one = robot.regressor(q[0, 0], qd[0, 0], qdd[0, 0])  # single-sample kernel
    assert rel_err(one, npreg.regressor(m, q[0, 0], qd[0, 0], qdd[0, 0])) < 1e-12


@pytest.mark.parametrize("seed,n", [(3, 5), (5, 10)])
def test_joint_terms_give_full_inverse_dynamics(seed, n):
    robot = cd.from_urdf(random_urdf(seed, n, damping=True, friction=True, armature=True))
    q, qd, qdd = _states(robot.dof, (5,), seed)
    for offset in (False, True):
        Y = robot.regressor(q, qd, qdd, joint_terms=True, offset=offset)
        k = 4 if offset else 3
        assert Y.shape == (5, robot.dof, (10 + k) * robot.dof)
        names = robot.parameter_names(joint_terms=True, offset=offset)
        assert len(names) == Y.shape[-1] and names[:2] == ("m1", "mx1") and names[10 * robot.dof] == "fv1"
        params = robot.inertial_parameters(joint_terms=True, offset=offset)  # as every robot kind's method
        assert params.shape == (Y.shape[-1],) and np.array_equal(params[:10 * robot.dof], robot.inertial_parameters())
        assert rel_err(Y @ params, robot.inverse_dynamics(q, qd, qdd)) < 1e-10


def test_regressor_with_dependent_mimic_joints_is_projected():
    """Mimic joints as dependent coordinates: rows G^T Y over the all-joint state (Kolev eq. 2.20)."""
    from composedyn.parameters import parameters
    from test_mimic import mimic_tree

    robot = cd.from_urdf(mimic_tree(2, 8))
    assert robot.mimic_joint_names
    q, qd, qdd = _states(robot.dof, (3,), 1)
    Y = robot.regressor(q, qd, qdd, joint_terms=True)
    assert Y.shape == (3, robot.dof, 13 * robot.model.n)
    assert rel_err(Y @ parameters(robot, True), robot.inverse_dynamics(q, qd, qdd)) < 1e-10
    G = robot.mimic_jacobian
    tau_all = rnea(robot.model, robot.full_positions(q), qd @ G.T, qdd @ G.T)
    assert rel_err(robot.regressor(q, qd, qdd) @ robot.inertial_parameters(), tau_all @ G) < 1e-10


@pytest.mark.parametrize("key", ["ur5", "panda", "double_pendulum", "talos"])
def test_regressor_equals_pinocchio_column_for_column(key):
    path = erd_urdf(key)
    robot = cd.load(path, mimic="independent")  # Pinocchio's regressor does not take mimic joints
    pp = PinPair(robot, path)
    blocks = np.concatenate([np.arange(10 * i, 10 * i + 10) for i in pp.perm])  # our body blocks, Pinocchio order
    pin_cols = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in pp.joint_ids])
    pi_pin = np.concatenate([pp.model.inertias[j].toDynamicParameters() for j in pp.joint_ids])
    assert rel_err(robot.inertial_parameters()[blocks], pi_pin) < 1e-12
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, robot.dof))
        Yp = pin.computeJointTorqueRegressor(pp.model, pp.data, pp.q(q), pp.v(qd), pp.v(qdd))[:, pin_cols]
        Y = robot.regressor(q, qd, qdd)[pp.perm][:, blocks]
        assert rel_err(Y, Yp) < 1e-10
        assert rel_err(Y @ robot.inertial_parameters()[blocks], pin.rnea(pp.model, pp.data, pp.q(q), pp.v(qd),
                                                                        pp.v(qdd))) < 1e-10


@pytest.mark.parametrize("name", ["two_link", "puma560", "panda", "random"])
def test_base_parameter_count_is_svd_rank(name):
    robot = cd.from_urdf(random_urdf(4, 7, types=("revolute", "prismatic"))) if name == "random" else cd.load(name)
    for joint_terms in (False, True):
        bp = robot.base_parameters(joint_terms=joint_terms)
        Y = robot.regressor(*random_states(robot, 200, seed=5), joint_terms=joint_terms)
        W = Y.reshape(-1, Y.shape[-1])
        assert bp.rank == np.linalg.matrix_rank(W)
        assert bp.beta.shape == (bp.rank, W.shape[1]) and len(bp.expressions) == bp.rank
        # the base regressor reproduces Y pi for any pi, at states not used to find it
        pi = np.random.default_rng(1).normal(size=W.shape[1])
        assert rel_err(bp.base_regressor(W) @ bp.base(pi), W @ pi) < 1e-8
        assert np.linalg.matrix_rank(bp.base_regressor(W)) == bp.rank


def test_base_parameter_expressions_of_two_link_arm():
    """Planar 2R arm (link length l1 along x): the classic groupings Izz1 + l1^2 m2 (+ Ia1) and mx1 + l1 m2."""
    robot = cd.load("two_link")
    l1 = float(np.linalg.norm(robot.model.tree_p[1]))
    exprs = robot.base_parameters(joint_terms=True).expressions
    assert f"Izz1 + {l1 ** 2:.6g}*m2 + Ia1" in exprs
    assert f"mx1 + {l1:.6g}*m2" in exprs
    assert "Izz2" in exprs and "mx2" in exprs and "my2" in exprs
