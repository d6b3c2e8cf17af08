"""``composedyn identify ROBOT LOG... --out identified.urdf``: identify inertial parameters and
joint friction from logs of positions and measured efforts.

LOG: a CSV (trajectory format with ``<joint>_effort`` columns), or any log
``composedyn.read_log`` reads when it is installed.  A log its reader found
damaged or inconsistent is refused (exit status 3, as ``composedyn torques``)
unless ``--ignore-findings``; logs that do not excite the robot enough are
refused (exit status 2) or warned about, and so is a validation log that the
identified model predicts worse than the prior.  Exit status: 0 done, 2 bad
input, 3 a damaged or inconsistent log (nothing written unless 0).
"""

from __future__ import annotations

import sys

EXIT_STATUS_HELP = ("exit status: 0 done, 2 bad input (nothing written), 3 a log damaged or inconsistent (the reader "
                    "found lost, corrupted or contradictory data; nothing written)")


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("identify", help="identify inertial parameters and friction from logs, write a URDF",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog=EXIT_STATUS_HELP)
    p.add_argument("robot", help=ROBOT_HELP + " (the prior)")
    p.add_argument("logs", nargs="+", metavar="LOG", help="columns: time, joint positions, <joint>_effort "
                   "(optional <joint>_vel)")
    p.add_argument("--out", required=True, metavar="OUT.urdf", help="identified URDF")
    p.add_argument("--method", choices=("ols", "wls", "physical"), default="physical",
                   help="least squares, weighted least squares, or physically consistent (default)")
    p.add_argument("--validate", metavar="LOG", help="report the identified model's error on this log")
    p.add_argument("--json", metavar="OUT.json", help="write the identification report as JSON")
    p.add_argument("--plot", metavar="OUT.png", help="plot measured vs predicted torque")
    p.add_argument("--cutoff", type=float, default=10.0,
                   help="low-pass cut-off, Hz (default 10; at most 0.8 x the log's Nyquist frequency is used)")
    p.add_argument("--offset", action="store_true", help="also identify a constant torque offset per joint")
    p.add_argument("--ignore-findings", action="store_true",
                   help="fit logs that their reader found damaged or inconsistent (refused by default, exit status 3)")
    p.set_defaults(run=run)


def run(args) -> int:
    from composedyn.cli.program import load_open_tree, load_options
    from composedyn.cli.report_options import check_plot_available
    from composedyn.identification.identify import identify
    from composedyn.identification.logs import DamagedLog
    from composedyn.progress import Progress
    from composedyn.writing import Staged

    check_plot_available(args)
    robot = load_open_tree(args.robot, "identify", load_options(args))
    if robot.dof == 0:
        raise ValueError(f"{args.robot}: robot {robot.name!r} has no moving joints, nothing to identify")
    stages = 7 + bool(args.validate)
    # progress only on a terminal (logs and pipes stay clean)
    with Progress(stages, "identify", stream=sys.stderr if sys.stderr.isatty() else _Null()) as bar:
        try:
            res = identify(robot, list(args.logs), method=args.method, cutoff=args.cutoff, offset=args.offset,
                           progress=lambda label: bar.advance(1, label), ignore_findings=args.ignore_findings)
            if args.validate:
                res.validate(args.validate)
        except DamagedLog as e:
            print(f"composedyn: error: {e.line}; --ignore-findings fits it anyway", file=sys.stderr)
            return 3
        with Staged() as staged:
            res.to_urdf(staged.tmp(args.out))
            if args.json:
                res.to_json(staged.tmp(args.json))
            if args.plot:
                res.plot(staged.tmp(args.plot))
            staged.commit()
        bar.advance(1, "done")
    print(summary(res, args.out))
    return 0


def summary(res, out: str) -> str:
    worst = max(range(len(res.joint_names)), key=lambda j: res.relative_rms[j])
    text = (f"{res.method}: {res.base.rank} base parameters, condition number {res.condition:.3g}, "
            f"fit RMS error {100 * res.overall_relative_rms:.2f} % (worst {res.joint_names[worst]} "
            f"{100 * res.relative_rms[worst]:.2f} %)")
    if res.validation is not None:
        v = res.validation
        text += (f"; validation {100 * v['overall_relative_rms']:.2f} % "
                 f"(prior model {100 * v['prior_overall_relative_rms']:.2f} %)")
    return text + f"; wrote {out}"


class _Null:
    def write(self, _text: str) -> None:
        pass

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
