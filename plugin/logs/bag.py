"""Stream ``sensor_msgs/JointState`` messages out of ROS bags through ``rosbags``.

Reads ROS 1 ``.bag`` files, ROS 2 bag folders (sqlite3 or MCAP storage, with
``metadata.yaml``) and single ``.mcap`` / ``.db3`` files, without a ROS
install.  Messages are deserialised one at a time and their numbers appended
to flat ``array.array`` buffers, one per publisher (a connection and the set
of joint names it sends, whatever their order), so memory grows with the samples kept, never with Python message
objects.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

from composedyn.dynamics.extras import require
from composedyn.logs.integrity import count_finding

JOINT_STATE = "sensor_msgs/msg/JointState"
BAG_SUFFIXES = (".bag", ".mcap", ".db3")
_F64 = np.dtype(np.float64)


class Publisher:
    """Samples of every message with one set of joint names (columns in ``names`` order): stamps (ns)
    and positions, velocities, efforts flattened row by row.  Velocities are None once a message
    lacks them; a message without efforts gives a row of NaN efforts (None when no message has any)."""

    def __init__(self, names: tuple):
        self.names, self.stamps, self.seq = names, array("q"), array("q")
        self.position, self.velocity, self.effort = array("d"), array("d"), array("d")
        self.has_effort = False

    def add(self, stamp: int, position, velocity, effort, where: str, seq: int = 0, columns=None,
            width: int | None = None) -> None:
        """One message of ``width`` joint names (default: as many as :attr:`names`); ``columns``: the
        message's index of each of :attr:`names` (None: the same names in the same order)."""
        n = len(self.names)
        width = n if width is None else width
        if len(position) != width:
            raise ValueError(f"{where}: {width} joint names but {len(position)} positions")
        self.stamps.append(stamp)
        self.seq.append(seq)
        self.position.frombytes(_pick(position, columns).tobytes())
        if self.velocity is not None:
            if len(velocity) == width:
                self.velocity.frombytes(_pick(velocity, columns).tobytes())
            else:  # absent (empty) or malformed in this message: absent for the publisher
                self.velocity = None
        if len(effort) == width:
            self.effort.frombytes(_pick(effort, columns).tobytes())
            self.has_effort = True
        else:  # absent or malformed in this message: not measured at this stamp
            self.effort.frombytes(np.full(n, np.nan).tobytes())

    def arrays(self) -> tuple:
        """(stamps (T,) int64, q, qd, effort (T, n) or None)."""
        shape = (len(self.stamps), len(self.names))
        def as2d(a):
            return None if a is None else np.frombuffer(a, dtype=np.float64).reshape(shape)
        effort = as2d(self.effort) if self.has_effort else None
        return np.frombuffer(self.stamps, dtype=np.int64), as2d(self.position), as2d(self.velocity), effort

    def sequence(self) -> np.ndarray:
        """(T,) int64 header sequence numbers (ROS 1; zeros where the messages have none)."""
        return np.frombuffer(self.seq, dtype=np.int64)

    def select(self, names) -> Publisher:
        """The samples of the joints ``names`` (a subset of :attr:`names`, in this order)."""
        stamps, q, qd, effort = self.arrays()
        idx = [self.names.index(j) for j in names]
        out = Publisher(tuple(names))
        out.stamps, out.seq = array("q", stamps.tobytes()), array("q", self.sequence().tobytes())
        out.position = array("d", np.ascontiguousarray(q[:, idx]).tobytes())
        out.velocity = None if qd is None else array("d", np.ascontiguousarray(qd[:, idx]).tobytes())
        out.effort = array("d", np.ascontiguousarray(
            np.full((len(stamps), len(idx)), np.nan) if effort is None else effort[:, idx]).tobytes())
        out.has_effort = effort is not None
        return out


def _pick(x, columns):
    """x as float64, its entries ``columns`` (all, in order, for None)."""
    x = _float64(x)
    return x if columns is None else np.ascontiguousarray(x[columns])


def _float64(x):
    """x as a C-contiguous float64 array (rosbags' arrays already are: no copy)."""
    if type(x) is np.ndarray and x.dtype == _F64 and x.flags.c_contiguous:
        return x
    return np.ascontiguousarray(x, dtype=np.float64)


def is_bag(path) -> bool:
    """True for a path read as a ROS bag: a folder, or a .bag / .mcap / .db3 file."""
    p = Path(path)
    return p.is_dir() or p.suffix.lower() in BAG_SUFFIXES


