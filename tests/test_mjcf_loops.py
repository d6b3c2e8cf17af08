"""MJCF loop closures (<equality connect>, <equality weld>) as a ClosedChain, against MuJoCo:
MuJoCo's equality residual and its rate are zero at composedyn's closed configurations and
velocities, and the actuator torques are MuJoCo's tree inverse dynamics (constraints off) at those
states, projected onto the actuated joints; a spatial weld's residual is MuJoCo's."""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.dynamics.constraints.loops import loop_residual
from composedyn.importers.mjcf import load_mjcf_closed
from mjcf_compare import TOL, MjPair, rel_err
from mjcf_models import CONNECTED, SITED, WELDED


@pytest.mark.parametrize("xml, kind, rows", [(CONNECTED, "planar", 2), (WELDED, "planar_pose", 3),
                                             (SITED, "planar", 2)])
def test_closed_chain_matches_mujoco(xml, kind, rows):
    chain = cd.load_closed_chain(xml)
    assert chain.joint_names == ("crank_joint",) and [lp.kind for lp in chain.loops] == [kind]
    assert len(chain.rows) == rows
    tree = chain.robot
    m = mujoco.MjModel.from_xml_string(xml)
    constrained, d = mujoco.MjModel.from_xml_string(xml), None
    d = mujoco.MjData(constrained)
    pair = MjPair(tree, m)  # constraints off: the tree's dynamics
    order = [int(m.joint(n).qposadr[0]) for n in tree.joint_names]
    rng = np.random.default_rng(8)
    for crank in (1.0, 1.2, 0.8):
        q, qd, qdd = np.array([crank]), rng.uniform(-1, 1, 1), rng.uniform(-1, 1, 1)
        qa, qda, qdda = chain.assemble(q), chain.velocities(q, qd), chain.accelerations(q, qd, qdd)
        full = np.zeros((3, m.nv))
        full[:, order] = qa, qda, qdda
        d.qpos[:], d.qvel[:] = full[0], full[1]
        mujoco.mj_forward(constrained, d)
        eq = d.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        assert eq.sum() in (3, 6)
        assert np.abs(d.efc_pos[eq]).max() < 1e-12 and np.abs(d.efc_vel[eq]).max() < 1e-12
        pair.set_state(*full)
        W = np.stack([chain.velocities(q, e) for e in np.eye(1)], -1)  # qd_all = W qd
        assert rel_err(chain.inverse_dynamics(q, qd, qdd, friction=False), W.T @ pair.inverse_dynamics()) < TOL


def test_spatial_weld_residual_is_mujocos():
    """Out of the closed configurations: the pose loop's position rows are MuJoCo's weld rows, its
    rotation rows MuJoCo's quaternion error (body2 axes) as a rotation vector in world axes."""
    graph, loops, _, _ = load_mjcf_closed(WELDED)
    (lp,) = loops
    assert lp.kind == "pose"
    tree = cd.from_graph(graph)
    m = mujoco.MjModel.from_xml_string(WELDED)
    d = mujoco.MjData(m)
    order = [int(m.joint(n).qposadr[0]) for n in tree.joint_names]
    b2 = m.body("rocker").id
    rng = np.random.default_rng(9)
    for _ in range(3):
        d.qpos[:] = m.qpos0 + rng.uniform(-0.3, 0.3, m.nq)
        mujoco.mj_forward(m, d)
        eq = np.flatnonzero(d.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY))
        mine = loop_residual(tree.model, [lp], d.qpos[order])
        assert rel_err(mine[:3], d.efc_pos[eq[:3]]) < 1e-12
        v = d.efc_pos[eq[3:]] / m.eq_data[0, 10]  # imaginary part of the error quaternion (w > 0 here)
        angle = 2 * np.arcsin(np.linalg.norm(v))
        expected = d.xmat[b2].reshape(3, 3) @ (angle * v / np.linalg.norm(v))
        assert rel_err(mine[3:], expected) < 1e-9
        assert np.linalg.norm(mine[3:]) > 1e-3
    assert replace(lp, kind="position").n_eq == 3


def test_cd_load_refuses_a_closed_chain_and_names_the_way():
    with pytest.raises(cd.ModelError, match=r"<equality connect> 'pin' between bodies 'coupler' and 'rocker' "
                                            r"closes a kinematic loop; load it with composedyn.load_closed_chain"):
        cd.load(CONNECTED)


def test_closed_chain_without_loops_or_actuators(tmp_path):
    with pytest.raises(cd.ModelError, match=r"no active <equality connect> or <equality weld>"):
        cd.load_closed_chain(CONNECTED.replace('<connect name="pin" body1="coupler" body2="rocker" '
                                               'anchor="0.5 0 0"/>', ""))
    bare = CONNECTED.replace('<actuator><motor joint="crank_joint" ctrlrange="-1 1" gear="10"/></actuator>', "")
    with pytest.raises(cd.ModelError, match=r"no <actuator> drives a joint; pass independent="):
        cd.load_closed_chain(bare)
    assert cd.load_closed_chain(bare, independent=["rocker_joint"]).joint_names == ("rocker_joint",)


def test_cli_info_and_open_tree_commands(tmp_path, capsys):
    path = tmp_path / "fourbar.xml"
    path.write_text(CONNECTED)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "actuated (independent): crank_joint" in out and "loop pin: coupler" in out
    assert main(["equations", str(path)]) == 2
    assert "a closed chain" in capsys.readouterr().err
    assert main(["simulate", str(path), "--duration", "0.3"]) == 0  # the actuated crank tracks a motion
    assert "robot fourbar" in capsys.readouterr().out
