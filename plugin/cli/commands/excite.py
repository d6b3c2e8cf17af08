"""``composedyn excite ROBOT --duration T --out excite.csv``: an exciting trajectory for
identification (finite Fourier series optimised for the base regressor's condition number,
within the position, velocity and effort limits), starting from rest.

The rate must sample the highest harmonic (``--harmonics`` x
``--base-frequency``) at least 4 times per period.  Exit status: 0 done, 2 bad
input (nothing written).
"""

from __future__ import annotations


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("excite", help="write an exciting trajectory (CSV) for identification",
                       description=__doc__.split("\n\n")[0].replace("``", ""),
                       epilog="exit status: 0 done, 2 bad input (nothing written)")
    p.add_argument("robot", help=ROBOT_HELP)
    p.add_argument("--duration", type=float, required=True, help="length of the trajectory, s")
    p.add_argument("--out", required=True, metavar="OUT.csv", help="trajectory CSV (time, joints, _vel, _acc)")
    p.add_argument("--harmonics", type=int, default=5, help="harmonics of the Fourier series (default 5)")
    p.add_argument("--base-frequency", type=float, default=0.1, help="fundamental frequency, Hz (default 0.1)")
    p.add_argument("--rate", type=float, default=100.0, help="samples per second in the CSV (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random start (default 0)")
    p.add_argument("--criterion", choices=("condition", "d-optimal"), default="condition",
                   help="minimise the condition number (default) or maximise log det (D-optimality)")
    p.set_defaults(run=run)


OPTIONS = {"duration": "--duration", "harmonics": "--harmonics", "base_frequency": "--base-frequency",
           "rate": "--rate"}


def run(args) -> int:
    from composedyn.cli.program import load_open_tree, load_options
    from composedyn.identification.excitation import SAMPLES_PER_PERIOD, check_arguments, excitation_trajectory

    points = max(100, SAMPLES_PER_PERIOD * args.harmonics)  # optimisation points per period
    check_arguments(args.duration, args.harmonics, args.base_frequency, args.rate, points, OPTIONS)
    if not args.duration <= 3600:
        raise ValueError(f"--duration must be at most 3600 s, got {args.duration:g}")
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    robot = load_open_tree(args.robot, "excite", load_options(args))
    if robot.dof == 0:
        raise ValueError(f"{args.robot}: robot {robot.name!r} has no moving joints, nothing to excite")
    ex = excitation_trajectory(robot, args.duration, harmonics=args.harmonics, base_frequency=args.base_frequency,
                               rate=args.rate, points=points, seed=args.seed, criterion=args.criterion)
    ex.to_csv(args.out)
    print(f"{len(ex.t)} samples over {args.duration:g} s, {args.harmonics} harmonics of "
          f"{args.base_frequency:g} Hz; base regressor condition number {ex.condition:.3g}; wrote {args.out}")
    return 0
