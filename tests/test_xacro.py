"""xacro descriptions: arguments, $(find pkg) and package:// resolved from package_dirs or
ROS_PACKAGE_PATH; the robot equals the one of the URDF written out by hand (M and tau at
random q), and missing packages or arguments are one-line ModelErrors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import composedyn as cd

MACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="name parent length mass">
    <link name="${name}">
      <inertial><origin xyz="0 0 ${length/2}"/><mass value="${mass}"/>
        <inertia ixx="${mass*length*length/12}" ixy="0" ixz="0" iyy="${mass*length*length/12}" iyz="0" izz="0.001"/>
      </inertial>
      <visual><geometry><mesh filename="package://arm_meshes/meshes/${name}.stl"/></geometry></visual>
    </link>
    <joint name="${name}_joint" type="revolute">
      <parent link="${parent}"/><child link="${name}"/><origin xyz="0 0 0.1" rpy="0 0 0"/>
      <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="3"/>
    </joint>
  </xacro:macro>
</robot>
"""

TOP = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.4"/>
  <xacro:arg name="mass" default="2.0"/>
  <xacro:property name="length" value="$(arg length)"/>
  <xacro:include filename="$(find arm_description)/urdf/segment.xacro"/>
  <link name="base"/>
  <xacro:segment name="upper" parent="base" length="${length}" mass="$(arg mass)"/>
  <xacro:segment name="fore" parent="upper" length="${length*0.75}" mass="${$(arg mass)/2}"/>
</robot>
"""


def by_hand(length: float, mass: float) -> str:
    """The URDF the xacro file expands to, written out without xacro."""
    def segment(name, parent, ln, m):
        i = m * ln * ln / 12
        return (f'<link name="{name}"><inertial><origin xyz="0 0 {ln / 2!r}"/><mass value="{m!r}"/>'
                f'<inertia ixx="{i!r}" ixy="0" ixz="0" iyy="{i!r}" iyz="0" izz="0.001"/></inertial></link>'
                f'<joint name="{name}_joint" type="revolute"><parent link="{parent}"/><child link="{name}"/>'
                '<origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 1 0"/>'
                '<limit lower="-2" upper="2" effort="50" velocity="3"/></joint>')
    return (f'<robot name="arm"><link name="base"/>{segment("upper", "base", length, mass)}'
            f'{segment("fore", "upper", length * 0.75, mass / 2)}</robot>')


@pytest.fixture()
def packages(tmp_path):
    desc = tmp_path / "src" / "arm_description"
    (desc / "urdf").mkdir(parents=True)
    (desc / "urdf" / "segment.xacro").write_text(MACRO)
    (desc / "urdf" / "arm.urdf.xacro").write_text(TOP)
    (tmp_path / "src" / "arm_meshes" / "meshes").mkdir(parents=True)
    return tmp_path / "src", desc / "urdf" / "arm.urdf.xacro"


def same_dynamics(a, b, seed=0):
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1, 1, (3, 20, a.dof))
    assert a.joint_names == b.joint_names
    np.testing.assert_allclose(a.mass_matrix(q), b.mass_matrix(q), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.inverse_dynamics(q, qd, qdd), b.inverse_dynamics(q, qd, qdd), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("args, length, mass", [(None, 0.4, 2.0), ({"length": 0.6, "mass": 3.5}, 0.6, 3.5)])
def test_xacro_with_arguments_and_find_equals_the_expanded_urdf(packages, args, length, mass):
    src, top = packages
    robot = cd.load(top, xacro_args=args, package_dirs=[src])
    same_dynamics(robot, cd.from_urdf(by_hand(length, mass)))
    assert robot.limits["effort"].tolist() == [50.0, 50.0]
    same_dynamics(cd.from_urdf(str(top), xacro_args=args, package_dirs=[src / "arm_description", src / "arm_meshes"]),
                  robot)


def test_ros_package_path(packages, monkeypatch):
    src, top = packages
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(src))
    same_dynamics(cd.load(top), cd.from_urdf(by_hand(0.4, 2.0)))


def test_package_uri_is_resolved(packages):
    from composedyn.importers.xacro import expand_xacro

    src, top = packages
    text = expand_xacro(top, package_dirs=[src])
    assert "package://" not in text and (src / "arm_meshes").resolve().as_uri() + "/meshes/upper.stl" in text


def test_missing_package_and_argument_are_one_line_errors(packages, tmp_path, monkeypatch):
    src, top = packages
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    with pytest.raises(cd.ModelError, match=r"arm\.urdf\.xacro: package 'arm_description' not found \(searched: none"):
        cd.load(top)
    (src / "arm_meshes" / "meshes").rmdir()
    (src / "arm_meshes").rmdir()
    from composedyn.importers.xacro import expand_xacro  # a missing mesh package is left as in a plain URDF

    assert "package://arm_meshes/meshes/upper.stl" in expand_xacro(top, package_dirs=[src])
    same_dynamics(cd.load(top, package_dirs=[src]), cd.from_urdf(by_hand(0.4, 2.0)))
    bad = tmp_path / "bad.urdf.xacro"
    bad.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="$(arg nope)"/></robot>')
    with pytest.raises(cd.ModelError, match=r"bad\.urdf\.xacro: xacro: Undefined substitution argument nope "
                                            r"\(give it in xacro_args\)") as info:
        cd.load(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(cd.ModelError, match="no such xacro file"):
        cd.load(tmp_path / "missing.xacro")


def test_missing_package_error_says_it_once(packages, monkeypatch):
    src, top = packages
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    with pytest.raises(cd.ModelError) as info:
        cd.load(top)
    assert str(info.value).count("not found") == 1 and "ModelError" not in str(info.value), str(info.value)


def _cli_commands() -> list[str]:
    import pkgutil

    import composedyn.cli.commands as commands

    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(commands.__path__))


@pytest.mark.parametrize("command", _cli_commands())
def test_every_command_taking_a_robot_takes_package_dirs(command, capsys):
    from composedyn.cli import main

    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    usage = capsys.readouterr().out
    takes_robot = re.search(r"\brobot\b", usage.split("\n\n")[0]) is not None  # the ROBOT argument
    assert takes_robot == ("--package-dir DIR" in usage), usage
    assert takes_robot or command in ("robots", "warm-up")  # the commands that take no robot


def test_cli_package_dir_loads_xacro_and_a_missing_package_is_one_line(packages, tmp_path, monkeypatch):
    from test_cli_torques import error_lines, run

    src, top = packages
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    robot = cd.load(top, package_dirs=[src])
    ok = run("info", top, "--package-dir", src / "arm_description", "--package-dir", src / "arm_meshes")
    assert ok.returncode == 0 and not error_lines(ok.stderr), ok.stderr
    assert f"{robot.dof} joint coordinates" in ok.stdout and "arm.urdf.xacro" in ok.stdout
    t = np.linspace(0.0, 1.0, 101)
    q = 0.2 * np.sin(np.outer(t, [1.0, 2.0]))
    path = tmp_path / "motion.csv"
    np.savetxt(path, np.column_stack([t, q]), delimiter=",", header="time,upper_joint,fore_joint", comments="")
    checked = run("torques", top, path, "--package-dir", src)
    assert checked.returncode == 0 and not error_lines(checked.stderr), checked.stderr
    bad = run("torques", top, path)
    lines = error_lines(bad.stderr)
    assert bad.returncode == 2 and len(lines) == 1 and lines[0].count("not found") == 1, bad.stderr
    assert "package 'arm_description' not found" in lines[0] and "--package-dir" in lines[0]
