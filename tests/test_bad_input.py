"""Bad robot descriptions give one clear ``composedyn.ModelError`` naming the
file and the element at fault, and nothing else (no bare KeyError, no
silent NaN, no file read through an entity, no hang).

Each URDF case is one targeted edit of a valid two-link arm (``GOOD``), written
to a file so that the message must name that file.  DH rows and conventions
are covered by the DH importer's tests.
"""

import os
import time
import warnings

import networkx as nx
import numpy as np
import pytest
from lxml import etree

import composedyn as cd
from composedyn.dynamics.schema import add_joint, add_link, new_graph

INERTIAL = ('<inertial><origin xyz="0 0 0.25" rpy="0 0 0"/><mass value="2.0"/>'
            '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/></inertial>')
GOOD = f"""<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="l1">{INERTIAL}</link>
  <link name="l2">{INERTIAL.replace('value="2.0"', 'value="1.0"')}</link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="2" effort="10"/>
    <dynamics damping="0.1" friction="0.2"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.5"/>
    <axis xyz="0 1 0"/>
  </joint>
</robot>
"""
J2 = GOOD[GOOD.index('  <joint name="j2"'):GOOD.index("</robot>")]

# (id, text to replace (first occurrence), replacement, fragments the message must contain)
CASES = [
    ("malformed_xml", "</robot>", "", ["malformed XML", "line"]),
    ("root_not_robot", '<robot name="arm">', '<robot name="arm"><x/></robot><robbie>', ["malformed XML"]),
    ("robot_without_name", '<robot name="arm">', "<robot>", ["<robot>", "'name'"]),
    ("empty_robot", GOOD[GOOD.index("  <link"):GOOD.index("</robot>")], "", ["robot 'arm'", "no <link>"]),
    ("link_without_name", '<link name="base"/>', '<link name="base"/><link/>', ["<link>", "line", "'name'"]),
    ("joint_without_name", '<joint name="j2" type', '<joint type', ["<joint>", "'name'"]),
    ("missing_link", '<child link="l2"/>', '<child link="foo"/>', ["joint 'j2'", "missing link 'foo'"]),
    ("missing_child", '<child link="l2"/>', "", ["joint 'j2'", "<child"]),
    ("two_roots", J2, "", ["several root links", "'base'", "'l2'"]),
    ("two_parents", '<parent link="l1"/><child link="l2"/>', '<parent link="base"/><child link="l1"/>',
     ["link 'l1'", "'j1'", "'j2'"]),
    ("cycle_no_root", "</robot>",
     '<joint name="j3" type="fixed"><parent link="l2"/><child link="base"/></joint></robot>',
     ["kinematic cycle", "no root"]),
    ("cycle_with_root", "</robot>",
     '<link name="a"/><link name="b"/>'
     '<joint name="ja" type="fixed"><parent link="a"/><child link="b"/></joint>'
     '<joint name="jb" type="fixed"><parent link="b"/><child link="a"/></joint></robot>',
     ["kinematic cycle", "'a'", "'b'"]),
    ("duplicate_link", '<link name="base"/>', '<link name="base"/><link name="l2"/>',
     ["duplicate link name 'l2'", "lines"]),
    ("duplicate_joint", '<joint name="j2"', '<joint name="j1"', ["duplicate joint name 'j1'"]),
    ("negative_mass", 'value="2.0"', 'value="-2.0"', ["link 'l1'", "negative mass"]),
    ("negative_principal_moment", 'ixx="0.02"', 'ixx="-0.5"', ["link 'l1'", "negative principal moment"]),
    ("inertial_without_inertia", '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/>', "",
     ["link 'l1'", "<inertial>", "<inertia>"]),
    ("inertia_missing_attribute", 'iyz="0" izz="0.004"', 'iyz="0"', ["link 'l1'", "<inertia>", "'izz'"]),
    ("zero_axis", '<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>', ["joint 'j1'", "<axis>", "zero axis"]),
    ("nan_axis", '<axis xyz="0 0 1"/>', '<axis xyz="nan 0 1"/>', ["joint 'j1'", "<axis>", "not finite"]),
    ("inf_axis", '<axis xyz="0 0 1"/>', '<axis xyz="0 inf 1"/>', ["joint 'j1'", "<axis>", "not finite"]),
    ("short_axis", '<axis xyz="0 0 1"/>', '<axis xyz="0 1"/>', ["joint 'j1'", "<axis>", "expected 3"]),
    ("text_axis", '<axis xyz="0 0 1"/>', '<axis xyz="0 0 z"/>', ["joint 'j1'", "<axis>", "not numeric"]),
    ("unknown_type", 'type="revolute"', 'type="ball"', ["joint 'j1'", "unknown type 'ball'"]),
    ("missing_type", 'type="revolute"', "", ["joint 'j1'", "unknown type None"]),
    ("nan_origin_xyz", 'xyz="0 0 0.1"', 'xyz="0 NaN 0.1"', ["joint 'j1'", "<origin>", "xyz", "not finite"]),
    ("nan_origin_rpy", 'rpy="0 0 0"/>\n    <axis', 'rpy="0 nan 0"/>\n    <axis', ["joint 'j1'", "<origin>", "rpy"]),
    ("nan_inertial_origin", 'xyz="0 0 0.25"', 'xyz="0 0 nan"', ["link 'l1'", "<origin>", "not finite"]),
    ("nan_mass", 'value="2.0"', 'value="nan"', ["link 'l1'", "<mass>", "value", "not finite"]),
    ("inf_mass", 'value="2.0"', 'value="inf"', ["link 'l1'", "<mass>", "not finite"]),
    ("nan_inertia", 'ixy="0"', 'ixy="nan"', ["link 'l1'", "<inertia>", "ixy"]),
    ("nan_limit_lower", 'lower="-1"', 'lower="nan"', ["joint 'j1'", "<limit>", "lower"]),
    ("nan_limit_upper", 'upper="1"', 'upper="NaN"', ["joint 'j1'", "<limit>", "upper"]),
    ("nan_limit_velocity", 'velocity="2"', 'velocity="nan"', ["joint 'j1'", "<limit>", "velocity"]),
    ("nan_limit_effort", 'effort="10"', 'effort="nan"', ["joint 'j1'", "<limit>", "effort"]),
    ("lower_above_upper", 'lower="-1" upper="1"', 'lower="1" upper="-1"', ["joint 'j1'", "<limit>", "lower"]),
    ("negative_effort", 'effort="10"', 'effort="-10"', ["joint 'j1'", "<limit>", "negative"]),
    ("nan_damping", 'damping="0.1"', 'damping="nan"', ["joint 'j1'", "<dynamics>", "damping"]),
    ("nan_friction", 'friction="0.2"', 'friction="nan"', ["joint 'j1'", "<dynamics>", "friction"]),
    ("negative_damping", 'damping="0.1"', 'damping="-0.1"', ["joint 'j1'", "<dynamics>", "negative damping"]),
    ("nan_mimic", '<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><mimic joint="j1" multiplier="nan"/>',
     ["joint 'j2'", "<mimic>", "multiplier"]),
    ("mimic_unknown", '<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><mimic joint="jx"/>',
     ["joint 'j2'", "<mimic>", "unknown joint 'jx'"]),
]


