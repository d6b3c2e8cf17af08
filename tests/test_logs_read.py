"""read_log on bags written by rosbags itself (ROS 1, ROS 2 sqlite3 and MCAP, single
.mcap/.db3 files) and on CSV: shuffled joint order, two publishers at different rates
with subsets of the joints, jittered stamps, compared with the analytic motion."""

from __future__ import annotations

import re
import tracemalloc
import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.testing.log_bags import KINDS, messages, motion, write_log

NAMES = [f"joint{i}" for i in range(1, 8)]
START = 1_700_000_000 * 10**9
TWO = [(["joint3", "joint1", "joint5", "joint7"], 200.0, 5e-4), (["joint6", "joint2", "joint4"], 130.0, 5e-4)]


def bag_name(kind: str) -> str:
    return kind + (".bag" if kind == "ros1" else "")


def expected(log):
    return motion(log.joint_names, log.t + (log.stamp0 - START) * 1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_two_publishers_merge_to_the_analytic_motion(tmp_path, kind):
    path = write_log(tmp_path / bag_name(kind), kind, TWO, duration=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean log raises no LogWarning
        log = cd.read_log(path, joint_names=NAMES)
    assert log.joint_names == tuple(NAMES) and log.findings == ()
    q, qd, effort = expected(log)
    # cubic interpolation of the 130 Hz publisher onto the 200 Hz one: h^4-accurate
    assert np.abs(log.q - q).max() < 1e-6
    assert np.abs(log.qd - qd).max() < 1e-6
    assert np.abs(log.effort - effort).max() < 1e-6
    assert np.all(np.diff(log.t) > 0) and log.t[0] >= 0
    first = min(m[1] for m in messages(TWO, 2.0))
    assert log.stamp0 == first  # t counts from the first header stamp
    # the time base is the denser publisher's stamps inside the common interval
    fast = np.array(sorted(m[1] for m in messages(TWO, 2.0) if m[6] == 0))
    slow = [m[1] for m in messages(TWO, 2.0) if m[6] == 1]
    inside = fast[(fast >= min(slow)) & (fast <= max(slow))]
    np.testing.assert_array_equal(log.t, (inside - first) * 1e-9)


def test_one_publisher_is_copied_exactly_and_in_first_appearance_order(tmp_path):
    order = ["joint4", "joint2", "joint7", "joint1", "joint6", "joint3", "joint5"]
    path = write_log(tmp_path / "one", "mcap", [(order, 100.0, 1e-3)], duration=1.0)
    log = cd.read_log(path)
    assert log.joint_names == tuple(order)
    raw = messages([(order, 100.0, 1e-3)], 1.0)
    np.testing.assert_array_equal(log.q, np.array([m[3] for m in raw]))
    np.testing.assert_array_equal(log.effort, np.array([m[5] for m in raw]))
    back = log.reorder(NAMES)
    np.testing.assert_array_equal(back.q[:, 0], log.q[:, 3])
    with pytest.raises(ValueError, match="joint 'joint9' is in no message"):
        log.reorder(NAMES + ["joint9"])


def test_absent_velocity_and_effort_are_none(tmp_path):
    path = write_log(tmp_path / "b.bag", "ros1", [(NAMES, 50.0, 0.0)], duration=0.5, effort=False, velocity=False)
    log = cd.read_log(path)
    assert log.qd is None and log.effort is None and log.q.shape == (25, 7)


def test_csv_log_with_efforts(tmp_path):
    t = np.linspace(0.5, 1.5, 41)
    q, qd, effort = motion(NAMES, t)
    cols = ["time"] + NAMES + [j + "_vel" for j in NAMES] + [j + "_effort" for j in NAMES]
    rows = np.column_stack([t, q, qd, effort])
    path = tmp_path / "log.csv"
    path.write_text("# a comment\n" + ",".join(cols) + "\n" + "\n".join(",".join(f"{x:.17g}" for x in r) for r in rows))
    log = cd.read_log(path)
    assert log.joint_names == tuple(NAMES)
    np.testing.assert_array_equal(log.t, t)
    np.testing.assert_array_equal(log.q, q)
    np.testing.assert_array_equal(log.qd, qd)
    np.testing.assert_array_equal(log.effort, effort)
    path.write_text(",".join(cols[:-1]) + "\n" + "\n".join(",".join(f"{x:.17g}" for x in r[:-1]) for r in rows))
    with pytest.raises(ValueError, match="missing effort column.*joint7_effort"):
        cd.read_log(path)


def _fault(kind):
    def edit(msgs):
        msgs = [list(m) for m in msgs]
        if kind == "backwards":
            msgs[10][1:], msgs[11][1:] = msgs[11][1:], msgs[10][1:]  # recorded out of stamp order
        elif kind == "duplicate":
            msgs[11][1] = msgs[10][1]
        elif kind == "gap":
            del msgs[20:60]
        elif kind in ("nan_q", "nan_qd"):
            msgs[30][3 if kind == "nan_q" else 4] = np.where(np.arange(7) == 2, np.nan, msgs[30][3])
        return [tuple(m) for m in msgs]
    return edit


@pytest.mark.parametrize("fault, message", [
    ("backwards", r"header stamp goes backwards at message 11 \(t = 0\.1 s; 1 time"),
    ("duplicate", r"header stamp repeats at message 11 \(t = 0\.1 s"),
    ("gap", r"gap of 0\.41 s after message 19 \(t = 0\.19 s; median step 0\.01 s; 1 gap"),
])
def test_stamp_faults_are_damaged_findings_with_topic_and_time(tmp_path, fault, message):
    path = write_log(tmp_path / "f.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=1.0, edit=_fault(fault))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = cd.read_log(path, joint_names=NAMES)
    (finding,) = log.findings
    assert finding.kind == "damaged" and re.search(message, finding.message), finding
    assert finding.message.startswith(f"{path}:/joint_states: ")
    assert log.source == str(path)
    assert np.all(np.diff(log.t) > 0)
    q = expected(log)[0]
    assert np.abs(log.q - q).max() < 1e-12  # the samples kept are the motion's (sorted, repeated dropped)


def test_nan_velocity_is_a_warning_and_dropped(tmp_path):
    path = write_log(tmp_path / "f.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=1.0, edit=_fault("nan_qd"))
    with pytest.warns(cd.LogWarning, match=r"joint 'joint3' velocity is nan at t = 0\.3 s; velocity ignored") as w:
        log = cd.read_log(path, joint_names=NAMES)
    assert all(f"{path}:/joint_states" in str(x.message) for x in w)
    assert log.qd is None and log.findings == ()


def test_nan_position_is_an_error_naming_joint_topic_and_time(tmp_path):
    path = write_log(tmp_path / "f.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=1.0, edit=_fault("nan_q"))
    with pytest.raises(ValueError, match=r"f\.bag:/joint_states: joint 'joint3' position is nan at t = 0\.3 s"):
        cd.read_log(path)


def test_bad_inputs_are_one_line_errors(tmp_path):
    good = write_log(tmp_path / "g", "sqlite3", [(NAMES, 50.0, 0.0)], duration=0.2,
                     extra_topics=[("/chatter", "std_msgs/msg/String")])
    cases = {
        "no topic '/js' (topics: /chatter, /joint_states)": {"path": good, "topic": "/js"},
        "topic /chatter is std_msgs/msg/String, expected sensor_msgs/msg/JointState":
            {"path": good, "topic": "/chatter"},
        "joint 'joint_9' is in no message (close: joint": {"path": good, "joint_names": NAMES[:3] + ["joint_9"]},
    }
    for suffix in (".bag", ".mcap", ".db3"):
        bad = tmp_path / f"garbage{suffix}"
        bad.write_bytes(b"this is not a bag\n" * 20)
        cases[f"{bad}: not a readable ROS bag"] = {"path": bad}
    (tmp_path / "folder").mkdir()
    cases["folder: not a ROS 2 bag folder (no metadata.yaml)"] = {"path": tmp_path / "folder"}
    (tmp_path / "notes.txt").write_text("hello")
    cases["notes.txt: not a log (expected .csv"] = {"path": tmp_path / "notes.txt"}
    cases["missing.mcap: no such file"] = {"path": tmp_path / "missing.mcap"}
    for message, kwargs in cases.items():
        with pytest.raises(ValueError) as info:
            cd.read_log(**kwargs)
        assert message in str(info.value) and "\n" not in str(info.value), (message, str(info.value))


def test_memory_is_bounded_by_the_samples_kept(tmp_path):
    path = write_log(tmp_path / "m", "mcap", [(NAMES, 1000.0, 0.0)], duration=20.0)
    tracemalloc.start()
    try:
        log = cd.read_log(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = log.q.nbytes + log.qd.nbytes + log.effort.nbytes + log.t.nbytes
    # 20,000 deserialised messages held as objects would take ~1 kB each (> 20 MB)
    assert peak < 5 * kept, (peak, kept)


def test_unstamped_messages_need_the_receive_time(tmp_path):
    def unstamped(msgs):
        return [(m[0], 0) + tuple(m[2:]) for m in msgs]

    path = write_log(tmp_path / "u.bag", "ros1", [(NAMES, 100.0, 0.0)], duration=1.0, edit=unstamped)
    with pytest.raises(ValueError, match=r"u\.bag:/joint_states: every header stamp .* is 0 s .*stamps=\"receive\""):
        cd.read_log(path)
    log = cd.read_log(path, stamps="receive")
    raw = messages([(NAMES, 100.0, 0.0)], 1.0)
    np.testing.assert_array_equal(log.t, (np.array([m[0] for m in raw]) - raw[0][0]) * 1e-9)
    np.testing.assert_array_equal(log.q, np.array([m[3] for m in raw]))
