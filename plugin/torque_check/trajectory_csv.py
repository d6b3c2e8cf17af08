"""Read a joint trajectory from CSV in blocks, with one-line errors naming file, line and column.

Format: a header row, then one row per sample.  Columns: ``time`` (or ``t``,
seconds, strictly increasing), one column per joint named as in
``robot.joint_names`` (positions, rad or m), and optionally ``<joint>_vel``
and ``<joint>_acc`` for *every* joint.  ``<joint>_tau`` and
``<joint>_effort`` columns (computed or measured torques) are ignored, so the
table written by ``TrajectoryReport.to_csv`` reads back.  Lines starting with
``#`` and blank or whitespace-only lines are skipped.  A line longer than
:data:`MAX_LINE_CHARS` (1 Mi characters) or holding a NUL character (binary
data, not CSV text) is refused when it is reached, without reading the rest
of it.

Numbers are parsed by :func:`numpy.loadtxt` (its C parser) ``BLOCK`` rows at a
time, so memory does not grow with the file (:func:`csv_chunks`); when a block
does not parse or holds a bad value, the file is scanned line by line once to
name the first offending line and column.
"""

from __future__ import annotations

import csv
import warnings
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from composedyn.sampled import MIN_SAMPLES

SUFFIXES = ("", "_vel", "_acc")
IGNORED = ("_tau", "_effort")  # predicted torque (written by to_csv), measured torque (logs)
BLOCK = 50_000  # rows parsed at a time
MAX_LINE_CHARS = 1 << 20  # characters of one line: ~40,000 numbers


class LineError(ValueError):
    """A line that cannot be CSV text (too long, or binary): refused without a further scan."""


@dataclass(frozen=True)
class TrajectoryFile:
    """Samples read from a CSV: t (T,), q (T, n), qd and qdd (T, n) or None."""

    path: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    qdd: np.ndarray | None


def read_trajectory_csv(path, joint_names, dependent=()) -> TrajectoryFile:
    """Parse all of ``path`` for a robot with ``joint_names``; ValueError (one line) on bad input.

    ``dependent``: mimic joint names, rejected with a specific message.
    """
    blocks = list(csv_chunks(path, joint_names, dependent))
    cols = [np.concatenate(c) for c in zip(*blocks)]
    cols += [None] * (4 - len(cols))
    return TrajectoryFile(str(path), *cols)


def csv_chunks(path, joint_names, dependent=(), rows: int = BLOCK) -> Iterator[tuple]:
    """Blocks ``(t, q)``, ``(t, q, qd)`` or ``(t, q, qd, qdd)`` of at most ``rows`` samples of ``path``.

    The header is checked now (ValueError); the numbers as the blocks are read.
    """
    path = str(path)
    header_line, header = read_header(path)
    cols = _columns(path, header_line, header, tuple(joint_names), tuple(dependent))
    use = [cols["time"]] + [int(k) for s in SUFFIXES if cols[s] is not None for k in cols[s]]
    n = len(joint_names)
    return _blocks(path, header_line, header, use, n, rows)


def _blocks(path: str, header_line: int, header: list, use: list, n: int, rows: int) -> Iterator[tuple]:
    parts = (len(use) - 1) // n
    need = 2 if parts == 3 else MIN_SAMPLES
    count, last = 0, None
    with open(path, encoding="utf-8-sig") as f:
        for _ in range(header_line):
            f.readline(MAX_LINE_CHARS + 1)  # checked by read_header
        lines = numbered_lines(f, path, header_line)
        while True:
            data = load_numbers(path, header, (s for _, s in lines), use, rows)
            if len(data) == 0:
                break
            t = data[:, 0]
            if not np.isfinite(data).all() or (last is not None and t[0] <= last) or np.any(np.diff(t) <= 0):
                diagnose(path, header)
            count, last = count + len(t), t[-1]
            yield (t,) + tuple(np.ascontiguousarray(data[:, 1 + k * n:1 + (k + 1) * n]) for k in range(parts))
    if count < need:
        what = "to differentiate positions (or give _vel and _acc columns)" if need > 2 else ""
        raise ValueError(f"{path}: {count} sample(s), need at least {need} {what}".rstrip())