def _case_text(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


def test_good_arm_loads_cleanly(tmp_path):
    """The base of every case is valid, so each case fails for its own edit only."""
    path = tmp_path / "arm.urdf"
    path.write_text(GOOD)
    robot = cd.load(path)
    assert robot.joint_names == ("j1", "j2")
    assert np.all(np.isfinite(robot.forward_dynamics(np.zeros(2), np.zeros(2), np.ones(2))))


@pytest.mark.parametrize("case,old,new,fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_urdf_names_file_and_element(tmp_path, case, old, new, fragments):
    path = tmp_path / f"{case}.urdf"
    path.write_text(_case_text(old, new))
    with pytest.raises(cd.ModelError) as info:
        cd.from_urdf(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: "), msg
    for frag in fragments:
        assert frag in msg, (frag, msg)
    assert "\n" not in msg.strip()


def test_self_loop_joint(tmp_path):
    path = tmp_path / "loop.urdf"
    path.write_text(_case_text('<child link="l2"/>', '<child link="l1"/>').replace(
        '<parent link="l1"/><child link="l1"/>', '<parent link="l2"/><child link="l2"/>'))
    with pytest.raises(cd.ModelError, match=r"joint 'j2' connects link 'l2' to itself"):
        cd.from_urdf(path)


def test_wrong_root_element_and_unexpanded_xacro(tmp_path):
    with pytest.raises(cd.ModelError, match=r"^<urdf string>: root element is <sdf>, expected <robot>"):
        cd.from_urdf('<sdf version="1.6"><model name="m"/></sdf>')
    path = tmp_path / "arm.urdf.xacro"  # a .xacro path is expanded by xacro (tests/test_xacro.py)
    path.write_text(_case_text('rpy="0 0 0"/>\n    <axis', 'rpy="0 0 ${pi/2}"/>\n    <axis'))
    expanded = cd.from_urdf(path)
    by_hand = cd.from_urdf(_case_text('rpy="0 0 0"/>\n    <axis', f'rpy="0 0 {np.pi / 2!r}"/>\n    <axis'))
    q = np.linspace(-1, 1, expanded.dof)
    np.testing.assert_allclose(expanded.mass_matrix(q), by_hand.mass_matrix(q), rtol=1e-14, atol=1e-14)
    text = _case_text('rpy="0 0 0"/>\n    <axis', 'rpy="0 0 ${pi/2}"/>\n    <axis')
    with pytest.raises(cd.ModelError, match=r"joint 'j1' <origin> \(line 8\) rpy='0 0 \$\{pi/2\}' is not numeric"):
        cd.from_urdf(text)  # unexpanded xacro given as a string


def test_missing_file_and_string_source():
    with pytest.raises(cd.ModelError, match=r"no_such\.urdf: no such URDF file"):
        cd.from_urdf("/nonexistent/no_such.urdf")
    with pytest.raises(cd.ModelError, match=r"expects a path or an XML string, got int"):
        cd.from_urdf(42)
    with pytest.raises(cd.ModelError, match=r"is a directory, not a URDF file"):
        cd.from_urdf(__import__("pathlib").Path("/"))
    with pytest.raises(cd.ModelError, match=r"^<urdf string>: .*missing link 'foo'"):
        cd.from_urdf(_case_text('<child link="l2"/>', '<child link="foo"/>'))


def _entity_docs(secret_uri: str) -> dict:
    laughs = "".join(f'<!ENTITY l{i} "{("&l%d;" % (i - 1)) * 10}">' for i in range(1, 12))
    return {
        "external": f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "{secret_uri}">]>'
                    '<robot name="r"><link name="a&x;"/><link name="b">&x;</link></robot>',
        "external_in_text": f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "{secret_uri}">]>'
                            '<robot name="r"><link name="a">&x;</link></robot>',
        "laughs_in_text": f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY l0 "lol">{laughs}]>'
                          '<robot name="r"><link name="a">&l11;</link></robot>',
        "laughs": f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY l0 "lol">{laughs}]>'
                  '<robot name="&l11;"><link name="a">&l11;</link></robot>',
    }


