"""Log and fleet options of ``composedyn torques``: ``--topic``, ``--workers``,
``--scheduler``, ``--html``, and the fleet run (one summary row per log)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from composedyn.dynamics.extras import require


def add_log_options(p) -> None:
    """Add the log and fleet options to the ``torques`` parser."""
    p.add_argument("--topic", default="/joint_states",
                   help="sensor_msgs/JointState topic of bags (default %(default)s)")
    p.add_argument("--stamps", choices=("header", "receive"), default="header",
                   help="bag time base: message header stamps (default) or the time the bag recorded them")
    fleet = p.add_mutually_exclusive_group()
    fleet.add_argument("--workers", type=int, metavar="N",
                       help="check the logs on a local Dask cluster of N worker processes (summary rows)")
    fleet.add_argument("--scheduler", metavar="ADDRESS",
                       help="check the logs on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.5:8786 (summary rows)")
    p.add_argument("--html", metavar="OUT.html",
                   help="write a self-contained fleet report: sortable summary, worst joint of each failing log")


def fleet_requested(args) -> bool:
    """True when the run reports summary rows (a cluster or an HTML report asked for)."""
    return bool(args.workers or args.scheduler or args.html)


def run_fleet(args, robot, smoothing, limits=None) -> int:
    """Check every log into summary rows; write --json/--csv/--html; print one line per log."""
    import json

    from composedyn.logs.fleet import check_many
    from composedyn.logs.html import severity, write_fleet_html
    from composedyn.writing import Staged

    if args.plot:
        raise ValueError("--plot draws one report per log; with --workers, --scheduler or --html use --html")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    options = {"topic": args.topic, "stamps": args.stamps, "smoothing": smoothing, "limits": limits}
    with _client(args) as client, _progress(len(args.trajectories)) as progress:
        rows = check_many(robot, args.trajectories, client=client, plot=bool(args.html), progress=progress,
                          **options)
    with Staged() as staged:
        if args.json:
            data = {"robot": robot.name, "ok": all(r.verdict == "ok" for r in rows),
                    "logs": [r.to_dict() for r in rows]}
            with open(staged.tmp(args.json), "w", encoding="utf-8") as f:
                f.write(json.dumps(data, indent=2) + "\n")
        if args.csv:
            write_rows_csv(rows, staged.tmp(args.csv))
        if args.html:
            write_fleet_html(rows, staged.tmp(args.html), f"composedyn torques: {robot.name}, {len(rows)} log(s)")
        staged.commit()
    for r in sorted(rows, key=severity):
        print(row_line(r))
        for message in r.warnings:
            print(f"composedyn: warning: {message}", file=sys.stderr)
    return 0 if all(r.verdict == "ok" for r in rows) else 1


def row_line(r) -> str:
    """One human-readable line of a LogRow."""
    head = f"{r.path}: {'within limits' if r.verdict == 'ok' else f'{r.violations} limit violation(s)'}"
    ratio = "" if r.worst_joint is None else f"; worst joint {r.worst_joint}"
    ratio += "" if r.torque_ratio is None else f"; max torque/limit {r.torque_ratio:.3g}"
    vel = "" if r.velocity_ratio is None else f", max velocity/limit {r.velocity_ratio:.3g}"
    res = "" if r.residual is None else f"; measured - predicted RMS {r.residual:.3g} N m at {r.residual_joint}"
    return head + ratio + vel + res


def write_rows_csv(rows, path) -> None:
    import csv

    from composedyn.logs.check import LogRow

    names = [k for k in LogRow.__dataclass_fields__ if k not in ("plot", "warnings")] + ["warnings"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in rows:
            w.writerow(["" if getattr(r, k) is None else getattr(r, k) for k in names[:-1]] + ["; ".join(r.warnings)])


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
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
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
