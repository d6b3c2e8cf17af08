"""Descriptions whose numbers overflow are refused at load, naming the joint or link and the
element; a robot's model, packed kernel arrays and graph are read-only in fact."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import composedyn as cd
from composedyn import ModelError

LINK = """<link name="{name}"><inertial><origin xyz="{com} 0 0"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>"""


def _urdf(axis="0 0 1", mimic="", mass="1.0", ixx="0.01", com="0.2", origin="0.5 0 0", limit=""):
    return f"""<robot name="big">
  <link name="base"/>
  {LINK.format(name="l1", com="0.2", mass="1.0", ixx="0.01")}
  {LINK.format(name="l2", com=com, mass=mass, ixx=ixx)}
  {LINK.format(name="l3", com="0.2", mass="1.0", ixx="0.01")}
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="{origin}"/>
    <axis xyz="{axis}"/><limit lower="-1" upper="1" effort="10" velocity="1" {limit}/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>{mimic}</joint>
</robot>"""


@pytest.mark.parametrize("kwargs,names", [
    (dict(axis="0 1e200 0"), r"joint 'j2' axis.*1e\+200"),
    (dict(axis="1e-200 1e200 1e200"), r"joint 'j2' axis"),
    (dict(mimic='<mimic joint="j2" multiplier="1e200"/>'), r"joint 'j3' mimic multiplier.*1e\+200"),
    (dict(mimic='<mimic joint="j2" multiplier="1" offset="-1e300"/>'), r"joint 'j3' mimic offset"),
    (dict(ixx="1e308"), r"link 'l2' inertia.*1e\+308"),
    (dict(mass="1e200"), r"link 'l2' mass"),
    (dict(com="1e200"), r"link 'l2' centre of mass"),
    (dict(origin="1e200 0 0"), r"joint 'j2' origin"),
])
def test_overflowing_numbers_are_refused_at_load(kwargs, names):
    with pytest.raises(ModelError, match=names + ".*overflow"):
        cd.from_urdf(_urdf(**kwargs))


def test_an_overflowing_limit_is_no_limit():
    text = _urdf().replace('effort="10" velocity="1" /', 'effort="1e300" velocity="1" /')
    robot = cd.from_urdf(text)  # 1e30 and beyond is the URDF writers' "no limit": unchecked, never a number
    assert np.isinf(robot.limits["effort"][robot.joint_names.index("j2")])
    report = cd.check_trajectory(robot, np.linspace(0, 1, 11), np.zeros((11, robot.dof)))
    assert ("j2", "effort") in report.unchecked and report.verdict() != "within limits"
    cd.from_urdf(_urdf().replace('effort="10" velocity="1" /', 'effort="1e16" velocity="1e16" /'))  # vendor "none"


def test_overflowing_numbers_are_refused_from_every_importer():
    rows = [dict(a=0.5, alpha=0.0, d=0.0, theta=0.0, joint="revolute", mass=1.0, com=[-0.2, 0, 0],
                 inertia=np.eye(3) * 1e300) for _ in range(2)]
    with pytest.raises(ModelError, match=r"link.*inertia.*overflow"):
        cd.from_dh(rows)
    g = cd.load("puma560").graph.copy()
    u, v, d = next(iter(g.edges(data=True)))
    g.edges[u, v]["axis"] = np.array([0.0, 0.0, 1e200])
    with pytest.raises(ModelError, match=rf"joint {d['name']!r} axis.*overflow"):
        cd.from_graph(g)


def test_cli_info_refuses_an_overflowing_inertia_in_one_line(tmp_path):
    path = tmp_path / "big.urdf"
    path.write_text(_urdf(ixx="1e308"))
    run = subprocess.run([sys.executable, "-m", "composedyn.cli", "info", str(path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert "link 'l2' inertia" in run.stderr


def test_model_arrays_cannot_be_made_writeable():
    r = cd.load("puma560")
    for key, value in vars(r.model).items():
        if isinstance(value, np.ndarray):
            with pytest.raises(ValueError):
                value.flags.writeable = True
            if value.base is not None:
                with pytest.raises(ValueError):
                    value.base.flags.writeable = True
    with pytest.raises(ValueError):
        r.model.mass.flags.writeable = True


def test_packed_arrays_cannot_be_written_or_made_writeable():
    r = cd.load("puma560")
    q = np.full(r.dof, 0.3)
    before = r.gravity_torques(q)
    im, fm = r.arrays.bodies
    _, fx = r.arrays.frames
    for a in (im, fm, fx):
        with pytest.raises(ValueError):
            a[...] = 0
        with pytest.raises(ValueError):
            a.flags.writeable = True
        with pytest.raises(ValueError):
            a.view().flags.writeable = True
    with pytest.raises(ValueError):
        im[min(5, r.dof - 1), 0] = 10**12
    assert np.array_equal(r.gravity_torques(q), before)
    assert np.array_equal(r.fast.gravity_torques(q), before)
    for a in (*r.fast.arrays.bodies, *r.fast.arrays.frames):
        with pytest.raises(ValueError):
            a.flags.writeable = True


def test_floating_robot_graph_is_a_frozen_copy():
    fr = cd.from_graph(cd.load("puma560").graph.copy(), floating=True)
    link = next(iter(fr.graph.nodes))
    with pytest.raises(TypeError, match="read-only"):
        fr.graph.nodes[link]["mass"] = 1000.0
    assert fr.perturbed(0).dof == fr.dof


def test_robot_graph_is_a_frozen_copy():
    r = cd.load("puma560")
    q = np.full(r.dof, 0.3)
    before = r.perturbed(0).inverse_dynamics(q, q, q)
    link = next(n for n, d in r.graph.nodes(data=True) if d["mass"] > 0)
    with pytest.raises(TypeError, match="read-only"):
        r.graph.nodes[link]["mass"] = 1000.0
    with pytest.raises(ValueError):
        r.graph.nodes[link]["inertia"][0, 0] = 1000.0
    u, v = next(iter(r.graph.edges))
    with pytest.raises(TypeError, match="read-only"):
        r.graph.edges[u, v]["axis"] = np.array([1.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="read-only"):
        r.graph.graph["gravity"] = (0.0, 0.0, -100.0)
    with pytest.raises(nx.NetworkXError):
        r.graph.remove_node(link)
    assert np.array_equal(r.perturbed(0).inverse_dynamics(q, q, q), before)
    g = r.graph.copy()  # an editable copy builds a changed robot
    g.nodes[link]["mass"] = 2 * g.nodes[link]["mass"]
    assert not np.allclose(cd.from_graph(g).inverse_dynamics(q, q, q), before)
    assert np.array_equal(r.inverse_dynamics(q, q, q), before)


def test_a_graph_passed_in_is_not_shared():
    g = cd.load("puma560").graph.copy()
    r = cd.from_graph(g)
    q = np.full(r.dof, 0.3)
    before = r.perturbed(0).inverse_dynamics(q, q, q)
    link = next(n for n, d in g.nodes(data=True) if d["mass"] > 0)
    g.nodes[link]["mass"] = 1000.0
    assert np.array_equal(r.perturbed(0).inverse_dynamics(q, q, q), before)


def test_c_entries_refuse_writeable_model_arrays():
    from composedyn.dynamics.compiled import crba, declare
    from composedyn.dynamics.compiled._call import Caller

    im, fm = cd.load("puma560").arrays.bodies
    addr, n = declare.entry(crba.MASS_MATRIX).address, fm.shape[0]
    w = (np.zeros((n, crba.SCRATCH)),)
    Caller(addr, (im, fm), w, (n,), ((n, n),), (), (), None, False, declare.ON, None)  # the read-only packed arrays
    for model in ((im.copy(), fm), (im, fm.copy())):
        with pytest.raises(ValueError, match="read-only"):
            Caller(addr, model, w, (n,), ((n, n),), (), (), None, False, declare.ON, None)
    with pytest.raises(ValueError, match="writeable"):
        Caller(addr, (im, fm), (fm,), (n,), ((n, n),), (), (), None, False, declare.ON, None)


def test_read_only_survives_pickling():
    import pickle

    fr = cd.from_graph(cd.load("puma560").graph.copy(), floating=True)
    q = fr.random_configuration(seed=0)
    want = fr.gravity_torques(q)
    back = pickle.loads(pickle.dumps(fr))
    assert np.array_equal(back.gravity_torques(q), want)
    with pytest.raises(ValueError):
        back.model.mass.flags.writeable = True
    link = next(n for n, d in back.graph.nodes(data=True) if d["mass"] > 0)
    with pytest.raises(ValueError):
        back.graph.nodes[link]["inertia"].flags.writeable = True
    with pytest.raises(TypeError, match="read-only"):
        back.graph.nodes[link]["mass"] = 1.0