def streamable(path) -> bool:
    """Whether ``path`` is a trajectory CSV without measured efforts (``<joint>_effort``): such a
    file is checked block by block in bounded memory; a log with efforts goes through
    :func:`composedyn.read_log` (whole file) so that measured and predicted torques can be compared."""
    if not str(path).lower().endswith(".csv"):
        return False
    return not any(c.endswith("_effort") for c in read_header(str(path))[1])


def numbered_lines(f, path: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines of the open text file ``f`` after line ``start``, blank and
    whitespace-only lines skipped; :class:`LineError` for a line longer than :data:`MAX_LINE_CHARS`
    or holding a NUL character, read no further than the limit."""
    k = start
    while True:
        line = f.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        k += 1
        if "\x00" in line:
            raise LineError(f"{path}: line {k} holds NUL characters: binary data, not a CSV table")
        if len(line) > MAX_LINE_CHARS:
            raise LineError(f"{path}: line {k} is longer than {MAX_LINE_CHARS} characters "
                            "(composedyn.torque_check.trajectory_csv.MAX_LINE_CHARS): not a CSV table")
        if line.strip():
            yield k, line


def load_numbers(path: str, header: list, lines, use: list, rows: int | None = None) -> np.ndarray:
    """(rows, len(use)) numbers of the CSV text ``lines`` (an iterator, at most ``rows`` taken);
    ValueError naming the first bad line and column of ``path``.

    Every field is parsed, then the ``use`` columns taken: a row with more fields than the
    header is refused like one with fewer (``usecols`` alone would drop the extra fields)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data" at the end
            data = np.loadtxt(lines, delimiter=",", comments="#", max_rows=rows, ndmin=2)
    except LineError:
        raise
    except (ValueError, UnicodeDecodeError) as e:
        diagnose(path, header)
        raise ValueError(f"{path}: not a readable CSV table: {str(e).splitlines()[0]}") from None
    except (MemoryError, OverflowError) as e:
        raise ValueError(f"{path}: not a readable CSV table: {type(e).__name__}") from None
    if len(data) == 0:
        return np.empty((0, len(use)))
    if data.shape[1] != len(header):
        diagnose(path, header)
        raise ValueError(f"{path}: {data.shape[1]} fields per line, the header has {len(header)}")
    return data[:, use]


def read_header(path: str) -> tuple[int, list]:
    """(number of lines up to and including the header, header names)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # tolerate a byte-order mark
            for k, line in numbered_lines(f, path):
                if not line.lstrip().startswith("#"):
                    return k, [c.strip() for c in next(csv.reader([line]))]
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
    raise ValueError(f"{path}: empty file, expected a header row (time, joint names)")


def _columns(path: str, header_line: int, header: list, joints: tuple, dependent: tuple) -> dict:
    """Column indices: "time" -> int, suffix -> (n,) index array or None (``header`` is line
    ``header_line`` of ``path``)."""
    where = {}
    for k, name in enumerate(header):
        if name in where:
            raise ValueError(f"{path}: line {header_line}: column {name!r} appears twice")
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
    if out["_acc"] is not None and out["_vel"] is None:
        raise ValueError(f"{path}: _acc columns need _vel columns too")
    return out


def diagnose(path: str, header: list) -> None:
    """Scan ``path`` line by line (streaming) and raise a ValueError naming the first bad
    line and column: field count, not a number, not finite, time not increasing."""
    tcol = next(k for k, c in enumerate(header) if c in ("time", "t"))
    last = None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = ((k, r) for k, r in ((k, next(csv.reader([line]))) for k, line in numbered_lines(f, path))
                    if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#"))
            next(rows)  # the header
            for line, row in rows:
                if len(row) != len(header):
                    raise ValueError(f"{path}: line {line}: {len(row)} fields, the header has {len(header)}")
                for c, cell in enumerate(row):
                    try:
                        x = float(cell)
                    except ValueError:
                        raise ValueError(f"{path}: line {line}, column {header[c]!r}: not a number: {cell!r}") from None
                    if not np.isfinite(x):
                        raise ValueError(f"{path}: line {line}, column {header[c]!r}: {cell.strip()} is not finite")
                t = float(row[tcol])
                if last is not None and t <= last[1]:
                    what = "duplicate time" if t == last[1] else "time goes backwards:"
                    raise ValueError(f"{path}: line {line}: {what} {t:g} after {last[1]:g} (line {last[0]})")
                last = (line, t)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text (CSV) file") from None
    except csv.Error as e:
        raise ValueError(f"{path}: not a readable CSV file: {e}") from None
