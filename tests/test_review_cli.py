"""The command line's writing rules: bad input (a bad log, a bad option, an output that cannot
be written or that is an input) is one error line naming it, exit status 2 and nothing
written; several logs report an unreadable one and write the others; summaries of logs
whose names are not UTF-8; the header line of a duplicate column; ``simulate`` writes the
report ``torques`` writes for one log."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
from composedyn.writing import Staged
from test_qa_regressions import cli  # in-process: (status, stdout, stderr lines)

JOINTS = [f"joint{i}" for i in range(1, 8)]
URDF = ('<robot name="r"><link name="a"/><link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" velocity="2" effort="5"/></joint></robot>\n')


def panda_csv(path: Path, nan: bool = False) -> Path:
    """A slow Panda motion (51 samples over 1 s, within limits); ``nan``: a NaN cell on line 3."""
    t = np.linspace(0.0, 1.0, 51)
    q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])
    q = q0 + 0.1 * np.sin(np.pi * t)[:, None]
    rows = [",".join(f"{x:.12g}" for x in (tk, *qk)) for tk, qk in zip(t, q)]
    if nan:
        rows[1] = rows[1].split(",", 2)[0] + ",nan," + rows[1].split(",", 2)[2]
    path.write_text(",".join(["time", *JOINTS]) + "\n" + "\n".join(rows) + "\n")
    return path


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- a bad log or a bad option writes nothing ---------------------------------------------


def test_one_unreadable_log_writes_nothing(tmp_path, capsys):
    bad = panda_csv(tmp_path / "nan.csv", nan=True)
    status, _, err = cli(capsys, "torques", "panda", bad, "--json", tmp_path / "out.json",
                         "--summary", tmp_path / "sum.csv", "--csv", tmp_path / "out.csv")
    assert status == 2 and len(err) == 1, err
    assert err[0] == f"composedyn: error: {bad}: line 3, column 'joint1': nan is not finite"
    assert listing(tmp_path) == ["nan.csv"]


def test_bad_smoothing_is_named_before_any_log_is_read(tmp_path, capsys):
    good = panda_csv(tmp_path / "ok.csv")
    for value in ("-1", "nan", "inf", "x"):
        status, _, err = cli(capsys, "torques", "panda", good, "--smoothing", value, "--json", tmp_path / "o.json")
        assert status == 2 and len(err) == 1, err
        assert err[0].startswith("composedyn: error: --smoothing must be 0, a positive finite lambda or \"gcv\"")
        assert str(good) not in err[0]
    status, _, err = cli(capsys, "torques", "panda", tmp_path / "missing.csv", "--smoothing", "-1")
    assert status == 2 and "--smoothing" in err[0] and "missing.csv" not in err[0], err
    status, _, err = cli(capsys, "simulate", "two_link", tmp_path / "missing.csv", "--smoothing", "-1")
    assert status == 2 and "--smoothing" in err[0] and "missing.csv" not in err[0], err
    assert listing(tmp_path) == ["ok.csv"]


def test_several_logs_report_the_unreadable_one_and_write_the_others(tmp_path, capsys):
    good, bad = panda_csv(tmp_path / "good.csv"), panda_csv(tmp_path / "nan.csv", nan=True)
    out = tmp_path / "out"
    out.mkdir()
    status, _, err = cli(capsys, "torques", "panda", good, bad, "--json", out / "r.json",
                         "--summary", out / "s.csv", "--csv", out / "r.csv", "--violations", out / "v.csv")
    assert status == 2 and err == [f"composedyn: error: {bad}: line 3, column 'joint1': nan is not finite"]
    assert listing(out) == ["r.good.csv", "r.json", "s.csv", "v.good.csv"]  # no file of the bad log, no temporaries
    data = json.loads((out / "r.json").read_text())
    assert [e["verdict"] for e in data["reports"]] == ["within limits", "unreadable"]
    with open(out / "s.csv", newline="") as f:
        assert [r["verdict"] for r in csv.DictReader(f)] == ["within limits", "unreadable"]


# --- an output that cannot be written: named as given, nothing left behind -----------------


def test_an_output_that_is_a_folder_leaves_no_other_output(tmp_path, capsys):
    good = panda_csv(tmp_path / "ok.csv")
    out = tmp_path / "out"
    (out / "viol_dir").mkdir(parents=True)
    status, _, err = cli(capsys, "torques", "panda", good, "--csv", out / "good.csv",
                         "--violations", out / "viol_dir", "--json", out / "r.json")
    assert status == 2 and err == [f"composedyn: error: {out / 'viol_dir'}: is a folder, expected a file name"]
    assert listing(out) == ["viol_dir"]


def test_commit_checks_every_final_path_before_renaming_any(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    with Staged() as staged:
        Path(staged.tmp(first)).write_text("a\n")
        Path(staged.tmp(second)).write_text("b\n")
        second.mkdir()  # appears after staging
        with pytest.raises(OSError, match=r"b\.csv: is a folder"):
            staged.commit()
    assert listing(tmp_path) == ["b.csv"] and second.is_dir()


def _immutable(folder: Path) -> bool:
    """Make ``folder`` unwritable (chmod for a user, chattr +i for root); False when that fails."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return True
    chattr = shutil.which("chattr")
    return bool(chattr) and subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode == 0


