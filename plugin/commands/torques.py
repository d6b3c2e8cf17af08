"""``composedyn torques ROBOT LOG [...]``: joint torques a trajectory or a robot log
needs, checked against every joint limit (position, velocity, effort, and
acceleration and jerk limits given with ``--limits``).

Long files are read, differentiated and checked in blocks, in bounded memory.
Exit status: 0 no checked limit exceeded, 1 when a limit is exceeded, 2 for
bad input (nothing is written then).  A limit missing from the description is
reported as unchecked, never as within limits.
"""

from __future__ import annotations

import sys
from pathlib import Path


def register(sub) -> None:
    from composedyn.legged_cli import add_legged_options
    from composedyn.logs.cli import add_log_options

    p = sub.add_parser("torques", help="check trajectories and robot logs against the joint limits",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog="exit status: 0 no checked limit exceeded, 1 a limit is exceeded, "
                              "2 bad input (nothing written)")
    p.add_argument("robot", help="URDF file, DH .toml file, or bundled robot name")
    p.add_argument("trajectories", nargs="+", metavar="LOG",
                   help="CSV (columns: time, one per joint (positions), optional <joint>_vel, <joint>_acc, "
                        "<joint>_effort), ROS 1 .bag, ROS 2 bag folder, .mcap or .db3")
    add_output_options(p)
    add_limit_options(p)
    add_log_options(p)
    add_legged_options(p)
    p.add_argument("--smoothing", default="0", metavar="LAMBDA",
                   help='spline for missing derivatives: 0 interpolate (default), "gcv" or lambda > 0 smooth')
    p.set_defaults(run=run)


def add_output_options(p) -> None:
    p.add_argument("--json", metavar="OUT.json", help="write the report as JSON")
    p.add_argument("--csv", metavar="OUT.csv", help="write per-sample positions, velocities, accelerations, torques")
    p.add_argument("--violations", metavar="OUT.csv",
                   help="write one row per violation interval (joint, quantity, start, end, peak, limit, excess)")
    p.add_argument("--plot", metavar="OUT.png", help="plot torque and limit band per joint (needs matplotlib)")


def add_limit_options(p) -> None:
    p.add_argument("--limits", metavar="FILE.toml",
                   help="extra or overriding limits: acceleration, jerk, velocity, effort, lower, upper "
                        "(one value, or a table joint = value), optional margin")
    p.add_argument("--margin", type=float, default=1.0, metavar="FACTOR",
                   help="tighten every limit by this factor, 0 < FACTOR <= 1 (e.g. 0.9)")


def read_limit_options(args) -> dict:
    """The ``limits`` mapping of --limits / --margin (ValueError naming the file)."""
    from composedyn.limits import read_limits_toml

    limits = read_limits_toml(args.limits) if args.limits else {}
    if not 0 < args.margin <= 1:
        raise ValueError(f"--margin must be in (0, 1], got {args.margin:g}")
    return limits


def output_path(path: str, source: str, many: bool) -> str:
    """``out.png`` for one report; ``out.<source stem>.png`` when there are several."""
    if not many:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{Path(source).stem}{p.suffix}"))


def write_reports(reports: list, args, staged, csv_written: bool = False) -> None:
    """Stage --json/--csv/--violations/--plot outputs of ``reports`` (committed by the caller)."""
    import json

    many = len(reports) > 1
    if args.json:
        data = reports[0].to_dict() if not many else {
            "ok": all(r.ok for r in reports), "complete": all(r.complete for r in reports),
            "reports": [r.to_dict() for r in reports]}
        Path(staged.tmp(args.json)).write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    for r in reports:
        if args.csv and not csv_written:
            r.to_csv(staged.tmp(output_path(args.csv, r.source, many)))
        if getattr(args, "violations", None):
            r.violations_csv(staged.tmp(output_path(args.violations, r.source, many)))
        if args.plot:
            r.plot(staged.tmp(output_path(args.plot, r.source, many)))


def check_plot_available(args) -> None:
    if args.plot:
        from composedyn.plotting import plot_format

        plot_format(args.plot)


def run(args) -> int:
    import composedyn as cd
    from composedyn.chunked import check_chunks
    from composedyn.closed_chain import ClosedChain
    from composedyn.closed_cli import check_closed_trajectory
    from composedyn.legged_cli import load_robot, run_legged
    from composedyn.limits import resolve_limits
    from composedyn.logs.check import check_log, log_warnings
    from composedyn.logs.cli import fleet_requested, run_fleet
    from composedyn.progress import Progress
    from composedyn.trajectory_csv import csv_chunks, streamable
    from composedyn.writing import Staged

    check_plot_available(args)
    smoothing = args.smoothing if args.smoothing == "gcv" else _float(args.smoothing)
    robot = load_robot(args, "torques")  # a tree, a closed chain at its actuated joints, or a floating base
    if getattr(robot, "floating", False):  # legged trajectory CSVs: contact inverse dynamics per sample
        return run_legged(args, robot, smoothing)
    closed = isinstance(robot, ClosedChain)
    try:
        limits = resolve_limits(robot, read_limit_options(args), args.margin)
    except ValueError as e:
        raise ValueError(f"{args.limits}: {e}" if args.limits else str(e)) from None
    if fleet_requested(args):
        if closed:
            raise ValueError(f"{args.robot}: --workers, --scheduler and --html check open trees only")
        return run_fleet(args, robot, smoothing, limits)
    dependent = getattr(robot, "mimic_joint_names", ())
    reports = []
    many = len(args.trajectories) > 1
    with Progress(len(args.trajectories) + 1, "torques") as bar, Staged() as staged:
        for path in args.trajectories:
            bar.advance(0, f"checking {Path(path).name}")
            csv = staged.tmp(output_path(args.csv, path, many)) if args.csv else None
            try:
                if not closed and streamable(path):  # a trajectory CSV without efforts: checked in blocks
                    chunks = csv_chunks(path, robot.joint_names, dependent)
                    reports.append(check_chunks(robot, chunks, smoothing=smoothing, limits=limits, source=path,
                                                csv=csv))
                else:  # a log (bag, or CSV with measured efforts), or a closed chain's path
                    with log_warnings() as found:
                        log = cd.read_log(path, args.topic, robot.joint_names, stamps=args.stamps,
                                          dependent=dependent)
                    for message in found:  # gaps, backwards or duplicate stamps: data used, reported here
                        print(f"composedyn: warning: {message}", file=sys.stderr)
                    if closed:
                        report = check_closed_trajectory(robot, log.t, log.q, log.qd, log.qdd, smoothing=smoothing,
                                                         source=path, limits=limits)
                    else:
                        report = check_log(robot, log, smoothing=smoothing, limits=limits)  # + measured - predicted
                    reports.append(report)
                    if csv:
                        report.to_csv(csv)
            except ValueError as e:
                msg = str(e)
                raise ValueError(msg if msg.startswith(f"{path}:") else f"{path}: {msg}") from None
            bar.advance(1)
        write_reports(reports, args, staged, csv_written=True)
        staged.commit()
        bar.advance(1, "done")
    for r in reports:
        print(r.summary())
    return 0 if all(r.ok for r in reports) else 1


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise ValueError(f'--smoothing must be a number or "gcv", got {s!r}') from None
