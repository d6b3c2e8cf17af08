"""check_trajectory: differentiation, limit intervals against analytic/fine-grid
references, time scaling in and out of the effort limits, report outputs."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import composedyn as cd
from composedyn.sampled import differentiate
from composedyn.simulation.reference_motion import MinimumJerk, demo_motion
from composedyn.torque_check.report import exceedances


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def test_differentiation_matches_analytic_derivatives(panda):
    ref = demo_motion(panda, 1.0, fraction=0.5)
    t = np.linspace(0.0, 1.0, 501)
    q, qd, qdd = ref(t)
    qd_fit, qdd_fit = differentiate(t, q)
    assert np.abs(qd_fit - qd).max() < 1e-6 * np.abs(qd).max()
    assert np.abs(qdd_fit - qdd).max() < 1e-4 * np.abs(qdd).max()


def test_gcv_smoothing_beats_interpolation_on_noisy_positions():
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 2.0, 401)
    q = np.sin(3 * t)[:, None]
    noisy = q + 1e-4 * rng.normal(size=q.shape)
    err = {s: np.abs(differentiate(t, noisy, s)[0][20:-20, 0] - 3 * np.cos(3 * t[20:-20])).max() for s in (0.0, "gcv")}
    assert err["gcv"] < 0.2 * err[0.0]


def test_exceedances_of_a_sine_match_the_analytic_crossings():
    t = np.linspace(0.0, 2 * np.pi, 2001)
    found = exceedances(t, np.sin(t), 0.5, "j", "effort")
    expected = [(np.pi / 6, 5 * np.pi / 6, 1.0), (7 * np.pi / 6, 11 * np.pi / 6, -1.0)]
    assert len(found) == 2
    for v, (a, b, peak) in zip(found, expected):
        assert abs(v.start - a) < 1e-5 and abs(v.end - b) < 1e-5
        assert abs(v.peak - peak) < 1e-5 and abs(v.excess - 0.5) < 1e-5


def _fine_reference(robot, motion, samples=20001):
    """Effort violations from the analytic motion on a fine grid: joint -> (start, end)."""
    t = np.linspace(0.0, motion.duration, samples)
    tau = robot.inverse_dynamics(*motion(t))
    eff = robot.limits["effort"]
    out = {}
    for i, name in enumerate(robot.joint_names):
        over = t[np.abs(tau[:, i]) > eff[i]]
        if over.size:
            out[name] = (over[0], over[-1])
    return out, tau


def test_time_scaled_trajectory_exceeds_effort_at_the_right_joint_and_interval(panda):
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.0])
    q1 = q0 + np.array([0.6, 0.8, -0.4, 0.7, 0.3, -0.4, 0.5])
    duration = 2.0
    while True:  # speed up until the planned motion needs more torque than some joint has
        motion = MinimumJerk(q0, q1, duration)
        t = np.linspace(0.0, duration, 1001)
        report = cd.check_trajectory(panda, t, motion(t)[0])
        if any(v.quantity == "effort" for v in report.violations):
            break
        duration *= 0.8
        assert duration > 0.05, "never exceeded an effort limit"
    fine, tau = _fine_reference(panda, motion)
    effort = [v for v in report.violations if v.quantity == "effort"]
    assert fine and {v.joint for v in effort} == set(fine)
    dt = duration / 1000
    for v in effort:
        start, end = fine[v.joint]
        i = panda.joint_names.index(v.joint)
        assert start - dt <= v.start <= start + dt and end - dt <= v.end <= end + dt
        assert abs(abs(v.peak) - np.abs(tau[:, i]).max()) < 1e-3 * np.abs(tau[:, i]).max()
        assert v.excess == pytest.approx(abs(v.peak) - panda.limits["effort"][i])
    assert not report.ok
    slow = MinimumJerk(q0, q1, 3 * duration)
    t = np.linspace(0.0, slow.duration, 1001)
    slow_report = cd.check_trajectory(panda, t, slow(t)[0])
    assert not [v for v in slow_report.violations if v.quantity == "effort"]
    assert all(j.torque_margin > 0 for j in slow_report.joints)


def test_velocity_limit_violation_and_given_derivatives(panda):
    motion = demo_motion(panda, 0.3, fraction=0.5)
    t = np.linspace(0.0, 0.3, 301)
    q, qd, qdd = motion(t)
    given = cd.check_trajectory(panda, t, q, qd, qdd)
    derived = cd.check_trajectory(panda, t, q)
    assert np.abs(given.tau - derived.tau).max() < 1e-3 * np.abs(given.tau).max()
    vel = {v.joint for v in given.violations if v.quantity == "velocity"}
    expected = {n for n, peak, lim in zip(panda.joint_names, np.abs(qd).max(0), panda.limits["velocity"]) if peak > lim}
    assert vel == expected and vel


def test_report_outputs(panda, tmp_path):
    motion = demo_motion(panda, 0.25, fraction=0.5)
    t = np.linspace(0.0, 0.25, 101)
    rep = cd.check_trajectory(panda, t, motion(t)[0], source="fast.csv")
    data = json.loads(rep.to_json(tmp_path / "r.json"))
    assert data == json.loads((tmp_path / "r.json").read_text())
    assert data["ok"] is False and len(data["violations"]) == len(rep.violations)
    assert [j["joint"] for j in data["joints"]] == list(panda.joint_names)
    rep.to_csv(tmp_path / "x.csv")
    table = np.loadtxt(tmp_path / "x.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "x.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "time" and header[4] == "joint1_tau"
    assert np.allclose(table[:, 4], rep.tau[:, 0], rtol=1e-8, atol=1e-8)
    rep.plot(tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_without_matplotlib_is_a_clear_error(panda, tmp_path, monkeypatch):
    t = np.linspace(0.0, 1.0, 11)
    rep = cd.check_trajectory(panda, t, demo_motion(panda, 1.0)(t)[0])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="matplotlib"):
        rep.plot(tmp_path / "r.png")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("t, q, match", [
    (np.linspace(0, 1, 10), np.zeros((9, 7)), "shape"),
    (np.r_[0.0, 0.2, 0.1, 0.3, 0.4, 0.5, 0.6], np.zeros((7, 7)), "decreasing"),
    (np.r_[0.0, 0.1, 0.1, 0.3, 0.4, 0.5, 0.6], np.zeros((7, 7)), "duplicate"),
    (np.linspace(0, 1, 4), np.zeros((4, 7)), "at least"),
    (np.linspace(0, 1, 8), np.full((8, 7), np.nan), "NaN"),
])
def test_bad_arrays_raise_value_errors(panda, t, q, match):
    with pytest.raises(ValueError, match=match):
        cd.check_trajectory(panda, t, q)


def test_given_velocities_are_differentiated_for_accelerations(panda):
    motion = demo_motion(panda, 1.0, fraction=0.5)
    t = np.linspace(0.0, 1.0, 201)
    q, qd, qdd = motion(t)
    rep = cd.check_trajectory(panda, t, q, qd=qd)
    assert np.array_equal(rep.qd, qd)
    assert np.abs(rep.qdd - qdd).max() < 1e-4 * np.abs(qdd).max()
    with pytest.raises(ValueError, match="smoothing"):
        cd.check_trajectory(panda, t, q, smoothing="lots")
    with pytest.raises(ValueError, match="smoothing"):
        cd.check_trajectory(panda, t, q, smoothing=-1.0)


def test_json_ok_is_false_when_a_limit_is_unchecked():
    robot = cd.load("puma560")  # its description gives no effort limit for some joints
    t = np.linspace(0.0, 1.0, 51)
    report = cd.check_trajectory(robot, t, np.zeros((51, robot.dof)))
    assert report.ok and not report.complete and report.unchecked  # nothing exceeded, something not checked
    data = report.to_dict()
    assert data["ok"] is False and data["complete"] is False and data["verdict"] != "within limits"
