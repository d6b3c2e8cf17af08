"""URDF importer against Pinocchio's own URDF parser on vendor files, plus the
features the importer must keep (friction, mimic, links without <inertial>,
continuous limits, rotated inertials) and the massless-link error path.

Pinocchio is the oracle for structure (joint names, types, tree, fixed joints),
total mass and dynamics (tau, M) of the same file.  ``pin.computeTotalMass``
sums the bodies of joints 1..n, i.e. it leaves out the root link and every
link welded to it by fixed joints; we compare it with our total over all links
minus exactly those base links (``Model.link_body == -1``).
"""

import re
import warnings

import numpy as np
import pytest
from lxml import etree

import composedyn as cd
from composedyn.dynamics.model import compile_graph
from composedyn.importers.urdf import load_urdf
from pin_oracle import ERD_URDFS, PinPair, erd_robots_dir, erd_urdf, pin, rel_err

PIN_TYPES = {  # our edge type -> Pinocchio joint shortnames (axis-aligned or not)
    "revolute": r"JointModel(R[XYZ]|RevoluteUnaligned)",
    "continuous": r"JointModel(RUB[XYZ]|RevoluteUnboundedUnaligned)",
    "prismatic": r"JointModel(P[XYZ]|PrismaticUnaligned)",
}


def _load_graph(path):
    """Graph and compiled model, collecting ModelWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = load_urdf(path)
        model = compile_graph(g)
    return g, model, [w for w in caught if issubclass(w.category, cd.ModelWarning)]


@pytest.mark.parametrize("key", sorted(ERD_URDFS))
def test_structure_and_mass_equal_pinocchio(key):
    _assert_structure_and_mass_equal_pinocchio(erd_urdf(key))


# example-robot-data files we refuse, with the reason (Pinocchio refuses the first two as well)
REFUSED = {
    "ur3.urdf": r"<robot> element \(line \d+\) has no 'name'",
    "alex_psyonic_hands.urdf": r"joint 'Left_index_q2' <mimic> \(line \d+\) mimics unknown joint 'index_q1'",
    "romeo_laas_small.urdf": r"link 'body' inertia has a negative principal moment",
}


def test_every_example_robot_data_urdf():
    """All vendor files: either the same structure, mass, tau and M as Pinocchio, or a listed refusal."""
    paths = sorted(erd_robots_dir().glob("**/*.urdf"))
    assert len(paths) > 30
    refused = set()
    for path in paths:
        if path.name in REFUSED:
            with pytest.raises(cd.ModelError, match=f"^{re.escape(str(path))}: {REFUSED[path.name]}"):
                compile_graph(load_urdf(path))
            refused.add(path.name)
        else:
            _assert_structure_and_mass_equal_pinocchio(str(path))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cd.ModelWarning)
                robot = cd.from_urdf(path, mimic="independent")  # Pinocchio's mimic=True fails on romeo.urdf
            _assert_dynamics_equal_pinocchio(robot, str(path))
    assert refused == set(REFUSED)


def _assert_structure_and_mass_equal_pinocchio(path: str) -> None:
    g, model, _ = _load_graph(path)
    pm = pin.buildModelFromUrdf(path)  # mimic joints as ordinary joints, like our graph
    names = [pm.names[i] for i in range(1, pm.njoints)]
    assert model.n == len(names) == pm.nv
    assert sorted(model.joint_names) == sorted(names)
    types = {d["name"]: d["type"] for _, _, d in g.edges(data=True)}
    for i, name in enumerate(names, start=1):
        assert re.fullmatch(PIN_TYPES[types[name]], pm.joints[i].shortname()), (name, types[name])
        k = model.joint_names.index(name)
        ours = model.joint_names[model.parent[k]] if model.parent[k] >= 0 else "universe"
        assert ours == pm.names[pm.parents[i]], name
    fixed = {f.name for f in pm.frames if f.type == pin.FrameType.FIXED_JOINT} - {"universe"}
    assert fixed == {n for n, t in types.items() if t == "fixed"}
    base_mass = model.link_mass[model.link_body == -1].sum()
    assert abs(model.total_mass - base_mass - pin.computeTotalMass(pm)) < 1e-12 * model.total_mass
    assert model.total_mass == pytest.approx(sum(float(g.nodes[n]["mass"]) for n in g.nodes))


# Vendor files that load with one ModelWarning; their dynamics must still match Pinocchio.
WARNED = [
    "allegro_hand_description/urdf/allegro_right_hand.urdf",  # triangle inequality
    "icub_description/robots/icub_reduced.urdf",  # moments of -1e-20, triangle inequality
    "tiago_description/robots/tiago_no_hand.urdf",  # moments of -3.5e-8 kg m^2
    "xarm_description/urdf/xarm7.urdf",  # moving link without <inertial>
    "romeo_description/urdf/romeo_small.urdf",  # both kinds
    "anymal_b_simple_description/robots/anymal.urdf",  # root inertia with a -2e-22 moment
]


def _expected_suspicious(path: str) -> tuple[set, set]:
    """Independent reading of the raw XML: (implausible inertias, moving links without <inertial>)."""
    root = etree.parse(path).getroot()
    bad = set()
    for link in root.findall("link"):
        el = link.find("inertial/inertia")
        if el is None:
            continue
        v = {k: float(el.get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                            [v["ixz"], v["iyz"], v["izz"]]])
        e = np.linalg.eigvalsh(inertia)
        if e[0] < 0 or e[2] > (e[0] + e[1]) * (1 + 1e-6):
            bad.add(link.get("name"))
    children = {j.find("child").get("link"): j for j in root.findall("joint")}
    static = {n for n in (l.get("name") for l in root.findall("link")) if n not in children}
    changed = True
    while changed:  # links welded to the root by fixed joints do not move
        welded = {c for c, j in children.items() if j.get("type") == "fixed" and j.find("parent").get("link") in static}
        changed = not welded <= static
        static |= welded
    missing = {l.get("name") for l in root.findall("link") if l.find("inertial") is None} - static
    return bad, missing


@pytest.mark.parametrize("rel", WARNED, ids=[r.split("/")[-1] for r in WARNED])
def test_vendor_quirks_warn_once_and_match_pinocchio(rel):
    path = str(erd_robots_dir() / rel)
    bad, missing = _expected_suspicious(path)
    assert bad or missing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = cd.from_urdf(path)
    ours = [w for w in caught if issubclass(w.category, cd.ModelWarning)]
    assert len(ours) == 1
    msg = str(ours[0].message)
    assert msg.startswith(path)
    listed = set(re.findall(r"'([^']+)'", msg))
    assert listed == bad | missing
    with pytest.raises(cd.ModelError, match="strict"):
        cd.from_urdf(path, strict=True)
    _assert_dynamics_equal_pinocchio(robot, path)


def _assert_dynamics_equal_pinocchio(robot, path: str) -> None:
    """tau (friction off) and M at one random state equal Pinocchio's on the same file."""
    if robot.dof == 0:
        return
    pp = PinPair(robot, path)
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1, 1, (3, robot.dof))
    qp = pp.q(q)
    tau = pin.rnea(pp.model, pp.data, qp, pp.v(qd), pp.v(qdd))
    assert rel_err(pp.v(robot.inverse_dynamics(q, qd, qdd, friction=False)), tau) < 1e-9, path
    Mp = pin.crba(pp.model, pp.data, qp)
    assert rel_err(pp.mat(robot.mass_matrix(q)), np.triu(Mp) + np.triu(Mp, 1).T) < 1e-9, path


