"""Closed chains on the command line: ``info``, ``torques`` and ``simulate`` with a closed chain,
and the functions behind them (composedyn.cli.closed_chain)."""

import json

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.cli.closed_chain import closed_info_lines, load_model
from composedyn.simulation.reference_motion import demo_reference
from composedyn.torque_check.closed_chain import check_closed_trajectory


def test_info_lists_loops_actuated_and_dependent_joints(capsys):
    assert main(["info", "delta"]) == 0
    out = capsys.readouterr().out
    assert "actuated (independent): hip1, hip2, hip3" in out
    assert "dependent: plate_x, plate_y, plate_z, plate_rx, plate_ry, plate_rz, elbow1a, swing1a" in out
    assert "loop ball2a: bar2a (1.055, 0, 0) m = plate" in out and "[position; rows x, y, z]" in out
    lines = closed_info_lines("fourbar")
    assert any("loop pin_C" in s and "planar xz; rows x, z" in s for s in lines)


def test_load_model_gives_a_closed_chain_or_a_tree():
    assert isinstance(load_model("fourbar", "torques"), cd.ClosedChain)
    assert isinstance(load_model("two_link", "torques"), cd.Robot)


def test_check_closed_trajectory_equals_inverse_dynamics_and_names_the_failing_sample():
    ch = cd.load_closed_chain("fourbar")
    t = np.linspace(0.0, 1.0, 51)
    q = (1.0 + 0.5 * np.sin(2 * np.pi * t))[:, None]
    qd = (np.pi * np.cos(2 * np.pi * t))[:, None]
    qdd = (-2 * np.pi**2 * np.sin(2 * np.pi * t))[:, None]
    rep = check_closed_trajectory(ch, t, q, qd, qdd)
    assert np.allclose(rep.tau, ch.inverse_dynamics(q, qd, qdd), rtol=1e-12, atol=1e-12)
    rocker = cd.load_closed_chain("fourbar", independent=["rocker_joint"],
                                  guess={"crank_joint": 1.0, "coupler_joint": -0.68, "rocker_joint": 1.11})
    path = np.linspace(1.11, 3.1, 40)[:, None]  # swings the rocker out of its range
    before = rocker.assembly
    with pytest.raises(ValueError, match=r"sample \d+ \(t = [0-9.]+ s\): the loops cannot close"):
        check_closed_trajectory(rocker, np.linspace(0, 1, 40), path, source="swing.csv")
    assert np.array_equal(rocker.assembly, before)


def test_the_assembly_is_where_the_next_closure_starts_and_only_a_closed_one_is_accepted():
    ch = cd.load_closed_chain("fourbar")
    start = ch.assembly
    assert np.abs(ch.constraint(start)).max() < 1e-10
    moved = ch.assemble(start[[ch.all_joint_names.index(j) for j in ch.joint_names]] + 0.3)
    assert np.array_equal(ch.assembly, moved) and not np.allclose(moved, start)
    ch.assembly = start
    assert np.array_equal(ch.assembly, start)
    with pytest.raises(ValueError, match="does not close the loops"):
        ch.assembly = start + 0.1
    with pytest.raises(ValueError, match="shape"):
        ch.assembly = np.stack([start, start])
    assert np.array_equal(ch.assembly, start)


def write_csv(path, t, names, q):
    rows = ["time," + ",".join(names)] + [f"{a}," + ",".join(map(repr, map(float, b))) for a, b in zip(t, q)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_torques_command_on_the_delta(tmp_path):
    """Actuated-joint trajectory of the Delta through the CLI; the JSON torques are the chain's."""
    ch = cd.load_closed_chain("delta")
    t = np.linspace(0.0, 1.0, 101)
    q = 0.3 + 0.1 * np.sin(2 * np.pi * t)[:, None] * np.array([1.0, -0.5, 0.3])
    csv = write_csv(tmp_path / "hips.csv", t, ch.joint_names, q)
    out, table = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(["torques", "delta", str(csv), "--json", str(out), "--csv", str(table)]) == 0
    assert json.loads(out.read_text())["ok"] is True
    rows = np.genfromtxt(table, delimiter=",", names=True)
    tau = np.stack([rows[f"{j}_tau"] for j in ch.joint_names], axis=-1)
    qd, qdd = (np.stack([rows[f"{j}_vel"] for j in ch.joint_names], -1),
               np.stack([rows[f"{j}_acc"] for j in ch.joint_names], -1))
    assert np.allclose(tau, ch.inverse_dynamics(q, qd, qdd), rtol=1e-8, atol=1e-8)


def test_simulate_command_tracks_a_closed_chain(tmp_path, capsys):
    assert main(["simulate", "fourbar", "--duration", "0.5", "--samples", "51"]) == 0
    assert "no checked limit exceeded" in capsys.readouterr().out  # the four-bar has no limits: unchecked
    ch = cd.load_closed_chain("fivebar")
    ref = demo_reference(ch, 1.0)
    q0, _, _ = ref(0.0)
    assert np.allclose(q0, ch.assembly[[ch.all_joint_names.index(j) for j in ch.joint_names]])
    t = np.linspace(0.0, 1.0, 41)
    q = np.array([ref(x)[0] for x in t])
    csv = write_csv(tmp_path / "ref.csv", t, ch.joint_names, q)
    assert main(["simulate", "fivebar", str(csv), "--samples", "41", "--mismatch", "0.1"]) == 0
