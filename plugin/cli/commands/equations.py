"""``composedyn equations ROBOT [--latex] [--c out.c]``: closed-form equations of motion."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("equations", help="print a robot's symbolic equations of motion (SymPy)")
    p.add_argument("robot", help=ROBOT_HELP)
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    p.add_argument("--c", metavar="OUT.c", dest="c_out", help="also write C source (with CSE) to this file")
    p.add_argument("--parameters", action="store_true",
                   help="link parameters (masses, lengths, com, inertias, gravity) as symbols")
    p.add_argument("--simplify", choices=("auto", "trig", "none"), default="auto",
                   help="trigonometric simplification per entry (auto: up to 3 coordinates)")
    p.set_defaults(run=run)


def run(args) -> int:
    import composedyn as cd
    from composedyn.cli.program import load_open_tree, load_options

    robot = load_open_tree(args.robot, "equations", load_options(args))
    if robot.dof == 0:
        raise ValueError(f"{args.robot}: robot {robot.name!r} has no moving joints, no equations of motion")
    from composedyn.writing import Staged

    eq = cd.symbolic.equations(robot, parameters=True if args.parameters else None, simplify=args.simplify)
    text = eq.latex() if args.latex else eq.pretty()
    if args.c_out:  # written before anything is printed: a bad path fails with nothing written
        with Staged() as staged:
            with open(staged.tmp(args.c_out), "w", encoding="utf-8") as fh:
                fh.write(eq.c_code())
            staged.commit()
    print(text)
    if args.c_out:
        print(f"wrote {args.c_out}", file=sys.stderr)
    return 0
