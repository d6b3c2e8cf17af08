"""Batch shapes at the public boundary of closed chains and trees: an empty batch (0, n) gives empty results
of the shapes a ``Robot`` gives; batch shapes that do not broadcast, a 0-d ``q``, a ``size`` that is not an
integer and arrays of the wrong length are refused with a ValueError naming the argument and what the last
axis counts."""

from __future__ import annotations

import re

import numpy as np
import pytest

import composedyn as cd
from test_tree_closed_chain import XML, _solo12_feet_joined


@pytest.fixture(scope="module")
def fourbar():
    return cd.load_closed_chain("fourbar")


@pytest.fixture(scope="module")
def ball_chain():
    return cd.load_closed_chain(XML)


@pytest.fixture(scope="module")
def solo():
    return _solo12_feet_joined()


def _pendulum():
    return cd.from_dh([dict(a=0.5, alpha=0.0, d=0.0, theta=0.0, joint="revolute", mass=1.0, com=[-0.25, 0, 0],
                            inertia=np.diag([0.001, 0.02, 0.02]))], name="pendulum")


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_closed_chain_empty_batch_gives_empty_results(fourbar, backend):
    from composedyn.dynamics import dispatch

    before = dispatch.backend()
    dispatch.set_backend(backend)
    try:
        k, n = fourbar.dof, fourbar.robot.dof
        e = np.zeros((0, k))
        assert fourbar.inverse_dynamics(e, e, e).shape == (0, k)
        assert fourbar.forward_dynamics(e, e, e).shape == (0, k)
        assert fourbar.mass_matrix(e).shape == (0, k, k)
        assert fourbar.assemble(e).shape == (0, n)
        assert fourbar.velocities(e, e).shape == (0, n)
        assert fourbar.constraint_forces(e, e, e).shape == (0, len(fourbar.rows))
        assert fourbar.mass_matrix(np.zeros((2, 0, k))).shape == (2, 0, k, k)
        assert fourbar.mass_matrix(np.zeros((0, n))).shape == (0, k, k)  # every joint's positions
        with pytest.raises(ValueError, match=re.escape("q has shape (0, 5), expected (..., 1)")):
            fourbar.mass_matrix(np.zeros((0, 5)))
    finally:
        dispatch.set_backend(before)


def test_tree_closed_chain_empty_batch_gives_empty_results(ball_chain):
    c = ball_chain
    q, v = np.zeros((0, c.nq)), np.zeros((0, c.dof))
    assert c.inverse_dynamics(q, v, v).shape == (0, c.dof)
    assert c.forward_dynamics(q, v, v).shape == (0, c.dof)
    assert c.mass_matrix(q).shape == (0, c.dof, c.dof)
    assert c.assemble(q).shape == (0, c.robot.nq)
    last = c.assembly
    c.assemble(np.zeros((0, c.nq)))
    np.testing.assert_array_equal(c.assembly, last)  # an empty batch leaves the start of the next closure


def test_floating_and_tree_robots_name_batch_shapes_that_do_not_broadcast(solo, ball_chain):
    for robot in (solo.robot, ball_chain.robot):
        nq, nv = robot.nq, robot.nv
        q = np.stack([robot.neutral()] * 5)
        with pytest.raises(ValueError, match=re.escape(
                f"batch shapes do not broadcast: q (5, {nq}), v (4, {nv}), a ({nv},); expected (..., {nq}) "
                f"and (..., {nv}) arrays whose leading axes broadcast together")):
            robot.inverse_dynamics(q, np.zeros((4, nv)), np.zeros(nv))
    arm = cd.load("panda")  # the fixed-base robot's wording, which the trees share
    with pytest.raises(ValueError, match=re.escape(
            "batch shapes do not broadcast: q (5, 7), qd (4, 7), qdd (7,); expected (..., 7) arrays whose "
            "leading axes broadcast together")):
        arm.inverse_dynamics(np.zeros((5, 7)), np.zeros((4, 7)), np.zeros(7))

    robot = solo.robot  # FloatingRobot.difference: the same wording; a (3, 1) batch against one q0
    q0, q1 = robot.random_configuration(size=5, seed=1), robot.random_configuration(size=4, seed=2)
    with pytest.raises(ValueError, match=re.escape(
            f"batch shapes do not broadcast: q0 (5, {robot.nq}), q1 (4, {robot.nq}); expected (..., {robot.nq})")):
        robot.difference(q0, q1)
    q1 = robot.random_configuration(size=(3, 1), seed=2)
    d = robot.difference(q0[0], q1)
    assert d.shape == (3, 1, robot.nv)
    assert np.abs(d[:, 0] - np.stack([robot.difference(q0[0], x) for x in q1[:, 0]])).max() == 0.0

