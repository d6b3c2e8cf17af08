"""DH importer, TOML DH tables and URDF export.

References are independent of the code under test: hand-written URDFs of the
same arms, Pinocchio on the exported URDF, the algebraic identity between
standard and modified DH tables, and the rotation-matrix definition of rpy.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.importers.dh import dh_transform, rot_x, rpy_matrix, trans
from composedyn.importers.toml_dh import read_dh_toml
from composedyn.importers.urdf_export import rpy_from_matrix, urdf_string
from pin_oracle import PinPair, pin, rel_err
from random_robots import random_inertia, random_rotation, random_urdf

G_PLANE = (0.0, -9.81, 0.0)


def rod(name: str, m: float, length: float) -> str:
    """URDF link of a slender rod along x from its frame origin (hand-written reference)."""
    i = m * length**2 / 12
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2} 0 0"/><mass value="{m}"/>'
            f'<inertia ixx="0" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def planar_urdf(lengths, masses) -> str:
    """Planar nR arm about z, link frames on the joints, a massless 'tip' link at the end."""
    links = "".join(rod(f"l{k + 1}", m, L) for k, (m, L) in enumerate(zip(masses, lengths)))
    joints, x = "", 0.0
    for k in range(len(lengths)):
        parent = "base" if k == 0 else f"l{k}"
        joints += (f'<joint name="joint{k + 1}" type="continuous"><parent link="{parent}"/><child link="l{k + 1}"/>'
                   f'<origin xyz="{x} 0 0"/><axis xyz="0 0 1"/></joint>')
        x = lengths[k]
    joints += (f'<joint name="tip_joint" type="fixed"><parent link="l{len(lengths)}"/><child link="tip"/>'
               f'<origin xyz="{x} 0 0"/></joint>')
    return f'<robot name="planar"><link name="base"/>{links}<link name="tip"/>{joints}</robot>'


def random_q(robot, rng, k=4):
    lo = np.where(np.isfinite(robot.limits["lower"]), robot.limits["lower"], -math.pi)
    hi = np.where(np.isfinite(robot.limits["upper"]), robot.limits["upper"], math.pi)
    return rng.uniform(lo, hi, (k, robot.dof))


def same_dynamics(a, b, rng, tol=1e-12):
    q = random_q(a, rng)
    qd, qdd = rng.normal(size=(2,) + q.shape)
    assert rel_err(a.inverse_dynamics(q, qd, qdd), b.inverse_dynamics(q, qd, qdd)) < tol
    assert rel_err(a.mass_matrix(q), b.mass_matrix(q)) < tol


@pytest.mark.filterwarnings("ignore:.*no <inertial>:composedyn.ModelWarning")
def test_two_link_standard_dh_equals_hand_written_urdf():
    dh = cd.load("two_link")
    rows = [dh.graph.nodes[f"link{i}"] for i in (1, 2)]
    lengths = [dh.graph.edges[f"link{i}_proximal", f"link{i}"]["origin"][0, 3] for i in (1, 2)]
    ref = cd.from_urdf(planar_urdf(lengths, [r["mass"] for r in rows]), gravity=G_PLANE)
    rng = np.random.default_rng(1)
    q = random_q(dh, rng)
    P, R = dh.link_poses(q), ref.link_poses(q)
    # standard DH frame i is at the far end of link i
    assert np.allclose(P["link1"], R["l1"] @ trans(x=lengths[0]), atol=1e-14)
    assert np.allclose(P["link2"], R["tip"], atol=1e-14)
    same_dynamics(dh, ref, rng)


def test_two_link_matches_paper_equations_in_absolute_angles():
    """Giacaglia-Lamas eq. (3.13), (3.12): M and gravity in absolute angles theta = T q."""
    dh = cd.load("two_link")
    m1, m2 = (dh.graph.nodes[f"link{i}"]["mass"] for i in (1, 2))
    I1, I2 = (dh.graph.nodes[f"link{i}"]["inertia"][2, 2] for i in (1, 2))
    l1, l2 = (dh.graph.edges[f"link{i}_proximal", f"link{i}"]["origin"][0, 3] / 2 for i in (1, 2))
    g = -dh.model.gravity[1]
    T = np.array([[1.0, 0.0], [1.0, 1.0]])
    for q in np.random.default_rng(2).uniform(-3, 3, (5, 2)):
        t1, t2 = T @ q
        c12 = math.cos(t1 - t2)
        A = np.array([[(m1 + 4 * m2) * l1**2 + I1, 2 * m2 * l1 * l2 * c12], [2 * m2 * l1 * l2 * c12, m2 * l2**2 + I2]])
        grav = np.array([(m1 + 2 * m2) * g * l1 * math.cos(t1), m2 * g * l2 * math.cos(t2)])
        assert np.allclose(dh.mass_matrix(q), T.T @ A @ T, atol=1e-13)
        assert np.allclose(dh.gravity_torques(q), T.T @ grav, atol=1e-12)


@pytest.mark.filterwarnings("ignore:.*no <inertial>:composedyn.ModelWarning")
def test_planar3r_modified_dh_equals_hand_written_urdf():
    dh = cd.load("planar3r")
    lengths = [0.4, 0.3, 0.2]  # the geometry written in planar3r.toml's header
    ref = cd.from_urdf(planar_urdf(lengths, [dh.graph.nodes[f"link{i}"]["mass"] for i in (1, 2, 3)]), gravity=G_PLANE)
    rng = np.random.default_rng(3)
    q = random_q(dh, rng)
    P, R = dh.link_poses(q), ref.link_poses(q)
    for i in (1, 2, 3):
        assert np.allclose(P[f"link{i}"], R[f"l{i}"], atol=1e-14)
    assert np.allclose(P["tool"], R["tip"], atol=1e-14)
    same_dynamics(dh, ref, rng)


# PUMA 560 in Craig's modified convention, written out by hand from the standard
# table of puma560.toml: row i takes (a, alpha) of standard row i-1.
PUMA_MDH = [
    dict(a=0.0, alpha=0.0, d=0.0, theta=0.0),
    dict(a=0.0, alpha=math.pi / 2, d=0.0, theta=0.0),
    dict(a=0.4318, alpha=0.0, d=0.15005, theta=0.0),
    dict(a=0.0203, alpha=-math.pi / 2, d=0.4318, theta=0.0),
    dict(a=0.0, alpha=math.pi / 2, d=0.0, theta=0.0),
    dict(a=0.0, alpha=-math.pi / 2, d=0.0, theta=0.0),
]


def test_puma_standard_and_modified_tables_give_the_same_frames():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        std = cd.load("puma560")
    mdh = cd.from_dh(PUMA_MDH, convention="modified", base={"xyz": [0, 0, 0.672]})
    q = random_q(std, np.random.default_rng(4), k=8)
    P, M = std.link_poses(q), mdh.link_poses(q)
    assert np.allclose(P["link6"], M["link6"], atol=1e-14)  # a6 = alpha6 = 0
    for i in range(1, 7):  # modified frame i = joint frame of standard row i
        assert np.allclose(P[f"link{i}_proximal"], M[f"link{i}"], atol=1e-14)


def standard_to_modified(rows):
    """Shift (a, alpha) one row down and move the inertial data into the joint frame."""
    out, prev = [], (0.0, 0.0)
    for r in rows:
        T = trans(x=r["a"]) @ rot_x(r["alpha"])
        R = T[:3, :3]
        out.append(dict(r, a=prev[0], alpha=prev[1], com=T[:3, :3] @ r["com"] + T[:3, 3],
                        inertia=R @ r["inertia"] @ R.T))
        prev = (r["a"], r["alpha"])
    return out, trans(x=prev[0]) @ rot_x(prev[1])


@pytest.mark.parametrize("seed", range(4))
def test_random_standard_table_equals_its_modified_form(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(rng.integers(1, 7))):
        m = float(rng.uniform(0.5, 3))
        rows.append(dict(a=rng.normal(), alpha=rng.uniform(-3, 3), d=rng.normal(), theta=rng.uniform(-3, 3),
                         joint=str(rng.choice(["revolute", "prismatic"])), mass=m, com=rng.normal(size=3) * 0.2,
                         inertia=random_inertia(rng, m), damping=rng.uniform(0, 1), armature=rng.uniform(0, 1)))
    mrows, tool = standard_to_modified(rows)
    std = cd.from_dh(rows, convention="standard")
    mdh = cd.from_dh(mrows, convention="modified", tool=tool)
    q = rng.normal(size=(3, std.dof))
    P, M = std.link_poses(q), mdh.link_poses(q)
    assert np.allclose(P[f"link{len(rows)}"], M["tool"], atol=1e-12)
    same_dynamics(std, mdh, rng)


def test_dh_transform_matches_the_graph_chain():
    rng = np.random.default_rng(5)
    for conv in ("standard", "modified"):
        rows = [dict(a=rng.normal(), alpha=rng.normal(), d=rng.normal(), theta=rng.normal()) for _ in range(4)]
        robot = cd.from_dh(rows, convention=conv)
        q = rng.normal(size=4)
        T = np.eye(4)
        for r, qi in zip(rows, q):
            T = T @ dh_transform(r["a"], r["alpha"], r["d"], r["theta"] + qi, conv)
        assert np.allclose(robot.link_poses(q)["link4"], T, atol=1e-13)


@pytest.mark.parametrize("name", ["puma560", "stanford", "panda"])
def test_exported_urdf_has_same_kinematics_and_dynamics_and_pinocchio_agrees(name, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load(name)
        path = robot.to_urdf(tmp_path / f"{name}.urdf")
        back = cd.from_urdf(str(path))
    assert back.joint_names == robot.joint_names
    rng = np.random.default_rng(6)
    q = random_q(robot, rng)
    P, B = robot.link_poses(q), back.link_poses(q)
    assert set(P) == set(B)
    assert max(np.abs(P[k] - B[k]).max() for k in P) < 1e-14
    same_dynamics(robot, back, rng)
    for key in ("lower", "upper"):
        assert np.allclose(np.clip(back.limits[key], -1e29, 1e29), np.clip(robot.limits[key], -1e29, 1e29))
    pp = PinPair(robot, str(path))
    pp.model.armature[:] = pp.v(robot.model.armature)
    pp.model.gravity.linear[:] = robot.model.gravity
    for qk, qdk, qddk in zip(q, rng.normal(size=q.shape), rng.normal(size=q.shape)):
        tau = pin.rnea(pp.model, pp.data, pp.q(qk), pp.v(qdk), pp.v(qddk))
        assert rel_err(pp.v(robot.inverse_dynamics(qk, qdk, qddk, friction=False)), tau) < 1e-12
        assert rel_err(pp.mat(robot.mass_matrix(qk)), pin.crba(pp.model, pp.data, pp.q(qk))) < 1e-12


@pytest.mark.parametrize("seed,n", [(0, 3), (1, 8), (2, 15)])
def test_random_tree_round_trips_through_urdf_export(seed, n):
    xml = random_urdf(seed, n, damping=True, friction=True, armature=True)
    robot = cd.from_urdf(xml)
    back = cd.from_urdf(urdf_string(robot.graph))
    assert back.joint_names == robot.joint_names
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(3, robot.dof))
    P, B = robot.link_poses(q), back.link_poses(q)
    assert max(np.abs(P[k] - B[k]).max() for k in P) < 1e-13
    same_dynamics(robot, back, rng)
    qd = rng.normal(size=q.shape)
    assert rel_err(back.inverse_dynamics(q, qd, 0 * q), robot.inverse_dynamics(q, qd, 0 * q)) < 1e-12


@pytest.mark.filterwarnings("ignore:.*no <inertial>:composedyn.ModelWarning")
def test_export_keeps_mimic_and_limits():
    xml = ('<robot name="m"><link name="a"/><link name="b"/><link name="c"/>'
           '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
           '<limit lower="-1" upper="2" effort="3" velocity="4"/></joint>'
           '<joint name="j2" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>'
           '<limit lower="0" upper="0.5" effort="30" velocity="0.4"/>'
           '<mimic joint="j1" multiplier="0.5" offset="0.1"/></joint></robot>')
    from composedyn.importers.urdf import load_urdf

    g = load_urdf(xml)
    g2 = load_urdf(urdf_string(g))
    for e in g.edges:
        assert g2.edges[e]["limits"] == g.edges[e]["limits"]
        assert g2.edges[e]["mimic"] == g.edges[e]["mimic"]
        assert g2.edges[e]["type"] == g.edges[e]["type"]


def test_rpy_extraction_inverts_rpy_matrix_including_gimbal_lock():
    rng = np.random.default_rng(7)
    mats = [random_rotation(rng) for _ in range(200)]
    for pitch in (math.pi / 2, -math.pi / 2):
        for eps in (0.0, 1e-12, 1e-9, 1e-6, -1e-9):
            mats.append(rpy_matrix((rng.uniform(-3, 3), pitch + eps, rng.uniform(-3, 3))))
    for R in mats:
        assert np.abs(rpy_matrix(rpy_from_matrix(R)) - R).max() < 1e-14


def test_toml_and_python_rows_give_the_same_robot(tmp_path):
    text = """
