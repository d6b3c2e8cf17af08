"""``composedyn convert IN OUT.urdf``: write any robot composedyn loads as a URDF file."""

from __future__ import annotations


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("convert", help="write a robot (URDF, xacro, MJCF, SDFormat, DH .toml, bundled name) as URDF")
    p.add_argument("robot", help=ROBOT_HELP)  # the parser adds --package-dir, --root and --model
    p.add_argument("out", metavar="OUT.urdf", help="URDF file to write")
    p.add_argument("--floating", choices=("auto", "free", "fixed"), default="auto",
                   help="base: auto (as the description says; an SDFormat model not attached to the world is "
                        "free), free (a free-flyer base), fixed (weld a floating base)")
    p.set_defaults(run=run)


def run(args) -> int:
    from pathlib import Path

    import composedyn as cd
    from composedyn.cli.program import declared_loops, load_options
    from composedyn.writing import Staged

    if Path(args.out).suffix.lower() != ".urdf":
        raise ValueError(f"{args.out}: the output must be a .urdf file")
    loops = declared_loops(args.robot)
    if loops is not None:
        raise cd.ModelError(f"{args.robot}: a closed chain (loops in {loops[0]}); URDF describes trees only, "
                            "the loop closures would be lost")
    floating = {"auto": None, "free": True, "fixed": False}[args.floating]
    robot = cd.load(args.robot, floating=floating, **load_options(args))
    from composedyn.importers.urdf_export import check_writable, gravity_note

    check_writable(robot.graph, args.robot)
    with Staged() as staged:
        robot.to_urdf(staged.tmp(args.out))
        staged.commit()
    base = f", floating base on {robot.base.link!r}" if robot.floating else ""
    n = len(robot.joint_names)
    note = gravity_note(robot.graph, robot.base if robot.floating else None)
    note = f"; {note}" if note else ""
    print(f"wrote {args.out}: robot {robot.name!r}, {n} joint{'' if n == 1 else 's'}{base}{note}")
    return 0
