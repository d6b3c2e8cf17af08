"""``read_log``: one entry point for every joint log format."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from composedyn.logs.joint_log import JointLog

MAX_CSV_BYTES = 1 << 30  # 1 GiB: a CSV log is read whole into memory


def read_log(path, topic: str = "/joint_states", joint_names=None, stamps: str = "header",
             gap_factor: float = 10.0, dependent=(), max_csv_bytes: int | None = MAX_CSV_BYTES) -> JointLog:
    """Read joint positions, velocities and efforts from a log file.

    Parameters
    ----------
    path : str or Path
        A CSV trajectory (``time``, one column per joint, optional ``<joint>_vel``,
        ``<joint>_acc``, ``<joint>_effort``), a ROS 1 ``.bag``, a ROS 2 bag folder
        (sqlite3 or MCAP storage), or a single ``.mcap`` / ``.db3`` file.
    topic : str
        The ``sensor_msgs/JointState`` topic of a bag (ignored for CSV).
    joint_names : sequence of str or None
        Columns wanted, in this order (e.g. ``robot.joint_names``); other joints
        of the log are dropped.  None: every joint, in order of first appearance.
    stamps : "header" or "receive"
        Bag time base: the messages' header stamps, or the time the bag recorded them.
    gap_factor : float
        A step longer than this many median steps of a publisher is a gap (a "damaged" finding).
    dependent : sequence of str
        Mimic (dependent) joints: a CSV column naming one is an error; bags may carry them (dropped).
    max_csv_bytes : int or None
        A CSV log larger than this is refused before it is parsed (default
        :data:`MAX_CSV_BYTES` = 1 GiB; None: no limit).  Bags are streamed
        message by message (memory grows with the joint samples kept only) and have no size limit.

    Returns
    -------
    JointLog
        ``t`` (T,) s from the earliest header stamp (CSV: the file's times),
        ``q`` (T, n), ``qd`` and ``effort`` (T, n) or None, and ``findings``:
        what makes the log "damaged" (messages lost, stamps or sequence numbers
        that jump, single-sample spikes) or "inconsistent" (logged velocities
        against positions, logged accelerations against velocities), each naming topic and time; the rules and their
        tolerances are in :mod:`composedyn.logs.integrity`.

    Raises
    ------
    ValueError
        One line naming the file (and topic): not a log, no such topic (the topics
        present are listed), a topic of another type, a joint in no message, a
        non-finite position, a file the bag reader cannot read (truncated,
        corrupted), a CSV over the size limit, a CSV row whose field count is not the
        header's, a non-finite CSV number.  In a bag, non-finite velocities or efforts
        are :class:`~composedyn.logs.LogWarning` (see :mod:`composedyn.logs.merge`).
    """
    from composedyn.dynamics.errors import MissingExtra
    from composedyn.logs.bag import describe

    try:
        log = _read(path, topic, joint_names, stamps, gap_factor, dependent, max_csv_bytes)
    except ValueError as e:
        first = (str(e).splitlines() or ["not readable"])[0]
        raise ValueError(first if first.startswith(str(path)) else f"{path}: {first}") from None
    except MissingExtra:  # the reader's package is not installed: the log is not at fault
        raise
    except Exception as e:  # a reader's own error type (NumPy, csv, codecs, memory): one line naming the file
        raise ValueError(f"{path}: not a readable log: {describe(e)}") from None
    return log


def _read(path, topic, joint_names, stamps, gap_factor, dependent, max_csv_bytes) -> JointLog:
    from composedyn.logs.bag import BAG_SUFFIXES, is_bag, read_publishers
    from composedyn.logs.csv_log import read_csv_log
    from composedyn.logs.integrity import sample_findings
    from composedyn.logs.merge import merge_publishers

    p = Path(path)
    if p.suffix.lower() == ".csv":
        if max_csv_bytes is not None and p.is_file() and p.stat().st_size > max_csv_bytes:
            raise ValueError(f"{path}: {p.stat().st_size} bytes, more than the CSV log size limit of "
                             f"{max_csv_bytes} bytes (read_log(max_csv_bytes=...))")
        log = read_csv_log(path, joint_names, dependent)
    else:
        if not p.exists():
            raise ValueError(f"{path}: no such file or folder")
        if not is_bag(p):
            raise ValueError(f"{path}: not a log (expected .csv, {', '.join(BAG_SUFFIXES)} or a ROS 2 bag folder)")
        publishers, where, findings = read_publishers(p, topic, stamps=stamps, joint_names=joint_names)
        log = merge_publishers(publishers, where, joint_names, gap_factor=gap_factor)
        log = replace(log, source=str(path), findings=tuple(findings) + log.findings)  # reports name the file
    where = log.source if p.suffix.lower() == ".csv" else f"{path}:{topic}"
    found = sample_findings(log.t, log.joint_names, log.q, log.qd, log.effort, where, qdd=log.qdd)
    return replace(log, findings=log.findings + tuple(found)) if found else log
