"""Torque checks of floating-base motions: check_trajectory and ``composedyn torques`` on
legged trajectories (base pose, joints, stance flags).

The motion is Solo12 swaying on planted feet (composedyn.testing.legged_motion:
closed-form base motion, joints by Newton's method, exact v and a from the
stance constraints).  References: the exact rates (Lie-group differentiation),
Pinocchio's least-norm contact solve on the exact samples, per-sample contact
inverse dynamics, and the CLI against the API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
from composedyn.floating.base_motion import floating_rates
from composedyn.floating.legged import LeggedReport
from composedyn.testing.legged_motion import planted_feet_motion, write_csv
from pin_oracle import erd_robots_dir
from test_contact_dynamics import PinFloating, _pin_least_norm

SCRIPT = Path(sys.executable).parent / "composedyn"
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
URDF = str(erd_robots_dir() / "solo_description/robots/solo12.urdf")
INNER = slice(10, -10)  # samples away from the spline's ends


def run(*args):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def solo():
    return cd.load(URDF, floating=True)


@pytest.fixture(scope="module")
def sway(solo):
    t = np.arange(0.0, 1.0, 0.005)
    q, v, a = planted_feet_motion(solo, FEET, t)
    return t, q, v, a


def _all_stance(t):
    return {f: np.ones(len(t), dtype=int) for f in FEET}


def test_lie_group_rates_match_the_exact_motion(sway):
    t, q, v, a = sway
    vd, ad, _ = floating_rates(t, q)
    assert np.abs(vd - v)[INNER].max() < 1e-8 * np.abs(v).max()
    assert np.abs(ad - a)[INNER].max() < 1e-6 * np.abs(a).max()
    flipped = q.copy()
    flipped[::3, 3:7] *= -1.0  # the same orientations, other quaternion signs
    assert np.abs(floating_rates(t, flipped)[0] - vd).max() < 1e-12
    _, a_from_v, _ = floating_rates(t, q, v)
    assert np.abs(a_from_v - a)[INNER].max() < 1e-8 * np.abs(a).max()


def test_standing_sway_api_matches_per_sample_contact_dynamics_and_pinocchio(solo, sway):
    t, q, v, a = sway
    report = cd.check_trajectory(solo, t, q, contacts=_all_stance(t), friction_coefficient=0.8)
    assert isinstance(report, LeggedReport) and report.ok and not report.contact_violations
    assert report.tau.shape == (len(t), 12) and set(report.forces) == set(FEET)
    exact = cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), friction_coefficient=0.8)
    for k in (0, 57, 123, 199):
        one = solo.contact_inverse_dynamics(q[k], v[k], a[k], FEET, friction_coefficient=0.8)
        assert np.abs(exact.tau[k] - one.tau).max() < 1e-9 * max(1.0, np.abs(one.tau).max())
    scale = np.abs(exact.tau).max()
    assert np.abs(report.tau - exact.tau)[INNER].max() < 1e-5 * scale  # differentiated vs exact rates
    # without cones: Pinocchio's least-norm solve on the exact samples
    free = cd.check_trajectory(solo, t, q, contacts=_all_stance(t), friction=False)
    pp = PinFloating(solo, URDF)
    for k in (20, 100, 170):
        tau_pin, f_pin = _pin_least_norm(pp, q[k], v[k], a[k], dict.fromkeys(FEET, "point"))
        assert np.abs(free.tau[k] - tau_pin).max() < 1e-5 * scale
        weight = solo.mass * 9.81
        assert np.abs(np.concatenate([free.forces[f][k] for f in FEET]) - f_pin).max() < 1e-5 * weight
    assert not free.complete and "friction cones UNCHECKED" in free.summary()
    assert free.stance_speed.max() < 1e-6 and free.stance_acceleration[INNER].max() < 1e-3  # planted feet
    assert exact.stance_speed.max() < 1e-12 and exact.stance_acceleration.max() < 1e-10
    knees = cd.check_trajectory(solo, t, q, v, a, contacts={"FL_LOWER_LEG": np.ones(len(t))})
    assert knees.stance_speed.max() > 0.01 and "stance frames move up to" in knees.summary()


def test_flight_phase_and_friction_cones_are_reported_as_intervals(solo, sway):
    t, q, v, a = sway
    stance = _all_stance(t)
    off = (t >= 0.4) & (t < 0.5)
    for f in FEET:
        stance[f][off] = 0  # a "flight" in which the base does not fall freely
    report = cd.check_trajectory(solo, t, q, v, a, contacts=stance, friction_coefficient=0.8)
    assert not report.ok and report.contact_violations
    (c,) = report.contact_violations
    assert c.kind == "infeasible" and c.samples == off.sum() and c.stance == ()
    assert c.start == t[off][0] and c.end == t[off][-1]
    assert abs(c.residual - np.max(report.contact_residual[off])) == 0
    assert f"{off.sum()} infeasible sample(s)" in report.verdict()
    slippery = cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), friction_coefficient=0.05)
    bad = slippery.contact_status != "ok"
    assert bad.any() and set(slippery.contact_status[bad]) == {"outside friction cones"}
    assert sum(c.samples for c in slippery.contact_violations) == bad.sum()
    for k in np.flatnonzero(~bad):  # the samples reported ok have forces inside the cones
        for f in FEET:
            fx, fy, fz = slippery.forces[f][k]
            assert np.hypot(fx, fy) <= 0.05 * fz + 1e-7
    worst = int(np.argmax(slippery.contact_residual))
    alone = solo.contact_inverse_dynamics(q[worst], v[worst], a[worst], FEET, friction_coefficient=0.05)
    assert not alone.feasible and abs(alone.residual - slippery.contact_residual[worst]) < 1e-6


def test_surface_contacts_carry_moments(solo, sway):
    t, q, v, a = sway
    report = cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), surface=("FL_FOOT",))
    assert report.kinds == {"FL_FOOT": "surface", "FR_FOOT": "point", "HL_FOOT": "point", "HR_FOOT": "point"}
    assert report.forces["FL_FOOT"].shape == (len(t), 6) and report.forces["HR_FOOT"].shape == (len(t), 3)
    k = 77
    one = solo.contact_inverse_dynamics(q[k], v[k], a[k], report.kinds)
    assert np.abs(report.forces["FL_FOOT"][k] - one.forces["FL_FOOT"]).max() < 1e-9 * solo.mass * 9.81
    small = cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), surface=("FL_FOOT",), foot=(0.01, 0.01),
                                friction_coefficient=0.8)
    for k in np.flatnonzero(small.contact_status == "ok"):
        R = solo.frame_pose(q[k], "FL_FOOT")[:3, :3]
        fl, ml = R.T @ small.forces["FL_FOOT"][k, :3], R.T @ small.forces["FL_FOOT"][k, 3:]
        assert abs(ml[0]) <= 0.01 * fl[2] + 1e-7 and abs(ml[1]) <= 0.01 * fl[2] + 1e-7
    with pytest.raises(ValueError, match="surface contact 'FL_FOT'"):
        cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), surface=("FL_FOT",))


def test_tight_effort_limits_are_violations(solo, sway):
    t, q, v, a = sway
    report = cd.check_trajectory(solo, t, q, v, a, contacts=_all_stance(t), limits={"effort": 0.5})
    over = np.abs(report.tau).max(0) > 0.5
    assert over.any() and not report.ok
    assert {iv.joint for iv in report.violations if iv.quantity == "effort"} == {
        j for j, o in zip(solo.joint_names, over) if o}


@pytest.fixture(scope="module")
def csv_file(solo, sway, tmp_path_factory):
    t, q, _, _ = sway
    path = tmp_path_factory.mktemp("legged") / "sway.csv"
    write_csv(path, solo, t, q, _all_stance(t))
    return path


def test_cli_checks_a_legged_csv_like_the_api(solo, sway, csv_file, tmp_path):
    t, q, _, _ = sway
    out = tmp_path / "r.json"
    done = run("torques", URDF, csv_file, "--floating", "--mu", "0.8", "--json", out, "--csv", tmp_path / "s.csv")
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    api = cd.check_trajectory(solo, t, q, contacts=_all_stance(t), friction_coefficient=0.8).to_dict()
    assert data["ok"] and data["friction_coefficient"] == 0.8 and data["infeasible_samples"] == 0
    for jc, ja in zip(data["joints"], api["joints"]):
        assert abs(jc["peak_torque"] - ja["peak_torque"]) < 1e-9 * max(1.0, abs(ja["peak_torque"]))
    header = (tmp_path / "s.csv").read_text().splitlines()[0].split(",")
    assert "FL_FOOT_fz" in header and "contact_status" in header
    limits = tmp_path / "limits.toml"
    limits.write_text("effort = 0.5\n")
    tight = run("torques", URDF, csv_file, "--floating", "--limits", limits, "--json", out)
    assert tight.returncode == 1 and "effort" in tight.stdout and "friction cones UNCHECKED" in tight.stdout
    assert json.loads(out.read_text())["violations"]


def test_cli_loads_a_floating_root_joint_without_the_flag(tmp_path, csv_file):
    text = Path(URDF).read_text()
    head, tail = text.split("<link", 1)
    urdf = tmp_path / "solo_floating.urdf"
    urdf.write_text(head + '<link name="world"/>\n<joint name="root_joint" type="floating">'
                    '<parent link="world"/><child link="base_link"/></joint>\n<link' + tail)
    done = run("torques", urdf, csv_file)
    assert done.returncode == 0, done.stderr
    assert "friction cones UNCHECKED" in done.stdout


def _one_line_exit_2(done, *words):
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_cli_bad_input_is_one_line_exit_2(csv_file, tmp_path):
    text = csv_file.read_text().splitlines()
    cols = text[0].split(",")

    def drop(col, name):
        k = cols.index(col)
        rows = [",".join(c for i, c in enumerate(r.split(",")) if i != k) for r in text]
        (tmp_path / name).write_text("\n".join(rows) + "\n")
        return tmp_path / name

    _one_line_exit_2(run("torques", URDF, drop("base_qw", "noqw.csv"), "--floating"), "missing column(s) base_qw")
    (tmp_path / "unknown.csv").write_text("\n".join([text[0].replace("HR_FOOT_contact", "HR_FOT_contact")]
                                                    + text[1:]) + "\n")
    _one_line_exit_2(run("torques", URDF, tmp_path / "unknown.csv", "--floating"), "HR_FOT_contact", "HR_FOOT")
    _one_line_exit_2(run("torques", URDF, csv_file, "--mu", "0.5"), "--floating")
    _one_line_exit_2(run("torques", URDF, csv_file, "--floating", "--foot", "0.1", "0.05"), "--mu and --surface")


def test_api_bad_input(solo, sway):
    t, q, _, _ = sway
    with pytest.raises(ValueError, match="stance flags"):
        cd.check_trajectory(solo, t, q, contacts=None)
    with pytest.raises(ValueError, match="unknown frame 'FL_FOT'"):
        cd.check_trajectory(solo, t, q, contacts={"FL_FOT": np.ones(len(t))})
    with pytest.raises(ValueError, match=r"q has shape \(200, 18\)"):
        cd.check_trajectory(solo, t, q[:, 1:], contacts=_all_stance(t))
    with pytest.raises(ValueError, match="0/1"):
        cd.check_trajectory(solo, t, q, contacts={"FL_FOOT": np.full(len(t), 2)})
    with pytest.raises(ValueError, match="floating-base robots"):
        cd.check_trajectory(cd.load("panda"), t, np.zeros((len(t), 7)), contacts=_all_stance(t))
