"""``composedyn torques ROBOT LOG...`` on ROS bags written by rosbags: verdicts against the
check of the analytic motion, measured - predicted torque, --topic, bad input (exit 2, one
line), and the fleet run on a local Dask cluster (--workers) with --json/--csv/--html."""

from __future__ import annotations

import base64
import csv
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import composedyn as cd
from composedyn.logs.check import check_log
from composedyn.testing.log_bags import acceleration, motion, write_log
from test_cli_torques import error_lines, run

OFFSET = np.linspace(0.5, 2.0, 7)  # measured - predicted torque written into the bags, N m


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def center(robot):
    lim = robot.limits
    return dict(zip(robot.joint_names, (lim["lower"] + lim["upper"]) / 2))


def oracle_ok(robot, speed, duration=2.0) -> bool:
    """The verdict of check_trajectory on the analytic motion (exact derivatives, fine grid)."""
    t = np.linspace(0, duration, 4001)
    q, qd, _ = motion(robot.joint_names, t, speed, center(robot))
    return cd.check_trajectory(robot, t, q, qd, acceleration(robot.joint_names, t, speed)).ok


@pytest.fixture(scope="module")
def bags(panda, tmp_path_factory):
    d = tmp_path_factory.mktemp("bags")
    names = list(panda.joint_names)
    out = {}
    for speed in (0.3, 1.5):
        def effort(pub, t, speed=speed):
            q, qd, _ = motion(names, t, speed, center(panda))
            tau = panda.inverse_dynamics(q, qd, acceleration(names, t, speed)) + OFFSET
            return tau[:, [names.index(j) for j in pub]]

        pubs = [(names[::-1], 500.0, 1e-4)]
        split = [(["joint4", "joint1", "joint7", "joint2"], 500.0, 1e-4), (["joint6", "joint3", "joint5"], 400.0, 1e-4)]
        for kind, publishers in (("ros1", pubs), ("sqlite3", split), ("mcap_file", pubs)):
            name = f"{kind}_{speed}" + (".bag" if kind == "ros1" else "")
            out[(kind, speed)] = write_log(d / name, kind, publishers, duration=2.0, effort=effort, speed=speed,
                                           center=center(panda))
    return out


def test_oracle_has_both_verdicts(panda):
    assert oracle_ok(panda, 0.3) and not oracle_ok(panda, 1.5)


@pytest.mark.parametrize("kind", ["ros1", "sqlite3", "mcap_file"])
@pytest.mark.parametrize("speed", [0.3, 1.5])
def test_verdict_and_measured_minus_predicted(panda, bags, tmp_path, kind, speed):
    out = tmp_path / "r.json"
    # the bags hold the exact motion: interpolated (--smoothing 0) it reproduces the offsets to 1e-4
    r = run("torques", "panda", bags[(kind, speed)], "--json", out, "--smoothing", "0")
    assert r.returncode == (0 if oracle_ok(panda, speed) else 1), r.stderr
    assert "measured - predicted torque RMS" in r.stdout
    rep = json.loads(out.read_text())
    rms = np.array([rep["effort_residual"][j]["rms"] for j in panda.joint_names])
    np.testing.assert_allclose(rms, OFFSET, atol=1e-4)
    assert rep["findings"] == [] and rep["derivatives"] == "derivatives: interpolating quintic spline (as given)"
    # by default a bag is a measured log: the smoothing spline, and the same verdict on this motion
    r = run("torques", "panda", bags[(kind, speed)], "--json", out)
    assert r.returncode == (0 if oracle_ok(panda, speed) else 1), r.stderr
    assert re.search(r"derivatives: (smoothing spline, lambda = \S+ matched to the position noise \(\S+ rad or m\)"
                     r"|interpolating quintic spline) \(default for a measured log\)", r.stdout), r.stdout


def test_topic_option(panda, tmp_path):
    names = list(panda.joint_names)
    path = write_log(tmp_path / "arm.bag", "ros1", [(names, 200.0, 0.0)], duration=1.0, topic="/arm/joint_states",
                     speed=0.3, center=center(panda))
    assert run("torques", "panda", path, "--topic", "/arm/joint_states").returncode == 0
    r = run("torques", "panda", path)
    assert r.returncode == 2 and error_lines(r.stderr) == [
        f"composedyn: error: {path}: no topic '/joint_states' (topics: /arm/joint_states)"]