def _reads_detectable(path) -> bool:
    """Set the file's access time to 1 s; True when a read is seen to move it (relatime)."""
    mtime = os.stat(path).st_mtime
    os.utime(path, (1.0, mtime))
    path.read_bytes()
    works = os.stat(path).st_atime != 1.0
    os.utime(path, (1.0, mtime))
    return works


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
@pytest.mark.parametrize("kind", ["external", "external_in_text", "laughs", "laughs_in_text"])
def test_entities_are_refused_without_reading_or_expanding(tmp_path, kind, encoding):
    """UTF-16 bypasses the byte-level DOCTYPE screen, so lxml's hardening is tested too."""
    secret = tmp_path / "secret.txt"
    token = "TOKEN-5f3a91-not-to-be-read"
    secret.write_text(token)
    text = _entity_docs(secret.as_uri())[kind]
    if encoding != "utf-8":
        text = text.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    path = tmp_path / f"{kind}.urdf"
    path.write_bytes(text.encode(encoding))
    detector = _reads_detectable(secret)
    start = time.perf_counter()
    with pytest.raises(cd.ModelError) as info:
        cd.from_urdf(path)
    assert time.perf_counter() - start < 2.0
    if detector:  # the access time of the secret file did not move: it was never read
        assert os.stat(secret).st_atime == 1.0
    msg = str(info.value)
    assert msg.startswith(f"{path}: ") and ("DOCTYPE" in msg or "entity" in msg), msg
    assert token not in msg and "lollol" not in msg
    assert len(msg) < 500


def test_etc_passwd_entity_is_not_read(tmp_path):
    """The issue's exact example; the file's first line must not leak anywhere."""
    text = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<robot name="&x;"><link name="a"/></robot>')
    with pytest.raises(cd.ModelError) as info:
        cd.from_urdf(text)
    assert "root:" not in str(info.value) and "/bin/" not in str(info.value)


def test_strict_turns_warning_into_error(tmp_path):
    path = tmp_path / "tri.urdf"
    path.write_text(_case_text('iyy="0.02"', 'iyy="0.001"'))  # 0.02 > 0.001 + 0.004
    with pytest.warns(cd.ModelWarning, match=r"\['l1'\]"):
        cd.from_urdf(path)
    with pytest.raises(cd.ModelError, match=r"tri\.urdf: .*triangle inequality.*\['l1'\].*strict"):
        cd.from_urdf(path, strict=True)
    path.write_text(_case_text(INERTIAL.replace('value="2.0"', 'value="1.0"'), ""))
    with pytest.raises(cd.ModelError, match=r"no <inertial>.*\['l2'\]"):
        cd.from_urdf(path, strict=True)


