"""Bad MJCF input: one ModelError line naming the file and the element, never a traceback from the CLI."""

from __future__ import annotations

import sys

import pytest

import composedyn as cd
from composedyn.cli import main
from mjcf_models import CRAWLER

BODY = '<mujoco model="m"><worldbody><body name="b">{}</body></worldbody>{}</mujoco>'
GEOM = '<geom type="sphere" size=".1"/>'


def mjcf(body: str, tail: str = "") -> str:
    return BODY.format(body, tail)


@pytest.mark.parametrize("text, fragments", [
    ('<mujoco><worldbody><body name="b"><joint name="j"/>', ("<mjcf string>: MuJoCo cannot compile it",
                                                           "XML parse error")),
    (mjcf(GEOM + "<frobnicate/>"), ("unrecognized element", "Element 'frobnicate', line 1")),
    (mjcf('<joint name="j"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 5"/>'),
     ("inertia must satisfy A + B >= C", "Element name 'b'")),
    (mjcf('<joint name="j"/><inertial pos="0 0 0" mass="1" fullinertia="1 1 1 2 0 0"/>'),
     ("positive eigenvalues", "Element name 'b'")),
    (mjcf('<joint name="j" type="cylindrical"/>' + GEOM), ("invalid keyword: 'cylindrical'",)),
    (mjcf('<joint name="j"/>' + GEOM + '<body name="c" pos="0 0 1"><joint name="k"/>' + GEOM + '</body>',
          '<equality><connect name="loop" body1="c" body2="world" anchor="0 0 0"/></equality>'),
     ("<equality connect> 'loop' between bodies 'c' and 'world' closes a kinematic loop",)),
    (mjcf('<joint name="j"/>' + GEOM + '<body name="c" pos="0 0 1"><joint name="k"/>' + GEOM + '</body>',
          '<equality><weld body1="c" body2="b"/></equality>'),
     ("<equality weld> 'equality0' between bodies 'c' and 'b'",)),
    (mjcf('<joint name="j"/>' + GEOM + '<body name="c"><joint name="k"/>' + GEOM + '</body>',
          '<equality><joint joint1="k" joint2="j" polycoef="0 1 0.5 0 0"/></equality>'),
     ("<equality joint> 'equality0' couples joint 'k' by a polynomial of degree > 1",)),
    (mjcf('<joint name="j"/>' + GEOM, '<equality><joint joint1="j"/></equality>'),
     ("locks joint 'j' at a constant",)),
    (mjcf('<joint name="j" type="free"/>' + GEOM + '<body name="c"><freejoint name="f"/>' + GEOM + "</body>"),
     ("free joint",)),
])
def test_bad_mjcf_is_one_model_error(text, fragments):
    with pytest.raises(cd.ModelError) as info:
        cd.from_mjcf(text)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("<mjcf string>: ")
    for fragment in fragments:
        assert fragment in msg


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text(mjcf(GEOM + "<frobnicate/>"))
    with pytest.raises(cd.ModelError, match=rf"^{bad}: MuJoCo cannot compile it: .*Element 'frobnicate', line 1"):
        cd.load(str(bad))
    with pytest.raises(cd.ModelError, match=r"missing\.xml: no such MJCF file"):
        cd.load(str(tmp_path / "missing.xml"))
    with pytest.raises(cd.ModelError, match=r"is a directory, not an MJCF file"):
        cd.from_mjcf(tmp_path)
    with pytest.raises(TypeError):
        cd.load(CRAWLER, gravity=(0, 0, -1))  # a URDF reader keyword


def test_include_of_a_missing_file(tmp_path):
    path = tmp_path / "top.xml"
    path.write_text('<mujoco><include file="parts.xml"/></mujoco>')
    with pytest.raises(cd.ModelError, match=rf"^{path}: MuJoCo cannot compile it: .*parts\.xml"):
        cd.load(str(path))


def test_include_and_defaults_resolved(tmp_path):
    (tmp_path / "parts.xml").write_text('<mujoco><default><joint axis="0 1 0"/></default></mujoco>')
    path = tmp_path / "top.xml"
    path.write_text('<mujoco><include file="parts.xml"/><worldbody><body name="b"><joint name="j"/>'
                    f'{GEOM}</body></worldbody></mujoco>')
    robot = cd.load(str(path))
    assert robot.model.axis[0].tolist() == [0.0, 1.0, 0.0]