def test_clearly_negative_vendor_inertia_is_rejected():
    """romeo_laas_small ships a principal moment of -0.021 kg m^2 (Pinocchio loads it; we refuse)."""
    path = str(erd_robots_dir() / "romeo_description/urdf/romeo_laas_small.urdf")
    with pytest.raises(cd.ModelError, match=r"link 'body' inertia has a negative principal moment"):
        cd.from_urdf(path)


FEATURES = """<robot name="features">
  <material name="odd"><color rgba="not a colour"/></material>
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 0.3" rpy="0.3 -0.5 1.1"/><mass value="2.5"/>
    <inertia ixx="0.03" ixy="0.001" ixz="-0.002" iyy="0.05" iyz="0.003" izz="0.04"/></inertial>
    <visual><geometry><box size="not numbers"/></geometry><material name="m"><color rgba="x"/></material></visual>
  </link>
  <link name="b"><inertial><origin xyz="0 0.2 0.1" rpy="1.0 0.2 0"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>
  <link name="flange"/>
  <link name="c"><inertial><mass value="0.7"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.002"/></inertial></link>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-2" upper="2" velocity="3" effort="40"/>
    <dynamics damping="0.7" friction="0.3" armature="0.05"/>
    <safety_controller k_velocity="garbage"/></joint>
  <joint name="jb" type="continuous"><parent link="a"/><child link="b"/>
    <origin xyz="0.4 0 0" rpy="0 1.2 0"/><axis xyz="1 0 0"/>
    <limit lower="-9" upper="9" velocity="5" effort="20"/></joint>
  <joint name="jf" type="fixed"><parent link="b"/><child link="flange"/><origin xyz="0 0 0.3" rpy="0.5 0 0"/></joint>
  <joint name="jc" type="prismatic"><parent link="flange"/><child link="c"/>
    <axis xyz="0 0 -1"/><limit lower="0" upper="0.2" velocity="1" effort="100"/>
    <mimic joint="ja" multiplier="-0.5" offset="0.1"/></joint>
</robot>"""


