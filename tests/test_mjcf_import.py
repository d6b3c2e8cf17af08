"""MJCF import against MuJoCo on the same files: mass matrix (mj_fullM, armature included), inverse
dynamics (mj_inverse without constraints; passive forces off, or on with damping compared),
body and site poses, per joint by name, to 1e-9; mapped joint properties against MuJoCo's
compiled model and its actuator forces."""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

import composedyn as cd
from mjcf_compare import TOL, MjPair, compare, rel_err
from mjcf_models import CRAWLER, GRIPPER, SCENE, write_arm


def quiet_load(source, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.load(source, **kwargs)


@pytest.fixture
def arm(tmp_path) -> Path:
    return write_arm(tmp_path)


def test_arm_matches_mujoco(arm):
    robot = quiet_load(str(arm))
    assert not robot.floating and robot.joint_names == ("yaw", "pitch", "elbow", "extend", "roll", "side_slide")
    assert {"world", "base", "upper", "fore", "hand", "side", "mark", "elbow_site", "tool"} <= set(robot.frame_names)
    compare(robot, mujoco.MjModel.from_xml_path(str(arm)), seed=1, samples=4)


def test_damping_matches_mujoco_passive_forces(tmp_path):
    """Joint damping, and the gear² damping of an actuator, as MuJoCo's passive forces."""
    path = write_arm(tmp_path, frictionloss=0.0)
    robot = quiet_load(str(path))
    assert np.all(robot.model.damping > 0) and np.all(robot.model.friction == 0)
    compare(robot, mujoco.MjModel.from_xml_path(str(path)), seed=2, friction=True, passive=True)


def test_arm_joint_properties(arm):
    robot, m = quiet_load(str(arm)), mujoco.MjModel.from_xml_path(str(arm))
    for k, name in enumerate(robot.joint_names):
        j, dof = m.joint(name), int(m.joint(name).dofadr[0])
        lower, upper = (robot.limits[key][k] for key in ("lower", "upper"))
        if m.jnt_limited[j.id]:
            assert (lower, upper) == tuple(m.jnt_range[j.id])
        else:
            assert np.isinf(lower) and np.isinf(upper) and lower < 0
        assert robot.model.friction[k] == m.dof_frictionloss[dof] == 0.1
    assert robot.model.continuous.tolist() == [not m.joint(n).limited[0] and m.joint(n).type[0] == 3
                                                for n in robot.joint_names]
    assert np.allclose(robot.model.gravity, m.opt.gravity)


def _actuator_torque_bound(m: mujoco.MjModel, joint: str) -> float:
    """Largest |joint force| MuJoCo's actuators produce at any control, position servos driven
    to saturation (control at the ends of a wide range, joint at both ends of its range)."""
    d = mujoco.MjData(m)
    dof, adr = int(m.joint(joint).dofadr[0]), int(m.joint(joint).qposadr[0])
    worst = 0.0
    for ctrl in (-1e3, 1e3):
        for qpos in (-1.0, 1.0):
            d.qpos[:] = m.qpos0
            d.qpos[adr] = qpos
            d.ctrl[:] = np.clip(ctrl, m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]) \
                if ctrl else 0.0
            d.ctrl[m.actuator_ctrllimited == 0] = ctrl
            mujoco.mj_forward(m, d)
            worst = max(worst, abs(float(d.qfrc_actuator[dof])))
    return worst


def test_effort_limits_are_mujocos_actuator_forces(arm):
    robot, m = quiet_load(str(arm)), mujoco.MjModel.from_xml_path(str(arm))
    effort = dict(zip(robot.joint_names, robot.limits["effort"]))
    driven = {m.joint(int(m.actuator_trnid[a, 0])).name for a in range(m.nu)}
    assert driven == {"yaw", "pitch", "elbow", "roll"}
    for name in robot.joint_names:
        if name in driven:
            assert effort[name] == pytest.approx(_actuator_torque_bound(m, name), rel=1e-12), name
        else:
            assert np.isinf(effort[name])


def test_floating_root_matches_mujoco():
    robot = quiet_load(CRAWLER)
    assert robot.floating and robot.base.joint == "root" and robot.base.link == "torso"
    assert robot.nq == 7 + 4 and robot.nv == 6 + 4
    assert "table" not in robot.frame_names and "imu" in robot.frame_names
    compare(robot, mujoco.MjModel.from_xml_string(CRAWLER), seed=3, samples=4)


def test_convert_floating_is_mujocos_convention():
    """cd.convert_floating(source="mujoco") gives the state the comparison builds from MuJoCo's xmat."""
    robot = quiet_load(CRAWLER)
    pair = MjPair(robot, mujoco.MjModel.from_xml_string(CRAWLER))
    rng = np.random.default_rng(4)
    for _ in range(3):
        pair.random_state(rng)
        d = pair.d
        q, v, a = pair.state()
        qc, vc, ac = cd.convert_floating(d.qpos[pair.qa], d.qvel[pair.va], d.qacc[pair.va], source="mujoco",
                                         target="pinocchio")
        assert np.allclose(qc, q, atol=1e-15) and rel_err(vc, v) < 1e-14 and rel_err(ac, a) < 1e-14
        tau = cd.convert_floating_forces(q, pair.inverse_dynamics(), source="pinocchio",
                                         target="mujoco")
        assert rel_err(tau, d.qfrc_inverse[pair.va]) < 1e-14


