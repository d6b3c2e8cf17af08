"""Closed chains on the command line: loading and ``info`` lines.

The commands ``torques`` and ``simulate`` take a robot whose description has a
``.loops.toml`` side file (or a bundled closed chain) through :func:`load_model`;
trajectories then give the actuated (independent) joints only, in
``ClosedChain.joint_names`` order, and the dependent joints follow from the
loop closure along the path.
"""

from __future__ import annotations

from composedyn.closed_chain import load_closed_chain


def load_model(name_or_path: str, command: str, options: dict | None = None):
    """A :class:`ClosedChain` when the description declares loop closures, else ``cd.load``
    through :func:`composedyn.cli.program.load_open_tree` (``options``: :func:`composedyn.cli.program.load_options`)."""
    from composedyn.cli.program import declared_loops, load_open_tree

    if declared_loops(name_or_path) is not None:
        return load_closed_chain(name_or_path)
    return load_open_tree(name_or_path, command, options)


def closed_info_lines(name_or_path: str) -> list[str]:
    """Lines for ``composedyn info``: loops (links, points, kind, rows), actuated and dependent joints."""
    ch = load_closed_chain(name_or_path)
    out = [f"  {len(ch.loops)} loop(s), {len(ch.rows)} constraint equations, {ch.dof} actuated joint(s)",
           f"    actuated (independent): {', '.join(ch.joint_names)}",
           f"    dependent: {', '.join(ch.dependent_names)}"]
    for lp in ch.loops:
        rows = [r.split(".", 1)[1] for r in ch.rows if r.startswith(lp.name + ".")]
        out.append(f"    loop {lp.name}: {lp.link_a} {_point(lp.point_a)} = {lp.link_b} {_point(lp.point_b)}  "
                   f"[{lp.kind}{' ' + lp.plane if lp.kind.startswith('planar') else ''}; rows {', '.join(rows)}]")
    return out


def _point(p) -> str:
    return "(" + ", ".join(f"{x:.4g}" for x in p) + ") m"
