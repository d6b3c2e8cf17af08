"""Log and fleet options of ``composedyn torques`` (``--topic``, ``--stamps``, ``--workers``,
``--scheduler``, ``--html``, ``--summary``) and the run over its logs: every log is read
and checked by the same function, in this process or on Dask workers, so the outputs
(``--json``, ``--csv``, ``--violations``, ``--plot``, ``--summary``, ``--html``) are the
same whatever the parallelism."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from composedyn.dynamics.extras import require

EXIT_STATUS_HELP = ("exit status: 0 every log within limits, or some limit unchecked and none exceeded; "
                    "1 a limit exceeded (by the motion, its predicted torques or a log's measured efforts); "
                    "2 bad input (nothing written), or a log unreadable among several (the other logs are still "
                    "checked and their reports written); 3 a log damaged or inconsistent (the reader found lost, "
                    "corrupted or contradictory data). Several logs: the first of 2, 3, 1, 0 that applies.")


def add_log_options(p) -> None:
    """Add the log and fleet options to the ``torques`` parser."""
    p.add_argument("--topic", default="/joint_states",
                   help="sensor_msgs/JointState topic of bags (default %(default)s)")
    p.add_argument("--stamps", choices=("header", "receive"), default="header",
                   help="bag time base: message header stamps (default) or the time the bag recorded them")
    fleet = p.add_mutually_exclusive_group()
    fleet.add_argument("--workers", type=int, metavar="N",
                       help="check the logs on a local Dask cluster of N worker processes")
    fleet.add_argument("--scheduler", metavar="ADDRESS",
                       help="check the logs on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--summary", metavar="OUT.csv",
                   help="write one row per log: verdict, worst joint, torque, velocity and measured effort "
                        "ratios, reason")
    p.add_argument("--html", metavar="OUT.html",
                   help="write a self-contained fleet report: sortable summary, worst joint of each exceeding log")


def fleet_requested(args) -> bool:
    """True when the run prints one summary line per log (a cluster or an HTML report asked for)."""
    return bool(args.workers or args.scheduler or args.html)


def run_logs(args, robot, smoothing, limits=None) -> int:
    """Check every log of ``args``; write the outputs; print the summaries; the exit status.

    One log that cannot be read or checked is bad input: ValueError (its one-line error),
    nothing written.  With several, such a log is an "unreadable" row of --json, --summary
    and --html, the files of the other logs are written, and the exit status is 2."""
    from composedyn.logs.fleet import check_many
    from composedyn.logs.html import severity, write_fleet_html
    from composedyn.logs.verdict import exit_status
    from composedyn.writing import Staged

    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    paths = [str(p) for p in args.trajectories]
    options = {"topic": args.topic, "stamps": args.stamps, "smoothing": smoothing, "limits": limits}
    with Staged() as staged:  # every output path checked before any log is read
        outputs = {k: staged.tmp(getattr(args, k)) for k in ("json", "summary", "html") if getattr(args, k, None)}
        files = per_log_files(args, paths, staged)
        with _quiet_dask(), _client(args) as client, _progress(len(paths)) as progress:
            rows = check_many(robot, paths, client=client, plot=bool(args.html), errors="report",
                              progress=progress, files=files, keep_reports=True, **options)
        if len(rows) == 1 and rows[0].verdict == "unreadable":
            _print_warnings(rows)
            raise ValueError(rows[0].error)
        staged.drop(tmp for r, f in zip(rows, files) if r.verdict == "unreadable" for tmp in f.values())
        if "json" in outputs:
            Path(outputs["json"]).write_text(report_json(robot.name, rows), encoding="utf-8")
        if "summary" in outputs:
            write_rows_csv(rows, outputs["summary"])
        if "html" in outputs:
            write_fleet_html(rows, outputs["html"], f"composedyn torques: {robot.name}, {len(rows)} log(s)")
        staged.commit()
    _print_warnings(rows)
    if fleet_requested(args):
        for r in sorted(rows, key=severity):
            print(row_line(r))
    else:
        for r in rows:
            if r.text:
                print(r.text)
    if len(rows) > 1:
        print(tally(rows))
    for r in rows:
        if r.verdict == "unreadable":
            print(f"composedyn: error: {r.error}", file=sys.stderr)
    return exit_status(r.verdict for r in rows)


def _print_warnings(rows) -> None:
    for r in rows:
        for message in r.warnings:
            print(f"composedyn: warning: {message}", file=sys.stderr)


def report_json(robot_name: str, rows) -> str:
    """The ``--json`` text of ``composedyn torques`` (and ``simulate``) for LogRows kept with
    their reports: one log's report, or the fleet's verdict, counts and reports."""
    import json

    from composedyn.logs.verdict import counts, worst_verdict

    verdicts = [r.verdict for r in rows]
    if len(rows) == 1:
        data = {"robot": robot_name, **rows[0].entry()}
    else:
        data = {"robot": robot_name, "verdict": worst_verdict(verdicts),
                "ok": all(v == "within limits" for v in verdicts),
                "complete": all(r.report is not None and r.report["complete"] for r in rows),
                "counts": counts(verdicts), "reports": [r.entry() for r in rows]}
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


PER_LOG = ("csv", "violations", "plot")


def per_log_files(args, paths, staged) -> list[dict]:
    """Per log of ``paths``, {kind: temporary path} of its outputs (--csv, --violations, --plot:
    ``out.png``, or ``out.<log stem>.png`` with several logs) staged in ``staged``: written
    by whichever process checks the log, renamed into place by ``staged.commit()``."""
    many = len(paths) > 1
    return [{kind: staged.tmp(output_path(getattr(args, kind), path, many))
             for kind in PER_LOG if getattr(args, kind, None)} for path in paths]


def output_path(path: str, source: str, many: bool) -> str:
    """``out.png`` for one report; ``out.<source stem>.png`` when there are several."""
    if not many:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{Path(source).stem}{p.suffix}"))


def row_line(r) -> str:
    """One human-readable line of a LogRow."""
    if r.verdict == "unreadable":
        return f"{r.path}: unreadable: {(r.error or '').removeprefix(f'{r.path}: ')}"
    head = f"{r.path}: {r.verdict}"
    if r.violations:
        head += f" ({r.violations} limit violation(s))"
    if r.unchecked:
        head += f" ({len(r.unchecked)} limit(s) unchecked)"
    ratio = "" if r.worst_joint is None else f"; worst joint {r.worst_joint}"
    ratio += "" if r.torque_ratio is None else f"; max torque/limit {r.torque_ratio:.3g}"
    vel = "" if r.velocity_ratio is None else f", max velocity/limit {r.velocity_ratio:.3g}"
    vel += "" if r.measured_ratio is None else f", max measured effort/limit {r.measured_ratio:.3g}"
    res = "" if r.residual is None else f"; measured - predicted RMS {r.residual:.3g} N m at {r.residual_joint}"
    found = "".join(f"; {f.kind}: {f.message}" for f in r.findings[:1])
    return head + ratio + vel + res + found


def tally(rows) -> str:
    """``N log(s): a within limits, b unchecked, ...`` (verdicts that occur)."""
    from composedyn.logs.verdict import counts

    parts = [f"{n} {v}" for v, n in counts(r.verdict for r in rows).items() if n]
    return f"{len(rows)} log(s): {', '.join(parts)}"


def write_rows_csv(rows, path) -> None:
    """One CSV row per LogRow: the summary fields; unchecked pairs, findings and warnings joined by "; "."""
    import csv

    from composedyn.logs.rows import SUMMARY

    joined = {"unchecked": lambda r: "; ".join(f"{j}:{q}" for j, q in r.unchecked),
              "findings": lambda r: "; ".join(f"{f.kind}: {f.message}" for f in r.findings),
              "warnings": lambda r: "; ".join(r.warnings)}
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:  # as --json
        w = csv.writer(f)
        w.writerow(SUMMARY)
        for r in rows:
            w.writerow([joined[k](r) if k in joined else "" if getattr(r, k) is None else getattr(r, k)
                        for k in SUMMARY])


@contextmanager
def _quiet_dask():
    """Dask's log messages (task failures, heartbeats, shutdown) stay off the terminal for
    the run: this process's loggers go to a null handler, and worker processes started
    meanwhile log critical messages only.  The user sees composedyn's lines only."""
    import logging
    import os

    saved = []
    for name in ("distributed", "tornado", "asyncio"):
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers, logger.propagate = [logging.NullHandler()], False
    key = "DASK_LOGGING__DISTRIBUTED"  # read by each new worker process when it imports distributed
    before = os.environ.get(key)
    os.environ[key] = "critical"
    try:
        yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers, logger.propagate = handlers, propagate
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


@contextmanager
def _client(args):
    """None, a Client of a new LocalCluster (--workers N) or of the scheduler at --scheduler."""
    if not (args.workers or args.scheduler):
        yield None
        return
    import logging

    require("distributed", "checking logs on a Dask cluster (--workers, --scheduler)")
    from distributed import Client, LocalCluster

    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:  # unreachable, or not a scheduler address
            raise OSError(f"--scheduler {args.scheduler}: cannot connect ({e})") from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        yield client


@contextmanager
def _progress(total: int):
    """A progress callback drawing a bar on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        yield None
        return
    from composedyn.progress import Progress

    with Progress(total, "checking logs") as bar:
        yield lambda done, _total: bar.update(done)
