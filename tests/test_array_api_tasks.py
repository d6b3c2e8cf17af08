"""The array-API engine's task-space, energy, Coriolis, regressor and configuration-space
functions against the Robot's methods on NumPy, torch and JAX (float64); the regressor against
the inverse dynamics it must reproduce; configuration operations against the floating robot's."""

from __future__ import annotations

import numpy as np
import pytest

from composedyn.dynamics import array_api as aa
from test_array_api_core import backend, close, combos, robot_case, state  # noqa: F401  (backend: fixture)


def _setup(backend, name, seed):  # noqa: F811
    """robot, its backend model, a NumPy state (q, qd, qdd) and the same as backend arrays."""
    robot = robot_case(name)
    q, qd, qdd = state(robot, seed=seed)
    return robot, backend.model(robot), (q, qd, qdd), [backend.asarray(a) for a in (q, qd, qdd)]


@pytest.mark.parametrize("backend,name", combos(), indirect=["backend"])
def test_frames_and_momentum_equal_the_robot(backend, name):  # noqa: F811
    robot, bm, (q, qd, qdd), x = _setup(backend, name, 3)
    for frame in (robot.frame_names[0], robot.frame_names[len(robot.frame_names) // 2], robot.frame_names[-1]):
        close(backend.numpy(aa.frame_pose(bm, x[0], frame)), robot.frame_pose(q, frame))
        for ref in ("world", "local"):
            close(backend.numpy(aa.jacobian(bm, x[0], frame, ref)), robot.jacobian(q, frame, ref))
            close(backend.numpy(aa.frame_velocity(bm, x[0], x[1], frame, ref)), robot.frame_velocity(q, qd, frame, ref))
            close(backend.numpy(aa.frame_acceleration(bm, *x, frame, ref)),
                  robot.frame_acceleration(q, qd, qdd, frame, ref))
    close(backend.numpy(aa.center_of_mass(bm, x[0])), robot.center_of_mass(q))
    close(backend.numpy(aa.com_jacobian(bm, x[0])), robot.com_jacobian(q))
    close(backend.numpy(aa.kinetic_energy(bm, x[0], x[1])), robot.kinetic_energy(q, qd))
    close(backend.numpy(aa.potential_energy(bm, x[0])), robot.potential_energy(q))
    close(backend.numpy(aa.energy(bm, x[0], x[1])), robot.energy(q, qd))
    close(backend.numpy(aa.coriolis_matrix(bm, x[0], x[1])), robot.coriolis_matrix(q, qd))
    if robot.floating:
        close(backend.numpy(aa.centroidal_momentum_matrix(bm, x[0])), robot.centroidal_momentum_matrix(q))


@pytest.mark.parametrize("backend,name", combos(), indirect=["backend"])
def test_regressor_equals_the_robot(backend, name):  # noqa: F811
    robot, bm, (q, qd, qdd), x = _setup(backend, name, 6)
    Y = backend.numpy(aa.regressor(bm, *x))
    close(Y, robot.regressor(q, qd, qdd))
    close(backend.numpy(aa.regressor(bm, *x, joint_terms=True, offset=True)),
          robot.regressor(q, qd, qdd, joint_terms=True, offset=True))
    pi = backend.numpy(aa.inertial_parameters(bm))
    close(pi, robot.inertial_parameters())
    zero = backend.asarray(np.zeros(bm.am.nv_full))
    rigid = aa.inverse_dynamics(bm, *x, damping=zero, coulomb=zero, armature=zero)
    close(Y @ pi, backend.numpy(rigid), 1e-10)
    full = backend.numpy(aa.regressor(bm, *x, joint_terms=True))
    params = np.concatenate([pi, np.stack([bm.am.damping, bm.am.coulomb, bm.am.armature], -1)[
        list(bm.am.term_joints)].reshape(-1)])
    close(full @ params, robot.inverse_dynamics(q, qd, qdd), 1e-10)


@pytest.mark.parametrize("backend,name", combos(["solo12_floating", "planar_4_6", "panda_gripper_mimic", "tree_3_9"]),
                         indirect=["backend"])
def test_configuration_space(backend, name):  # noqa: F811
    robot = robot_case(name)
    bm = backend.model(robot)
    q0, v, _ = state(robot, seed=7)
    q1, _, _ = state(robot, seed=8)
    moved = backend.numpy(aa.integrate(bm, backend.asarray(q0), backend.asarray(v), 0.3))
    back = backend.numpy(aa.difference(bm, backend.asarray(q0), backend.asarray(q1)))
    neutral = backend.numpy(aa.neutral(bm))
    if robot.floating:
        close(moved, robot.integrate(q0, v, 0.3))
        close(back, robot.difference(q0, q1), 1e-10)
        close(neutral, robot.neutral())
    else:
        close(moved, q0 + 0.3 * v)
        close(back, q1 - q0)
        close(neutral, np.zeros(robot.nq))
    reached = backend.numpy(aa.integrate(bm, backend.asarray(q0), backend.asarray(back)))
    if robot.floating:  # the same configuration (q and -q are one base orientation)
        close(robot.difference(q1, reached), np.zeros(v.shape), 1e-10)
    else:
        close(reached, q1, 1e-10)


def test_unknown_frame_and_reference_are_named():
    import array_api_compat.numpy as xp

    robot = robot_case("panda.toml")
    bm = aa.on(aa.from_robot(robot), xp)
    q = np.zeros(robot.nq)
    with pytest.raises(ValueError, match="unknown frame 'panda_hnd'"):
        aa.jacobian(bm, q, "panda_hnd")
    with pytest.raises(ValueError, match="reference must be 'world' or 'local'"):
        aa.jacobian(bm, q, robot.frame_names[-1], "body")
