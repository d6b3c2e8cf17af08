"""``composedyn torques ROBOT LOG...`` on ROS bags written by rosbags: verdicts against the
check of the analytic motion, measured - predicted torque, --topic, bad input (exit 2, one
line), and the fleet run on a local Dask cluster (--workers) with --json/--csv/--html."""

from __future__ import annotations

import base64
import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

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
        self.text, self._tag = {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._tag = tag
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
        elif self._tag in ("title", "h1"):
            self.text[self._tag] = self.text.get(self._tag, "") + data

    def handle_endtag(self, tag):
        self._tag = None
        if tag == "td":
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows.append(self._row)


def _outputs(d, paths, *extra):
    """Run ``torques panda PATHS --json --summary --csv`` (+ ``extra``) writing into folder ``d``."""
    d.mkdir()
    r = run("torques", "panda", *paths, "--json", d / "f.json", "--summary", d / "f.summary.csv",
            "--csv", d / "s.csv", *extra)
    return r, {p.name: p.read_bytes() for p in d.iterdir()}


def test_fleet_on_local_workers_equals_serial_with_json_csv_html(panda, bags, tmp_path):
    """Serial and Dask runs write the same files (byte for byte); a bad log is one unreadable
    row, the others are reported; no Dask chatter on stderr; the HTML page has its title."""
    bad = tmp_path / "bad.csv"
    bad.write_text("time,joint1\n0,0\n1,oops\n")
    paths = [str(bags[k]) for k in sorted(bags)] + [str(bad)]
    html = tmp_path / "fleet.html"
    serial, files = _outputs(tmp_path / "serial", paths)
    dask, dask_files = _outputs(tmp_path / "dask", paths, "--workers", "2", "--html", html)
    assert dask_files == files  # JSON, summary CSV and per-sample tables: identical
    rows = cd.check_many(panda, paths, errors="report", keep_reports=True)
    assert serial.returncode == dask.returncode == 2, dask.stderr  # an unreadable log, after writing the reports
    for r in (serial, dask):
        assert error_lines(r.stderr) == [f"composedyn: error: {rows[-1].error}"], r.stderr
        assert "Traceback" not in r.stderr and "distributed." not in r.stderr
    data = json.loads(files["f.json"])
    assert data["reports"] == [x.entry() for x in rows] and data["verdict"] == "unreadable"
    assert [x["verdict"] for x in data["reports"]] == [x.verdict for x in rows]
    assert {x.verdict for x in rows} == {"within limits", "exceeded", "unreadable"}
    assert rows[-1].error.startswith(f"{bad}: ") and "\n" not in rows[-1].error
    with open(tmp_path / "serial" / "f.summary.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert [row["path"] for row in table] == paths and [row["verdict"] for row in table] == [x.verdict for x in rows]
    assert sorted(files) == sorted(["f.json", "f.summary.csv"] + [f"s.{Path(p).stem}.csv" for p in paths[:-1]])
    page = _Page()
    page.feed(html.read_text())
    title = f"composedyn torques: panda, {len(paths)} log(s)"
    assert page.text == {"title": title, "h1": title}
    failing = [x for x in rows if x.verdict == "exceeded"]
    assert len(page.rows) == len(paths) and len(page.images) == len(failing) > 0
    assert page.rows[0][1].startswith("unreadable: ") and page.rows[1][1] == "exceeded"  # worst first
    assert page.rows[-1][1] == "within limits"
    ratios = [max(float(row[3]), float(row[4])) for row in page.rows if row[1] == "exceeded"]
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
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{path}: damaged: in the samples read, within limits"), lines
    assert f"  DAMAGED: {message}" in lines
    report = check_log(panda, path)
    assert not report.ok and report.verdict == "damaged"
    assert report.to_dict()["findings"] == [{"kind": "damaged", "message": message}]
    (row,) = cd.check_many(panda, [path])
    assert row.verdict == "damaged"


def test_scheduler_option(panda, bags, tmp_path):
    from distributed import LocalCluster

    paths = [str(bags[("mcap_file", 0.3)]), str(bags[("ros1", 1.5)])]
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None,
                      protocol="tcp") as cluster:
        r = run("torques", "panda", *paths, "--scheduler", cluster.scheduler_address, "--json", tmp_path / "f.json")
    assert r.returncode == 1 and not error_lines(r.stderr), r.stderr
    rows = cd.check_many(panda, paths, keep_reports=True)
    assert json.loads((tmp_path / "f.json").read_text())["reports"] == [x.entry() for x in rows]
    for address in ("tcp://127.0.0.1:9", "inproc://nowhere"):
        r = run("torques", "panda", *paths, "--scheduler", address)
        lines = error_lines(r.stderr)
        assert r.returncode == 2 and len(lines) == 1 and f"--scheduler {address}: cannot connect" in lines[0], r.stderr
