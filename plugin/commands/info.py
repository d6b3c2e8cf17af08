"""``composedyn info ROBOT``: print the kinematic tree, joint types and limits."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("info", help="print a robot's tree, joints, limits and mass")
    p.add_argument("robot", help="URDF file, DH .toml file, or bundled robot name")
    p.set_defaults(run=run)


def _fmt(x: float) -> str:
    return "-" if x in (float("inf"), float("-inf")) else f"{x:.4g}"


def run(args) -> int:
    import composedyn as cd

    robot = cd.load(args.robot)
    g, m = robot.graph, robot.model
    print(f"robot {robot.name}  ({m.source})")
    print(f"  {robot.dof} joint coordinates, {len(m.link_names)} links, total mass {m.total_mass:.4g} kg")
    from composedyn.cli import declared_loops

    loops = declared_loops(args.robot)
    if loops is not None:
        print(f"  closed chain: loop closures in {loops[0]}, actuated joints {loops[1]}; the tree below is cut open")
    print(f"  gravity {[float(x) for x in m.gravity]} m/s^2")
    root = m.link_names[0]

    def walk(link: str, depth: int) -> None:
        d = g.nodes[link]
        print(f"{'  ' * depth}- {link}  [{float(d['mass']):.4g} kg]")
        for child in g.successors(link):
            e = g.edges[link, child]
            extra = ""
            if e["type"] != "fixed":
                i = m.joint_names.index(e["name"])
                extra = (f"  lower {_fmt(m.lower[i])} upper {_fmt(m.upper[i])} "
                         f"vel {_fmt(m.velocity[i])} effort {_fmt(m.effort[i])}")
            print(f"{'  ' * (depth + 1)}joint {e['name']} ({e['type']}){extra}")
            walk(child, depth + 2)

    walk(root, 1)
    _print_frames(robot)
    return 0


def _print_frames(robot) -> None:
    """The task-space frames (``robot.frame_names``) and the body each rides on."""
    m = robot.model
    print(f"  frames ({len(robot.frame_names)}; frame_pose / jacobian take these names):")
    for name, body in zip(m.link_names, m.link_body):
        where = "fixed base" if body < 0 else f"body of joint {m.joint_names[body]}"
        welded = "" if body < 0 or m.body_names[body] == name else f", welded to {m.body_names[body]}"
        print(f"    {name}  ({where}{welded})")
