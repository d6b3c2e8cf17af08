"""Trajectory checks against every limit: position intervals against analytic crossings,
continuous joints unbounded, missing limits unchecked (never "within limits"), user
acceleration/jerk limits, margins, private limit copies, and the CLI options."""

from __future__ import annotations

import json

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.torque_check.limits import resolve_limits

SLIDER_ARM = """<robot name="mixed">
  <link name="base"/>
  <link name="a"><inertial><mass value="1.0"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1.0"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="spin" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit velocity="10" effort="50"/></joint>
  <joint name="elbow" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <origin xyz="0.2 0 0"/><limit lower="-1" upper="1" velocity="10"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def _inside(robot, T):
    lo, hi = robot.limits["lower"], robot.limits["upper"]
    return np.tile(0.5 * (lo + hi), (T, 1))


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_motion_outside_position_limits_names_joint_and_interval(panda, side):
    t = np.linspace(0.0, 1.0, 1001)
    q = _inside(panda, len(t))
    k = 3
    bound = panda.limits[side][k]
    sign = 1.0 if side == "upper" else -1.0
    q[:, k] = bound + sign * (0.5 * np.sin(np.pi * t) - 0.25)  # beyond the bound where sin(pi t) > 1/2
    rep = cd.check_trajectory(panda, t, q)
    pos = [v for v in rep.violations if v.quantity == "position"]
    assert len(pos) == 1 and pos[0].joint == panda.joint_names[k] and not rep.ok
    v = pos[0]
    assert abs(v.start - 1 / 6) < 1e-4 and abs(v.end - 5 / 6) < 1e-4
    assert v.limit == pytest.approx(bound) and v.excess == pytest.approx(0.25, abs=1e-6)
    assert abs(v.peak - (bound + sign * 0.25)) < 1e-6
    line = next(ln for ln in rep.summary().splitlines() if "position" in ln)
    assert panda.joint_names[k] in line and side in line and "0.1667 s" in line and "0.8333 s" in line
    assert rep.joints[k].status["position"] == "exceeded"


def test_ten_radians_outside_every_position_limit_is_not_within_limits(panda):
    t = np.linspace(0.0, 1.0, 101)
    q = np.tile(panda.limits["upper"] + 10.0, (len(t), 1))
    rep = cd.check_trajectory(panda, t, q)
    assert not rep.ok
    assert {v.joint for v in rep.violations if v.quantity == "position"} == set(panda.joint_names)


def test_continuous_joint_is_unbounded_and_missing_limits_unchecked():
    robot = cd.from_urdf(SLIDER_ARM)
    t = np.linspace(0.0, 2.0, 201)
    q = np.column_stack([2.4 * t**2, 0.5 * np.sin(t)])  # 9.6 rad on the continuous joint
    rep = cd.check_trajectory(robot, t, q)
    assert rep.ok and not rep.complete
    assert rep.unbounded == ("spin",)
    assert rep.joints[0].status["position"] == "unbounded" and rep.joints[1].status["effort"] == "unchecked"
    assert ("elbow", "effort") in rep.unchecked and ("spin", "position") not in rep.unchecked
    assert "within limits" not in rep.summary()
    assert "UNCHECKED" in rep.summary() and "effort of elbow" in rep.summary()
    data = json.loads(rep.to_json())
    assert data["complete"] is False and {"joint": "elbow", "quantity": "effort"} in data["unchecked"]


def test_demo_on_a_robot_without_effort_limits_never_says_within_limits(capsys):
    assert main(["demo", "puma560", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "unchecked" in out.lower() and "within limits" not in out


def test_acceleration_and_jerk_limits_of_a_sine_match_the_analytic_intervals(panda):
    A, w = 0.2, 4.0
    t = np.linspace(0.0, 2.0, 4001)
    q = _inside(panda, len(t))
    q[:, 0] += A * np.sin(w * t)
    name = panda.joint_names[0]
    rep = cd.check_trajectory(panda, t, q, limits={"acceleration": {name: 0.5 * A * w**2}, "jerk": 0.5 * A * w**3})
    acc = [v for v in rep.violations if v.quantity == "acceleration"]
    jerk = [v for v in rep.violations if v.quantity == "jerk"]
    # |sin(w t)| > 1/2 and |cos(w t)| > 1/2, from the analytic qdd = -A w^2 sin, qddd = -A w^3 cos
    s = np.sin(w * t)
    c = np.cos(w * t)
    for found, x in ((acc, s), (jerk, c)):
        over = np.abs(x) > 0.5
        starts = t[1:][over[1:] & ~over[:-1]]
        assert len(found) == len(starts) + over[0] and all(v.joint == name for v in found)
        for v, a in zip(found[int(over[0]):], starts):
            assert abs(v.start - a) < 1e-3
    assert rep.joints[0].status["jerk"] == "exceeded" and rep.joints[1].status["jerk"] == "ok"
    assert rep.joints[1].status["acceleration"] == "unchecked"
    assert (panda.joint_names[1], "acceleration") in rep.unchecked


def test_margin_tightens_every_limit(panda):
    lim, tight = resolve_limits(panda), resolve_limits(panda, margin=0.9)
    assert np.allclose(tight.velocity, 0.9 * lim.velocity) and np.allclose(tight.effort, 0.9 * lim.effort)
    assert np.allclose(tight.upper - tight.lower, 0.9 * (lim.upper - lim.lower))
    assert np.allclose(tight.upper + tight.lower, lim.upper + lim.lower)
    t = np.linspace(0.0, 1.0, 1001)
    q = _inside(panda, len(t))
    w = 2 * np.pi
    q[:, 0] += 0.95 * lim.velocity[0] / w * np.sin(w * t)  # peak velocity 95 % of the limit
    assert not [v for v in cd.check_trajectory(panda, t, q).violations if v.quantity == "velocity"]
    tight_rep = cd.check_trajectory(panda, t, q, margin=0.9)
    assert [v.joint for v in tight_rep.violations if v.quantity == "velocity"] == [panda.joint_names[0]] * 3
    with pytest.raises(ValueError, match="margin"):
        cd.check_trajectory(panda, t, q, margin=1.5)


def test_checks_use_their_own_copy_of_the_limits(panda):
    before = {k: v.copy() for k, v in panda.limits.items()}
    lim = resolve_limits(panda, {"velocity": 0.01})
    lim.velocity[:] = 123.0
    t = np.linspace(0.0, 1.0, 101)
    rep = cd.check_trajectory(panda, t, _inside(panda, len(t)), limits={"effort": 1e-3})
    assert all(np.array_equal(panda.limits[k], before[k]) for k in before)
    assert np.shares_memory(rep.limits.velocity, panda.limits["velocity"]) is False
    assert np.all(rep.limits.effort == 1e-3)


@pytest.mark.parametrize("limits, match", [
    ({"accel": 1.0}, "acceleration"), ({"jerk": {"elbow": 1.0}}, "unknown joint"),
    ({"velocity": -1.0}, "positive"), ({"lower": 2.0, "upper": 1.0}, "lower"), ({"effort": [1.0, 2.0]}, "shape"),
])
def test_bad_limits_are_refused(panda, limits, match):
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(ValueError, match=match):
        cd.check_trajectory(panda, t, _inside(panda, len(t)), limits=limits)


def _write(path, t, q, names):
    np.savetxt(path, np.column_stack([t, q]), delimiter=",", header=",".join(["time", *names]), comments="")
    return path


def test_cli_limits_file_margin_and_violation_outputs(panda, tmp_path, capsys):
    t = np.linspace(0.0, 1.0, 1001)
    q = _inside(panda, len(t))
    lim = panda.limits["velocity"][0]
    q[:, 0] += 0.95 * lim / (2 * np.pi) * np.sin(2 * np.pi * t)
    log = _write(tmp_path / "log.csv", t, q, panda.joint_names)
    assert main(["torques", "panda", str(log)]) == 0
    assert "within limits" in capsys.readouterr().out
    assert main(["torques", "panda", str(log), "--margin", "0.9", "--json", str(tmp_path / "r.json"),
                 "--violations", str(tmp_path / "v.csv"), "--plot", str(tmp_path / "p.png")]) == 1
    out = capsys.readouterr().out
    assert f"{panda.joint_names[0]}: velocity" in out and "margin 0.9" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["margin"] == 0.9 and data["violations"][0]["quantity"] == "velocity"
    rows = (tmp_path / "v.csv").read_text().splitlines()
    assert rows[0] == "joint,quantity,start,end,peak,limit,excess" and len(rows) == 1 + len(data["violations"])
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "lim.toml").write_text(f'[acceleration]\n{panda.joint_names[0]} = 1.0\n')
    assert main(["torques", "panda", str(log), "--limits", str(tmp_path / "lim.toml")]) == 1
    assert f"{panda.joint_names[0]}: acceleration" in capsys.readouterr().out
    (tmp_path / "bad.toml").write_text("[jerk]\nnot_a_joint = 1.0\n")
    assert main(["torques", "panda", str(log), "--limits", str(tmp_path / "bad.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.toml" in err[0] and "not_a_joint" in err[0]
    assert main(["torques", "panda", str(log), "--margin", "0"]) == 2
