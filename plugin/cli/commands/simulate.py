"""``composedyn simulate ROBOT [TRAJECTORY.csv]``: computed-torque tracking in simulation.

Tracks the trajectory (or a generated minimum-jerk motion) and writes the
same limit report as ``torques`` for the torques the controller applied: the
same verdicts and ``--json`` fields as ``torques`` gives for one log.
Exit status: 0 within limits (or some limit unchecked and none exceeded), 1 when
a limit is exceeded, 2 for bad input.
"""

from __future__ import annotations

from composedyn.cli.report_options import (
    add_limit_options,
    add_output_options,
    check_plot_available,
    read_limit_options,
    write_reports,
)
from composedyn.simulation.simulate import DEFAULT_TIMEOUT


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("simulate", help="simulate computed-torque tracking and report the torques",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog="exit status: 0 within limits, 1 a limit is exceeded, 2 bad input (nothing written)")
    p.add_argument("robot", help=ROBOT_HELP)
    p.add_argument("trajectory", nargs="?", metavar="LOG",
                   help="reference to track: CSV, ROS 1 .bag, ROS 2 bag folder, .mcap or .db3 "
                        "(default: a generated minimum-jerk motion)")
    p.add_argument("--topic", default="/joint_states", help="sensor_msgs/JointState topic of a bag")
    p.add_argument("--duration", type=float, default=2.0, help="generated motion duration, s (default 2)")
    p.add_argument("--kp", type=float, default=100.0, help="proportional gain, 1/s^2 (default 100)")
    p.add_argument("--kd", type=float, default=None, help="derivative gain, 1/s (default 2 sqrt(kp))")
    p.add_argument("--mismatch", type=float, default=0.0, help="controller model mass error, e.g. 0.1 = 10%%")
    p.add_argument("--offset", type=float, default=0.0, help="initial position error on every joint")
    p.add_argument("--saturate", action="store_true", help="clip torques at the effort limits")
    p.add_argument("--samples", type=int, default=201, help="output samples (default 201)")
    p.add_argument("--smoothing", default=None, metavar="LAMBDA",
                   help='spline differentiating a LOG without velocities/accelerations: 0 interpolate, "gcv" or '
                        'lambda > 0 smooth (default: smoothing for measured logs (bags, CSV with _effort '
                        'columns), 0 for planner output)')
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"stop after this many seconds of wall time (default {DEFAULT_TIMEOUT:g}; 0: no limit)")
    add_output_options(p)
    add_limit_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import math

    import numpy as np

    from composedyn.logs import read_log
    from composedyn.logs.check import LogReport
    from composedyn.logs.cli import report_json
    from composedyn.logs.derivatives import choose_smoothing, parse_smoothing
    from composedyn.logs.rows import log_row
    from composedyn.logs.verdict import exit_status
    from composedyn.progress import Progress
    from composedyn.sampled import differentiate
    from composedyn.simulation.reference_motion import SplineReference
    from composedyn.simulation.tracking import track
    from composedyn.writing import Staged

    check_plot_available(args)
    if args.samples < 2 or not 0.05 <= args.duration <= 600 or args.kp <= 0 or not 0 <= args.mismatch < 1:
        raise ValueError("need --samples >= 2, 0.05 <= --duration <= 600 s, --kp > 0 and 0 <= --mismatch < 1")
    for option, value in (("--kp", args.kp), ("--kd", args.kd), ("--timeout", args.timeout)):
        if value is not None and not math.isfinite(value):
            raise ValueError(f"{option} must be a finite number, got {value:g}")
    if not math.isfinite(args.offset):
        raise ValueError(f"--offset must be finite (an initial position error, rad or m), got {args.offset:g}")
    smoothing = parse_smoothing(args.smoothing)
    from composedyn.cli.closed_chain import load_model
    from composedyn.cli.program import load_options
    from composedyn.simulation.reference_motion import demo_reference
    from composedyn.torque_check.limits import resolve_limits

    robot = load_model(args.robot, "simulate", load_options(args))  # a tree, or a closed chain at its actuated joints
    try:
        limits = resolve_limits(robot, read_limit_options(args), args.margin)
    except ValueError as e:
        raise ValueError(f"{args.limits}: {e}" if args.limits else str(e)) from None
    if robot.dof == 0:
        raise ValueError(f"{args.robot}: robot {robot.name!r} has no moving joints, nothing to simulate")
    if args.trajectory:
        tr = read_log(args.trajectory, args.topic, robot.joint_names, dependent=getattr(robot, "mimic_joint_names", ()))
        qd, qdd = tr.qd, tr.qdd
        smoothing, derivatives = choose_smoothing(tr.measured, smoothing, tr.t, tr.q)
        if qd is None:
            qd, qdd_fit = differentiate(tr.t, tr.q, smoothing)
            qdd = qdd_fit if qdd is None else qdd
        elif qdd is None:
            qdd = differentiate(tr.t, qd, smoothing)[0]
        else:
            derivatives = ""  # the log gives both
        reference, (t0, t1), source = SplineReference(tr.t, tr.q, qd, qdd), (tr.t[0], tr.t[-1]), args.trajectory
    else:
        reference, (t0, t1), source = demo_reference(robot, args.duration), (0.0, args.duration), "<minimum-jerk>"
        derivatives = ""
    with Progress(2, "simulating") as bar:
        run_ = track(robot, reference, np.linspace(t0, t1, args.samples), kp=args.kp, kd=args.kd,
                     mismatch=args.mismatch, saturate=args.saturate, offset=args.offset, source=source,
                     progress=bar.update, limits=limits, timeout=args.timeout or None)
        bar.advance(1, "writing")
        # the applied torques' report as torques reports one log: same verdicts, same --json fields
        checked = LogReport(run_.report, None, (), f"reference {derivatives}" if derivatives else "")
        row = log_row(source, checked, keep_report=True)
        with Staged() as staged:
            write_reports([run_.report], args, staged, json_text=report_json(robot.name, [row]))
            staged.commit()
        bar.advance(1, "done")
    print(run_.summary())
    print(checked.summary())
    return exit_status([row.verdict])
