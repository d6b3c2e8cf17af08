"""Bags whose measured efforts are partly missing, that carry joints the robot lacks, whose
JointState name order varies, and LogWarnings of logs checked in parallel threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import composedyn as cd

pytest.importorskip("rosbags")

from rosbags.rosbag1 import Writer  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

from composedyn.logs.check import check_log, log_warnings  # noqa: E402
from composedyn.logs.rows import check_row  # noqa: E402

START = 1_700_000_000 * 10**9
PANDA = cd.load("panda")
NAMES = list(PANDA.joint_names)
TS = get_typestore(Stores.ROS1_NOETIC)
JS, HEADER, TIME = (TS.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                           "builtin_interfaces/msg/Time"))


def motion(t):
    c = (PANDA.limits["lower"] + PANDA.limits["upper"]) / 2
    w = np.linspace(1.0, 2.2, 7)
    s, co = np.sin(w * t[:, None]), np.cos(w * t[:, None])
    q, qd, qdd = c + 0.3 * s, 0.3 * w * co, -0.3 * w * w * s
    return q, qd, PANDA.inverse_dynamics(q, qd, qdd)


def message(stamp, names, pos, vel=None, eff=None, seq=0):
    def arr(a):
        return np.ascontiguousarray([] if a is None else a, dtype=float)
    h = HEADER(seq=seq, stamp=TIME(sec=stamp // 10**9, nanosec=stamp % 10**9), frame_id="")
    return JS(header=h, name=list(names), position=arr(pos), velocity=arr(vel), effort=arr(eff))


def write(path, msgs):
    """msgs: (receive ns, JointState) in any order, one connection on /joint_states."""
    with Writer(path) as w:
        con = w.add_connection("/joint_states", JS.__msgtype__, typestore=TS)
        for rec, m in sorted(msgs, key=lambda x: x[0]):
            w.write(con, rec, TS.serialize_ros1(m, JS.__msgtype__))
    return path


def arm(t, eff_edit=None, names=NAMES):
    q, qd, tau = motion(t)
    eff = tau.copy()
    eff[(t > 1.0) & (t < 1.5), 0] = 150.0  # joint1 beyond its 87 N m limit
    out = []
    for k, tk in enumerate(t):
        ns = START + int(round(tk * 1e9))
        e = eff[k].copy()
        if eff_edit is not None:
            e = eff_edit(k, e)
        idx = [NAMES.index(j) for j in names]
        out.append((ns + 1000, message(ns, names, q[k, idx], qd[k, idx], None if e is None else e[idx], k + 1)))
    return out


T = np.arange(0, 4, 0.01)


def nan_joint4(k, e):
    if k == 200:
        e[3] = np.nan
    return e


def checked(path):
    with log_warnings() as found:
        report = check_log(PANDA, str(path))
    return report, found


def test_one_nan_effort_keeps_the_other_joints_checked(tmp_path):
    report, found = checked(write(tmp_path / "nan.bag", arm(T, nan_joint4)))
    assert report.verdict == "exceeded"
    assert ("joint4", "measured effort") in report.report.unchecked
    assert not report.report.complete
    assert any("joint4 (1 of 400 samples, first at t = 2 s)" in w for w in found)


@pytest.mark.parametrize("k", [0, len(T) - 1])
def test_a_message_without_efforts_leaves_the_rest_checked(tmp_path, k):
    report, found = checked(write(tmp_path / "empty.bag", arm(T, lambda i, e: None if i == k else e)))
    assert report.verdict == "exceeded"
    assert {j for j, q in report.report.unchecked if q == "measured effort"} == set(NAMES)
    assert found and "unchecked" in found[0]


def test_missing_efforts_are_unchecked_not_within_limits(tmp_path):
    def calm(k, e):  # nothing exceeded; joint4 missing at one sample
        e = np.clip(e, -10, 10)
        if k == 200:
            e[3] = np.nan
        return e
    report, _ = checked(write(tmp_path / "calm.bag", arm(T, calm)))
    assert report.verdict == "unchecked"
    assert report.report.unchecked == (("joint4", "measured effort"),)
    d = report.to_dict()
    assert d["ok"] is False and {"joint": "joint4", "quantity": "measured effort"} in d["unchecked"]


def test_a_driver_without_efforts_leaves_the_other_joints_checked(tmp_path):
    q, qd, _ = motion(T)
    msgs = arm(T, names=NAMES[:5])
    for k, tk in enumerate(T):
        ns = START + int(round(tk * 1e9))
        msgs.append((ns + 5000, message(ns, NAMES[5:], q[k, 5:], qd[k, 5:])))
    report, found = checked(write(tmp_path / "wrist.bag", msgs))
    assert report.verdict == "exceeded"
    assert [j for j, q in report.report.unchecked if q == "measured effort"] == ["joint6", "joint7"]
    assert report.to_dict()["measured_effort"]["joint6"] is None
    assert "joint6 (400 of 400 samples" in found[0]
    assert set(report.residual.joint_names) == set(NAMES[:5])


def gripper(t, stamp=lambda ns: ns, pos=(0.02, 0.02), eff=None):
    return [(START + int(round(tk * 1e9)) + 2000,
             message(stamp(START + int(round(tk * 1e9))), ["finger_joint1", "finger_joint2"],
                     pos, None, eff)) for tk in t]


@pytest.mark.parametrize("fingers", [
    gripper(np.arange(0, 4, 0.1), stamp=lambda ns: 0),
    gripper(np.arange(0, 4, 0.1), pos=(np.nan, np.nan)),
    gripper(np.arange(0, 4, 0.1), pos=None, eff=(1.0, 1.0)),
    gripper(np.r_[np.arange(0, 1, 0.1), 3.5, 3.6]),
    gripper([-60.0]),
], ids=["unstamped", "nan", "effort-only", "on-change", "latched"])
def test_joints_the_robot_lacks_do_not_count(tmp_path, fingers):
    path = write(tmp_path / "g.bag", arm(T, lambda k, e: np.clip(e, -10, 10)) + fingers)
    log = cd.read_log(path, joint_names=NAMES)
    assert log.findings == () and log.t[0] == 0 and log.t[-1] == pytest.approx(3.99)
    assert check_log(PANDA, str(path)).verdict == "within limits"


def test_name_order_varies_between_messages(tmp_path):
    rng = np.random.default_rng(0)
    orders = [rng.permutation(7) for _ in range(20)]
    q, qd, tau = motion(T)
    msgs = []
    for k, tk in enumerate(T):
        ns, idx = START + int(round(tk * 1e9)), orders[rng.integers(20)]
        msgs.append((ns + 1000, message(ns, [NAMES[i] for i in idx], q[k, idx], qd[k, idx], tau[k, idx], k + 1)))
    log = cd.read_log(write(tmp_path / "perm.bag", msgs), joint_names=NAMES)
    assert log.findings == ()
    np.testing.assert_array_equal(log.q, q)
    np.testing.assert_array_equal(log.effort, tau)


def test_warnings_stay_with_their_log_across_threads(tmp_path):
    nan_bag = write(tmp_path / "nan.bag", arm(T, nan_joint4))
    clean = write(tmp_path / "clean.bag", arm(T))
    paths = [nan_bag, clean] * 6
    rows: dict = {}
    start = threading.Barrier(4)

    def work(i0):
        start.wait()
        for i in range(i0, len(paths), 4):
            rows[i] = check_row(PANDA, str(paths[i]), errors="report")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, p in enumerate(paths):
        assert bool(rows[i].warnings) == (p == nan_bag), (i, rows[i].warnings)


def test_read_log_still_emits_log_warnings(tmp_path):
    with pytest.warns(cd.LogWarning, match="joint4"):
        cd.read_log(write(tmp_path / "nan.bag", arm(T, nan_joint4)), joint_names=NAMES)
