"""Inputs of the symbolic derivation: robots, graphs, DH rows -> Chain; coordinate symbols."""

from __future__ import annotations

import networkx as nx
import sympy as sp

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import JOINT_TYPES
from composedyn.dynamics.symbolic.chain import Chain, chain_from_model, exact


def as_chain(system, parameters=None, convention: str = "standard"):
    """(:class:`Chain`, mimic map or None) from a Robot, Model, graph, Chain or DH rows.

    The mimic map (``composedyn.dynamics.constraints.mimic.MimicMap``,
    q_full = G q_ind + b) is returned when the robot has mimic joints treated as
    dependent coordinates (the default; a Robot built with
    ``mimic="independent"`` ignores them).
    """
    from composedyn.dynamics.constraints.mimic import select_mimic
    from composedyn.dynamics.model import compile_graph

    if isinstance(system, (Chain, list, tuple)) and parameters not in (None, False):
        raise ValueError("parameters= applies to numeric robots; DH rows and chains carry their symbols themselves")
    if isinstance(system, Chain):
        return system, None
    if isinstance(system, (list, tuple)):
        from composedyn.dynamics.symbolic.dh import chain_from_dh

        return chain_from_dh(system, convention=convention), None
    mode = "dependent"
    if isinstance(system, nx.DiGraph):
        for _, _, d in system.edges(data=True):
            if d.get("type") not in JOINT_TYPES:
                raise ModelError(f"joint {d.get('name')!r} has type {d.get('type')!r}, which the symbolic path "
                                 f"does not handle ({', '.join(JOINT_TYPES)})")
        model = compile_graph(system)
    else:
        if getattr(system, "base", None) is not None:  # a FloatingRobot
            kind = "free-flyer" if system.base.kind == "free" else system.base.kind
            raise ModelError(f"robot {system.name!r}: symbolic equations take joints of one coordinate; its "
                             f"floating base is a {kind} joint with a configuration space of its own, which they "
                             "do not represent (load it without floating=True for its joints on a fixed base)")
        if getattr(system, "array_model", None) is not None:  # a TreeRobot
            several = ", ".join(f"{j.name!r} ({j.kind})" for j in system.joints if (j.nq, j.nv) != (1, 1))
            raise ModelError(f"robot {system.name!r}: symbolic equations take joints of one coordinate; joints "
                             f"{several or 'of its tree'} have configuration spaces of their own, which they do not "
                             "represent")
        model = getattr(system, "model", system)
        if not hasattr(model, "tree_R"):
            raise ModelError(f"symbolic.equations expects a Robot, Model, graph, Chain or DH rows, "
                             f"got {type(system).__name__}")
        if hasattr(system, "mimic_joint_names") and not system.mimic_joint_names:
            mode = "independent"
    return chain_from_model(model, parameters), select_mimic(model, mode)


def mimic_coordinates(mm) -> tuple[list, list]:
    """Joint coordinates as functions of the independent ones for a mimic map:
    (coordinates (n,), generalized symbols (k,)); independent joint j keeps the name q{j+1}."""
    gen = [sp.Symbol(f"q{j + 1}", real=True) for j in mm.independent]
    coords = [sp.Add(*[exact(mm.G[r, a]) * gen[a] for a in range(len(gen))]) + exact(mm.b[r])
              for r in range(mm.G.shape[0])]
    return coords, gen


def coordinate_symbols(names, n: int):
    """Coordinate, rate and acceleration symbols (real) for the given names, or q1..qn."""
    if n == 0:
        raise ModelError("the robot has no moving joints (0 degrees of freedom): no equations of motion")
    q = sp.symbols(f"q1:{n + 1}", real=True) if names is None else tuple(names)
    if not 1 <= len(q) <= n or not all(isinstance(s, sp.Symbol) for s in q):
        raise ValueError(f"need 1 to {n} coordinate symbols, got {names!r}")
    qd = tuple(sp.Symbol(f"{s.name}d", real=True) for s in q)
    qdd = tuple(sp.Symbol(f"{s.name}dd", real=True) for s in q)
    return q, qd, qdd


def check_clash(chain: Chain, *groups) -> None:
    taken = {s.name for grp in groups for s in grp}
    clash = sorted(s.name for s in chain.free_symbols() if s.name in taken)
    if clash:
        raise ValueError(f"{chain.name}: parameter symbols {clash} clash with coordinate names; rename them")


def link_index(chain: Chain, key) -> int:
    """0-based body index from an int or a body name."""
    if isinstance(key, int) and 0 <= key < chain.n:
        return key
    if key in chain.body_names:
        return chain.body_names.index(key)
    raise ModelError(f"{chain.name}: no moving link {key!r} (links: {list(chain.body_names)})")
