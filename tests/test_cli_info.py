"""``composedyn info`` prints every limit, mass, centre of mass and inertia with its unit: the numbers
printed are the robot's own (read back and compared with ``robot.limits`` and the graph)."""

from __future__ import annotations

import re

import numpy as np

import composedyn as cd
from composedyn.cli import main

SLIDE_ARM = """<robot name="slide_arm"><link name="base"/>
  <link name="carriage"><inertial><origin xyz="0 0.02 0"/><mass value="3.5"/>
    <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.025"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1.25"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.017" iyz="0" izz="0.017"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="1 0 0"/>
    <limit lower="-0.4" upper="0.6" effort="300" velocity="0.8"/><dynamics damping="12" friction="4"/></joint>
  <joint name="elbow" type="revolute"><parent link="carriage"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="40" velocity="3.1"/></joint></robot>"""

UNIT = {"revolute": ("rad", "rad/s", "N m"), "prismatic": ("m", "m/s", "N")}
NUMBER = r"(-?[0-9.e+-]+)"


def _info(capsys, robot: str) -> list[str]:
    assert main(["info", robot]) == 0
    return capsys.readouterr().out.splitlines()


def _check_joints(robot, lines) -> int:
    kinds = {d["name"]: d["type"] for _, _, d in robot.graph.edges(data=True)}
    seen = 0
    for line in lines:
        m = re.match(r"\s*joint (\S+) \((revolute|prismatic)\)  (.*)", line)
        if not m:
            continue
        name, kind, rest = m.groups()
        pos, vel, eff = UNIT[kind]
        assert kinds[name] == kind
        j = robot.joint_names.index(name)
        want = {"lower": (robot.limits["lower"][j], pos), "upper": (robot.limits["upper"][j], pos),
                "velocity": (robot.limits["velocity"][j], vel), "effort": (robot.limits["effort"][j], eff)}
        for key, (value, unit) in want.items():
            got = re.search(rf"\b{key} {NUMBER} (\S+(?: m)?)(?:  |$)", rest)
            assert got, (key, line)
            assert np.isclose(float(got.group(1)), value, rtol=1e-3) and got.group(2) == unit, (key, line)
        seen += 1
    return seen


def test_limits_masses_and_inertias_are_printed_with_units(tmp_path, capsys):
    path = tmp_path / "slide_arm.urdf"
    path.write_text(SLIDE_ARM)
    robot = cd.load(path)
    lines = _info(capsys, str(path))
    assert _check_joints(robot, lines) == 2
    (slide,) = [ln for ln in lines if ln.strip().startswith("joint slide ")]
    assert "damping 12 N s/m" in slide and "friction 4 N" in slide
    assert any("gravity" in ln and ln.endswith("m/s²") for ln in lines)
    for link in ("carriage", "arm"):
        (line,) = [ln for ln in lines if ln.strip().startswith(f"- {link}  [")]
        node = robot.graph.nodes[link]
        m = re.search(rf"\[{NUMBER} kg, com \(([^)]*)\) m, inertia xx yy zz xy xz yz \(([^)]*)\) kg m²\]", line)
        assert m, line
        assert np.isclose(float(m.group(1)), node["mass"])
        assert np.allclose([float(x) for x in m.group(2).split()], node["com"])
        I = node["inertia"]
        assert np.allclose([float(x) for x in m.group(3).split()],
                           [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def test_bundled_arm_limits_read_back_with_units(capsys):
    robot = cd.load("panda")
    assert _check_joints(robot, _info(capsys, "panda")) == robot.dof
