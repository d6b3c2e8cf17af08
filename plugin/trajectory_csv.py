"""Read a joint trajectory from CSV, with one-line errors naming file, line and column.

Format: a header row, then one row per sample.  Columns: ``time`` (or ``t``,
seconds, strictly increasing), one column per joint named as in
``robot.joint_names`` (positions, rad or m), and optionally ``<joint>_vel``
and ``<joint>_acc`` for *every* joint.  ``<joint>_tau`` columns are ignored,
so the table written by ``TrajectoryReport.to_csv`` reads back.  Lines
starting with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from composedyn.trajectory import MIN_SAMPLES

SUFFIXES = ("", "_vel", "_acc")
IGNORED = ("_tau", "_effort")  # predicted torque (written by to_csv), measured torque (logs)


@dataclass(frozen=True)
class TrajectoryFile:
    """Samples read from a CSV: t (T,), q (T, n), qd and qdd (T, n) or None."""

    path: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    qdd: np.ndarray | None


def read_trajectory_csv(path, joint_names, dependent=()) -> TrajectoryFile:
    """Parse ``path`` for a robot with ``joint_names``; ValueError (one line) on bad input.

    ``dependent``: mimic joint names, rejected with a specific message.
    """
    path = str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # tolerate a byte-order mark
            rows = [(k, r) for k, r in enumerate(csv.reader(f), start=1)
                    if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text (CSV) file") from None
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, expected a CSV file") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    except csv.Error as e:
        raise ValueError(f"{path}: not a readable CSV file: {e}") from None
    if not rows:
        raise ValueError(f"{path}: empty file, expected a header row (time, joint names)")
    header_line, header = rows[0]
    cols = _columns(path, [c.strip() for c in header], tuple(joint_names), tuple(dependent))
    data = _numbers(path, header, rows[1:])
    t = data[:, cols["time"]]
    _check_times(path, t, [k for k, _ in rows[1:]])
    arrays = {s: (None if cols[s] is None else data[:, cols[s]]) for s in SUFFIXES}
    need = 2 if arrays["_vel"] is not None and arrays["_acc"] is not None else MIN_SAMPLES
    if len(t) < need:
        what = "to differentiate positions (or give _vel and _acc columns)" if need > 2 else ""
        raise ValueError(f"{path}: {len(t)} sample(s), need at least {need} {what}".rstrip())
    return TrajectoryFile(path, t, arrays[""], arrays["_vel"], arrays["_acc"])


def _columns(path: str, header: list, joints: tuple, dependent: tuple) -> dict:
    """Column indices: "time" -> int, suffix -> (n,) index array or None."""
    where = {}
    for k, name in enumerate(header):
        if name in where:
            raise ValueError(f"{path}: line 1: column {name!r} appears twice")
        where[name] = k
    tcol = [c for c in ("time", "t") if c in where]
    if not tcol:
        raise ValueError(f"{path}: no time column (expected 'time' or 't' in the header)")
    known = {tcol[0]} | {j + s for j in joints for s in SUFFIXES + IGNORED}
    for name in header:
        if name not in known:
            base = next((name[: -len(s)] for s in SUFFIXES[1:] + IGNORED if name.endswith(s)), name)
            if base in dependent:
                raise ValueError(f"{path}: column {name!r} is a mimic (dependent) joint; give independent joints only")
            raise ValueError(f"{path}: column {name!r} names no joint of the robot (joints: {', '.join(joints)})")
    out = {"time": where[tcol[0]]}
    for s in SUFFIXES:
        present = [j for j in joints if j + s in where]
        if s and not present:
            out[s] = None
            continue
        missing = [j + s for j in joints if j + s not in where]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        out[s] = np.array([where[j + s] for j in joints])
    return out


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