name = "arm"
convention = "standard"
angles = "degrees"
base = {xyz = [0.1, 0.2, 0.3], rpy = [10.0, 20.0, 30.0]}
tool = {xyz = [0.0, 0.0, 0.1]}
[[links]]
a = 0.3
alpha = 90.0
d = 0.2
theta = 15.0
mass = 1.0
com = [0.1, 0.0, 0.0]
inertia = [0.01, 0.02, 0.02]
limits = {lower = -90.0, upper = 90.0, velocity = 180.0, effort = 10.0}
[[links]]
joint = "prismatic"
a = 0.0
alpha = 0.0
d = 0.1
theta = -30.0
"""
    (tmp_path / "arm.toml").write_text(text)
    robot = cd.load(tmp_path / "arm.toml")
    deg = math.pi / 180
    T_base = np.eye(4)
    T_base[:3, :3], T_base[:3, 3] = rpy_matrix((10 * deg, 20 * deg, 30 * deg)), (0.1, 0.2, 0.3)
    rows = [dict(a=0.3, alpha=90 * deg, d=0.2, theta=15 * deg, mass=1.0, com=[0.1, 0, 0], inertia=[0.01, 0.02, 0.02],
                 limits=[-90 * deg, 90 * deg, 180 * deg, 10.0]),
            dict(a=0.0, alpha=0.0, d=0.1, theta=-30 * deg, joint="prismatic")]
    ref = cd.from_dh(rows, base=T_base, tool=trans(z=0.1))
    q = np.random.default_rng(8).normal(size=(3, 2))
    P, R = robot.link_poses(q), ref.link_poses(q)
    assert set(P) == set(R) and max(np.abs(P[k] - R[k]).max() for k in P) < 1e-14
    for key in robot.limits:
        assert np.allclose(robot.limits[key], ref.limits[key])
    assert robot.name == "arm" and robot.model.jtype[1] == 1
    table = read_dh_toml(tmp_path / "arm.toml")  # rows for symbolic code: checked, in radians
    assert (table["rows"][0]["alpha"] == pytest.approx(math.pi / 2)
            and table["rows"][0]["limits"][2] == pytest.approx(math.pi))
    assert np.allclose(table["base"], T_base) and table["convention"] == "standard"


def test_from_dh_takes_the_loaders_floating_and_mimic_keywords(tmp_path):
    """formats.md: every loader takes strict, mimic and floating; from_dh as load(".toml")."""
    text = "\n".join(["convention = \"standard\""] + [
        f"[[links]]\na = 0.3\nalpha = {alpha}\nd = 0.1\ntheta = 0.0\nmass = 1.0\ncom = [0.1, 0.0, 0.0]\n"
        "inertia = [0.01, 0.02, 0.03]" for alpha in (1.5707963267948966, 0.0, -1.5707963267948966)])
    (tmp_path / "arm.toml").write_text(text)
    rows = read_dh_toml(tmp_path / "arm.toml")["rows"]
    for floating in (None, False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cd.ModelWarning)
            a = cd.load(tmp_path / "arm.toml", floating=floating, mimic="independent")
            b = cd.from_dh(rows, floating=floating, mimic="independent")
        assert (type(a), a.nq, a.nv) == (type(b), b.nq, b.nv)
        q = a.random_configuration(seed=3)
        assert np.abs(a.mass_matrix(q) - b.mass_matrix(q)).max() < 1e-14
    assert cd.from_dh(rows, floating=True).nq == 3 + 7
    with pytest.raises(TypeError, match="from_dh.*flaoting"):
        cd.from_dh(rows, flaoting=True)

# ---- bad input -------------------------------------------------------------
GOOD = [dict(a=0.1, alpha=0.0, d=0.0, theta=0.0, mass=1.0, com=[0, 0, 0], inertia=[0.1, 0.1, 0.1]),
        dict(a=0.1, alpha=0.0, d=0.0, theta=0.0)]


def edited(k: int, **changes) -> list:
    rows = [dict(r) for r in GOOD]
    for key, value in changes.items():
        if value is KeyError:
            del rows[k][key]
        else:
            rows[k][key] = value
    return rows


@pytest.mark.parametrize("rows,fragments", [
    (edited(1, alpha=KeyError), ["row 2", "missing key 'alpha'"]),
    (edited(0, alfa=0.0), ["row 1", "unknown key 'alfa'"]),
    (edited(1, d=float("nan")), ["row 2", "'d'", "NaN"]),
    (edited(0, com=[0, float("nan"), 0]), ["row 1", "'com'", "NaN"]),
    (edited(0, inertia=[[1, 0], [0, 1]]), ["row 1", "'inertia'", "shape"]),
    (edited(1, limits={"lower": float("nan")}), ["row 2", "'limits'", "NaN"]),
    (edited(1, limits={"lo": 0.0}), ["row 2", "unknown key 'lo'"]),
    (edited(1, joint="spherical"), ["row 2", "'joint'", "spherical"]),
    (edited(0, com=KeyError), ["row 1", "missing key 'com'"]),
    (edited(0, mass=-1.0), ["row 1", "'mass'", "negative"]),
    (edited(1, theta="0"), ["row 2", "'theta'", "number"]),
    ([], ["no rows"]),
])
def test_bad_rows_name_the_table_row_and_key(rows, fragments):
    with pytest.raises(cd.ModelError) as e:
        cd.from_dh(rows)
    for f in ["<dh table>"] + fragments:
        assert f in str(e.value), (f, str(e.value))


def test_wrong_convention_is_named():
    with pytest.raises(cd.ModelError, match=r"<dh table>.*'craig'"):
        cd.from_dh(GOOD, convention="craig")


TOML_ROW = "[[links]]\na = 0.1\nalpha = 0.0\nd = 0.0\ntheta = 0.0\n"


@pytest.mark.parametrize("text,fragments", [
    ('convention = "standard"\n' + TOML_ROW + "d = 1\n", ["invalid TOML"]),
    ('convention = "standard"\n' + TOML_ROW.replace("d = 0.0", "d = nan"), ["row 1", "'d'", "NaN"]),
    ('convention = "standard"\n' + TOML_ROW + TOML_ROW.replace("alpha = 0.0\n", ""), ["row 2", "missing key 'alpha'"]),
    ('convention = "standard"\n' + TOML_ROW.replace("a = 0.1", "b = 0.1"), ["row 1", "unknown key 'b'"]),
    ('convention = "modfied"\n' + TOML_ROW, ["'modfied'"]),
    ('convention = "standard"\nangles = "grad"\n' + TOML_ROW, ["'grad'"]),
    (TOML_ROW, ["missing top-level key 'convention'"]),
    ('convention = "standard"\ncolour = "red"\n' + TOML_ROW, ["unknown top-level key 'colour'"]),
    ('convention = "standard"\nbase = {xyz = [0, 0]}\n' + TOML_ROW, ["base xyz", "shape"]),
    ('convention = "standard"\ngravity = [0, 0, nan]\n' + TOML_ROW, ["gravity", "NaN"]),
])
def test_bad_toml_names_the_file(tmp_path, text, fragments):
    path = tmp_path / "bad_arm.toml"
    path.write_text(text)
    with pytest.raises(cd.ModelError) as e:
        cd.load(path)
    for f in [str(path)] + fragments:
        assert f in str(e.value), (f, str(e.value))