def test_without_mujoco_one_line_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises ImportError
    with pytest.raises(cd.MissingExtra, match=r'^reading MJCF needs mujoco, which is not installed: '
                                              r'pip install "composedyn\[mjcf\]"$'):
        cd.from_mjcf(CRAWLER)


def test_cli_bad_mjcf_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body name="b"><joint name="j"/>')
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"composedyn: error: {bad}: MuJoCo cannot compile it")
    assert "Traceback" not in err


def test_cli_without_mujoco_exits_2(tmp_path, capsys, monkeypatch):
    path = tmp_path / "crawler.xml"
    path.write_text(CRAWLER)
    monkeypatch.setitem(sys.modules, "mujoco", None)
    assert main(["info", str(path)]) == 2
    assert capsys.readouterr().err == ('composedyn: error: reading MJCF needs mujoco, which is not installed: '
                                       'pip install "composedyn[mjcf]"\n')


def test_cli_info_on_mjcf(tmp_path, capsys):
    path = tmp_path / "crawler.xml"
    path.write_text(CRAWLER)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr()
    assert "floating base (free flyer, joint root on link torso): nq = 11, nv = 10" in out.out
    assert "not mapped (no counterpart in composedyn), ignored: bodies outside the robot (table)" in out.err


def test_inertia_through_tendons_is_refused():
    two = mjcf('<joint name="j"/>' + GEOM + '<body name="c"><joint name="k"/>' + GEOM + "</body>",
               '<tendon><fixed name="t" armature="0.1"><joint joint="j" coef="1"/><joint joint="k" coef="-1"/>'
               "</fixed></tendon>")
    with pytest.raises(cd.ModelError, match=r"tendon 't' has armature 0\.1; inertia through tendons"):
        cd.from_mjcf(two)
    with pytest.warns(cd.ModelWarning, match=r"ignored: tendons \(t\)"):
        cd.from_mjcf(two.replace(' armature="0.1"', ""))


def test_equalities_to_mocap_bodies_or_inside_the_scene_are_listed():
    xml = ('<mujoco><worldbody><body name="target" mocap="true"/>'
           '<body name="b"><joint name="j"/>' + GEOM + '</body></worldbody>'
           '<equality><weld name="grab" body1="b" body2="target"/></equality></mujoco>')
    with pytest.warns(cd.ModelWarning, match=r"equalities \(<equality weld> 'grab' \(to mocap body 'target'\)\)"):
        robot = cd.from_mjcf(xml)
    assert robot.joint_names == ("j",)


def test_connect_between_sites_names_them():
    xml = mjcf('<joint name="j"/>' + GEOM + '<site name="s1"/><body name="c" pos="0 0 1"><joint name="k"/>' + GEOM
               + '<site name="s2"/></body>', '<equality><connect name="pin" site1="s1" site2="s2"/></equality>')
    with pytest.raises(cd.ModelError, match=r"<equality connect> 'pin' between sites 's1' and 's2' closes"):
        cd.from_mjcf(xml)


def test_cli_root_picks_the_robot_of_a_scene(tmp_path, capsys):
    from mjcf_models import SCENE

    scene = tmp_path / "scene.xml"
    scene.write_text(SCENE)
    assert main(["info", str(scene)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--root BODY" in err[0], err
    assert main(["info", str(scene), "--root", "robot"]) == 0
    out = capsys.readouterr().out
    expected = cd.from_mjcf(str(scene), root="robot")
    assert all(name in out for name in expected.joint_names)
    urdf = tmp_path / "robot.urdf"
    assert main(["convert", str(scene), str(urdf), "--root", "robot"]) == 0
    capsys.readouterr()
    assert cd.load(str(urdf)).joint_names == expected.joint_names
    assert main(["info", "panda", "--root", "robot"]) == 2  # --root is for MJCF scenes only
    assert "not MJCF" in capsys.readouterr().err