def read_publishers(path, topic: str, stamps: str = "header",
                    joint_names=None) -> tuple[list[Publisher], str, list]:
    """The JointState samples on ``topic`` grouped by publisher (a connection and the set of joint
    names of its messages), a description of the source (``"path:topic"``) and findings
    (:class:`LogFinding`: fewer messages read than the bag records).

    ``joint_names``: the joints kept (None: all); the others are dropped from every message
    before its values are read (a message with none of them is skipped).

    ``stamps``: "header" (message header stamps) or "receive" (the bag's
    record time).  ValueError, one line naming the file, for a file that is not a
    bag, a missing topic (the topics present are listed), a topic of another
    type, or any error of the bag's reader (a truncated or corrupted file).
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
    wanted = None if joint_names is None else set(joint_names)
    publishers: dict[tuple, Publisher] = {}
    routes: dict[tuple, tuple] = {}  # (connection, ordered names) -> (publisher or None, columns)
    findings = []
    try:
        with AnyReader([p], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                present = sorted({c.topic for c in reader.connections})
                raise ValueError(f"{path}: no topic {topic!r} (topics: {', '.join(present) or 'none'})")
            other = [c.msgtype for c in connections if c.msgtype != JOINT_STATE]
            if other:
                raise ValueError(f"{path}: topic {topic} is {other[0]}, expected {JOINT_STATE}")
            read = 0
            for connection, received, raw in reader.messages(connections=connections):
                msg = reader.deserialize(raw, connection.msgtype)
                read += 1
                names = tuple(msg.name)
                route = routes.get((connection.id, names))
                if route is None:
                    route = routes[(connection.id, names)] = _route(publishers, connection.id, names, wanted)
                pub, columns = route
                if pub is None:
                    continue
                s = msg.header.stamp
                stamp = s.sec * 1_000_000_000 + s.nanosec if stamps == "header" else received
                pub.add(stamp, msg.position, msg.velocity, msg.effort, f"{path}: topic {topic}",
                        getattr(msg.header, "seq", 0), columns, len(names))
            recorded = max(sum(int(c.msgcount or 0) for c in connections), db3_count(p, topic))
            findings = count_finding(f"{path}:{topic}", recorded, read)
    except Exception as e:  # rosbags, sqlite3/apsw, decompressors, NumPy, struct: no common base class
        if isinstance(e, ValueError) and str(e).startswith(f"{path}:"):
            raise
        raise ValueError(f"{path}: not a readable ROS bag: {describe(e)}") from None
    return list(publishers.values()), f"{path}:{topic}", findings


def _route(publishers: dict, connection: int, names: tuple, wanted) -> tuple:
    """(publisher, columns) of messages naming ``names`` on ``connection``: the publisher of the
    connection and the set of kept names (created on first use), and the message's index of each
    of its names (None when they are the message's own, in order); (None, None) when no name is kept."""
    keep = [i for i, j in enumerate(names) if wanted is None or j in wanted]
    if not keep:
        return None, None
    kept = tuple(names[i] for i in keep)
    key = (connection, tuple(sorted(kept)))
    pub = publishers.get(key)
    if pub is None:
        pub = publishers[key] = Publisher(kept)
    index = {j: i for i, j in enumerate(names)}
    columns = np.array([index[j] for j in pub.names], dtype=np.intp)
    if len(columns) == len(names) and np.array_equal(columns, np.arange(len(names))):
        return pub, None
    return pub, columns


def db3_count(path: Path, topic: str) -> int:
    """The message count of ``topic`` in the metadata a single ``.db3`` file keeps of itself (0 when
    absent: other files, older schemas), which the rows read are compared with."""
    import sqlite3

    if path.is_dir() or path.suffix.lower() != ".db3":
        return 0
    try:
        from ruamel.yaml import YAML

        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            text = db.execute("SELECT metadata FROM metadata ORDER BY metadata_version DESC").fetchone()[0]
        info = YAML(typ="safe").load(text)
        return sum(int(x["message_count"]) for x in info["topics_with_message_count"]
                   if x["topic_metadata"]["name"] == topic)
    except Exception:  # no metadata table or an unreadable one: the rows are all there is
        return 0


def describe(e: BaseException) -> str:
    """One line of an exception: its message's first line, or its type when that says more."""
    if isinstance(e, MemoryError):
        return "a record claims more memory than is available (a damaged length field)"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    first = (str(e).splitlines() or [""])[0].strip()
    return f"{type(e).__name__}: {first}" if first else type(e).__name__