def test_nan_gravity():
    with pytest.raises(cd.ModelError, match=r"<urdf string>: gravity .*NaN"):
        cd.from_urdf(GOOD, gravity=(0.0, np.nan, -9.81))


def _graph() -> nx.DiGraph:
    g = new_graph("hand", source="hand-made")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, inertia=np.eye(3) * 0.01)
    add_joint(g, "j1", "base", "l1", axis=(0, 0, 1))
    return g


@pytest.mark.parametrize(
    "edit,fragment",
    [
        (lambda g: g.nodes["l1"].update(mass=np.nan), "link 'l1' mass"),
        (lambda g: g.nodes["l1"].update(com=np.array([0, np.inf, 0])), "link 'l1' centre of mass"),
        (lambda g: g.nodes["l1"].update(inertia=np.diag([-1.0, 1, 1])), "link 'l1' inertia has a negative"),
        (lambda g: g.nodes["l1"].update(inertia=np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]])), "not symmetric"),
        (lambda g: g.edges["base", "l1"].update(type="ball"), "joint 'j1' has unsupported type 'ball'"),
        (lambda g: g.edges["base", "l1"].update(axis=np.zeros(3)), "joint 'j1' has a zero axis"),
        (lambda g: g.edges["base", "l1"].update(axis=np.array([np.nan, 0, 1])), "joint 'j1' axis"),
        (lambda g: g.edges["base", "l1"].update(origin=np.diag([1, 1, -1, 1.0])), "not a proper rotation"),
        (lambda g: g.edges["base", "l1"].update(limits=(np.nan, 1, 1, 1)), "joint 'j1' lower limit contains NaN"),
        (lambda g: g.edges["base", "l1"].update(damping=np.nan), "joint 'j1' damping"),
        (lambda g: g.edges["base", "l1"].update(limits=(1.0, -1.0, None, None)), "joint 'j1' lower limit 1.0 >"),
        (lambda g: g.edges["base", "l1"].pop("name"), "joint 'base' -> 'l1' has no 'name'"),
        (lambda g: add_joint(g, "j1", "l1", "l2") or g.nodes["l2"].update(mass=0.0, com=np.zeros(3),
                                                                       inertia=np.zeros((3, 3))),
         "duplicate joint name 'j1'"),
        (lambda g: g.graph.update(root="l1"), "declares root 'l1'"),
        (lambda g: add_joint(g, "j2", "l1", "loose"), "link 'loose' lacks attribute 'mass'"),
        (lambda g: g.graph.update(gravity=(0, 0)), "gravity has shape"),
    ],
)
def test_bad_graph_names_source_and_element(edit, fragment):
    g = _graph()
    cd.from_graph(_graph())
    edit(g)
    with pytest.raises(cd.ModelError) as info:
        cd.from_graph(g)
    assert str(info.value).startswith("hand-made: ") and fragment in str(info.value), str(info.value)


def _mutants():
    """Every attribute of GOOD set to each garbage value, and every element deleted."""
    garbage = ["", "nan", "abc", "1e999", "-1", "0 0", "0 0 0", "1 2 3 4"]
    n_el = sum(1 for _ in etree.fromstring(GOOD.encode()).iter())
    for k in range(1, n_el):
        root = etree.fromstring(GOOD.encode())
        el = list(root.iter())[k]
        el.getparent().remove(el)
        yield f"drop <{el.tag}> #{k}", etree.tostring(root)
        for key in el.keys():
            for value in garbage:
                root = etree.fromstring(GOOD.encode())
                target = list(root.iter())[k]
                target.set(key, value)
                yield f"<{el.tag} {key}={value!r}> #{k}", etree.tostring(root)


def test_mutated_urdf_loads_or_raises_model_error_only():
    """Nothing but ModelError escapes, and what loads gives finite dynamics or ModelError."""
    rng = np.random.default_rng(5)
    seen = {"loaded": 0, "rejected": 0}
    for label, text in _mutants():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cd.ModelWarning)
                robot = cd.from_urdf(text)
        except cd.ModelError as e:
            assert str(e).startswith("<urdf string>: ") and "\n" not in str(e), (label, str(e))
            seen["rejected"] += 1
            continue
        seen["loaded"] += 1
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.dof))
        assert np.all(np.isfinite(robot.inverse_dynamics(q, qd, qdd))), label
        try:
            assert np.all(np.isfinite(robot.forward_dynamics(q, qd, qdd))), label
        except cd.ModelError:
            pass
    assert seen["loaded"] > 20 and seen["rejected"] > 100, seen
