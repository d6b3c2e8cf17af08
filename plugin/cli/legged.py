"""``composedyn torques`` for floating-base robots: legged trajectory CSVs (base pose, joints,
``<frame>_contact`` stance flags; :mod:`composedyn.floating.legged_csv`) checked by
:func:`composedyn.floating.legged.check_legged_trajectory`.

A robot is floating when its URDF's root joint is ``floating`` (or with
``--floating``); ``--mu`` gives the friction coefficient of the Coulomb cones,
``--surface FRAME`` makes a contact frame a surface (6-D wrench) rather than a
point, and ``--foot HALF_LENGTH HALF_WIDTH`` bounds the centre of pressure of
the surface contacts.  Exit status as for fixed-base checks: 0 ok, 1 a joint limit is
exceeded or a sample is infeasible or outside the friction cones, 2 bad input.
"""

from __future__ import annotations

from composedyn.errors import ModelError


def add_legged_options(p) -> None:
    p.add_argument("--floating", action="store_true",
                   help="load the robot with a free-flyer base (legged trajectory CSV: time, base_x, base_y, "
                        "base_z, base_qx, base_qy, base_qz, base_qw, joints, <frame>_contact)")
    p.add_argument("--mu", type=float, metavar="MU",
                   help="floating base: friction coefficient of the contact cones (default: cones unchecked)")
    p.add_argument("--surface", action="append", default=[], metavar="FRAME",
                   help="floating base: FRAME is a surface contact (force and moment), not a point (repeatable)")
    p.add_argument("--foot", type=float, nargs=2, metavar=("HALF_LENGTH", "HALF_WIDTH"),
                   help="floating base, with --mu: sole rectangle of the surface contacts (m, frame x and y axes); "
                        "the centre of pressure must stay inside")


def load_robot(args, command: str):
    """The robot of ``args.robot``: free-flyer with ``--floating``, else as the description says."""
    from composedyn.cli.closed_chain import load_model
    from composedyn.cli.program import load_options, one_coordinate_joints
    from composedyn.cli.program import load_robot as cli_load

    if not args.floating:
        robot = load_model(args.robot, command, load_options(args))
    else:
        from composedyn.cli.program import declared_loops

        if declared_loops(args.robot) is not None:
            raise ModelError(f"{args.robot}: --floating takes open trees only (this description declares loops)")
        robot = cli_load(args.robot, load_options(args), floating=True)
    one_coordinate_joints(robot, args.robot, command)
    if not getattr(robot, "floating", False) and (args.mu is not None or args.surface or args.foot):
        raise ValueError(f"{args.robot}: --mu, --surface and --foot apply to floating-base robots (add --floating)")
    return robot


def run_legged(args, robot, smoothing) -> int:
    """Check every legged trajectory CSV of ``args``; write outputs; print the summaries."""
    from composedyn.cli.report_options import read_limit_options, write_reports
    from composedyn.floating.legged import check_legged_trajectory, joint_limits
    from composedyn.floating.legged_csv import read_legged_csv
    from composedyn.logs.cli import fleet_requested, output_path
    from composedyn.writing import Staged

    if fleet_requested(args):
        raise ValueError(f"{args.robot}: --workers, --scheduler and --html check fixed-base robots only")
    if args.mu is not None and not 0 < args.mu < float("inf"):
        raise ValueError(f"--mu must be a positive friction coefficient, got {args.mu:g}")
    if args.foot is not None and (args.mu is None or not args.surface):
        raise ValueError("--foot bounds the centre of pressure of surface contacts: give --mu and --surface FRAME")
    try:
        limits = joint_limits(robot, read_limit_options(args), args.margin)
    except ValueError as e:
        raise ValueError(f"{args.limits}: {e}" if args.limits else str(e)) from None
    reports = []
    many = len(args.trajectories) > 1
    with Staged() as staged:
        for path in args.trajectories:
            try:
                if not str(path).lower().endswith(".csv"):
                    raise ValueError("a floating-base trajectory is a CSV file (base pose, joints, "
                                     "<frame>_contact columns)")
                traj = read_legged_csv(path, robot)
                report = check_legged_trajectory(robot, traj.t, traj.q, traj.v, traj.a, contacts=traj.stance,
                                                 friction_coefficient=args.mu, surface=args.surface,
                                                 foot=None if args.foot is None else tuple(args.foot),
                                                 smoothing=smoothing, limits=limits, source=str(path))
            except ValueError as e:
                msg = str(e)
                raise ValueError(msg if msg.startswith(f"{path}:") else f"{path}: {msg}") from None
            reports.append(report)
            if args.csv:
                report.to_csv(staged.tmp(output_path(args.csv, str(path), many)))
        write_reports(reports, args, staged, csv_written=True)
        staged.commit()
    for r in reports:
        print(r.summary())
    return 0 if all(r.ok for r in reports) else 1
