"""``composedyn demo``: the main job end to end on a bundled robot.

Generates a minimum-jerk motion, checks it against the joint limits (and
the same motion six times faster, which exceeds them; limits the robot does
not give are reported as unchecked), tracks it in
simulation with a computed-torque controller built on the exact model and on
a model with 10 % mass error, prints a short summary, and writes a plot when
matplotlib is installed (a plot asked for by ``--plot`` needs it: the extra ``[plot]``).
"""

from __future__ import annotations

DEFAULT_PLOT = "composedyn-demo.png"


def register(sub) -> None:
    p = sub.add_parser("demo", help="check, track and plot a generated motion on a bundled robot",
                       description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("robot", nargs="?", default="panda", help="robot (default: the bundled panda)")
    p.add_argument("--duration", type=float, default=1.5, help="motion duration, s (default 1.5)")
    p.add_argument("--plot", metavar="OUT.png",
                   help=f"plot of the fast motion's torques (default {DEFAULT_PLOT}, skipped without matplotlib)")
    p.add_argument("--no-plot", action="store_true", help="do not write a plot")
    p.set_defaults(run=run)


def run(args) -> int:
    import numpy as np

    import composedyn as cd
    from composedyn.progress import Progress
    from composedyn.simulation.reference_motion import demo_motion
    from composedyn.simulation.tracking import track

    if not 0.05 <= args.duration <= 600:
        raise ValueError(f"--duration must be between 0.05 and 600 s, got {args.duration}")
    if args.plot is not None and not args.no_plot:
        from composedyn.dynamics.extras import require

        require("matplotlib.figure", "plotting")  # asked for: MissingExtra (exit 2) before the work
    if not args.no_plot and _have_matplotlib():
        from composedyn.torque_check.plotting import plot_format

        plot_format(_plot_path(args))  # fail before the work, not after it
    from composedyn.cli.program import load_open_tree, load_options
    from composedyn.dynamics.extras import install_hint

    robot = load_open_tree(args.robot, "demo", load_options(args))
    if robot.dof == 0:
        raise ValueError(f"{args.robot}: robot {robot.name!r} has no moving joints, nothing to demonstrate")
    lines = [f"robot {robot.name}: {robot.dof} joints, {robot.model.total_mass:.3g} kg"]
    with Progress(4, "demo") as bar:
        checks = []
        for speed in (1, 6):
            motion = demo_motion(robot, args.duration / speed, fraction=0.5)
            t = np.linspace(0.0, motion.duration, 301)
            report = cd.check_trajectory(robot, t, motion(t)[0], source=f"motion in {motion.duration:g} s")
            checks.append(report)
            summary = report.summary().splitlines()
            lines.append(summary[0])
            lines.append("  " + _peaks(report))
            lines += [ln for ln in summary if ln.lstrip().startswith(("UNCHECKED", "position unbounded"))]
        motion = demo_motion(robot, args.duration, fraction=0.5)
        t = np.linspace(0.0, motion.duration + 0.5, 101)
        for step, mismatch in enumerate((0.0, 0.1), start=1):
            what = "exact model" if mismatch == 0 else f"{mismatch:.0%} mass error"
            bar.update(step, f"tracking ({what})")
            run_ = track(robot, motion, t, kp=100.0, mismatch=mismatch, offset=0.05,
                         progress=lambda f, s=step: bar.update(s + f))
            lines.append(f"computed torque, {what}: {run_.summary().split(': ', 1)[1]}")
        bar.update(3, "plotting")
        plot = _plot(checks[1], args)
        bar.update(4, "done")
    if plot:
        lines.append(f"plot of the fast motion: {plot}")
    elif not args.no_plot:
        lines.append(f"plot skipped: matplotlib is not installed ({install_hint('matplotlib')})")
    print("\n".join(lines))
    return 0


def _peaks(report) -> str:
    """Peak |torque| / effort limit per joint, and which joints exceed which limit."""
    ratios = ", ".join(f"{j.joint} {abs(j.peak_torque) / j.effort_limit:.0%}" if j.effort_limit < float("inf")
                       else f"{j.joint} {abs(j.peak_torque):.3g} N m (unchecked)" for j in report.joints)
    text = f"peak torque (share of the effort limit): {ratios}"
    for kind in ("position", "velocity", "acceleration", "jerk", "effort"):
        joints = sorted({v.joint for v in report.violations if v.quantity == kind})
        if joints:
            text += f"\n  {kind} limit exceeded on {', '.join(joints)}"
    return text


def _have_matplotlib() -> bool:
    """True when matplotlib (the extra ``[plot]``) imports."""
    from composedyn.dynamics.extras import require
    from composedyn.errors import MissingExtra

    try:
        require("matplotlib.figure", "plotting")
    except MissingExtra:
        return False
    return True


def _plot(report, args) -> str | None:
    """Write the plot unless disabled or matplotlib is missing; return its path."""
    if args.no_plot or not _have_matplotlib():
        return None
    report.plot(_plot_path(args))
    return _plot_path(args)


def _plot_path(args) -> str:
    """The plot's file: ``--plot`` or :data:`DEFAULT_PLOT`."""
    return DEFAULT_PLOT if args.plot is None else args.plot
