"""Write JointState logs with ``rosbags`` itself: ROS 1 bags, ROS 2 bags (sqlite3, MCAP),
single .mcap / .db3 files, from a known analytic motion."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from composedyn.dynamics.extras import require

KINDS = ("ros1", "sqlite3", "mcap", "mcap_file", "db3_file")


def motion(names, t, speed=1.0, center=None):
    """q, qd, effort (T, n) of the analytic motion q_j = c_j + a_j sin(w_j t + p_j), effort_j = cos(w_j t) + j,
    with w_j = speed (1 + 0.4 j), j the number in the joint's name, c_j = center[name] (default 0)."""
    return _sines(names, t, speed, center)[:3]


def acceleration(names, t, speed=1.0):
    """qdd (T, n) of :func:`motion`."""
    return _sines(names, t, speed, None)[3]


def _sines(names, t, speed, center):
    k = np.array([int("".join(c for c in n if c.isdigit()) or 0) for n in names], dtype=float)
    a, w, p = 0.3 + 0.1 * k, speed * (1.0 + 0.4 * k), 0.2 * k
    c = np.array([(center or {}).get(n, 0.0) for n in names])
    t = np.asarray(t, float)[:, None]
    s = np.sin(w * t + p)
    return c + a * s, a * w * np.cos(w * t + p), np.cos(w * t) + k, -a * w * w * s


def messages(publishers, duration, seed=0, start_ns=1_700_000_000 * 10**9, effort=None, speed=1.0,
             center=None):
    """[(record ns, header ns, names, q, qd, effort, publisher index)] in record order.

    ``publishers``: [(joint names in the order published, rate Hz, stamp jitter s)];
    ``effort``: None (the motion's) or a function (names, t (T,)) -> (T, n); ``speed``, ``center``: see motion.
    """
    rng = np.random.default_rng(seed)
    out = []
    for k, (names, rate, jitter) in enumerate(publishers):
        nominal = np.arange(0.0, duration, 1.0 / rate)
        stamp = nominal + rng.uniform(-jitter, jitter, len(nominal))
        stamp[0] = nominal[0]
        q, qd, eff = motion(names, stamp, speed, center)
        if effort is not None:
            eff = effort(names, stamp)
        for i in range(len(nominal)):
            out.append((start_ns + round(nominal[i] * 1e9) + k, start_ns + round(stamp[i] * 1e9),
                        list(names), q[i], qd[i], eff[i], k))
    out.sort(key=lambda m: m[0])
    return out


def write_log(path: Path, kind: str, publishers, duration=2.0, topic="/joint_states", seed=0,
              extra_topics=(), effort=True, velocity=True, edit=None, speed=1.0,
              center=None, sequence=False) -> Path:
    """Write a bag of ``kind`` (see KINDS) at ``path``; return the path to pass to read_log.

    ``extra_topics``: [(topic, msgtype)] written with one message each (std_msgs/String only).
    ``edit``: optional function(list of messages) -> list, to inject faults.
    ``effort``: True (the motion's), False (none) or a function (names, t) -> (T, n).
    ``sequence``: ROS 1 only: number the messages of each publisher 1, 2, ... in ``header.seq`` (else 0).
    """
    require("rosbags", "writing ROS bags")
    from rosbags.typesys import Stores, get_typestore

    msgs = messages(publishers, duration, seed, effort=effort if callable(effort) else None, speed=speed,
                    center=center)
    if edit is not None:
        msgs = edit(msgs)
    ros1 = kind == "ros1"
    ts = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
    JS, Header = ts.types["sensor_msgs/msg/JointState"], ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    String = ts.types["std_msgs/msg/String"]

    counts: dict = {}

    def joint_state(stamp, names, q, qd, eff):
        h = {"stamp": Time(sec=stamp // 10**9, nanosec=stamp % 10**9), "frame_id": ""}
        if ros1:
            key = tuple(names)
            counts[key] = counts.get(key, 0) + 1
            h["seq"] = counts[key] if sequence else 0
        empty = np.zeros(0)
        return JS(header=Header(**h), name=names, position=np.ascontiguousarray(q, float),
                  velocity=np.ascontiguousarray(qd, float) if velocity else empty,
                  effort=np.ascontiguousarray(eff, float) if effort else empty)

    serialize = ts.serialize_ros1 if ros1 else ts.serialize_cdr
    if ros1:
        from rosbags.rosbag1 import Writer

        with Writer(path) as w:
            cons = [w.add_connection(topic, JS.__msgtype__, typestore=ts, callerid=f"/driver{k}")
                    for k in range(len(publishers))]
            extra = [(w.add_connection(name, typ, typestore=ts), typ) for name, typ in extra_topics]
            _write(w, cons, extra, msgs, joint_state, serialize, String)
        return path
    from rosbags.rosbag2 import StoragePlugin, Writer

    storage = StoragePlugin.SQLITE3 if kind in ("sqlite3", "db3_file") else StoragePlugin.MCAP
    with Writer(path, version=9, storage_plugin=storage) as w:
        con = w.add_connection(topic, JS.__msgtype__, typestore=ts)
        extra = [(w.add_connection(name, typ, typestore=ts), typ) for name, typ in extra_topics]
        _write(w, [con] * len(publishers), extra, msgs, joint_state, serialize, String)
    if kind.endswith("_file"):
        return next(path.glob("*.mcap" if kind == "mcap_file" else "*.db3"))
    return path


def _write(w, cons, extra, msgs, joint_state, serialize, String):
    for con, typ in extra:
        w.write(con, msgs[0][0], serialize(String(data="hello"), typ))
    for rec, stamp, names, q, qd, eff, k in msgs:
        w.write(cons[k], rec, serialize(joint_state(stamp, names, q, qd, eff), "sensor_msgs/msg/JointState"))
