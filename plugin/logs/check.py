"""Torque check of one joint log: the trajectory report plus, when the log has
measured efforts, those efforts against the effort limits (violations of quantity
"measured effort") and measured minus predicted torque per joint, and the findings
of the reader (damaged or inconsistent data)."""

from __future__ import annotations

from composedyn.dynamics.errors import MissingExtra
from composedyn.logs.derivatives import choose_smoothing
from composedyn.logs.findings import finding_dicts, log_findings
from composedyn.logs.integrity import watch_blocks
from composedyn.logs.joint_log import JointLog, collect_log_warnings
from composedyn.logs.residual import EffortResidual, effort_residual
from composedyn.logs.verdict import report_verdict

READ_OPTIONS = ("topic", "stamps", "gap_factor")
CHECK_OPTIONS = ("smoothing", "friction", "limits")
FILES = ("csv", "violations", "plot")  # per-log outputs a check can write


class LogReport:
    """A :class:`~composedyn.TrajectoryReport` of a log, its ``residual``
    (:class:`EffortResidual`, None without efforts) and ``findings`` (tuple of
    :class:`~composedyn.logs.findings.LogFinding` of the reader).  ``ok``, ``complete``,
    ``source``, ``to_csv`` and ``plot`` are the report's; ``verdict``, ``summary`` and
    ``to_dict`` add the residual and the findings."""

    def __init__(self, report, residual: EffortResidual | None, findings: tuple = (), derivatives: str = ""):
        self.report, self.residual, self.findings = report, residual, tuple(findings)
        self.derivatives = derivatives  # which spline differentiated the positions (one line)

    def __getattr__(self, name):
        return getattr(self.report, name)

    @property
    def ok(self) -> bool:
        """True when no checked limit is exceeded and the reader found nothing wrong with the log."""
        return self.report.ok and not self.findings

    @property
    def verdict(self) -> str:
        """One of :data:`composedyn.logs.verdict.VERDICTS` (never "unreadable")."""
        return report_verdict(self.report, self.findings)

    def summary(self) -> str:
        """The report's lines, its first naming the verdict, then the residual and the findings."""
        text = self.report.summary()
        verdict, phrase = self.verdict, self.report.verdict()
        if verdict in ("damaged", "inconsistent"):
            text = text.replace(f": {phrase} (", f": {verdict}: in the samples read, {phrase} (", 1)
        elif verdict != phrase:
            text = text.replace(f": {phrase} (", f": {verdict}: {phrase} (", 1)
        lines = [text] + ([f"  {self.derivatives}"] if self.derivatives else [])
        lines += [] if self.residual is None else self.residual.lines()
        lines += [f"  {f.kind.upper()}: {f.message}" for f in self.findings]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The report's dict with ``verdict`` (the shared vocabulary), ``ok`` (True only
        for "within limits"), ``findings`` and, with efforts, ``effort_residual``."""
        d = self.report.to_dict()
        d["verdict"] = self.verdict
        d["ok"] = d["verdict"] == "within limits"
        d["findings"] = finding_dicts(self.findings)
        d["derivatives"] = self.derivatives
        if self.residual is not None:
            d["effort_residual"] = self.residual.to_dict()
        return d


def check_log(robot, log, **options) -> LogReport:
    """Check one log (a path or a :class:`JointLog`) against ``robot``'s limits: the torques
    predicted from its motion, and its measured efforts (when it has them) against the effort limits.

    ``robot``: a Robot or a :class:`~composedyn.closed_chain.ClosedChain` (the log then
    gives its actuated joints).  ``options``: ``topic``, ``stamps``, ``gap_factor`` (see
    :func:`composedyn.read_log`), ``smoothing``, ``friction``, ``limits`` (see
    :func:`composedyn.check_trajectory`).  ValueError messages name the log.
    """
    unknown = set(options) - set(READ_OPTIONS) - set(CHECK_OPTIONS)
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    log = read_for(robot, log, **{k: options[k] for k in READ_OPTIONS if k in options})
    return check_read_log(robot, log, **{k: options[k] for k in CHECK_OPTIONS if k in options})


def read_for(robot, log, **read_options) -> JointLog:
    """``log`` (a path, read with :func:`composedyn.read_log`, or a JointLog) in ``robot``'s joint order."""
    import composedyn as cd

    if isinstance(log, JointLog):
        return log.for_robot(robot)
    return cd.read_log(log, joint_names=robot.joint_names, dependent=getattr(robot, "mimic_joint_names", ()),
                       **read_options)