def test_features_are_kept(tmp_path):
    g = load_urdf(FEATURES)
    e = {d["name"]: d for _, _, d in g.edges(data=True)}
    assert (e["ja"]["damping"], e["ja"]["friction"], e["ja"]["armature"]) == (0.7, 0.3, 0.05)
    assert e["jc"]["mimic"] == ("ja", -0.5, 0.1)
    assert e["jb"]["type"] == "continuous" and e["jb"]["limits"] == (None, None, 5.0, 20.0)
    assert e["ja"]["limits"] == (-2.0, 2.0, 3.0, 40.0)
    assert g.nodes["flange"]["mass"] == 0.0 and g.nodes["flange"]["inertial"] is False
    assert g.graph["root"] == "base" and g.graph["source"] == "<urdf string>"
    path = tmp_path / "features.urdf"
    path.write_text(FEATURES)
    for source in (path, str(path), FEATURES.encode()):
        h = load_urdf(source)
        assert [d["name"] for _, _, d in h.edges(data=True)] == list(e)
        assert all(np.array_equal(h.nodes[n]["inertia"], g.nodes[n]["inertia"]) for n in g.nodes)
    assert load_urdf(path).graph["source"] == str(path)


def test_rotated_inertials_and_unaligned_axes_match_pinocchio():
    """Every joint independent (mimic ignored) so that Pinocchio's model is the same tree."""
    drop = ('<mimic joint="ja" multiplier="-0.5" offset="0.1"/>', '<safety_controller k_velocity="garbage"/>',
            '<material name="odd"><color rgba="not a colour"/></material>',
            '<visual><geometry><box size="not numbers"/></geometry>'
            '<material name="m"><color rgba="x"/></material></visual>')
    xml = FEATURES
    for text in drop:  # urdfdom (Pinocchio) rejects the garbage we ignore
        assert text in xml
        xml = xml.replace(text, "")
    with pytest.warns(cd.ModelWarning, match=r"\['flange'\]"):  # welded to moving 'b': it moves
        robot = cd.from_urdf(xml)
    pp = PinPair(robot, xml)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
        qp = pp.q(q)
        tau = pin.rnea(pp.model, pp.data, qp, pp.v(qd), pp.v(qdd))
        ours = robot.inverse_dynamics(q, qd, qdd, friction=False) - robot.model.armature * qdd
        assert rel_err(pp.v(ours), tau) < 1e-12
    assert robot.model.total_mass == pytest.approx(pin.computeTotalMass(pp.model), rel=1e-14)


MASSLESS_TIP = """<robot name="tip">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 0.5"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/></joint>
  <joint name="wrist" type="revolute"><parent link="upper"/><child link="tip"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint>
</robot>"""


def test_massless_moving_link_loads_but_forward_dynamics_names_the_joint():
    with pytest.warns(cd.ModelWarning, match=r"no <inertial>.*\['tip'\]"):
        robot = cd.from_urdf(MASSLESS_TIP)
    q = np.array([0.3, -0.2])
    tau = robot.inverse_dynamics(q, np.zeros(2), np.zeros(2))
    assert np.all(np.isfinite(tau)) and tau[1] == 0.0
    with pytest.raises(cd.ModelError) as info:
        robot.forward_dynamics(q, np.zeros(2), np.zeros(2))
    msg = str(info.value)
    assert msg.startswith("<urdf string>: ") and "'wrist'" in msg and "shoulder" not in msg
    with pytest.raises(cd.ModelError, match=r"'wrist'"):
        robot.forward_dynamics(np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((4, 2)))


def test_singular_mass_matrix_names_joints_in_cholesky_path():
    """``solve_mass`` (used for mimic-reduced and compiled models) names the massless joints too."""
    import warnings as w

    from composedyn.dynamics.reference.forward import solve_mass

    with w.catch_warnings():
        w.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(MASSLESS_TIP)
    M = robot.mass_matrix(np.zeros((3, 2)))
    with pytest.raises(cd.ModelError, match=r"<urdf string>: .*singular.*\['wrist'\]"):
        solve_mass(robot.model, M, np.ones((3, 2)))