def _writable(folder: Path) -> None:
    if os.geteuid() != 0:
        folder.chmod(0o755)
    else:
        subprocess.run([shutil.which("chattr"), "-i", str(folder)], capture_output=True)


def test_an_unwritable_folder_is_named_with_the_output_path(tmp_path, capsys):
    good = panda_csv(tmp_path / "ok.csv")
    ro = tmp_path / "ro"
    ro.mkdir()
    if not _immutable(ro):
        pytest.skip("cannot make a folder unwritable here (no chattr)")
    try:
        status, _, err = cli(capsys, "torques", "panda", good, "--csv", ro / "x.csv")
        assert status == 2 and len(err) == 1, err
        assert err[0].startswith(f"composedyn: error: {ro / 'x.csv'}: cannot write in folder {ro}"), err
        assert listing(ro) == []
    finally:
        _writable(ro)


# --- an output that is an input ------------------------------------------------------------


def test_an_output_that_is_the_log_is_refused(tmp_path, capsys):
    traj = panda_csv(tmp_path / "traj.csv")
    before = traj.read_bytes()
    for option in ("--json", "--csv", "--violations", "--summary", "--html"):
        status, _, err = cli(capsys, "torques", "panda", traj, option, traj)
        assert status == 2 and len(err) == 1, err
        assert err[0].startswith(f"composedyn: error: {option} {traj}: the same file as the input LOG {traj}"), err
    other = tmp_path / "out.traj.csv"  # --csv out.csv with several logs writes out.<log stem>.csv
    shutil.copy(traj, other)
    status, _, err = cli(capsys, "torques", "panda", traj, other, "--csv", tmp_path / "out.csv")
    assert status == 2 and f"--csv {tmp_path / 'out.csv'} (written as {other})" in err[0], err
    assert traj.read_bytes() == before and other.read_bytes() == before
    assert listing(tmp_path) == ["out.traj.csv", "traj.csv"]


def test_two_outputs_into_one_file_are_refused(tmp_path, capsys):
    traj = panda_csv(tmp_path / "traj.csv")
    out = tmp_path / "out.csv"
    status, _, err = cli(capsys, "torques", "panda", traj, "--csv", out, "--violations", out)
    assert status == 2 and len(err) == 1, err
    assert err[0] == f"composedyn: error: --violations {out}: the same file as the output --csv {out}; " \
                     "choose another output path", err
    assert listing(tmp_path) == ["traj.csv"]

