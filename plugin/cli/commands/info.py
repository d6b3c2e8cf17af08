"""``composedyn info ROBOT``: print the kinematic tree, joint types and limits, masses and inertias, with units
(kg, m, kg m², rad, rad/s, N m for revolute joints; m, m/s, N for prismatic ones)."""

from __future__ import annotations

from composedyn.dynamics.joint_types import angular
from composedyn.joint_space import several_coordinates


def register(sub) -> None:
    from composedyn.cli.program import ROBOT_HELP

    p = sub.add_parser("info", help="print a robot's tree, joints, limits and mass")
    p.add_argument("robot", help=ROBOT_HELP)
    p.add_argument("--floating", action="store_true",
                   help="load with a free-flyer base (legged robots, humanoids); a URDF whose root joint "
                        "is floating or planar loads floating anyway")
    p.set_defaults(run=run)


MAX_INDENT = 40  # levels of two spaces; deeper lines are not indented further


# units of (position, velocity, effort, viscous damping, armature) by the coordinate's dimension (angle, length)
UNITS = {True: ("rad", "rad/s", "N m", "N m s/rad", "kg m²"), False: ("m", "m/s", "N", "N s/m", "kg")}


def _q(x: float, unit: str) -> str:
    """A number with its unit, or "none" when absent (infinite)."""
    return "none" if x in (float("inf"), float("-inf")) else f"{x:.4g} {unit}"


def joint_text(m, i: int) -> str:
    """Limits (and friction, damping, armature when non-zero) of moving joint ``i``, with units."""
    pos, vel, eff, damp, arm = UNITS[bool(angular(m.jtype)[i])]
    where = ("position unbounded" if m.continuous[i]
             else f"lower {_q(m.lower[i], pos)}  upper {_q(m.upper[i], pos)}")
    out = f"{where}  velocity {_q(m.velocity[i], vel)}  effort {_q(m.effort[i], eff)}"
    for name, value, unit in (("damping", m.damping[i], damp), ("friction", m.friction[i], eff),
                              ("armature", m.armature[i], arm)):
        if value != 0.0:
            out += f"  {name} {value:.4g} {unit}"
    return out


