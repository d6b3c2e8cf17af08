"""Closed chains on the command line: loading, ``info`` lines, trajectory checks, demo motions.

The commands ``torques`` and ``simulate`` take a robot whose description has a
``.loops.toml`` side file (or a bundled closed chain) through :func:`load_model`;
trajectories then give the actuated (independent) joints only, in
``ClosedChain.joint_names`` order, and the dependent joints follow from the
loop closure along the path.
"""

from __future__ import annotations

import numpy as np

from composedyn.closed_chain import ClosedChain, load_closed_chain
from composedyn.errors import ModelError


def load_model(name_or_path: str, command: str, options: dict | None = None):
    """A :class:`ClosedChain` when the description declares loop closures, else ``cd.load``
    through :func:`composedyn.cli.load_open_tree` (``options``: :func:`composedyn.cli.load_options`)."""
    from composedyn.cli import declared_loops, load_open_tree

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


def check_closed_trajectory(chain: ClosedChain, t, q, qd=None, qdd=None, smoothing: float | str = 0.0,
                            friction: bool = True, source: str = "<array>", limits=None):
    """:func:`composedyn.check_trajectory` for a closed chain's actuated joints q (T, k).

    The whole path is closed first (continuation from sample to sample), so a
    path that leaves the assembly range gives one ValueError naming the first
    sample (index and time) where the loops cannot close.
    """
    from composedyn.sampled import check_times
    from composedyn.trajectory import check_trajectory

    t = check_times(t)
    qa = np.asarray(q, dtype=float)
    if qa.ndim != 2 or qa.shape != (len(t), chain.dof):
        raise ValueError(f"{source}: q must have shape ({len(t)}, {chain.dof}) (actuated joints "
                         f"{list(chain.joint_names)}), got {qa.shape}")
    start = chain._last.copy()
    for s in range(len(t)):
        try:
            chain.assemble(qa[s])
        except ModelError as e:
            chain._last = start
            raise ValueError(f"{source}: sample {s} (t = {t[s]:g} s): {str(e).split(': ', 1)[-1]}") from None
    chain._last = start
    return check_trajectory(chain, t, qa, qd, qdd, smoothing=smoothing, friction=friction, source=source,
                            limits=limits)


def demo_reference(model, duration: float = 2.0, amplitude: float = 0.2):
    """The ``simulate`` command's default motion: :func:`composedyn.reference.demo_motion` for a
    tree; for a closed chain a minimum-jerk motion of the actuated joints from the loaded
    assembly by +-``amplitude`` (rad or m, alternating in sign), which stays on its branch."""
    from composedyn.reference import MinimumJerk, demo_motion

    if not isinstance(model, ClosedChain):
        return demo_motion(model, duration)
    q0 = model._last[model._ind].copy()
    sign = np.where(np.arange(model.dof) % 2 == 0, 1.0, -1.0)
    return MinimumJerk(q0, q0 + amplitude * sign, duration)