def test_an_output_that_is_the_robot_is_refused(tmp_path, capsys, monkeypatch):
    robot = tmp_path / "robot.urdf"
    robot.write_text(URDF)
    (tmp_path / "link.urdf").symlink_to(robot)
    cases = [("equations", robot, "--c", robot), ("convert", robot, robot),
             ("convert", robot, tmp_path / "link.urdf"), ("convert", robot, tmp_path / "." / "robot.urdf")]
    for command, *args in cases:
        status, _, err = cli(capsys, command, *args)
        assert status == 2 and len(err) == 1, (command, args, err)
        assert "the same file as the input ROBOT" in err[0] and str(args[-1]) in err[0], err
        assert ("--c " if command == "equations" else "OUT.urdf ") in err[0], err
    assert robot.read_text() == URDF
    limits = tmp_path / "lim.toml"
    limits.write_text("margin = 1.0\n")
    status, _, err = cli(capsys, "torques", "panda", panda_csv(tmp_path / "t.csv"), "--limits", limits,
                         "--json", limits)
    assert status == 2 and "the same file as the input --limits" in err[0], err
    monkeypatch.chdir(tmp_path)  # a bundled robot's name is no file: an output of that name is allowed
    status, _, err = cli(capsys, "convert", "two_link", "two_link.urdf")
    assert status == 0 and (tmp_path / "two_link.urdf").is_file(), err


# --- log names that are not UTF-8 ------------------------------------------------------------


def test_summary_and_html_escape_a_log_name_that_is_not_utf8(tmp_path):
    name = os.fsdecode(b"run_\xff.csv")
    log = panda_csv(tmp_path / name)
    script = Path(sys.executable).parent / "composedyn"  # a process: its stdout prints the name's bytes
    r = subprocess.run([str(script), "torques", "panda", log, "--summary", tmp_path / "sum.csv",
                        "--html", tmp_path / "rep.html", "--json", tmp_path / "r.json"],
                       capture_output=True, timeout=300)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    shown = json.loads((tmp_path / "r.json").read_text())["source"].encode("unicode_escape").decode("ascii")
    assert shown.endswith("run_\\udcff.csv")  # JSON's escape of the undecodable byte
    with open(tmp_path / "sum.csv", newline="", encoding="utf-8") as f:
        assert next(csv.DictReader(f))["path"] == str(tmp_path / "run_\\udcff.csv")
    assert "run_\\udcff.csv" in (tmp_path / "rep.html").read_text(encoding="utf-8")


# --- the header line of a duplicate column ---------------------------------------------------


def test_a_duplicate_column_names_the_header_line(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("# exported by planner\n\ntime,joint1,joint2,joint1\n0,0,0,0\n0.1,0,0,0\n")
    status, _, err = cli(capsys, "torques", "two_link", path)
    assert status == 2 and err == [f"composedyn: error: {path}: line 3: column 'joint1' appears twice"]


# --- simulate writes the report torques writes -----------------------------------------------


def test_simulate_json_is_the_torques_report_of_one_log(tmp_path, capsys):
    status, out, err = cli(capsys, "simulate", "two_link", "--json", tmp_path / "sim.json",
                           "--csv", tmp_path / "sim.csv")
    assert status == 0, err
    assert ": unchecked: no checked limit exceeded" in out
    status, _, err = cli(capsys, "torques", "two_link", tmp_path / "sim.csv", "--json", tmp_path / "tq.json")
    assert status == 0, err
    sim, tq = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("sim", "tq"))
    assert sim["verdict"] == tq["verdict"] == "unchecked" and sim["ok"] is tq["ok"] is False
    assert set(sim) == set(tq)

    status, out, err = cli(capsys, "simulate", "panda", "--duration", "0.1", "--samples", "41",
                           "--json", tmp_path / "fast.json")
    assert status == 1, err
    fast = json.loads((tmp_path / "fast.json").read_text())
    assert fast["verdict"] == "exceeded" and fast["ok"] is False and fast["torque_ratio"] > 1
    assert fast["worst_joint"] in cd.load("panda").joint_names and fast["findings"] == [] and fast["warnings"] == []
    assert "<minimum-jerk>: exceeded: " in out


def test_simulate_refuses_an_offset_that_is_not_finite(tmp_path, capsys):
    for value in ("nan", "inf"):
        status, _, err = cli(capsys, "simulate", "two_link", "--offset", value, "--json", tmp_path / "r.json")
        assert status == 2 and len(err) == 1 and err[0].startswith("composedyn: error: --offset must be finite"), err
    for option, value in (("--kp", "nan"), ("--kd", "inf"), ("--timeout", "nan")):
        status, _, err = cli(capsys, "simulate", "two_link", option, value, "--json", tmp_path / "r.json")
        assert status == 2 and err == [f"composedyn: error: {option} must be a finite number, got {value}"], err
    assert listing(tmp_path) == []