def link_text(node: dict) -> str:
    """Mass (kg), centre of mass (m, link frame) and inertia about it (kg m², link axes) of a link."""
    mass, I = float(node["mass"]), node["inertia"]
    if mass == 0.0 and not I.any():
        return "[0 kg]"
    c = " ".join(f"{x:.4g}" for x in node["com"])
    moments = " ".join(f"{I[a, b]:.4g}" for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
    return f"[{mass:.4g} kg, com ({c}) m, inertia xx yy zz xy xz yz ({moments}) kg m²]"


def run(args) -> int:
    import composedyn as cd
    from composedyn.cli.program import declared_loops, load_options, load_robot

    loops = declared_loops(args.robot)
    if loops is not None and not getattr(args, "floating", False):
        robot = cd.load_closed_chain(args.robot).robot  # an MJCF tree is only loaded with its loops
    else:
        robot = load_robot(args.robot, load_options(args),
                           floating=True if getattr(args, "floating", False) else None)
    if several_coordinates(robot):
        status = _tree_info(robot)
        if loops is not None and not getattr(args, "floating", False):
            from composedyn.cli.closed_chain import closed_info_lines  # closed-chain hook

            print(f"  closed chain: loop closures in {loops[0]}, actuated joints {loops[1]}")
            print("\n".join(closed_info_lines(args.robot)))
        return status
    g, m = robot.graph, robot.model
    print(f"robot {robot.name}  ({m.source})")
    if robot.floating:
        b = robot.base
        print(f"  floating base ({'free flyer' if b.kind == 'free' else 'planar'}, joint {b.joint} on link {b.link}): "
              f"nq = {robot.nq}, nv = {robot.nv}")
        print(f"  {len(robot.joint_names)} joint coordinates, {len(robot.frame_names)} links, "
              f"total mass {robot.mass:.4g} kg")
    else:
        print(f"  {robot.dof} joint coordinates, {len(m.link_names)} links, total mass {m.total_mass:.4g} kg")
        legs = legged_hint(robot)
        if legs:
            print(f"  looks legged or humanoid ({legs}) but was loaded with a fixed base: its root link is "
                  "welded to the world; use --floating (cd.load(..., floating=True)) for a free base")
    if loops is not None:
        print(f"  closed chain: loop closures in {loops[0]}, actuated joints {loops[1]}; the tree below is cut open")
        from composedyn.cli.closed_chain import closed_info_lines  # closed-chain hook
        print("\n".join(closed_info_lines(args.robot)))
    gravity = robot.base.gravity if robot.floating else m.gravity
    print(f"  gravity {[float(x) for x in gravity]} m/s²")
    for line in tree_lines(g, m, root=robot.base.link if robot.floating else None):
        print(line)
    _print_frames(robot)
    return 0


def _tree_info(robot) -> int:
    """The lines of a robot whose joints have configuration spaces of their own (a ``TreeRobot``)."""
    am = robot.array_model
    print(f"robot {robot.name}  ({am.source})")
    print(f"  {len(robot.joints)} joints with nq = {robot.nq}, nv = {robot.nv}, {len(robot.frame_names)} links, "
          f"total mass {robot.mass:.4g} kg")
    print(f"  gravity {[float(x) for x in am.gravity]} m/s²")
    coordinates = {j.name: j for j in robot.joints}
    mimic = {d["name"]: d["mimic"] for _, _, d in robot.graph.edges(data=True) if d.get("mimic") is not None}
    for body, j in enumerate(am.joints):  # body order; a dependent mimic joint has no coordinates of its own
        parent = am.parent[body]
        after = "the world" if parent < 0 else f"joint {am.joints[parent].name}"
        if j.name in coordinates:
            c = coordinates[j.name]
            print(f"  joint {j.name} ({j.kind}): q[{c.idx_q}:{c.idx_q + c.nq}], v[{c.idx_v}:{c.idx_v + c.nv}], "
                  f"after {after}")
        else:
            src, k, offset = mimic[j.name]
            print(f"  joint {j.name} ({j.kind}): mimics {src} (q = {float(k):g} q_{src} + {float(offset):g}), "
                  f"after {after}")
    print(f"  frames ({len(robot.frame_names)}; frame_pose / jacobian take these names):")
    for name, body in zip(robot.frame_names, am.frame_body):
        print(f"    {name}  ({'fixed base' if body < 0 else f'body of joint {am.joints[body].name}'})")
    return 0


FEET = ("foot", "sole", "toe", "ankle", "paw")  # link names that end a leg


def legged_hint(robot) -> str:
    """A short reason when a fixed-base robot looks legged or humanoid, else "".

    Heuristic: at least two separate limbs hang from the fixed base and end in
    links named like feet (``FEET``)."""
    m = robot.model
    feet = [name for name, body in zip(m.link_names, m.link_body)
            if body >= 0 and any(f in name.lower() for f in FEET)]
    limbs = {m.ancestors(int(m.link_body[m.link_names.index(f)]))[-1] for f in feet}
    if len(limbs) < 2:
        return ""
    shown = ", ".join(feet[:4]) + (", ..." if len(feet) > 4 else "")
    return f"{len(limbs)} limbs from the base ending in feet: {shown}"


def tree_lines(g, m, max_indent: int = MAX_INDENT, root: str | None = None):
    """Lines of the kinematic tree, depth first from the root, children in source order.

    Iterative (an explicit stack), so a chain of any length prints.  A link
    ``k`` joints below the root is indented ``2k + 1`` levels, its joint ``2k``;
    indentation stops growing after ``max_indent`` levels, and deeper lines end
    with ``(depth k)``.  ``root``: the link to start from (default: the model's root link).
    """
    index = {name: i for i, name in enumerate(m.joint_names)}
    stack = [(root or m.link_names[0], None, 0)]  # (link, joint data leading to it or None, depth)
    while stack:
        link, edge, k = stack.pop()
        if edge is not None:
            extra = ""
            if edge["type"] != "fixed":
                extra = "  " + joint_text(m, index[edge["name"]])
            yield _indented(2 * k, k, max_indent, f"joint {edge['name']} ({edge['type']}){extra}")
        yield _indented(2 * k + 1, k, max_indent, f"- {link}  {link_text(g.nodes[link])}")
        for child in reversed(list(g.successors(link))):
            stack.append((child, g.edges[link, child], k + 1))


def _indented(level: int, k: int, max_indent: int, text: str) -> str:
    if level <= max_indent:
        return "  " * level + text
    return "  " * max_indent + text + f"  (depth {k})"


def _print_frames(robot) -> None:
    """The task-space frames (``robot.frame_names``) and the body each rides on."""
    m = robot.model
    print(f"  frames ({len(robot.frame_names)}; frame_pose / jacobian take these names):")
    base = 1 if robot.floating else 0  # a floating base's body comes first
    for name in robot.frame_names:
        body = int(m.link_body[m.link_names.index(name)])
        where = ("fixed base" if body < 0 else "floating base" if body < base
                 else f"body of joint {m.joint_names[body]}")
        welded = "" if body < 0 or m.body_names[body] == name else f", welded to {m.body_names[body]}"
        print(f"    {name}  ({where}{welded})")