def test_bad_logs_exit_2_with_one_line(panda, tmp_path):
    names = list(panda.joint_names)
    good = write_log(tmp_path / "g", "mcap", [(names[:6], 100.0, 0.0)], duration=0.5,
                     extra_topics=[("/chatter", "std_msgs/msg/String")], center=center(panda))
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"\x00garbage" * 64)
    cases = [
        ((junk,), f"{junk}: not a readable ROS bag"),
        ((good, "--topic", "/nope"), "no topic '/nope' (topics: /chatter, /joint_states)"),
        ((good, "--topic", "/chatter"), "topic /chatter is std_msgs/msg/String, expected sensor_msgs/msg/JointState"),
        ((good,), "joint 'joint7' is in no message"),
    ]
    for args, message in cases:
        r = run("torques", "panda", *args)
        lines = error_lines(r.stderr)
        assert r.returncode == 2 and len(lines) == 1 and message in lines[0], (args, r.stderr)
        assert r.stdout == ""


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.images, self.external, self._row, self._cell = [], [], [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self._row = []
        elif tag == "td":
            self._cell = ""
        elif tag == "img":
            self.images.append(a["src"])
        for key in ("src", "href"):
            if key in a and not a[key].startswith("data:"):
                self.external.append(a[key])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag == "td":
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows.append(self._row)


def test_fleet_on_local_workers_equals_serial_with_json_csv_html(panda, bags, tmp_path):
    paths = [str(bags[k]) for k in sorted(bags)]
    out = {s: tmp_path / f"fleet.{s}" for s in ("json", "csv", "html")}
    r = run("torques", "panda", *paths, "--workers", "2", "--json", out["json"], "--csv", out["csv"],
            "--html", out["html"])
    serial = cd.check_many(panda, paths)
    assert not error_lines(r.stderr), r.stderr  # no cluster chatter
    assert r.returncode == (0 if all(x.verdict == "ok" for x in serial) else 1), r.stderr
    assert [x["verdict"] for x in json.loads(out["json"].read_text())["logs"]] == [x.verdict for x in serial]
    assert json.loads(out["json"].read_text())["logs"] == [x.to_dict() for x in serial]
    with open(out["csv"], newline="") as f:
        table = list(csv.DictReader(f))
    assert [row["path"] for row in table] == paths
    page = _Page()
    page.feed(out["html"].read_text())
    failing = [x for x in serial if x.verdict == "fail"]
    assert len(page.rows) == len(paths) and len(page.images) == len(failing) > 0
    assert page.rows[0][1] == "fail" and page.rows[-1][1] == "ok"  # worst first
    ratios = [max(float(row[3]), float(row[4])) for row in page.rows if row[1] == "fail"]
    assert ratios == sorted(ratios, reverse=True)
    assert all(base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n" for src in page.images)
    assert page.external == []  # self-contained: no network


def test_simulate_tracks_a_bag(panda, bags):
    r = run("simulate", "panda", bags[("mcap_file", 0.3)], "--samples", "51")
    assert r.returncode in (0, 1) and not error_lines(r.stderr), r.stderr
    assert "tracking" in r.stdout.lower() or "limit" in r.stdout.lower()


def test_a_gap_is_a_damaged_verdict_with_exit_status_3(panda, tmp_path):
    names = list(panda.joint_names)
    path = write_log(tmp_path / "gap.bag", "ros1", [(names, 100.0, 0.0)], duration=2.0, speed=0.3,
                     center=center(panda), edit=lambda msgs: msgs[:50] + msgs[90:])
    r = run("torques", "panda", path)
    assert r.returncode == 3 and not error_lines(r.stderr), r.stderr
    message = (f"{path}:/joint_states: gap of 0.41 s after message 49 (t = 0.49 s; median step 0.01 s; "
               "1 gap(s) longer than 10 steps)")
    assert r.stdout.splitlines()[0] == f"damaged: {message}"
    assert r.stdout.splitlines()[1].startswith("  the data as read: within limits")
    report = check_log(panda, path)
    assert not report.ok and report.verdict() == f"damaged: {message}"
    assert report.to_dict()["findings"] == [{"kind": "damaged", "message": message}]


def test_scheduler_option(panda, bags, tmp_path):
    from distributed import LocalCluster

    paths = [str(bags[("mcap_file", 0.3)]), str(bags[("ros1", 1.5)])]
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None,
                      protocol="tcp") as cluster:
        r = run("torques", "panda", *paths, "--scheduler", cluster.scheduler_address, "--json", tmp_path / "f.json")
    assert r.returncode == 1 and not error_lines(r.stderr), r.stderr
    assert json.loads((tmp_path / "f.json").read_text())["logs"] == [x.to_dict() for x in cd.check_many(panda, paths)]
    for address in ("tcp://127.0.0.1:9", "inproc://nowhere"):
        r = run("torques", "panda", *paths, "--scheduler", address)
        lines = error_lines(r.stderr)
        assert r.returncode == 2 and len(lines) == 1 and f"--scheduler {address}: cannot connect" in lines[0], r.stderr
