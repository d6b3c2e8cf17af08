"""Bad SDFormat input: one ModelError line naming the file, the element and what is wrong; from the
CLI, exit status 2 and that line, no traceback."""

from __future__ import annotations

import re

import pytest

import composedyn as cd
from composedyn.cli import main

INERTIAL = "<inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>"


def model(body: str, version: str = "1.9", name: str = "m") -> str:
    return f'<?xml version="1.0"?>\n<sdf version="{version}">\n<model name="{name}">\n{body}\n</model>\n</sdf>\n'


def two_links(joint: str = "", a: str = INERTIAL, b: str = INERTIAL, version: str = "1.9", extra: str = "") -> str:
    joint = joint or ('<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
                      '<axis><xyz>0 0 1</xyz></axis></joint>')
    return model(f'<link name="a">{a}</link>\n<link name="b"><pose>0.1 0 0 0 0 0</pose>{b}</link>\n{joint}\n{extra}',
                 version)


CASES = {
    "malformed": (model('<link name="a">'), r"malformed XML"),
    "doctype": ('<?xml version="1.0"?><!DOCTYPE sdf [<!ENTITY x "1">]><sdf version="1.9"><model name="m">'
                '<link name="a"/></model></sdf>', r"<!DOCTYPE> and entity references are not allowed in SDFormat"),
    "no version": ('<sdf><model name="m"><link name="a"/></model></sdf>', r"<sdf> \(line 1\) has no 'version'"),
    "bad version": ('<sdf version="2.0"><model name="m"><link name="a"/></model></sdf>', r"has version '2.0'"),
    "unknown type": (two_links('<joint name="j" type="hinge"><parent>a</parent><child>b</child></joint>'),
                     r"<joint name='j'> \(line \d+\): unknown joint type 'hinge' \(supported: revolute"),
    "revolute2": (two_links('<joint name="j" type="revolute2"><parent>a</parent><child>b</child></joint>'),
                  r"<joint name='j'> \(line \d+\): revolute2 joints \(two rotations about independent axes\) "
                  r"are not supported yet"),
    "universal without axis": (two_links('<joint name="u" type="universal"><parent>a</parent><child>b</child>'
                                         '</joint>'), r"<joint name='u'> .*a universal joint needs an <axis>"),
    "universal without axis2": (two_links('<joint name="u" type="universal"><parent>a</parent><child>b</child>'
                                          '<axis><xyz>1 0 0</xyz></axis></joint>'),
                                r"<joint name='u'> .*a universal joint needs an <axis2>"),
    "zero thread pitch": (two_links('<joint name="s" type="screw"><parent>a</parent><child>b</child>'
                                    '<axis><xyz>1 0 0</xyz></axis><thread_pitch>0</thread_pitch></joint>'),
                          r"<joint name='s'> .*<thread_pitch> is zero"),
    "no mass": (two_links(b="<inertial><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>"),
                r"link 'b' <inertial> \(line \d+\) has no <mass>"),
    "negative mass": (two_links(b=INERTIAL.replace("<mass>1<", "<mass>-2<")), r"link 'b' .*negative mass -2"),
    "no inertia": (two_links(b="<inertial><mass>1</mass></inertial>"), r"link 'b' .* has no <inertia>"),
    "negative moment": (two_links(b=INERTIAL.replace("<ixx>0.01<", "<ixx>-1<")),
                        r"link 'b' inertia has a negative principal moment"),
    "no inertial": (two_links(b=""), r"<link name='b'> \(line \d+\): link 'b' has no <inertial> but moves"),
    "no inertial base": (two_links(a=""), r"link 'a' has no <inertial> but moves .*it is the free base: "
                                          r"floating=False welds it"),
    "gearbox": (two_links('<joint name="g" type="gearbox"><parent>a</parent><child>b</child></joint>'),
                r"gearbox joints \(a gear coupling of two joints\) are not supported yet"),
    "dangling relative_to": (two_links(extra='<frame name="f"><pose relative_to="nowhere"/></frame>'),
                             r"<frame name='f'> \(line \d+\): pose relative_to 'nowhere' names no frame in its scope"),
    "pose cycle": (model(f'<link name="a"><pose relative_to="b"/>{INERTIAL}</link>'
                         f'<link name="b"><pose relative_to="a"/>{INERTIAL}</link>'
                         '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint>'),
                   r"pose cycle \(relative_to, attached_to\) (a -> b -> a|b -> a -> b)"),
    "attached_to cycle": (two_links(extra='<frame name="f" attached_to="g"/><frame name="g" attached_to="f"/>'
                                          '<joint name="k" type="fixed"><parent>b</parent><child>f</child></joint>'),
                          r"(attached_to|pose) cycle"),
    "dangling in a lone link": (model(f'<link name="a"><pose relative_to="zz"/>{INERTIAL}</link>'),
                                r"<link name='a'> \(line \d+\): pose relative_to 'zz' names no frame"),
    "dangling attached_to": (two_links(extra='<frame name="f" attached_to="zz"/>'),
                             r"<frame name='f'> \(line \d+\): attached_to 'zz' names no frame in its scope"),
    "dangling expressed_in": (two_links('<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
                                        '<axis><xyz expressed_in="zz">0 0 1</xyz></axis></joint>'),
                              r"<joint name='j'> \(line \d+\): <xyz expressed_in='zz'> names no frame"),
    "missing child": (two_links('<joint name="j" type="revolute"><parent>a</parent><child>c</child>'
                                '<axis><xyz>0 0 1</xyz></axis></joint>'),
                      r"<joint name='j'> \(line \d+\): <child> 'c' names no frame in its scope"),
    "no axis": (two_links('<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint>'),
                r"<joint name='j'> \(line \d+\): a revolute joint needs an <axis>"),
    "zero axis": (two_links('<joint name="j" type="prismatic"><parent>a</parent><child>b</child>'
                            '<axis><xyz>0 0 0</xyz></axis></joint>'), r"<axis><xyz> \[0.0, 0.0, 0.0\] is zero"),
    "lower above upper": (two_links('<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
                                    '<axis><xyz>0 0 1</xyz><limit><lower>1</lower><upper>0</upper></limit></axis>'
                                    '</joint>'), r"<limit> lower 1.0 > upper 0.0"),
    "not numeric": (two_links(a=f'<pose>0 0 x 0 0 0</pose>{INERTIAL}'),
                    r"<pose> \(line \d+\): '0 0 x 0 0 0' is not numeric"),
    "short pose": (two_links(a=f'<pose>0 0 0</pose>{INERTIAL}'), r"'0 0 0' has 3 numbers, expected 6"),
    "duplicate": (two_links(extra=f'<link name="a">{INERTIAL}</link>'), r"the name 'a' is already used"),
    "reserved": (model(f'<link name="world">{INERTIAL}</link>'), r"the name 'world' is reserved"),
    "loop": (model(f'<link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link><link name="c">{INERTIAL}</link>'
                   '<joint name="j1" type="fixed"><parent>a</parent><child>b</child></joint>'
                   '<joint name="j2" type="fixed"><parent>b</parent><child>c</child></joint>'
                   '<joint name="j3" type="fixed"><parent>c</parent><child>a</child></joint>'),
             r"<joint name='j3'> \(line \d+\): closes a kinematic loop"),
    "disconnected": (model(f'<link name="a">{INERTIAL}</link><link name="b">{INERTIAL}</link>'),
                     r"links \['b'\] of model 'm' are not joined to the base link 'a'"),
    "legacy frame attribute": (model(f'<link name="a"><pose frame="x">0 0 0 0 0 0</pose>{INERTIAL}</link>', "1.6"),
                               r"<pose frame=...> has no defined meaning before SDFormat 1.7"),
    "legacy relative_to": (model(f'<link name="a"><pose relative_to="x">0 0 0 0 0 0</pose>{INERTIAL}</link>', "1.6"),
                           r"relative_to needs SDFormat 1.7"),
    "two models": ('<sdf version="1.9"><model name="a"/><model name="b"/></sdf>',
                   r"expected one <model> or one <world> in <sdf>"),
    "empty world": ('<sdf version="1.9"><world name="w"/></sdf>', r"<world name='w'> \(line 1\) has no <model>"),
    "no link": (model(""), r"<model name='m'> \(line \d+\) has no <link>"),
    "quaternion zero": (two_links(a=f'<pose rotation_format="quat_xyzw">0 0 0 0 0 0 0</pose>{INERTIAL}'),
                        r"quaternion .* has zero norm"),
    "inertial relative_to": (two_links(b=INERTIAL.replace("<mass>", '<pose relative_to="a"/><mass>')),
                             r"an <inertial> pose is relative to its link; relative_to is not allowed"),
    "auto inertial": (two_links(b='<inertial auto="true"/>'), r"auto='true' .* is not supported"),
    "unknown model uri": (model(f'<link name="a">{INERTIAL}</link><include><uri>model://nothing</uri></include>'),
                          r"<include> \(line \d+\): 'model://nothing' not found \(searched"),
    "fuel uri": (model(f'<link name="a">{INERTIAL}</link><include><uri>https://fuel.gazebosim.org/x</uri></include>'),
                 r"nothing is downloaded"),
    "merge into a world": ('<sdf version="1.9"><world name="w"><include merge="true"><uri>m.sdf</uri></include>'
                           '</world></sdf>', r"merge='true' merges a model into a model, not into a world"),
    "mimic unknown": (two_links('<joint name="j" type="revolute"><parent>a</parent><child>b</child><axis>'
                                '<xyz>0 0 1</xyz><mimic joint="zz"/></axis></joint>', version="1.11"),
                      r"<mimic joint='zz'> names no joint of its model"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_sdf_names_file_element_and_problem(tmp_path, case):
    text, pattern = CASES[case]
    path = tmp_path / "bad.sdf"
    path.write_text(text)
    with pytest.raises(cd.ModelError) as info:
        cd.load(path)
    msg = str(info.value)
    assert msg.startswith((f"{path}: ", f"{path.resolve()}: ")), msg
    assert "\n" not in msg
    assert re.search(pattern, msg), msg


def test_include_cycle_names_the_files(tmp_path):
    (tmp_path / "a.sdf").write_text(model(f'<link name="a">{INERTIAL}</link><include><uri>b.sdf</uri></include>'))
    (tmp_path / "b.sdf").write_text(model(f'<link name="b">{INERTIAL}</link><include><uri>a.sdf</uri>'
                                          '<name>again</name></include>', name="mb"))
    with pytest.raises(cd.ModelError, match=r"<include> \(line \d+\): include cycle .*a\.sdf -> .*b\.sdf -> .*a\.sdf"):
        cd.load(tmp_path / "a.sdf")


def test_world_file_and_entities_from_strings():
    with pytest.raises(cd.ModelError, match=r"^<sdf string>: <!DOCTYPE> and entity references"):
        cd.from_sdf('<!DOCTYPE sdf SYSTEM "file:///etc/passwd"><sdf version="1.9"/>')
    with pytest.raises(cd.ModelError, match=r"^<sdf string>: root element is <robot>, expected <sdf>"):
        cd.from_sdf('<robot name="r"/>')


def test_floating_choices_are_checked():
    with pytest.raises(ValueError, match="floating must be None, True, False"):
        cd.from_sdf(two_links(), floating="yes")


@pytest.mark.parametrize("case", ["malformed", "revolute2", "include", "pose cycle"])
def test_cli_prints_one_line_and_exits_2(tmp_path, capsys, case):
    text = CASES.get(case, (model(f'<link name="a">{INERTIAL}</link><include><uri>model://x</uri></include>'),))[0]
    path = tmp_path / "bad.sdf"
    path.write_text(text)
    for command in (["info", str(path)], ["convert", str(path), str(tmp_path / "out.urdf")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith(f"composedyn: error: {path}"), err
        assert "Traceback" not in err
    assert not (tmp_path / "out.urdf").exists()
