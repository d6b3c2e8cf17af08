"""Joint logs for identification: any object with ``.t``, ``.joint_names``, ``.q``, ``.qd``,
``.effort``, or a path that :func:`composedyn.read_log` reads (a CSV file in the trajectory
format with ``<joint>_effort`` columns, a ROS 1 or ROS 2 bag, an MCAP file).

CSV format (see :mod:`composedyn.torque_check.trajectory_csv`): a header row, ``time`` (or
``t``, s, strictly increasing), one position column per joint (named as the
joint), optionally ``<joint>_vel`` for every joint, and ``<joint>_effort``
(measured torque or force) for every joint.  Other ``_acc`` and ``_tau``
columns are ignored.

A log whose reader found it damaged or inconsistent (its ``findings``, see
:func:`composedyn.read_log`) is refused by :func:`refuse_findings` unless the
caller asks to fit it anyway: a spike or a lost stretch enters the fit as if
the robot had moved so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

MIN_SAMPLES = 50  # fewer samples cannot support a filter, its trimmed edges and a fit
MOVE_MIN = 1e-3  # rad or m: a joint whose logged range stays below this never moved


@dataclass(frozen=True)
class IdentificationLog:
    """One log in the robot's joint order: t (T,), q, effort (T, dof), qd (T, dof) or None."""

    source: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None
    effort: np.ndarray
    findings: tuple = ()


class DamagedLog(ValueError):
    """A log its reader found damaged or inconsistent: ``line`` says so (file and first finding),
    ``findings`` the reader's records (:class:`composedyn.logs.findings.LogFinding`), ``kind``
    the first one's kind; the message is ``line`` and how to fit the log anyway."""

    def __init__(self, line: str, findings: tuple, hint: str = "identify(..., ignore_findings=True) fits it anyway"):
        super().__init__(f"{line}; {hint}")
        self.line = line
        self.findings = tuple(findings)
        self.kind = self.findings[0].kind if self.findings else "damaged"


def as_identification_log(log, joint_names) -> IdentificationLog:
    """A :class:`IdentificationLog` in ``joint_names`` order from a path (CSV) or a log object."""
    if isinstance(log, (str, os.PathLike)):  # CSV with <joint>_effort columns, ROS bags, MCAP
        from composedyn.logs import read_log

        log = read_log(log, joint_names=joint_names)
    if isinstance(log, IdentificationLog):
        return log
    from composedyn.logs.findings import log_findings

    findings = log_findings(log)
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
    return IdentificationLog(source, t, q[:, idx], None if qd is None else qd[:, idx], effort[:, idx], findings)


def refuse_findings(logs: list, ignore: bool = False) -> None:
    """:class:`DamagedLog` (a ValueError) for the first log with reader findings, naming the first;
    nothing when ``ignore``."""
    for lg in logs:
        if lg.findings and not ignore:
            first = lg.findings[0]
            more = f" (and {len(lg.findings) - 1} more finding(s))" if len(lg.findings) > 1 else ""
            detail = first.message.removeprefix(f"{lg.source}:").strip()
            raise DamagedLog(f"{lg.source}: {first.kind} log, its samples cannot be trusted for a fit "
                             f"({detail}{more})", lg.findings)


def check_logs(logs: list, joint_names) -> None:
    """ValueError for a log too short, or a joint that never moves in any log (unidentifiable)."""
    for lg in logs:
        if lg.t.shape[0] < MIN_SAMPLES:
            raise ValueError(f"{lg.source}: {lg.t.shape[0]} samples, identification needs at least {MIN_SAMPLES}")
    span = np.max([np.ptp(lg.q, axis=0) for lg in logs], axis=0)
    still = [f"{j} (range {s:.2g})" for j, s in zip(joint_names, span) if s < MOVE_MIN]
    if still:
        raise ValueError(f"joint(s) never move in the logs, their parameters are unidentifiable: {', '.join(still)}")
