"""``composedyn torques`` through the installed console script: exit status 0/1/2,
reports, several files, and one clear line for each bad input (the other logs reported)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
from composedyn.simulation.reference_motion import demo_motion

SCRIPT = Path(sys.executable).parent / "composedyn"
JOINTS = [f"joint{i}" for i in range(1, 8)]


def run(*args, cwd=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def error_lines(stderr: str) -> list:
    """Lines of stderr that are not progress-bar redraws (those are separated by carriage returns)."""
    return [ln for ln in re.split(r"[\r\n]", stderr) if ln.strip() and not re.search(r"\[[#.]+\] \d+/\d+", ln)]


def write_csv(path: Path, t, q, qd=None, qdd=None, header=None):
    cols = ["time"] + JOINTS
    data = [t[:, None], q]
    for suffix, arr in (("_vel", qd), ("_acc", qdd)):
        if arr is not None:
            cols += [j + suffix for j in JOINTS]
            data.append(arr)
    text = ",".join(header or cols) + "\n" + "\n".join(",".join(f"{x:.17g}" for x in row) for row in np.hstack(data))
    path.write_text(text + "\n")
    return path


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


@pytest.fixture(scope="module")
def files(panda, tmp_path_factory):
    d = tmp_path_factory.mktemp("traj")
    slow, fast = demo_motion(panda, 1.5, fraction=0.5), demo_motion(panda, 0.25, fraction=0.5)
    ts, tf = np.linspace(0, 1.5, 301), np.linspace(0, 0.25, 301)
    return {"slow": write_csv(d / "slow.csv", ts, slow(ts)[0]),
            "fast": write_csv(d / "fast.csv", tf, fast(tf)[0]),
            "fast_derivs": write_csv(d / "fast_derivs.csv", tf, *fast(tf))}


def test_script_is_installed():
    assert SCRIPT.exists(), f"console script not found next to {sys.executable}"


def test_within_limits_exits_0_and_writes_reports(files, tmp_path):
    r = run("torques", "panda", files["slow"], "--json", tmp_path / "r.json", "--plot", tmp_path / "r.png",
            "--csv", tmp_path / "r.csv")
    assert r.returncode == 0, r.stderr
    assert "within limits" in r.stdout and "error" not in r.stderr  # stderr: at most the progress bar
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["ok"] is True and data["source"] == str(files["slow"])
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "r.csv").read_text().startswith("time,joint1,joint1_vel,joint1_acc,joint1_tau")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json", "r.png"]  # no temporaries left


def test_exceeding_exits_1_and_names_joint_and_interval(files, panda, tmp_path):
    r = run("torques", "panda", files["fast"], "--json", tmp_path / "r.json")
    assert r.returncode == 1, r.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    table = np.loadtxt(files["fast"], delimiter=",", skiprows=1)
    lib = cd.check_trajectory(panda, table[:, 0], table[:, 1:])
    assert [(v["joint"], v["quantity"]) for v in data["violations"]] == [(v.joint, v.quantity) for v in lib.violations]
    v = next(v for v in data["violations"] if v["quantity"] == "effort")
    assert f"{v['joint']}: effort" in r.stdout and v["start"] < v["end"]


def test_given_derivatives_agree_with_differentiated_positions(files, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run("torques", "panda", files["fast"], "--json", a).returncode == 1
    assert run("torques", "panda", files["fast_derivs"], "--json", b).returncode == 1
    pa = [j["peak_torque"] for j in json.loads(a.read_text())["joints"]]
    pb = [j["peak_torque"] for j in json.loads(b.read_text())["joints"]]
    assert np.allclose(pa, pb, rtol=1e-3)


def test_several_files_in_one_call(files, tmp_path):
    r = run("torques", "panda", files["slow"], files["fast"], "--json", tmp_path / "all.json",
            "--plot", tmp_path / "p.png")
    assert r.returncode == 1
    data = json.loads((tmp_path / "all.json").read_text())
    assert [d["ok"] for d in data["reports"]] == [True, False] and data["ok"] is False
    assert {p.name for p in tmp_path.iterdir()} == {"all.json", "p.slow.png", "p.fast.png"}


def _bad_files(d: Path) -> dict:
    t = np.linspace(0.0, 1.0, 11)
    q = np.zeros((11, 7))
    cases = {}
    cases["missing column"] = (write_csv(d / "missing.csv", t, q[:, :6], header=["time"] + JOINTS[:6]), "joint7")
    cases["unknown name"] = (write_csv(d / "unknown.csv", t, np.zeros((11, 8)), header=["time"] + JOINTS + ["elbow"]),
                             "'elbow'")
    tb = t.copy()
    tb[5] = 0.1
    cases["non-monotonic"] = (write_csv(d / "backwards.csv", tb, q), "line 7")
    td = t.copy()
    td[4] = td[3]
    cases["duplicate time"] = (write_csv(d / "dup.csv", td, q), "duplicate time")
    qn = q.copy()
    qn[3, 2] = np.nan
    cases["NaN row"] = (write_csv(d / "nan.csv", t, qn), "line 5, column 'joint3'")
    cases["too few samples"] = (write_csv(d / "few.csv", t[:3], q[:3]), "3 sample")
    short = write_csv(d / "short.csv", t, q)
    lines = short.read_text().splitlines()
    lines[4] = ",".join(lines[4].split(",")[:-1])
    short.write_text("\n".join(lines) + "\n")
    cases["mismatched lengths"] = (short, "line 5: 7 fields")
    cases["partial velocities"] = (write_csv(d / "vel.csv", t, np.zeros((11, 8)),
                                             header=["time"] + JOINTS + ["joint1_vel"]),
                                   "joint2_vel")
    cases["no time column"] = (write_csv(d / "notime.csv", t, q, header=["when"] + JOINTS), "time column")
    (d / "empty.csv").write_text("")
    cases["empty file"] = (d / "empty.csv", "empty")
    cases["not a number"] = (d / "text.csv", "not a number")
    (d / "text.csv").write_text(",".join(["time"] + JOINTS) + "\n" + "\n".join(
        ",".join([f"{k}"] + ["abc" if (k, i) == (2, 0) else "0" for i in range(7)]) for k in range(8)) + "\n")
    cases["no such file"] = (d / "nope.csv", "nope.csv")
    (d / "binary.csv").write_bytes(bytes(range(256)))
    cases["binary file"] = (d / "binary.csv", "not a UTF-8")
    return cases


BAD = ["missing column", "unknown name", "non-monotonic", "duplicate time", "NaN row", "too few samples",
       "mismatched lengths", "partial velocities", "no time column", "empty file", "not a number", "no such file",
       "binary file"]


@pytest.fixture(scope="module")
def bad_results(files, tmp_path_factory):
    """Run every bad-input case at once (subprocesses in parallel):
    case -> (returncode, stderr, needle, name, outdir)."""
    d = tmp_path_factory.mktemp("bad")
    cases = _bad_files(d)
    jobs = []
    for case in BAD:
        path, needle = cases[case]
        out = tmp_path_factory.mktemp("out")
        # a good file first: it is still checked and reported
        args = ["torques", "panda", files["slow"], path, "--json", out / "r.json", "--plot", out / "r.png",
                "--csv", out / "r.csv"]
        jobs.append((case, args, needle, path.name, out))
    with ThreadPoolExecutor(max_workers=2) as pool:  # two at a time: CI has two cores
        done = list(pool.map(lambda job: run(*job[1]), jobs))
    results = {}
    for (case, _, needle, name, out), r in zip(jobs, done):
        results[case] = (r.returncode, r.stderr, needle, name, out)
    return results


@pytest.mark.parametrize("case", BAD)
def test_bad_input_one_line_exit_2_the_other_log_reported(case, bad_results):
    code, err, needle, name, out = bad_results[case]
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and name in lines[0] and needle in lines[0], err
    data = json.loads((out / "r.json").read_text())
    assert [e["verdict"] for e in data["reports"]] == ["within limits", "unreadable"]
    assert data["verdict"] == "unreadable"
    assert data["reports"][1]["error"] == lines[0].removeprefix("composedyn: error: ")
    assert sorted(p.name for p in out.iterdir()) == ["r.json", "r.slow.csv", "r.slow.png"]  # none of the bad log


def test_bad_robot_and_bad_option(files, tmp_path):
    r = run("torques", "no_such_robot", files["slow"])
    assert r.returncode == 2 and "no_such_robot" in r.stderr and len(error_lines(r.stderr)) == 1
    r = run("torques", "panda", files["slow"], "--smoothing", "lots")
    assert r.returncode == 2 and "--smoothing" in r.stderr
    r = run("torques", "panda", files["slow"], "--json", tmp_path / "no" / "dir" / "r.json")
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_reader_accepts_byte_order_mark_comments_and_report_tables(panda, tmp_path):
    from composedyn.torque_check.trajectory_csv import read_trajectory_csv

    motion = demo_motion(panda, 1.0)
    t = np.linspace(0.0, 1.0, 21)
    rep = cd.check_trajectory(panda, t, *motion(t))
    text = "# exported by a planner\n" + rep.to_csv()  # time, j, j_vel, j_acc, j_tau: _tau is ignored
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    back = read_trajectory_csv(tmp_path / "bom.csv", panda.joint_names)
    assert np.allclose(back.t, t) and np.allclose(back.q, rep.q) and np.allclose(back.qdd, rep.qdd)
