"""Operational-space control: closed-loop behaviour with an exact model.

With the plant equal to the controller's model, the task acceleration is
xdd = xdd_d + Kd edot + Kp e, so from rest toward a fixed pose the error
e(t) = (p_d - p, log(R_d R^T)) follows the critically damped solution
e(t) = e(0) (1 + w t) exp(-w t) for Kp = w^2, Kd = 2 w (the orientation error
keeps its axis: it starts at rest and the commanded angular acceleration is
along e).  A tracking run along a moving target decays the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.reference.ik import log3

W = 8.0  # 1/s


def rotvec(w) -> np.ndarray:
    """Rotation matrix of the rotation vector w (Rodrigues)."""
    w = np.asarray(w, float)
    th = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) / th
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def test_regulation_error_decays_at_the_gain_rate():
    robot = cd.load("panda")
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7])
    T0 = robot.frame_pose(q0, "flange")
    Td = T0.copy()
    Td[:3, 3] += [0.05, -0.03, 0.04]
    Td[:3, :3] = rotvec([0.1, -0.05, 0.08]) @ T0[:3, :3]
    ctrl = cd.OperationalSpaceController(robot, "flange", kp=W * W, kd=2 * W, posture=q0)
    assert isinstance(robot, cd.TaskSpaceModel)
    t = np.linspace(0.0, 1.5, 76)
    sim = cd.simulate(robot, q0, np.zeros(7), t, torque=ctrl, friction=False,
                      reference=lambda tt: (Td, np.zeros(6), np.zeros(6)))
    E = np.array([ctrl.error(q, Td) for q in sim.q])
    predicted = E[0] * ((1 + W * t) * np.exp(-W * t))[:, None]
    assert np.abs(E - predicted).max() < 1e-7
    assert np.linalg.norm(E[-1]) < 1e-3 * np.linalg.norm(E[0])


def test_tracking_a_moving_target_and_null_space_leaves_the_task_alone():
    robot = cd.load("panda")
    q0 = np.array([0.2, -0.4, 0.1, -2.1, 0.1, 1.7, 0.6])
    T0 = robot.frame_pose(q0, "flange")
    c, a, om = T0[:3, 3].copy(), 0.05, 2.0

    def reference(tt):  # circle in a horizontal plane, constant orientation
        p = c + a * np.array([np.cos(om * tt) - 1, np.sin(om * tt), 0.0])
        v = a * om * np.array([-np.sin(om * tt), np.cos(om * tt), 0.0])
        acc = -a * om * om * np.array([np.cos(om * tt), np.sin(om * tt), 0.0])
        T = T0.copy()
        T[:3, 3] = p
        return T, np.concatenate([v, np.zeros(3)]), np.concatenate([acc, np.zeros(3)])

    start = T0.copy()
    start[:3, 3] += [0.02, 0.0, -0.01]  # initial offset: q0 is not on the reference
    posture = q0 + 0.3  # a posture task that pulls the elbow away: it must not disturb the task
    ctrl = cd.OperationalSpaceController(robot, "flange", kp=W * W, kd=2 * W, posture=posture)
    t = np.linspace(0.0, 1.2, 61)
    q_init = robot.inverse_kinematics("flange", reference(0.0)[0] @ np.linalg.inv(T0) @ start, q0=q0).q
    sim = cd.simulate(robot, q_init, np.zeros(7), t, torque=ctrl, reference=reference, friction=False)
    E = np.array([ctrl.error(q, reference(tt)[0]) for tt, q in zip(t, sim.q)])
    Ed = np.array([reference(tt)[1] - robot.frame_velocity(q, qd, "flange") for tt, q, qd in zip(t, sim.q, sim.qd)])
    # e(0) from the offset, edot(0) = -v_d(0) because the arm starts at rest
    predicted = (E[0] * (1 + W * t)[:, None] + Ed[0] * t[:, None]) * np.exp(-W * t)[:, None]
    assert np.abs(E[:, :3] - predicted[:, :3]).max() < 1e-6
    assert np.abs(E[:, 3:]).max() < 1e-6  # orientation held while the posture task moves the null space
    assert np.abs(sim.q[-1] - sim.q[0]).max() > 1e-2


def test_position_only_saturation_and_bad_arguments():
    robot = cd.load("panda")
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7])
    ctrl = cd.OperationalSpaceController(robot, "flange", kp=100.0, kd=20.0, position_only=True, saturate=True,
                                         effort=np.full(7, 5.0))
    p = robot.frame_pose(q0, "flange")[:3, 3] + [0.3, 0, 0]
    tau = ctrl(q0, np.zeros(7), p, np.zeros(3), np.zeros(3))
    assert tau.shape == (7,) and np.abs(tau).max() <= 5.0 and np.isclose(np.abs(tau).max(), 5.0)
    assert np.allclose(ctrl.error(q0, p), [0.3, 0, 0])
    with pytest.raises(ValueError, match="unknown frame 'flang'.*flange"):
        cd.OperationalSpaceController(robot, "flang", kp=1.0, kd=1.0)
    with pytest.raises(ValueError, match="kp must be a scalar or have shape"):
        cd.OperationalSpaceController(robot, "flange", kp=np.ones(5), kd=1.0)
    with pytest.raises(ValueError, match=r"twist_des and acc_des must have shape \(3,\)"):
        ctrl(q0, np.zeros(7), p, np.zeros(6), np.zeros(3))
    full = cd.OperationalSpaceController(robot, "flange", kp=100.0, kd=20.0)
    T, z = robot.frame_pose(q0, "flange"), np.zeros(6)
    scaled = T.copy()
    scaled[:3, :3] *= 2.0
    for pose, match in ((T * np.nan, "pose_des contains NaN"), (np.eye(3), r"pose_des must be a 4x4 transform"),
                        (scaled, "pose_des: the rotation block is not a rotation"),
                        (T.T, r"pose_des: the last row is .* not \(0, 0, 0, 1\)")):
        with pytest.raises(ValueError, match=match):
            full(q0, np.zeros(7), pose, z, z)
    with pytest.raises(ValueError, match="twist_des and acc_des must be finite"):
        full(q0, np.zeros(7), T, np.full(6, np.nan), z)
    with pytest.raises(ValueError, match="twist_des and acc_des must be finite"):
        ctrl(q0, np.zeros(7), p, np.zeros(3), np.array([0.0, np.inf, 0.0]))


def test_log3_is_the_inverse_of_the_exponential():
    rng = np.random.default_rng(0)
    for th in (1e-9, 1e-6, 0.3, 2.0, np.pi - 1e-5, np.pi - 1e-9):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        assert np.abs(log3(rotvec(th * axis)) - th * axis).max() < 1e-8


def test_compiled_log3_equals_numpy_log3():
    from composedyn.dynamics.compiled.ik import log3 as log3_compiled

    rng = np.random.default_rng(1)
    for th in (0.0, 1e-7, 0.5, 3.0, np.pi - 1e-6, np.pi):
        axis = rng.normal(size=3)
        R = rotvec(th * axis / np.linalg.norm(axis)) if th else np.eye(3)
        assert np.abs(np.array(log3_compiled(R)) - log3(R)).max() < 1e-12
