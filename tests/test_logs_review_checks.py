"""Log checks that must not say "within limits" about data they did not check: joints of
two publishers that cover different spans (one stops early, or the clocks are skewed),
logs of fewer than 8 samples whose logged velocities contradict the positions, a zero
effort or velocity limit (an infinite ratio, never None), and measured efforts above the
effort limit."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.testing.log_bags import write_log

NAMES = [f"joint{i}" for i in range(1, 8)]
ARM, WRIST = NAMES[:6], NAMES[6:]
GAP = 10  # read_log's default gap_factor


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def centre(robot) -> dict:
    lim = robot.limits
    return dict(zip(robot.joint_names, (lim["lower"] + lim["upper"]) / 2))


def two_publishers(robot, path, edit, duration=5.0):
    return write_log(path, "ros1", [(ARM, 100.0, 0.0), (WRIST, 100.0, 0.0)], duration=duration, edit=edit,
                     speed=0.3, center=centre(robot))


def wrist_stops_at(seconds):
    def edit(msgs):
        t0 = msgs[0][1]
        return [m for m in msgs if not (m[6] == 1 and m[1] - t0 > seconds * 1e9)]
    return edit


def wrist_clock_behind(seconds):
    def edit(msgs):
        return [(m[0], m[1] - (round(seconds * 1e9) if m[6] == 1 else 0)) + tuple(m[2:]) for m in msgs]
    return edit


# -- joints of publishers that cover different spans ------------------------------------------

def test_a_publisher_stopping_early_is_damaged_naming_joints_and_what_was_dropped(panda, tmp_path):
    path = two_publishers(panda, tmp_path / "cut.bag", wrist_stops_at(0.1))
    log = cd.read_log(path, joint_names=NAMES)
    assert len(log) == 11  # the samples every joint covers
    (finding,) = [f for f in log.findings if "cover different spans" in f.message]
    assert finding.kind == "damaged"
    msg = finding.message
    assert msg.startswith(f"{path}:/joint_states: ")
    assert "joint1, joint2, joint3, joint4, joint5, joint6" in msg and "489 samples" in msg and "4.89 s" in msg
    assert "joint7:" not in msg  # the wrist joint loses nothing
    (row,) = cd.check_many(panda, [path])
    assert row.verdict == "damaged" and row.findings == log.findings


def test_skewed_clocks_are_damaged(panda, tmp_path):
    path = two_publishers(panda, tmp_path / "skew.bag", wrist_clock_behind(4.9))
    log = cd.read_log(path, joint_names=NAMES)
    (finding,) = [f for f in log.findings if "cover different spans" in f.message]
    assert finding.kind == "damaged"
    assert "joint7: 490 samples, 4.9 s before" in finding.message  # the wrist's stamps start 4.9 s earlier
    assert "joint1, joint2, joint3, joint4, joint5, joint6: 490 samples, 4.9 s after" in finding.message
    (row,) = cd.check_many(panda, [path])
    assert row.verdict == "damaged"


def test_publishers_a_few_steps_apart_have_no_finding(panda, tmp_path):
    """Drivers started and stopped a few sample periods apart: the common span is the whole log."""
    steps = GAP - 1
    path = two_publishers(panda, tmp_path / "near.bag", wrist_clock_behind(steps / 100.0), duration=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = cd.read_log(path, joint_names=NAMES)
    assert log.findings == () and len(log) == 200 - steps
    path = two_publishers(panda, tmp_path / "far.bag", wrist_clock_behind((GAP + 1) / 100.0), duration=2.0)
    assert [f.kind for f in cd.read_log(path, joint_names=NAMES).findings] == ["damaged"]


# -- fewer than 8 samples ---------------------------------------------------------------------

def short_csv(robot, path, samples, velocity):
    """``samples`` rows at 100 Hz, every joint moving at 10 rad/s, ``_vel`` columns = ``velocity``,
    ``_acc`` columns 0."""
    mid = (robot.limits["lower"] + robot.limits["upper"]) / 2
    t = np.arange(samples) * 0.01
    q = mid + np.outer(10.0 * t, np.ones(7))
    qd = np.full_like(q, velocity)
    cols = ["time", *NAMES, *(j + "_vel" for j in NAMES), *(j + "_acc" for j in NAMES)]
    np.savetxt(path, np.column_stack([t, q, qd, np.zeros_like(q)]), delimiter=",", header=",".join(cols),
               comments="", fmt="%.17g")
    return path


@pytest.mark.parametrize("samples", [2, 3, 7])
def test_few_samples_whose_velocities_contradict_the_positions_are_inconsistent(panda, tmp_path, samples):
    bad = short_csv(panda, tmp_path / "zero.csv", samples, 0.0)
    (finding,) = cd.read_log(bad, joint_names=NAMES).findings
    assert finding.kind == "inconsistent" and "'joint1' logged velocity disagrees" in finding.message
    (row,) = cd.check_many(panda, [bad])  # streamed CSV check
    assert row.verdict == "inconsistent"
    good = short_csv(panda, tmp_path / "good.csv", samples, 10.0)
    assert cd.read_log(good, joint_names=NAMES).findings == ()
    assert cd.check_many(panda, [good])[0].findings == ()


# -- zero limits --------------------------------------------------------------------------------

LINK = ('<link name="{}"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def two_joint_urdf(path, limit1):
    path.write_text(f"""<robot name="r"><link name="base"/>{LINK.format("l1")}{LINK.format("l2")}
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>{limit1}</joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
<limit lower="-3" upper="3" effort="100" velocity="5"/></joint></robot>""")
    return path


def test_a_zero_limit_makes_an_infinite_ratio_in_every_output(tmp_path, capsys):
    urdf = two_joint_urdf(tmp_path / "r.urdf", '<limit lower="-3" upper="3" effort="0" velocity="0"/>')
    t = np.linspace(0, 2, 201)
    log = tmp_path / "log.csv"
    np.savetxt(log, np.column_stack([t, 0.5 * np.sin(2 * t), 0.3 * np.sin(3 * t)]), delimiter=",",
               header="time,j1,j2", comments="", fmt="%.17g")
    robot = cd.load(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by zero
        (row,) = cd.check_many(robot, [log])
    assert row.verdict == "exceeded" and row.worst_joint == "j1"
    assert row.torque_ratio == np.inf and row.velocity_ratio == np.inf
    assert row.to_dict()["torque_ratio"] == "inf" and row.to_dict()["velocity_ratio"] == "inf"
    out = {k: tmp_path / f"out.{k}" for k in ("json", "csv", "html")}
    code = main(["torques", str(urdf), str(log), "--json", str(out["json"]), "--summary", str(out["csv"]),
                 "--html", str(out["html"])])
    assert code == 1
    data = json.loads(out["json"].read_text())
    assert data["torque_ratio"] == "inf" and data["velocity_ratio"] == "inf"
    with open(out["csv"], newline="") as f:
        (summary,) = csv.DictReader(f)
    assert float(summary["torque_ratio"]) == np.inf and float(summary["velocity_ratio"]) == np.inf
    assert 'data-v="Infinity"' in out["html"].read_text()
    assert "max torque/limit inf" in capsys.readouterr().out


def test_a_zero_limit_on_a_joint_at_rest_is_a_ratio_of_zero(tmp_path):
    urdf = two_joint_urdf(tmp_path / "r.urdf", '<limit lower="-3" upper="3" effort="100" velocity="0"/>')
    t = np.linspace(0, 2, 201)
    log = tmp_path / "still.csv"
    np.savetxt(log, np.column_stack([t, np.zeros_like(t), 0.3 * np.sin(3 * t)]), delimiter=",",
               header="time,j1,j2", comments="", fmt="%.17g")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (row,) = cd.check_many(cd.load(urdf), [log], keep_reports=True)
    assert row.verdict == "within limits" and row.velocity_ratio == pytest.approx(0.18)
    assert row.report["joints"][0]["status"]["velocity"] == "ok"


# -- measured efforts ---------------------------------------------------------------------------

def collision(names, t):
    """150 N m on joint1 from 1.0 s to 1.5 s (its limit is 87 N m), 1 N m elsewhere."""
    e = np.ones((len(t), len(names)))
    if "joint1" in names:
        e[(t > 1.0) & (t < 1.5), names.index("joint1")] = 150.0
    return e


def test_measured_effort_above_its_limit_is_exceeded(panda, tmp_path, capsys):
    path = write_log(tmp_path / "collision.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=3.0, speed=0.3,
                     center=centre(panda), effort=collision)
    (row,) = cd.check_many(panda, [path], keep_reports=True)
    assert row.verdict == "exceeded" and row.violations == 1
    assert row.measured_ratio == pytest.approx(150.0 / 87.0)
    assert row.torque_ratio < 1 and row.velocity_ratio < 1  # the predicted motion is within limits
    (v,) = row.report["violations"]
    assert (v["joint"], v["quantity"], v["peak"], v["limit"]) == ("joint1", "measured effort", 150.0, 87.0)
    assert 0.99 < v["start"] < 1.01 and 1.49 < v["end"] < 1.51
    assert "joint1: measured effort 150 > 87 N m from" in row.text
    out = tmp_path / "r.json"
    viol = tmp_path / "v.csv"
    assert main(["torques", "panda", str(path), "--json", str(out), "--violations", str(viol)]) == 1
    data = json.loads(out.read_text())
    assert data["verdict"] == "exceeded" and data["measured_ratio"] == pytest.approx(150.0 / 87.0)
    assert "joint1,measured effort," in viol.read_text()
    assert "exceeded" in capsys.readouterr().out


def test_measured_effort_within_its_limit_keeps_the_verdict(panda, tmp_path):
    path = write_log(tmp_path / "calm.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=3.0, speed=0.3,
                     center=centre(panda), effort=lambda names, t: np.ones((len(t), len(names))))
    (row,) = cd.check_many(panda, [path])
    assert row.verdict == "within limits" and row.violations == 0
    assert row.measured_ratio == pytest.approx(max(1.0 / e for e in panda.limits["effort"]))
    csv_log = tmp_path / "planned.csv"
    cd.check_trajectory(panda, np.linspace(0, 1, 101), np.tile(list(centre(panda).values()), (101, 1))).to_csv(csv_log)
    assert cd.check_many(panda, [csv_log])[0].measured_ratio is None  # no measured efforts
