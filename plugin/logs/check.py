"""Torque check of one joint log: the trajectory report plus, when the log has
measured efforts, measured minus predicted torque per joint."""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from composedyn.logs.derivatives import choose_smoothing
from composedyn.logs.joint_log import JointLog, LogWarning
from composedyn.logs.residual import EffortResidual, effort_residual, finite_or_none

READ_OPTIONS = ("topic", "stamps", "gap_factor")
CHECK_OPTIONS = ("smoothing", "friction", "limits")


class LogReport:
    """A :class:`~composedyn.TrajectoryReport` of a log, its ``residual``
    (:class:`EffortResidual`, None without efforts), its ``findings`` (tuple of
    :class:`LogFinding`: the log is "damaged" or "inconsistent", see
    :mod:`composedyn.logs.integrity`) and ``derivatives`` (which spline
    differentiated it).  ``source``, ``to_csv`` and ``plot`` are the report's;
    ``ok`` is False when the log has findings; ``verdict``, ``summary`` and
    ``to_dict`` put the first finding before the limits."""

    def __init__(self, report, residual: EffortResidual | None, findings: tuple = (), derivatives: str = ""):
        self.report, self.residual = report, residual
        self.findings, self.derivatives = tuple(findings), derivatives

    def __getattr__(self, name):
        return getattr(self.report, name)

    @property
    def ok(self) -> bool:
        return self.report.ok and not self.findings

    def verdict(self) -> str:
        """"damaged: <where>" / "inconsistent: <where>" for a log with findings, else the report's verdict."""
        if self.findings:
            return f"{self.findings[0].kind}: {self.findings[0].message}"
        return self.report.verdict()

    def summary(self, max_lines: int = 50) -> str:
        text = self.report.summary(max_lines)
        if self.findings:
            text = "\n".join([f"{f.kind}: {f.message}" for f in self.findings]
                             + ["  the data as read: " + text[len(self.report.source) + 2:]])
        lines = [text] + ([f"  {self.derivatives}"] if self.derivatives else [])
        return "\n".join(lines + ([] if self.residual is None else self.residual.lines()))

    def to_dict(self) -> dict:
        d = self.report.to_dict()
        d.update(ok=self.ok, verdict=self.verdict(), findings=[asdict(f) for f in self.findings],
                 derivatives=self.derivatives)
        if self.residual is not None:
            d["effort_residual"] = self.residual.to_dict()
        return d


def check_log(robot, log, **options) -> LogReport:
    """Check one log (a path or a :class:`JointLog`) against ``robot``'s limits.

    ``options``: ``topic``, ``stamps``, ``gap_factor`` (see :func:`composedyn.read_log`),
    ``smoothing``, ``friction``, ``limits`` (see :func:`composedyn.check_trajectory`).  ``smoothing``
    absent or None: chosen by the kind of log (:mod:`composedyn.logs.derivatives`).  The report
    carries the log's findings.  ValueError messages name the log.
    """
    import composedyn as cd

    unknown = set(options) - set(READ_OPTIONS) - set(CHECK_OPTIONS)
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    if not isinstance(log, JointLog):
        log = cd.read_log(log, joint_names=robot.joint_names, dependent=getattr(robot, "mimic_joint_names", ()),
                          **{k: options[k] for k in READ_OPTIONS if k in options})
    else:
        log = log.for_robot(robot)
    check = {k: options[k] for k in CHECK_OPTIONS if k in options}
    check["smoothing"], derivatives = choose_smoothing(log.measured, options.get("smoothing"), log.t, log.q)
    try:
        report = cd.check_trajectory(robot, log.t, log.q, log.qd, log.qdd, source=log.source, **check)
        residual = None if log.effort is None else effort_residual(log.t, log.effort, report.tau, log.joint_names)
    except ValueError as e:
        raise ValueError(f"{log.source}: {e}") from None
    return LogReport(report, residual, log.findings, derivatives)


@dataclass(frozen=True)
class LogRow:
    """One line of a fleet check.

    ``verdict``: "ok" (within limits), "fail" (a limit exceeded) or "error" (the log
    could not be checked; ``error`` says why).  ``torque_ratio`` = max over joints and
    time of |tau| / effort limit; ``velocity_ratio`` likewise for |qd|; ``worst_joint``
    the joint with the largest of its two ratios; ``residual`` the largest per-joint RMS of measured - predicted torque
    (None without efforts) at ``residual_joint``.  ``plot``: PNG bytes of the worst
    joint's torque against its limit (failing logs, when asked for).  ``warnings``: the
    :class:`LogWarning` messages of reading the log (gaps, stamps, NaN velocities).
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
    error: str | None = None
    warnings: tuple = ()
    plot: bytes | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready (without the plot)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "plot"}
        d["warnings"] = list(self.warnings)
        return d


def log_row(path, report: LogReport, plot: bool = False) -> LogRow:
    """The fleet row of a checked log (``plot``: render the worst joint of a failing log)."""
    r = report.report
    with np.errstate(divide="ignore", invalid="ignore"):
        tq = np.abs([j.peak_torque for j in r.joints]) / r.effort
        vel = np.abs([j.peak_velocity for j in r.joints]) / r.velocity
    tq, vel = np.nan_to_num(tq, nan=0.0), np.nan_to_num(vel, nan=0.0)  # 0/inf and 0/0: no limit, no load
    k = int(np.argmax(np.maximum(tq, vel)))  # the joint closest to (or furthest past) a limit
    res = report.residual
    row = LogRow(str(path), "ok" if r.ok else "fail", r.joint_names[k], finite_or_none(float(tq.max())),
                 finite_or_none(float(vel.max())), None if res is None else float(res.rms.max()),
                 None if res is None else res.worst_joint, len(r.t), float(r.t[-1] - r.t[0]),
                 len(r.violations))
    if plot and not r.ok:
        from dataclasses import replace

        from composedyn.logs.html import joint_plot_png

        row = replace(row, plot=joint_plot_png(r, k))
    return row


def check_row(robot, path, plot: bool = False, errors: str = "raise", **options) -> LogRow:
    """:func:`check_log` of ``path`` reduced to a :class:`LogRow`; ``errors="report"``
    turns a ValueError into an "error" row instead of raising."""
    try:
        with log_warnings() as found:
            report = check_log(robot, path, **options)
        from dataclasses import replace

        return replace(log_row(path, report, plot=plot), warnings=tuple(found))
    except ValueError as e:
        if errors != "report":
            raise
        return LogRow(str(path), "error", error=(str(e).splitlines() or ["error"])[0])


@contextmanager
def log_warnings():
    """Collect the messages of :class:`LogWarning` raised inside the block (a list),
    whatever the caller's warning filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LogWarning)
        found: list[str] = []
        yield found
        found += [str(w.message) for w in caught if issubclass(w.category, LogWarning)]
