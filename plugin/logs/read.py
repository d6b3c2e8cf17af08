"""``read_log``: one entry point for every joint log format."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from composedyn.logs.joint_log import JointLog


def read_log(path, topic: str = "/joint_states", joint_names=None, stamps: str = "header",
             gap_factor: float = 10.0, dependent=()) -> JointLog:
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
        A step longer than this many median steps of a publisher is reported as a gap.
    dependent : sequence of str
        Mimic (dependent) joints: a CSV column naming one is an error; bags may carry them (dropped).

    Returns
    -------
    JointLog
        ``t`` (T,) s from the earliest header stamp (CSV: the file's times),
        ``q`` (T, n), ``qd`` and ``effort`` (T, n) or None.

    Raises
    ------
    ValueError
        One line naming the file (and topic): not a log, no such topic (the topics
        present are listed), a topic of another type, a joint in no message, a
        non-finite position.  Gaps, backwards or duplicate stamps and non-finite
        velocities or efforts are :class:`~composedyn.logs.LogWarning` (see
        :mod:`composedyn.logs.merge`).
    """
    from composedyn.logs.bag import BAG_SUFFIXES, is_bag, read_publishers
    from composedyn.logs.csv_log import read_csv_log
    from composedyn.logs.merge import merge_publishers

    p = Path(path)
    if p.suffix.lower() == ".csv":
        return read_csv_log(path, joint_names, dependent)
    if not p.exists():
        raise ValueError(f"{path}: no such file or folder")
    if not is_bag(p):
        raise ValueError(f"{path}: not a log (expected .csv, {', '.join(BAG_SUFFIXES)} or a ROS 2 bag folder)")
    publishers, where = read_publishers(p, topic, stamps=stamps)
    log = merge_publishers(publishers, where, joint_names, gap_factor=gap_factor)
    return replace(log, source=str(path))  # messages above name "path:topic"; reports the file
