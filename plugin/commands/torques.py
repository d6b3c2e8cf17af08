"""``composedyn torques ROBOT TRAJECTORY.csv [...]``: joint torques a trajectory
needs, checked against the effort and velocity limits.

Exit status: 0 within limits, 1 when a limit is exceeded, 2 for bad input
(nothing is written then).
"""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("torques", help="check trajectories (CSV) against joint torque and velocity limits",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog="exit status: 0 within limits, 1 a limit is exceeded, 2 bad input (nothing written)")
    p.add_argument("robot", help="URDF file, DH .toml file, or bundled robot name")
    p.add_argument("trajectories", nargs="+", metavar="TRAJECTORY.csv",
                   help="columns: time, one per joint (positions), optional <joint>_vel, <joint>_acc")
    add_output_options(p)
    p.add_argument("--smoothing", default="0", metavar="LAMBDA",
                   help='spline for missing derivatives: 0 interpolate (default), "gcv" or lambda > 0 smooth')
    p.set_defaults(run=run)


def add_output_options(p) -> None:
    p.add_argument("--json", metavar="OUT.json", help="write the report as JSON")
    p.add_argument("--csv", metavar="OUT.csv", help="write per-sample positions, velocities, accelerations, torques")
    p.add_argument("--plot", metavar="OUT.png", help="plot torque and limit band per joint (needs matplotlib)")


def output_path(path: str, source: str, many: bool) -> str:
    """``out.png`` for one report; ``out.<source stem>.png`` when there are several."""
    if not many:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{Path(source).stem}{p.suffix}"))


def write_reports(reports: list, args, staged) -> None:
    """Stage --json/--csv/--plot outputs of ``reports`` (committed by the caller)."""
    import json

    many = len(reports) > 1
    if args.json:
        data = reports[0].to_dict() if not many else {
            "ok": all(r.ok for r in reports), "reports": [r.to_dict() for r in reports]}
        Path(staged.tmp(args.json)).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    for r in reports:
        if args.csv:
            r.to_csv(staged.tmp(output_path(args.csv, r.source, many)))
        if args.plot:
            r.plot(staged.tmp(output_path(args.plot, r.source, many)))


def check_plot_available(args) -> None:
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ValueError("--plot needs matplotlib: pip install 'composedyn[plot]'") from None
        from composedyn.plotting import plot_format

        plot_format(args.plot)


def run(args) -> int:
    import composedyn as cd
    from composedyn.progress import Progress
    from composedyn.trajectory_csv import read_trajectory_csv
    from composedyn.writing import Staged

    check_plot_available(args)
    smoothing = args.smoothing if args.smoothing == "gcv" else _float(args.smoothing)
    from composedyn.closed_cli import check_closed_trajectory, load_model  # closed-chain hook
    robot = load_model(args.robot, "torques")
    check = check_closed_trajectory if isinstance(robot, cd.ClosedChain) else cd.check_trajectory
    dependent = getattr(robot, "mimic_joint_names", ())
    reports = []
    with Progress(2 * len(args.trajectories) + 1, "torques") as bar:
        for path in args.trajectories:
            bar.advance(0, f"reading {Path(path).name}")
            traj = read_trajectory_csv(path, robot.joint_names, dependent)
            bar.advance(1, f"checking {Path(path).name}")
            try:
                reports.append(check(robot, traj.t, traj.q, traj.qd, traj.qdd,
                                                   smoothing=smoothing, source=path))
            except ValueError as e:
                raise ValueError(f"{path}: {e}") from None
            bar.advance(1)
        with Staged() as staged:
            write_reports(reports, args, staged)
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
