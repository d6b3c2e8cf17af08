"""``composedyn torques ROBOT LOG [...]``: joint torques a trajectory or a robot log
needs, checked against every joint limit (position, velocity, effort, and
acceleration and jerk limits given with ``--limits``).

Long files are read, differentiated and checked in blocks, in bounded memory.
Each log gets one verdict: "within limits", "unchecked" (nothing exceeded, but
a limit is missing from the description), "exceeded", "unreadable", "damaged"
or "inconsistent" (see :mod:`composedyn.logs.verdict` for the exit status).
"""

from __future__ import annotations

from composedyn.cli.report_options import (
    add_limit_options,
    add_output_options,
    check_plot_available,
    read_limit_options,
)


def register(sub) -> None:
    from composedyn.cli.legged import add_legged_options
    from composedyn.cli.program import ROBOT_HELP
    from composedyn.logs.cli import EXIT_STATUS_HELP, add_log_options

    p = sub.add_parser("torques", help="check trajectories and robot logs against the joint limits",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog=EXIT_STATUS_HELP)
    p.add_argument("robot", help=ROBOT_HELP)
    p.add_argument("trajectories", nargs="+", metavar="LOG",
                   help="CSV (columns: time, one per joint (positions), optional <joint>_vel, <joint>_acc, "
                        "<joint>_effort), ROS 1 .bag, ROS 2 bag folder, .mcap or .db3")
    add_output_options(p)
    add_limit_options(p)
    add_log_options(p)
    add_legged_options(p)
    p.add_argument("--smoothing", default=None, metavar="LAMBDA",
                   help='spline for missing derivatives: 0 interpolate, "gcv" or lambda > 0 smooth (default: '
                        'measured logs (bags, CSV with _effort columns) smoothed with lambda matched to their '
                        'position noise, planner output interpolated)')
    p.set_defaults(run=run)


def run(args) -> int:
    from composedyn.cli.legged import load_robot, run_legged
    from composedyn.closed_chain import ClosedChain
    from composedyn.logs.cli import run_logs
    from composedyn.logs.derivatives import parse_smoothing
    from composedyn.torque_check.limits import resolve_limits

    check_plot_available(args)
    smoothing = parse_smoothing(args.smoothing)
    robot = load_robot(args, "torques")  # a tree, a closed chain at its actuated joints, or a floating base
    if getattr(robot, "floating", False):  # legged trajectory CSVs: contact inverse dynamics per sample
        if args.summary:
            raise ValueError("--summary takes joint logs of fixed-base robots (not --floating)")
        from composedyn.logs.derivatives import choose_smoothing

        return run_legged(args, robot, choose_smoothing(False, smoothing)[0])
    try:
        limits = resolve_limits(robot, read_limit_options(args), args.margin)
    except ValueError as e:
        raise ValueError(f"{args.limits}: {e}" if args.limits else str(e)) from None
    if isinstance(robot, ClosedChain) and (args.workers or args.scheduler or args.html):
        raise ValueError(f"{args.robot}: --workers, --scheduler and --html check open trees only")
    return run_logs(args, robot, smoothing, limits)

