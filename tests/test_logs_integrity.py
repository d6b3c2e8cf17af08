"""Damaged and inconsistent logs are never within limits: lost messages (the bag's own count),
stamp and sequence jumps, single-sample spikes from bit flips, logged velocities that disagree
with the positions; clean logs (also with sensor noise) have no finding.  Reader errors are one
line naming the file; CSV limits (line length, NUL, size) are named; measured logs are
differentiated by the smoothing spline by default, planner output by the interpolating one."""

from __future__ import annotations

import re
import sqlite3
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
from composedyn.logs.check import check_log
from composedyn.logs.read import MAX_CSV_BYTES
from composedyn.testing.log_bags import acceleration, messages, motion, write_log
from composedyn.torque_check.trajectory_csv import MAX_LINE_CHARS
from test_cli_torques import error_lines, run
from test_logs_cli import center

RATE, DURATION, SPEED = 100.0, 3.0, 0.5


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def bag(robot, directory: Path, kind: str, **kw) -> Path:
    name = kind + (".bag" if kind == "ros1" else "")
    kw = {"duration": DURATION, "speed": SPEED, "center": center(robot), **kw}
    return write_log(directory / name, kind, [(list(robot.joint_names), kw.pop("rate", RATE), 0.0)], **kw)


def flip_position_bit(robot, path: Path, out: Path) -> tuple[int, int]:
    """Flip the top mantissa bit of one stored position with 1 <= |q| < 2 (a change of 0.5 rad)
    in the second half of the log; (sample, joint) flipped."""
    data = bytearray(path.read_bytes())
    names = list(robot.joint_names)
    msgs = messages([(names, RATE, 0.0)], DURATION, speed=SPEED, center=center(robot))
    for k in range(len(msgs) // 2, len(msgs)):
        for j, v in enumerate(msgs[k][3]):
            raw = struct.pack("<d", v)
            at = data.find(raw)
            if 1 <= abs(v) < 2 and at >= 0 and data.find(raw, at + 1) < 0:
                data[at + 6] ^= 0x08  # bit 51 of the little-endian double
                out.write_bytes(data)
                return k, j
    raise AssertionError("no position to flip")


@pytest.mark.parametrize("kind", ["mcap_file", "ros1", "db3_file"])
def test_a_clean_bag_has_no_finding(panda, tmp_path, kind):
    log = cd.read_log(bag(panda, tmp_path, kind), joint_names=panda.joint_names)
    assert log.findings == () and len(log) == RATE * DURATION


def test_mcap_with_4_kb_zeroed_is_damaged(panda, tmp_path):
    path = bag(panda, tmp_path, "mcap_file")
    data = bytearray(path.read_bytes())
    data[len(data) // 2:len(data) // 2 + 4096] = bytes(4096)
    bad = tmp_path / "zeroed.mcap"
    bad.write_bytes(data)
    log = cd.read_log(bad, joint_names=panda.joint_names)
    assert len(log) < 300  # the reader stops at the zeroed chunk without an error
    finding = log.findings[0]  # (and the last message read, partly zeroed, has an effort spike)
    assert all(f.kind == "damaged" for f in log.findings)
    assert finding.message == (f"{bad}:/joint_states: the bag records 300 messages on the topic, {len(log)} could "
                               f"be read ({300 - len(log)} lost: truncated or damaged)")
    assert check_log(panda, path).verdict == "within limits"  # the original passes
    r = run("torques", "panda", bad)
    assert r.returncode == 3 and not error_lines(r.stderr), r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{bad}: damaged: in the samples read"), lines
    assert f"  DAMAGED: {finding.message}" in lines, lines


@pytest.mark.parametrize("kind", ["mcap_file", "ros1", "db3_file"])
def test_a_bit_flip_moving_a_position_by_half_a_radian_is_damaged(panda, tmp_path, kind):
    path = bag(panda, tmp_path, kind)
    bad = tmp_path / f"flipped{path.suffix}"
    k, j = flip_position_bit(panda, path, bad)
    log = cd.read_log(bad, joint_names=panda.joint_names)
    clean = cd.read_log(path, joint_names=panda.joint_names)
    assert abs(abs(log.q[k, j] - clean.q[k, j]) - 0.5) < 1e-12  # the flip is what the test says
    (finding,) = log.findings
    assert finding.kind == "damaged"
    assert finding.message.startswith(f"{bad}:/joint_states: joint 'joint{j + 1}' position spikes by ")
    assert f"at sample {k} (t = {log.t[k]:.6g} s)" in finding.message
    report = check_log(panda, log)
    assert not report.ok and report.verdict == "damaged"


def test_lost_rows_of_a_db3_are_damaged(panda, tmp_path):
    path = bag(panda, tmp_path, "db3_file")
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM messages WHERE id % 50 = 7")
    (finding,) = cd.read_log(path, joint_names=panda.joint_names).findings
    assert "the bag records 300 messages on the topic, 294 could be read (6 lost" in finding.message


def test_a_flipped_ros1_sequence_number_is_damaged(panda, tmp_path):
    path = bag(panda, tmp_path, "ros1", sequence=True)
    assert cd.read_log(path).findings == ()
    data = bytearray(path.read_bytes())
    stamp = messages([(list(panda.joint_names), RATE, 0.0)], DURATION)[120][1]
    header = struct.pack("<III", 121, stamp // 10**9, stamp % 10**9)  # seq, sec, nsec of message 120
    at = data.find(header)
    assert at >= 0 and data.find(header, at + 1) < 0
    data[at + 1] ^= 0x04  # seq 121 -> 1145
    bad = tmp_path / "seq.bag"
    bad.write_bytes(data)
    (finding,) = cd.read_log(bad).findings
    assert finding.message == (f"{bad}:/joint_states: sequence number jumps from 120 to 1145 at message 120 "
                               "(t = 1.2 s; 2 time(s))")


def velocity_csv(path: Path, robot, t, q, qd, effort=None) -> Path:
    names = list(robot.joint_names)
    cols = ["time"] + names + [j + "_vel" for j in names] + ([] if effort is None else [j + "_effort" for j in names])
    rows = np.column_stack([t, q, qd] + ([] if effort is None else [effort]))
    path.write_text(",".join(cols) + "\n" + "\n".join(",".join(f"{x:.17g}" for x in r) for r in rows) + "\n")
    return path


def test_zero_logged_velocities_while_positions_move_are_inconsistent(panda, tmp_path):
    names = list(panda.joint_names)
    t = np.arange(0.0, 1.0, 0.002)
    q, qd, _ = motion(names, t, 0.2, center(panda))
    ramp = np.clip((t - 0.3) / 0.3, 0.0, 1.0)
    q[:, 1] += 0.8 * (3 * ramp**2 - 2 * ramp**3)  # 0.8 rad in 0.3 s ...
    qd[:, 1] += 0.8 * 6 * ramp * (1 - ramp) / 0.3
    good = velocity_csv(tmp_path / "good.csv", panda, t, q, qd)
    assert cd.read_log(good).findings == ()  # with the right velocities: consistent
    qd[(t > 0.3) & (t < 0.6), 1] = 0.0  # ... while the log says it stands still
    bad = velocity_csv(tmp_path / "zero_vel.csv", panda, t, q, qd)
    (finding,) = cd.read_log(bad).findings
    assert finding.kind == "inconsistent"
    assert finding.message.startswith(f"{bad}: joint 'joint2' logged velocity disagrees with its positions from t = ")
    r = run("torques", "panda", bad)
    assert r.returncode == 3 and not error_lines(r.stderr), r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{bad}: inconsistent: in the samples read"), lines
    assert f"  INCONSISTENT: {finding.message}" in lines, lines


@pytest.mark.parametrize("rate", [100.0, 500.0, 1000.0])
def test_sensor_noise_and_velocity_lag_are_not_findings(panda, tmp_path, rate):
    """1e-4 rad position noise, 0.01 rad/s velocity noise and a 5 ms velocity filter lag."""
    names = list(panda.joint_names)
    rng = np.random.default_rng(int(rate))
    t = np.arange(0.0, 3.0, 1.0 / rate)
    q, _, _ = motion(names, t, 1.0, center(panda))
    qd = motion(names, t - 0.005, 1.0, center(panda))[1] + rng.normal(0, 0.01, q.shape)
    q = q + rng.normal(0, 1e-4, q.shape)
    effort = motion(names, t)[2] + rng.normal(0, 0.05, q.shape)
    log = cd.read_log(velocity_csv(tmp_path / "noisy.csv", panda, t, q, qd, effort))
    assert log.findings == ()


def test_noisy_measured_log_is_smoothed_by_default(panda, tmp_path):
    rng = np.random.default_rng(0)

    def noisy(msgs):
        return [(m[0], m[1], m[2], m[3] + rng.normal(0, 1e-4, len(m[3]))) + tuple(m[4:]) for m in msgs]

    path = bag(panda, tmp_path, "ros1", rate=500.0, duration=2.0, speed=0.3, velocity=False, edit=noisy)
    log = cd.read_log(path, joint_names=panda.joint_names)
    assert log.measured and log.findings == ()
    report = check_log(panda, log)
    assert report.verdict == "within limits", report.summary()
    m = re.fullmatch(r"derivatives: smoothing spline, lambda = \S+ matched to the position noise "
                     r"\((\S+) rad or m\) \(default for a measured log\)", report.derivatives)
    assert m and abs(float(m.group(1)) - 1e-4) < 1.5e-5, report.derivatives  # the noise added
    interpolated = check_log(panda, log, smoothing=0)  # what the interpolating quintic makes of the noise
    assert len(interpolated.violations) > 100
    r = run("torques", "panda", path)
    assert r.returncode == 0 and "default for a measured log" in r.stdout, r.stdout + r.stderr
    r = run("simulate", "panda", path, "--samples", "21")  # the log as a reference to track
    assert r.returncode == 0 and "  reference derivatives: smoothing spline, lambda = " in r.stdout, r.stdout + r.stderr
    assert "(default for a measured log)" in r.stdout


def test_planner_csv_is_interpolated_by_default(panda, tmp_path):
    names = list(panda.joint_names)
    t = np.linspace(0.0, 2.0, 401)
    q = motion(names, t, 0.5, center(panda))[0]
    path = tmp_path / "plan.csv"
    path.write_text(",".join(["time"] + names) + "\n" + "\n".join(",".join(f"{x:.17g}" for x in r)
                                                                   for r in np.column_stack([t, q])) + "\n")
    log = cd.read_log(path)
    assert not log.measured
    report = check_log(panda, log)
    assert report.derivatives == "derivatives: interpolating quintic spline (default for planner output)"
    inner = slice(20, -20)  # the quintic's not-a-knot ends are less accurate
    np.testing.assert_allclose(report.qdd[inner], acceleration(names, t, 0.5)[inner], atol=1e-5)
    r = run("torques", "panda", path)
    assert r.returncode == 0 and "default for planner output" in r.stdout, r.stdout + r.stderr


def test_reader_errors_are_one_line(panda, tmp_path):
    path = bag(panda, tmp_path, "db3_file")
    data = path.read_bytes()
    for cut in (len(data) // 3, len(data) - 100):
        bad = tmp_path / f"cut{cut}.db3"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError) as info:
            cd.read_log(bad)
        assert str(info.value).startswith(f"{bad}: not a readable ROS bag: ") and "\n" not in str(info.value)
    r = run("torques", "puma560", bad)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    (line,) = [ln for ln in error_lines(r.stderr) if "warning:" not in ln]  # puma560's own ModelWarnings aside
    assert line.startswith(f"composedyn: error: {bad}: not a readable ROS bag: ")

    mcap = bag(panda, tmp_path, "mcap_file")
    data = bytearray(mcap.read_bytes())
    data[16] = 0xFF  # the top byte of the first record's 8-byte length
    broken = tmp_path / "overflow.mcap"
    broken.write_bytes(data)
    with pytest.raises(ValueError) as info:
        cd.read_log(broken)
    assert str(info.value).startswith(f"{broken}: not a readable ROS bag: OverflowError: ")
    rows = cd.check_many(panda, [broken, mcap], errors="report")  # one unreadable log does not stop the others
    assert rows[0].error == str(info.value)
    assert rows[1].error is None and rows[1].samples == RATE * DURATION


def test_whitespace_only_lines_are_skipped(panda, tmp_path):
    names = list(panda.joint_names)
    t = np.linspace(0.0, 1.0, 51)
    q, qd, effort = motion(names, t, 0.3, center(panda))
    path = velocity_csv(tmp_path / "w.csv", panda, t, q, qd, effort)
    lines = path.read_text().splitlines()
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("\n".join(lines[:10] + ["   ", "\t"] + lines[10:30] + [" \t "] + lines[30:]) + "\n")
    a, b = cd.read_log(path), cd.read_log(spaced)
    for x, y in ((a.t, b.t), (a.q, b.q), (a.qd, b.qd), (a.effort, b.effort)):
        np.testing.assert_array_equal(x, y)
    no_effort = tmp_path / "plan_spaced.csv"
    no_effort.write_text("\n".join(ln.rsplit(",", 7)[0] for ln in spaced.read_text().splitlines()) + "\n")
    r = run("torques", "panda", no_effort)  # streamed in blocks
    assert r.returncode == 0 and not error_lines(r.stderr), r.stderr


def test_csv_followed_by_2_gb_of_nul_is_refused_quickly(panda, tmp_path):
    names = list(panda.joint_names)
    t = np.linspace(0.0, 1.0, 51)
    q = motion(names, t, 0.3, center(panda))[0]
    path = tmp_path / "nul.csv"
    path.write_text(",".join(["time"] + names + [j + "_effort" for j in names]) + "\n"
                    + "\n".join(",".join(f"{x:.17g}" for x in r) for r in np.column_stack([t, q, q])) + "\n")
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size + 2 * 10**9)  # sparse: 2 GB of NUL bytes, no disk used
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"nul\.csv: \d+ bytes, more than the CSV log size limit of {MAX_CSV_BYTES}"):
        cd.read_log(path)
    tracemalloc.start()
    try:  # the size limit lifted: the first line of NUL bytes is refused after MAX_LINE_CHARS
        with pytest.raises(ValueError, match=r"nul\.csv: line 53 holds NUL characters: binary data, not a CSV"):
            cd.read_log(path, max_csv_bytes=None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * MAX_LINE_CHARS and time.perf_counter() - start < 5.0
    plan = tmp_path / "nul_plan.csv"
    plan.write_text(",".join(["time"] + names) + "\n"
                    + "\n".join(",".join(f"{x:.17g}" for x in r) for r in np.column_stack([t, q])) + "\n")
    with open(plan, "r+b") as f:
        f.truncate(plan.stat().st_size + 2 * 10**9)
    start = time.perf_counter()
    r = run("torques", "panda", plan)  # streamed: refused at the line, whatever the size
    assert time.perf_counter() - start < 30.0
    assert r.returncode == 2 and error_lines(r.stderr) == [
        f"composedyn: error: {plan}: line 53 holds NUL characters: binary data, not a CSV table"], r.stderr
    long = tmp_path / "long.csv"
    long.write_text(",".join(["time"] + names) + "\n" + "1" * (MAX_LINE_CHARS + 10) + "\n")
    with pytest.raises(ValueError, match=rf"long\.csv: line 2 is longer than {MAX_LINE_CHARS} characters"):
        cd.read_log(long)


def test_streamed_blocks_give_the_findings_of_the_whole_log(panda):
    """A spike at a block boundary of a streamed CSV is found as in the whole log."""
    from composedyn.logs.integrity import sample_findings, watch_blocks

    names = list(panda.joint_names)
    t = np.arange(0.0, 2.0, 0.01)
    q, qd, _ = motion(names, t, 0.5, center(panda))
    q[100, 3] += 0.4
    whole = sample_findings(t, names, q, qd, None, "log.csv")
    assert "joint 'joint4' position spikes by 0.4 rad or m at sample 100 (t = 1 s)" in whole[0].message
    for cut in (99, 100, 101):
        blocks, found = watch_blocks(iter([(t[:cut], q[:cut], qd[:cut]), (t[cut:], q[cut:], qd[cut:])]), names,
                                     "log.csv")
        assert [len(b[0]) for b in blocks] == [cut, len(t) - cut]  # passed through unchanged
        assert found[0] == whole[0], cut


def test_accelerations_that_contradict_the_velocities_are_inconsistent(panda):
    """Logged accelerations against the velocities, in the whole log and across streamed blocks;
    the consistent accelerations are no finding."""
    from composedyn.logs.integrity import sample_findings, watch_blocks

    names = list(panda.joint_names)
    t = np.arange(0.0, 2.0, 0.01)
    q, qd, _ = motion(names, t, 0.5, center(panda))
    qdd = acceleration(names, t, 0.5)
    assert sample_findings(t, names, q, qd, None, "log.csv", qdd=qdd) == []
    bad = qdd.copy()
    bad[120:140, 2] = 0.0
    whole = sample_findings(t, names, q, qd, None, "log.csv", qdd=bad)
    assert whole[0].kind == "inconsistent" and "joint 'joint3' logged acceleration" in whole[0].message
    for cut in (115, 130):
        blocks, found = watch_blocks(iter([(t[:cut], q[:cut], qd[:cut], bad[:cut]),
                                           (t[cut:], q[cut:], qd[cut:], bad[cut:])]), names, "log.csv")
        list(blocks)
        assert found and found[0].kind == "inconsistent" and "joint 'joint3'" in found[0].message, cut


def test_a_csv_row_with_an_extra_field_is_refused(panda, tmp_path):
    names = list(panda.joint_names)
    t = np.arange(0.0, 0.5, 0.01)
    q, _, _ = motion(names, t, 0.5, center(panda))
    rows = [",".join(repr(float(x)) for x in [a, *b]) for a, b in zip(t, q)]
    rows[20] += ",0.5"
    path = tmp_path / "extra.csv"
    path.write_text(",".join(["time"] + names) + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"extra\.csv: line 22: 9 fields, the header has 8"):
        cd.read_log(path)
    row = cd.check_many(panda, [path], errors="report")[0]
    assert row.verdict == "unreadable" and "line 22: 9 fields" in row.error


@pytest.mark.parametrize("error", [MemoryError(), struct.error("unpack requires a buffer of 8 bytes"),
                                   UnicodeDecodeError("utf-8", b"\xe3", 0, 1, "invalid continuation byte")])
def test_any_reader_exception_is_one_value_error_line(panda, tmp_path, monkeypatch, error):
    from rosbags.highlevel import AnyReader

    path = bag(panda, tmp_path, "ros1", duration=0.2)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(AnyReader, "messages", fail)
    with pytest.raises(ValueError) as info:
        cd.read_log(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not a readable ROS bag: ") and "\n" not in message
    assert ("damaged length field" if isinstance(error, MemoryError) else type(error).__name__) in message
