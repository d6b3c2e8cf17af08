"""Stream ``sensor_msgs/JointState`` messages out of ROS bags through ``rosbags``.

Reads ROS 1 ``.bag`` files, ROS 2 bag folders (sqlite3 or MCAP storage, with
``metadata.yaml``) and single ``.mcap`` / ``.db3`` files, without a ROS
install.  Messages are deserialised one at a time and their numbers appended
to flat ``array.array`` buffers, one per publisher (distinct joint-name
list), so memory grows with the samples kept, never with Python message
objects.
"""

from __future__ import annotations

import sqlite3
from array import array
from pathlib import Path

import numpy as np

from composedyn.dynamics.extras import require

JOINT_STATE = "sensor_msgs/msg/JointState"
BAG_SUFFIXES = (".bag", ".mcap", ".db3")
_F64 = np.dtype(np.float64)


class Publisher:
    """Samples of every message with one joint-name list: stamps (ns) and
    positions, velocities, efforts flattened row by row (None once a message lacks them)."""

    def __init__(self, names: tuple):
        self.names, self.stamps = names, array("q")
        self.position, self.velocity, self.effort = array("d"), array("d"), array("d")

    def add(self, stamp: int, position, velocity, effort, where: str) -> None:
        n = len(self.names)
        if len(position) != n:
            raise ValueError(f"{where}: {n} joint names but {len(position)} positions")
        self.stamps.append(stamp)
        self.position.frombytes(_float64(position).tobytes())
        if self.velocity is not None:
            if len(velocity) == n:
                self.velocity.frombytes(_float64(velocity).tobytes())
            else:  # absent (empty) or malformed in this message: absent for the publisher
                self.velocity = None
        if self.effort is not None:
            if len(effort) == n:
                self.effort.frombytes(_float64(effort).tobytes())
            else:
                self.effort = None

    def arrays(self) -> tuple:
        """(stamps (T,) int64, q, qd, effort (T, n) or None)."""
        shape = (len(self.stamps), len(self.names))
        def as2d(a):
            return None if a is None else np.frombuffer(a, dtype=np.float64).reshape(shape)
        return np.frombuffer(self.stamps, dtype=np.int64), as2d(self.position), as2d(self.velocity), as2d(self.effort)


def _float64(x):
    """x as a C-contiguous float64 array (rosbags' arrays already are: no copy)."""
    if type(x) is np.ndarray and x.dtype == _F64 and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype=np.float64)


def is_bag(path) -> bool:
    """True for a path read as a ROS bag: a folder, or a .bag / .mcap / .db3 file."""
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in BAG_SUFFIXES


def read_publishers(path, topic: str, stamps: str = "header") -> tuple[list[Publisher], str]:
    """The JointState samples on ``topic`` grouped by publisher, and a description of the source.

    ``stamps``: "header" (message header stamps) or "receive" (the bag's
    record time).  ValueError, one line, for a file that is not a bag, a
    missing topic (the topics present are listed) or a topic of another type.
    """
    require("rosbags", f"{path}: reading a ROS bag")
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    p = Path(path)
    if not p.exists():
        raise ValueError(f"{path}: no such file or folder")
    if p.is_dir() and not (p / "metadata.yaml").is_file():
        raise ValueError(f"{path}: not a ROS 2 bag folder (no metadata.yaml)")
    if stamps not in ("header", "receive"):
        raise ValueError(f'stamps must be "header" or "receive", got {stamps!r}')
    publishers: dict[tuple, Publisher] = {}
    try:
        with AnyReader([p], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                present = sorted({c.topic for c in reader.connections})
                raise ValueError(f"{path}: no topic {topic!r} (topics: {', '.join(present) or 'none'})")
            other = [c.msgtype for c in connections if c.msgtype != JOINT_STATE]
            if other:
                raise ValueError(f"{path}: topic {topic} is {other[0]}, expected {JOINT_STATE}")
            for connection, received, raw in reader.messages(connections=connections):
                msg = reader.deserialize(raw, connection.msgtype)
                names = tuple(msg.name)
                pub = publishers.get(names)
                if pub is None:
                    pub = publishers[names] = Publisher(names)
                s = msg.header.stamp
                stamp = s.sec * 1_000_000_000 + s.nanosec if stamps == "header" else received
                pub.add(stamp, msg.position, msg.velocity, msg.effort, f"{path}: topic {topic}")
    except ValueError:
        raise
    except (OSError, sqlite3.Error, EOFError, KeyError, IndexError, AssertionError) as e:
        raise ValueError(f"{path}: not a readable ROS bag: {_first_line(e)}") from None
    except Exception as e:  # rosbags' reader errors have no common base class
        if type(e).__module__.startswith(("rosbags", "ruamel", "yaml", "zstandard", "lz4")):
            raise ValueError(f"{path}: not a readable ROS bag: {_first_line(e)}") from None
        raise
    return list(publishers.values()), f"{path}:{topic}"


def _first_line(e: Exception) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0]
