"""One summary row per checked log (:class:`LogRow`): what fleet tables, the HTML
report and ``composedyn torques`` outputs are made of, whether the log was checked
in this process or on a cluster worker."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from composedyn.logs.check import LogReport, Unreadable, check_file, log_warnings
from composedyn.logs.findings import finding_dicts
from composedyn.logs.verdict import reason

REFUSALS = (ValueError, ArithmeticError, MemoryError)  # a log the check refuses: an "unreadable" row


@dataclass(frozen=True)
class LogRow:
    """One line of a fleet check.

    ``verdict``: one of :data:`composedyn.logs.verdict.VERDICTS`: "within limits", "unchecked"
    (nothing exceeded, some limit missing), "exceeded", "unreadable" (``error`` says why, in
    one line naming the log), "damaged" or "inconsistent" (``findings`` say where).
    ``torque_ratio`` = max over joints with an effort limit and over time of |tau| / limit
    (tau predicted from the motion), None when no joint has one; ``velocity_ratio`` likewise
    for |qd|; a limit of 0 gives a ratio of inf where the value is not 0 (0 where it is);
    ``worst_joint`` the joint with the largest of its ratios (None when nothing was checked);
    ``unchecked`` the (joint, quantity) pairs without a limit.  ``residual``: the largest
    per-joint RMS of measured - predicted torque (None without efforts) at ``residual_joint``.
    ``measured_ratio``: as ``torque_ratio`` for the log's measured efforts (None without
    efforts); a measured effort beyond its limit is a violation (quantity "measured effort")
    and makes the verdict "exceeded".  In :meth:`to_dict` and :meth:`entry` an infinite
    ratio is the string "inf" (JSON has no infinity; the summary CSV writes inf).
    ``warnings``: the :class:`LogWarning` messages of reading the log (gaps, stamps, NaN
    velocities).  ``report``: the log's full JSON-ready report and ``text`` its summary
    lines (when asked for: ``keep_report``); ``plot``: PNG bytes of the worst joint's torque
    against its limit (logs that exceed a limit, when asked for).
    """

    path: str
    verdict: str
    worst_joint: str | None = None
    torque_ratio: float | None = None
    velocity_ratio: float | None = None
    residual: float | None = None
    residual_joint: str | None = None
    samples: int = 0
    duration: float = 0.0
    violations: int = 0
    unchecked: tuple = ()
    error: str | None = None
    findings: tuple = ()
    warnings: tuple = ()
    measured_ratio: float | None = None
    report: dict | None = field(default=None, repr=False)
    text: str = field(default="", repr=False)
    plot: bytes | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """The summary fields, JSON-ready (without report, text and plot)."""
        d = {k: getattr(self, k) for k in SUMMARY}
        d.update({k: json_ratio(d[k]) for k in RATIOS})
        d["unchecked"] = [{"joint": j, "quantity": q} for j, q in self.unchecked]
        d["findings"] = finding_dicts(self.findings)
        d["warnings"] = list(self.warnings)
        return d

    def entry(self) -> dict:
        """The log's entry in ``composedyn torques --json``: the full report (with verdict,
        findings, warnings and the summary ratios), or, for an unreadable log, its error."""
        if self.report is None:
            return {"source": self.path, "verdict": self.verdict, "ok": False, "complete": False,
                    "error": self.error, "findings": finding_dicts(self.findings),
                    "warnings": list(self.warnings)}
        return {**self.report, "worst_joint": self.worst_joint, **{k: json_ratio(getattr(self, k)) for k in RATIOS},
                "warnings": list(self.warnings)}


SUMMARY = tuple(k for k in LogRow.__dataclass_fields__ if k not in ("report", "text", "plot"))
RATIOS = ("torque_ratio", "velocity_ratio", "measured_ratio")


def json_ratio(x: float | None):
    """A ratio for JSON: the string "inf" for an infinite one (a limit of 0 exceeded)."""
    return "inf" if x == math.inf else x


def log_row(path, report: LogReport, plot: bool = False, keep_report: bool = False) -> LogRow:
    """The row of a checked log (``plot``: render the worst joint of a log that exceeds a
    limit; ``keep_report``: keep the full report dict and summary text)."""
    r = report.report
    tq = limit_ratios(r.limits, "effort", [j.peak_torque for j in r.joints])
    vel = limit_ratios(r.limits, "velocity", [j.peak_velocity for j in r.joints])
    measured = getattr(r, "measured_effort", None)
    either = np.fmax(tq, vel)
    k = None if np.all(np.isnan(either)) else int(np.nanargmax(either))  # closest to (or furthest past) a limit
    res = report.residual
    row = LogRow(str(path), report.verdict, None if k is None else r.joint_names[k], _peak(tq), _peak(vel),
                 None if res is None else float(res.rms.max()), None if res is None else res.worst_joint,
                 int(r.samples), float(r.t_end - r.t_start), len(r.violations) + int(r.omitted),
                 tuple(r.unchecked), findings=report.findings,
                 measured_ratio=None if measured is None else _peak(limit_ratios(r.limits, "effort", measured)))
    if keep_report:
        row = replace(row, report=report.to_dict(), text=report.summary())
    if plot and not r.ok and r.t is not None:
        from composedyn.logs.html import joint_plot_png

        if k is None or not r.violations or not any(v.joint == r.joint_names[k] for v in r.violations):
            k = r.joint_names.index(r.violations[0].joint) if r.violations else (k or 0)
        row = replace(row, plot=joint_plot_png(r, k))
    return row


def limit_ratios(limits, quantity: str, peaks) -> np.ndarray:
    """(n,) |peak| / limit of ``quantity`` ("effort" or "velocity"): NaN on joints without a limit,
    inf where a limit of 0 meets a value that is not 0, 0 where it meets 0."""
    peaks, limit = np.abs(np.asarray(peaks, float)), getattr(limits, quantity)
    positive = limit > 0
    ratio = np.where(peaks > 0, np.inf, 0.0)
    np.divide(peaks, limit, out=ratio, where=positive)
    return np.where(limits.checked(quantity), ratio, np.nan)  # NaN: no limit, no ratio


def _peak(ratios: np.ndarray) -> float | None:
    """Largest ratio over joints with a limit (inf for a limit of 0 exceeded); None when no joint has one."""
    return None if np.all(np.isnan(ratios)) else float(np.nanmax(ratios))


def check_row(robot, path, plot: bool = False, errors: str = "raise", files: dict | None = None,
              keep_report: bool = False, **options) -> LogRow:
    """:func:`~composedyn.logs.check.check_file` of ``path`` reduced to a :class:`LogRow`.

    A log that cannot be read (any exception of its reader: ValueError, OverflowError,
    MemoryError, UnicodeDecodeError, a bag library's errors, ...) or that the check refuses
    (ValueError, arithmetic or memory errors) raises ValueError, one line naming the log,
    or with ``errors="report"`` gives an "unreadable" row with that line as ``error``.
    ``files``: per-log outputs to write (see :func:`~composedyn.logs.check.check_file`).
    """
    error, cause = None, None
    with log_warnings() as found:
        try:
            report = check_file(robot, path, files=files, samples=plot, **options)
        except Unreadable as e:
            error, cause = reason(path, e.error), e.error
        except REFUSALS as e:
            error, cause = reason(path, e), e
    if error is None:
        return replace(log_row(path, report, plot=plot, keep_report=keep_report), warnings=tuple(found))
    if errors != "report":
        raise ValueError(error) from cause
    return LogRow(str(path), "unreadable", error=error, warnings=tuple(found))
