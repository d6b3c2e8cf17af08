"""``composedyn.load`` recognises a description by its root element whatever the file's name, and
names what it found when it is none it reads; the command line's ``--model`` (every command taking a
robot) and its refusal to write joints URDF has no type for, naming the file and the joints."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main

URDF = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
        'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="revolute"><parent link="a"/>'
        '<child link="b"/><axis xyz="0 0 1"/><limit effort="5" velocity="2"/></joint></robot>')
INERTIAL = "<inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>"
SDF = (f'<sdf version="1.9"><model name="m"><link name="a">{INERTIAL}</link><link name="b"><pose>0.5 0 0 0 0 0'
       f'</pose>{INERTIAL}</link><joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>'
       '<joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz></axis></joint>'
       "</model></sdf>")
MJCF = ('<mujoco><worldbody><body name="a"><joint name="j" axis="0 1 0"/><geom type="capsule" '
        'fromto="0 0 0 0.2 0 0" size="0.02"/></body></worldbody></mujoco>')


@pytest.mark.parametrize("text,name,joints", [
    (URDF, "u.xml", ("j",)), ("\ufeff<?xml version='1.0'?>\n<!-- c -->\n" + URDF, "bom.xml", ("j",)),
    (URDF, "robot.description", ("j",)), (URDF, "r.sdf", ("j",)),
    (SDF, "s.urdf", ("j",)), (SDF, "s.xml", ("j",)), (MJCF, "m.urdf", ("j",)), (MJCF, "M.XML", ("j",)),
])
def test_files_are_read_by_their_root_element(tmp_path, text, name, joints):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    robot = cd.load(path)
    assert robot.joint_names == joints
    expected = (cd.from_urdf(URDF) if text.endswith("</robot>") else cd.from_sdf(SDF) if "<sdf" in text
                else cd.from_mjcf(MJCF))
    q = np.array([0.3])
    np.testing.assert_array_equal(robot.mass_matrix(q), expected.mass_matrix(q))
    np.testing.assert_array_equal(robot.inverse_dynamics(q, q, q), expected.inverse_dynamics(q, q, q))


def test_suffix_decides_when_the_content_does_not(tmp_path):
    dh = tmp_path / "arm.toml"
    dh.write_text('convention = "standard"\n[[links]]\na = 0.2\nalpha = 0\nd = 0\ntheta = 0\nmass = 1.0\n'
                  "com = [0.1, 0, 0]\ninertia = [0.01, 0.01, 0.01]\n")
    assert cd.load(dh).dof == 1
    nonsense = tmp_path / "n.urdf"
    nonsense.write_text("nonsense")
    with pytest.raises(cd.ModelError, match=r"n\.urdf: malformed XML"):
        cd.load(nonsense)
    with pytest.raises(cd.ModelError, match=r"missing\.sdf: no such SDFormat file"):
        cd.load(tmp_path / "missing.sdf")
    with pytest.raises(cd.ModelError, match=r"missing\.xml: no such MJCF file"):
        cd.load(tmp_path / "missing.xml")


@pytest.mark.parametrize("name,text,found", [
    ("foo.xml", "<foo/>", "root element <foo>"),
    ("empty.xml", "", "an empty file"),
    ("dh.txt", 'convention = "standard"\n', "a file that is not XML, with no known suffix"),
    ("nowhere.bin", None, "no such file, nor a bundled robot"),
])
def test_an_unknown_file_is_refused_naming_what_was_found(tmp_path, name, text, found):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(cd.ModelError) as error:
        cd.load(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {found}; composedyn reads URDF (<robot>), MJCF (<mujoco>) and "
                              "SDFormat"), message
    assert "\n" not in message


def test_xml_string_of_another_root_is_refused_naming_it():
    with pytest.raises(cd.ModelError, match=r"^<xml string>: root element <foo>; composedyn reads URDF"):
        cd.load("<foo><bar/></foo>")


# ---- command line ------------------------------------------------------------------------------
WORLD = (f'<sdf version="1.9"><world name="w"><model name="m1"><link name="a">{INERTIAL}</link></model>'
         f'<model name="m2"><link name="a">{INERTIAL}</link></model></world></sdf>')


def test_world_with_several_models_message_fits_every_entry_point(tmp_path, capsys):
    path = tmp_path / "world2.sdf"
    path.write_text(WORLD)
    with pytest.raises(cd.ModelError, match=r"choose one with model=NAME \(command line: --model NAME"):
        cd.load(path)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--model NAME" in err and len(err.splitlines()) == 1
    assert main(["info", str(path), "--model", "m1"]) == 0
    assert "robot m1" in capsys.readouterr().out
    csv = tmp_path / "t.csv"
    csv.write_text("time\n0\n0.1\n")
    assert main(["torques", str(path), str(csv), "--model", "zz"]) == 2  # --model reaches the SDFormat reader
    assert "the world has no model 'zz' (models: ['m1', 'm2'])" in capsys.readouterr().err
    assert main(["info", "two_link", "--model", "m1"]) == 2
    assert "two_link: --model chooses a model of an SDFormat <world>" in capsys.readouterr().err


def test_convert_names_the_file_and_the_joint_urdf_cannot_hold(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    screw = SDF.replace('type="revolute"', 'type="screw"').replace(
        "</axis></joint>", "</axis><screw_thread_pitch>0.3</screw_thread_pitch></joint>")
    (tmp_path / "screw.sdf").write_text(screw)
    assert main(["convert", "screw.sdf", "out.urdf"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("composedyn: error: screw.sdf: cannot be written as URDF: joint 'j' (helical); URDF has no "
                   "helical (screw) joint"), err
    ball = SDF.replace('type="revolute"', 'type="ball"')
    (tmp_path / "ball.sdf").write_text(ball)
    assert main(["convert", "ball.sdf", "out.urdf"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("composedyn: error: ball.sdf: cannot be written as URDF: joint 'j' (spherical); URDF has "
                          "no spherical or universal joint"), err
    assert not (tmp_path / "out.urdf").exists()


def test_urdf_export_of_a_graph_refuses_joints_urdf_has_no_type_for(tmp_path):
    from composedyn.importers.urdf_export import to_urdf

    robot = cd.from_sdf(SDF.replace('type="revolute"', 'type="ball"'))
    with pytest.raises(cd.ModelError, match=r"^<sdf string>: cannot be written as URDF: joint 'j' \(spherical\)"):
        to_urdf(robot.graph, tmp_path / "x.urdf")
    assert not (tmp_path / "x.urdf").exists()
