"""Joint logs for identification: any object with ``.t``, ``.joint_names``, ``.q``, ``.qd``,
``.effort``, or a CSV file in the trajectory format with ``<joint>_effort`` columns (other
file formats go through ``composedyn.read_log`` when it exists).

CSV format (see :mod:`composedyn.trajectory_csv`): a header row, ``time`` (or
``t``, s, strictly increasing), one position column per joint (named as the
joint), optionally ``<joint>_vel`` for every joint, and ``<joint>_effort``
(measured torque or force) for every joint.  Other ``_acc`` and ``_tau``
columns are ignored.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass

import numpy as np


MIN_SAMPLES = 50  # fewer samples cannot support a filter, its trimmed edges and a fit
MOVE_MIN = 1e-3  # rad or m: a joint whose logged range stays below this never moved


@dataclass(frozen=True)
class JointLog:
    """One log in the robot's joint order: t (T,), q, effort (T, dof), qd (T, dof) or None."""

    source: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    effort: np.ndarray


def read_effort_csv(path, joint_names) -> JointLog:
    """Read a trajectory CSV with ``<joint>_effort`` columns; ValueError (one line, naming the file)."""
    path = str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = [(k, r) for k, r in enumerate(csv.reader(f), start=1)
                    if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, expected a CSV log") from None
    except (UnicodeDecodeError, csv.Error):
        raise ValueError(f"{path}: not a readable CSV (UTF-8 text) file") from None
    if not rows:
        raise ValueError(f"{path}: empty file, expected a header row (time, joints, <joint>_effort)")
    header = [c.strip() for c in rows[0][1]]
    where = {c: k for k, c in enumerate(header)}
    tcol = next((c for c in ("time", "t") if c in where), None)
    if tcol is None:
        raise ValueError(f"{path}: no time column (expected 'time' or 't' in the header)")
    missing = [j for j in joint_names if j not in where]
    if missing:
        raise ValueError(f"{path}: missing position column(s) {', '.join(missing)}")
    no_effort = [j + "_effort" for j in joint_names if j + "_effort" not in where]
    if no_effort:
        raise ValueError(f"{path}: missing effort column(s) {', '.join(no_effort)} (measured torques are needed)")
    data = _numbers(path, header, rows[1:])
    t = data[:, where[tcol]]
    _check_times(path, t, [k for k, _ in rows[1:]])

    def cols(suffix):
        return data[:, [where[j + suffix] for j in joint_names]]

    has_vel = all(j + "_vel" in where for j in joint_names)
    return JointLog(path, t, cols(""), cols("_vel") if has_vel else None, cols("_effort"))


def as_joint_log(log, joint_names) -> JointLog:
    """A :class:`JointLog` in ``joint_names`` order from a path (CSV) or a log object."""
    if isinstance(log, (str, os.PathLike)):
        import composedyn

        if str(log).lower().endswith(".csv") or not hasattr(composedyn, "read_log"):
            return read_effort_csv(log, joint_names)
        log = composedyn.read_log(log)  # ROS bags and other formats, when the log reader is installed
    if isinstance(log, JointLog):
        return log
    source = str(getattr(log, "source", None) or getattr(log, "path", None) or type(log).__name__)
    try:
        names = list(log.joint_names)
        t = np.asarray(log.t, dtype=float)
        q = np.asarray(log.q, dtype=float)
        effort = None if log.effort is None else np.asarray(log.effort, dtype=float)
        qd = None if getattr(log, "qd", None) is None else np.asarray(log.qd, dtype=float)
    except AttributeError as e:
        raise ValueError(f"{source}: not a joint log (needs .t, .joint_names, .q, .qd, .effort): {e}") from None
    missing = [j for j in joint_names if j not in names]
    if missing:
        raise ValueError(f"{source}: the log has no joint(s) {', '.join(missing)} (it has {', '.join(names)})")
    if effort is None:
        raise ValueError(f"{source}: the log has no effort (measured torques are needed)")
    idx = [names.index(j) for j in joint_names]
    T = t.shape[0]
    for what, x in (("q", q), ("effort", effort), ("qd", qd)):
        if x is not None and (x.ndim != 2 or x.shape[0] != T):
            raise ValueError(f"{source}: {what} has shape {x.shape}, expected ({T}, {len(names)})")
        if x is not None and not np.all(np.isfinite(x[:, idx])):
            raise ValueError(f"{source}: {what} has non-finite values")
    if T > 1 and np.any(np.diff(t) <= 0):
        raise ValueError(f"{source}: time stamps are not strictly increasing")
    return JointLog(source, t, q[:, idx], None if qd is None else qd[:, idx], effort[:, idx])


def check_logs(logs: list, joint_names) -> None:
    """ValueError for a log too short, or a joint that never moves in any log (unidentifiable)."""
    for lg in logs:
        if lg.t.shape[0] < MIN_SAMPLES:
            raise ValueError(f"{lg.source}: {lg.t.shape[0]} samples, identification needs at least {MIN_SAMPLES}")
    span = np.max([np.ptp(lg.q, axis=0) for lg in logs], axis=0)
    still = [f"{j} (range {s:.2g})" for j, s in zip(joint_names, span) if s < MOVE_MIN]
    if still:
        raise ValueError(f"joint(s) never move in the logs, their parameters are unidentifiable: {', '.join(still)}")


def _numbers(path: str, header: list, rows: list) -> np.ndarray:
    """The numeric table (T, columns); errors name the line and column."""
    data = np.empty((len(rows), len(header)))
    for r, (line, row) in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"{path}: line {line}: {len(row)} fields, the header has {len(header)}")
        for c, cell in enumerate(row):
            try:
                x = float(cell)
            except ValueError:
                raise ValueError(f"{path}: line {line}, column {header[c].strip()!r}: not a number: {cell!r}") from None
            if not np.isfinite(x):
                raise ValueError(f"{path}: line {line}, column {header[c].strip()!r}: {cell.strip()} is not finite")
            data[r, c] = x
    return data


def _check_times(path: str, t: np.ndarray, lines: list) -> None:
    for k in np.flatnonzero(np.diff(t) <= 0) + 1:
        what = "duplicate time" if t[k] == t[k - 1] else "time goes backwards:"
        raise ValueError(f"{path}: line {lines[k]}: {what} {t[k]:g} after {t[k - 1]:g} (line {lines[k - 1]})")