def test_floating_false_welds_the_free_body_where_the_file_puts_it():
    robot, m = quiet_load(CRAWLER, floating=False), mujoco.MjModel.from_xml_string(CRAWLER)
    assert not robot.floating and robot.dof == 4
    pair = MjPair(quiet_load(CRAWLER), m)
    d, qpos = pair.d, m.qpos0.copy()
    qpos[pair.qa[7:]] = np.random.default_rng(5).uniform(-0.5, 0.5, 4)
    pair.set_state(qpos, np.zeros(m.nv), np.zeros(m.nv))
    q = d.qpos[pair.qa[7:]]
    for body in ("torso", "shin1", "leg2"):
        T = robot.frame_pose(q, body)
        assert rel_err(T[:3, 3], d.xpos[m.body(body).id]) < TOL
        assert rel_err(T[:3, :3], d.xmat[m.body(body).id].reshape(3, 3)) < TOL
    assert rel_err(robot.mass_matrix(q), pair.mass_matrix()[6:, 6:]) < TOL  # the joint block of the free body's M


def test_floating_true_frees_a_root_body_without_joints(arm):
    robot = quiet_load(str(arm), floating=True)
    assert robot.floating and robot.base.link == "base" and robot.nv == 6 + 6


def test_mimic_from_equality_joint():
    """Dependent joints follow MuJoCo's equality exactly (its constraint residual is zero), and the
    reduced equations are MuJoCo's projected by the coupling's Jacobian."""
    robot, full = cd.from_mjcf(GRIPPER), cd.from_mjcf(GRIPPER, mimic="independent")
    assert robot.joint_names == ("wrist", "left") and full.joint_names == ("wrist", "left", "right", "thumb")
    m = mujoco.MjModel.from_xml_string(GRIPPER)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(6)
    pair = MjPair(full, mujoco.MjModel.from_xml_string(GRIPPER))
    for _ in range(3):
        q, qd, qdd = rng.uniform(-0.5, 0.5, (3, 2))
        qall = robot.full_positions(q)
        d.qpos[[m.joint(n).qposadr[0] for n in full.joint_names]] = qall
        mujoco.mj_forward(m, d)
        eq = d.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        assert eq.sum() == 2 and np.abs(d.efc_pos[eq]).max() < 1e-15
        G = robot.mimic_jacobian
        h = 1e-6
        fd = [(robot.full_positions(q + h * e) - robot.full_positions(q - h * e)) / (2 * h) for e in np.eye(2)]
        assert np.allclose(np.transpose(fd), G, atol=1e-8)
        pair.set_state(qall[np.argsort(pair.qa)], (G @ qd)[np.argsort(pair.va)], (G @ qdd)[np.argsort(pair.va)])
        assert rel_err(robot.mass_matrix(q), G.T @ pair.mass_matrix() @ G) < TOL
        assert rel_err(robot.inverse_dynamics(q, qd, qdd, friction=False), G.T @ pair.inverse_dynamics()) < TOL


def test_root_picks_the_robot_in_a_scene():
    with pytest.raises(cd.ModelError, match=r"<mjcf string>: several moving bodies .*root="):
        cd.from_mjcf(SCENE)
    robot = quiet_load(SCENE, root="robot")
    assert robot.floating and robot.base.joint == "base" and robot.joint_names == ("a1",)
    assert "box" not in robot.frame_names
    compare(robot, mujoco.MjModel.from_xml_string(SCENE), seed=7)
    with pytest.raises(cd.ModelError, match=r"root='nobody' is not a body"):
        cd.from_mjcf(SCENE, root="nobody")


def test_root_below_moving_bodies_is_refused(arm):
    with pytest.raises(cd.ModelError, match=r"root body 'hand' is moved by the joints of its ancestor body 'fore'"):
        cd.from_mjcf(str(arm), root="hand")


def test_recognised_by_content(tmp_path):
    path = tmp_path / "robot.model"  # no .xml suffix
    path.write_text("<?xml version='1.0'?>\n<!-- a comment -->\n" + CRAWLER)
    assert quiet_load(str(path)).nv == 10
    assert quiet_load(CRAWLER).nv == 10  # an XML string
    assert quiet_load(Path(path)).nv == 10


def test_ignored_features_give_one_warning(arm):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cd.load(str(arm))
    messages = [str(w.message) for w in caught if issubclass(w.category, cd.ModelWarning)]
    assert len(messages) == 1
    assert "sensors" in messages[0] and "contact exclusions" in messages[0] and str(arm) in messages[0]


def test_cli_commands_take_mjcf(arm, tmp_path, capsys):
    from composedyn.cli import main

    names = quiet_load(str(arm)).joint_names
    t = np.linspace(0.0, 1.0, 51)
    motion = tmp_path / "motion.csv"
    rows = [",".join(["time", *names])] + [",".join(f"{x:.6f}" for x in [s, *(0.2 * np.sin(s + np.arange(6)))])
                                           for s in t]
    motion.write_text("\n".join(rows) + "\n")
    assert main(["torques", str(arm), str(motion)]) in (0, 1)  # 1: a limit exceeded
    assert main(["simulate", str(arm), "--duration", "0.5"]) in (0, 1)
    out = capsys.readouterr()
    assert "robot arm" in out.out and "composedyn: error" not in out.err
