"""``robot.to_urdf`` and ``composedyn convert``: round trips through URDF for robots from every
format (URDF, DH tables, SDFormat, floating bases), read back by composedyn (the same M and
inverse dynamics to 1e-12, the same limits, damping, friction, armature and mimic joints) and by
Pinocchio (M and inverse dynamics of the written file against composedyn's robot)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.dynamics.array_api.model import from_robot
from pin_oracle import FreeFlyerPair, PinPair, erd_urdf, pin, rel_err
from test_sdf_import import NESTED_18, RICH_17, write

ARRAYS = ("lower", "upper", "velocity", "effort", "damping", "friction", "armature")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return fn(*args, **kwargs)


def _model_arrays(robot) -> dict:
    """:data:`ARRAYS` of ``robot``: a fixed-base robot's model arrays (every model joint, mimic joints included);
    a floating robot's limits per velocity coordinate (``robot.limits``, ±inf on the base) and its tree's joint
    terms per coordinate (mimic joints included, zero on the base)."""
    if not robot.floating:
        return {key: getattr(robot.model, key) for key in ARRAYS}
    tree = from_robot(robot)
    return {**robot.limits, "damping": tree.damping, "friction": tree.coulomb, "armature": tree.armature}


def assert_same_robot(a, b, rng, samples=4):
    """Same coordinates, model arrays, M and inverse dynamics (friction and armature included)."""
    assert a.joint_names == b.joint_names and a.floating == b.floating
    ma, mb = (_model_arrays(r) for r in (a, b))
    for key in ARRAYS:
        np.testing.assert_array_equal(ma[key], mb[key], err_msg=key)
    for _ in range(samples):
        q = a.random_configuration(seed=int(rng.integers(1 << 30))) if a.floating else rng.uniform(-1, 1, a.dof)
        v, acc = rng.normal(size=a.dof), rng.normal(size=a.dof)
        assert rel_err(b.mass_matrix(q), a.mass_matrix(q)) < 1e-12
        assert rel_err(b.inverse_dynamics(q, v, acc), a.inverse_dynamics(q, v, acc)) < 1e-12


@pytest.mark.parametrize("name", ["panda", "puma560", "stanford"])
def test_bundled_robots_round_trip_and_pinocchio_reads_the_file(tmp_path, name):
    robot = _quiet(cd.load, name)
    path = robot.to_urdf(tmp_path / f"{name}.urdf")
    back = _quiet(cd.load, path)
    rng = np.random.default_rng(1)
    assert_same_robot(robot, back, rng)
    pp = PinPair(robot, str(path))
    pp.model.armature = pp.v(robot.model.armature)  # the armature attribute is composedyn's own
    for _ in range(4):
        q, v, a = (rng.uniform(-1, 1, robot.dof) for _ in range(3))
        M = pin.crba(pp.model, pp.data, pp.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        assert rel_err(pp.mat(robot.mass_matrix(q)), M) < 1e-10
        tau = pin.rnea(pp.model, pp.data, pp.q(q), pp.v(v), pp.v(a))
        assert rel_err(pp.v(robot.inverse_dynamics(q, v, a, friction=False)), tau) < 1e-10


def test_floating_robot_round_trips_as_a_floating_root_joint(tmp_path):
    robot = _quiet(cd.load, erd_urdf("solo12"), floating=True)
    path = robot.to_urdf(tmp_path / "solo.urdf")
    text = path.read_text()
    assert 'type="floating"' in text and '<link name="world"/>' in text
    back = _quiet(cd.load, path)  # no floating=True needed: the file says it
    assert back.floating and back.base.link == robot.base.link and back.base.joint == robot.base.joint
    rng = np.random.default_rng(2)
    assert_same_robot(robot, back, rng)
    pp = FreeFlyerPair(robot, str(path))  # Pinocchio reads the floating joint as its free flyer
    assert pp.model.joints[1].shortname() == "JointModelFreeFlyer"
    for _ in range(3):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        M = pin.crba(pp.model, pp.data, pp.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        assert rel_err(pp.mat(robot.mass_matrix(q)), M) < 1e-10
        tau = pin.rnea(pp.model, pp.data, pp.q(q), pp.v(v), pp.v(a))
        assert rel_err(pp.v(robot.inverse_dynamics(q, v, a, friction=False)), tau) < 1e-10


@pytest.mark.parametrize("text", [RICH_17, NESTED_18], ids=["rich", "nested"])
def test_sdf_robots_round_trip_free_and_fixed(tmp_path, text):
    """SDFormat robots (scoped names, joint frames, <frame>s) written as URDF: composedyn reads back
    the same robot, Pinocchio the same dynamics."""
    sdf = write(tmp_path, text)
    rng = np.random.default_rng(3)
    for floating in (None, False):
        robot = cd.load(sdf, floating=floating)
        path = str(robot.to_urdf(tmp_path / f"arm_{floating}.urdf"))
        back = cd.load(path)
        assert_same_robot(robot, back, rng)
        assert set(robot.frame_names) == set(back.frame_names)
        pp = FreeFlyerPair(robot, path) if robot.floating else PinPair(robot, path)
        for _ in range(2):
            q = robot.random_configuration(seed=int(rng.integers(1 << 30))) if robot.floating \
                else rng.uniform(-1, 1, robot.dof)
            v, a = rng.normal(size=robot.dof), rng.normal(size=robot.dof)
            M = pin.crba(pp.model, pp.data, pp.q(q))
            assert rel_err(pp.mat(robot.mass_matrix(q)), np.triu(M) + np.triu(M, 1).T) < 1e-10
            tau = pin.rnea(pp.model, pp.data, pp.q(q), pp.v(v), pp.v(a))
            assert rel_err(pp.v(robot.inverse_dynamics(q, v, a, friction=False)), tau) < 1e-10


def test_mimic_and_planar_base_round_trip(tmp_path):
    urdf = """<robot name="g"><link name="palm"><inertial><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="f1"><inertial><origin xyz="0 0.02 0"/><mass value="0.1"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="f2"><inertial><origin xyz="0 -0.02 0"/><mass value="0.1"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="a" type="revolute"><parent link="palm"/><child link="f1"/><origin xyz="0 0.05 0" rpy="0.1 0 0"/>
        <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.7" effort="3" velocity="2"/>
        <dynamics damping="0.2" friction="0.05" armature="0.003"/></joint>
      <joint name="b" type="revolute"><parent link="palm"/><child link="f2"/><origin xyz="0 -0.05 0"/>
        <axis xyz="1 0 0"/><limit lower="-0.7" upper="0.5" effort="3" velocity="2"/>
        <mimic joint="a" multiplier="-1" offset="0.1"/></joint></robot>"""
    rng = np.random.default_rng(4)
    for floating in (False, "planar"):
        robot = cd.from_urdf(urdf, floating=floating)
        back = cd.load(robot.to_urdf(tmp_path / "g.urdf"), floating=None)
        assert back.mimic_joint_names == ("b",)
        assert_same_robot(robot, back, rng)


def test_gravity_that_urdf_cannot_hold_is_reported(tmp_path, capsys):
    robot = cd.load("two_link")  # gravity along -y
    path = robot.to_urdf(tmp_path / "two.urdf")
    assert "<!-- gravity (not part of URDF): 0.0 -9.81 0.0 m/s^2 in the root link frame -->" in path.read_text()
    back = cd.load(path, gravity=robot.model.gravity)
    assert_same_robot(robot, back, np.random.default_rng(5))
    assert main(["convert", "two_link", str(tmp_path / "c.urdf")]) == 0
    assert capsys.readouterr().out.strip().endswith(
        "; gravity [0.0, -9.81, 0.0] m/s^2 is not part of URDF (readers assume [0.0, 0.0, -9.81]): load it with "
        "gravity=...")


# ---- composedyn convert -----------------------------------------------------------------------
def test_convert_writes_one_line_and_a_loadable_file(tmp_path, capsys):
    sdf = write(tmp_path, RICH_17)
    out = tmp_path / "arm.urdf"
    assert main(["convert", sdf, str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"wrote {out}: robot 'arm', 4 joints, floating base on 'base'"]
    assert_same_robot(cd.load(sdf), cd.load(out), np.random.default_rng(6))
    assert main(["convert", sdf, str(tmp_path / "fixed.urdf"), "--floating", "fixed"]) == 0
    assert not cd.load(tmp_path / "fixed.urdf").floating


@pytest.mark.parametrize("args,message", [
    (["missing.sdf", "x.urdf"], "missing.sdf: no such SDFormat file"),
    (["panda", "x.txt"], "x.txt: the output must be a .urdf file"),
    (["fourbar", "x.urdf"], "a closed chain"),
    (["BAD", "x.urdf"], "malformed XML"),
    (["panda", "x.urdf", "--model", "arm"], "panda: --model chooses a model of an SDFormat <world>"),
])
def test_convert_bad_input_exits_2_with_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.sdf").write_text('<sdf version="1.9"><model name="m"><link name="a"></model></sdf>')
    args = ["bad.sdf" if a == "BAD" else a for a in args]
    assert main(["convert", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "x.urdf").exists()


@pytest.mark.parametrize("seed", range(3))
def test_random_sdf_models_round_trip(tmp_path, seed):
    """Random SDFormat trees (joint frames off the child links, a welded canonical link that is not
    the root, so reversed joints): the URDF holds the same robot."""
    from test_sdf_import import random_sdf

    text = random_sdf(seed, 7, "1.9").replace('<model name="r">', '<model name="r" canonical_link="l3">')
    sdf = write(tmp_path, text)
    rng = np.random.default_rng(seed)
    for floating in (None, False):
        robot = cd.load(sdf, floating=floating)
        assert_same_robot(robot, cd.load(robot.to_urdf(tmp_path / "r.urdf")), rng)