def check_read_log(robot, log: JointLog, **check_options) -> LogReport:
    """The check of a log already read in ``robot``'s joint order; ValueError names the log."""
    import composedyn as cd
    from composedyn.closed_chain import ClosedChain

    check_options = dict(check_options)
    check_options["smoothing"], derivatives = choose_smoothing(log.measured, check_options.get("smoothing"),
                                                               log.t, log.q)
    try:
        if isinstance(robot, ClosedChain):
            from composedyn.torque_check.closed_chain import check_closed_trajectory

            report = check_closed_trajectory(robot, log.t, log.q, log.qd, log.qdd, source=log.source,
                                             **check_options)
            residual = None
        else:
            report = cd.check_trajectory(robot, log.t, log.q, log.qd, log.qdd, source=log.source, **check_options)
            residual = None if log.effort is None else effort_residual(log.t, log.effort, report.tau,
                                                                       log.joint_names)
        if log.effort is not None:
            report.add_measured_effort(log.t, log.effort)
    except ValueError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith(f"{log.source}:") else f"{log.source}: {msg}") from None
    return LogReport(report, residual, log_findings(log), derivatives)


def check_file(robot, path, files: dict | None = None, samples: bool = False, **options) -> LogReport:
    """Read and check the log at ``path``; write its per-log ``files``.

    A trajectory CSV without efforts, on an open tree, is streamed in blocks (bounded
    memory; the report keeps its samples only when ``samples`` asks for them).  ``files``
    maps "csv" (per-sample table), "violations" (one row per interval) and "plot"
    (torque against limits) to paths to write.  Raises :class:`Unreadable` (its cause
    attached) when reading fails, ValueError naming the log when the check refuses it.
    """
    from composedyn.closed_chain import ClosedChain
    from composedyn.torque_check.trajectory_csv import streamable

    files = {k: v for k, v in (files or {}).items() if v}
    unknown = set(files) - set(FILES) or set(options) - set(READ_OPTIONS) - set(CHECK_OPTIONS)
    if unknown:
        raise TypeError(f"unknown option(s) or file kind(s): {', '.join(sorted(unknown))}")
    check_options = {k: options[k] for k in CHECK_OPTIONS if k in options}
    try:
        stream = not isinstance(robot, ClosedChain) and streamable(path)
    except Exception as e:
        raise Unreadable(path, e) from e
    if stream:
        from composedyn.torque_check.chunked import check_chunks
        from composedyn.torque_check.trajectory_csv import csv_chunks

        chunks, found = watch_blocks(
            guarded(lambda: csv_chunks(path, robot.joint_names, getattr(robot, "mimic_joint_names", ())), path),
            robot.joint_names, path)
        check_options["smoothing"], derivatives = choose_smoothing(False, check_options.get("smoothing"))
        try:
            report = LogReport(check_chunks(robot, chunks, source=str(path), csv=files.pop("csv", None),
                                            keep=samples, **check_options), None, tuple(found), derivatives)
        except ValueError as e:
            msg = str(e)
            raise ValueError(msg if msg.startswith(f"{path}:") else f"{path}: {msg}") from None
    else:
        try:
            log = read_for(robot, str(path), **{k: options[k] for k in READ_OPTIONS if k in options})
        except MissingExtra:  # the reader's package is not installed: the log is not at fault
            raise
        except Exception as e:
            raise Unreadable(path, e) from e
        report = check_read_log(robot, log, **check_options)
        if "csv" in files:
            report.to_csv(files.pop("csv"))
    if "violations" in files:
        report.violations_csv(files["violations"])
    if "plot" in files:
        report.plot(files["plot"])
    return report


class Unreadable(Exception):
    """A reader's exception (any type) while reading ``path``; ``error`` is the original."""

    def __init__(self, path, error: BaseException):
        super().__init__(f"{path}: {error}")
        self.path, self.error = str(path), error


def guarded(open_blocks, path):
    """The blocks of the iterator ``open_blocks()`` returns; any exception the reader raises
    (opening or reading) becomes :class:`Unreadable`."""
    try:
        it = iter(open_blocks())
    except Exception as e:
        raise Unreadable(path, e) from e
    while True:
        try:
            block = next(it)
        except StopIteration:
            return
        except Exception as e:
            raise Unreadable(path, e) from e
        yield block


def log_warnings():
    """Collect the messages of :class:`LogWarning` raised inside the block (a list), whatever the
    caller's warning filters; only this thread's (context's), so rows checked in parallel threads
    each get their own."""
    return collect_log_warnings()