@pytest.mark.parametrize("size", [2.5, 2.0, np.float64(3.0), (2, 1.5), "3"])
def test_random_configuration_refuses_a_size_that_is_not_an_integer(size, ball_chain):
    for robot in (cd.load("panda"), ball_chain.robot):
        with pytest.raises(ValueError, match="size must be None, a non-negative integer or a tuple of them"):
            robot.random_configuration(size, seed=1)
    assert cd.load("panda").random_configuration(np.int64(2), seed=1).shape == (2, 7)
    assert ball_chain.robot.random_configuration((2, 3), seed=1).shape == (2, 3, ball_chain.robot.nq)


def test_tree_closed_chain_lengths_are_named_as_position_and_velocity_coordinates(solo):
    c = solo
    assert (c.nq, c.dof) == (16, 15)
    with pytest.raises(ValueError, match=re.escape(
            "q has shape (15,), expected (..., 16) (nq = 16 position coordinates)")):
        c.inverse_dynamics(np.zeros(15), np.zeros(15), np.zeros(15))
    with pytest.raises(ValueError, match=re.escape(
            "qd has shape (16,), expected (..., 15) (nv = 15 velocity coordinates)")):
        c.inverse_dynamics(c.assembly[c._ind_q], np.zeros(16), np.zeros(15))
    with pytest.raises(ValueError, match=re.escape(
            "qdd has shape (16,), expected (..., 15) (nv = 15 velocity coordinates)")):
        c.inverse_dynamics(c.assembly[c._ind_q], np.zeros(15), np.zeros(16))
    with pytest.raises(ValueError, match=re.escape(
            "tau has shape (16,), expected (..., 15) (nv = 15 velocity coordinates)")):
        c.forward_dynamics(c.assembly[c._ind_q], np.zeros(15), np.zeros(16))
    every = "q has shape (18,), expected (..., 19) (robot.nq = 19 position coordinates of every joint)"
    for call in (lambda: c.constraint(np.zeros(18)), lambda: c.constraint_jacobian(np.zeros(18))):
        with pytest.raises(ValueError, match=re.escape(every)):
            call()
    with pytest.raises(ValueError, match=re.escape(every)):
        c.assembly = np.zeros(18)


def test_closed_chain_of_one_joint_refuses_a_0d_q_as_a_robot(fourbar):
    with pytest.raises(ValueError, match=re.escape("q has shape (), expected (..., 1) with n = 1 joints")):
        _pendulum().mass_matrix(np.array(1.0))
    for call in (lambda: fourbar.mass_matrix(np.array(1.0)), lambda: fourbar.assemble(np.array(1.0)),
                 lambda: fourbar.inverse_dynamics(np.array(1.0), np.zeros(1), np.zeros(1)),
                 lambda: fourbar.forward_dynamics(np.array(1.0), np.zeros(1), np.zeros(1))):
        with pytest.raises(ValueError, match=re.escape("q has shape (), expected (..., 1) with n = 1 joints")):
            call()
    assert fourbar.mass_matrix(np.array([1.0])).shape == (1, 1)
