"""Inputs of the symbolic derivation: robots, graphs, DH rows -> Chain; coordinate symbols."""

from __future__ import annotations

import networkx as nx
import sympy as sp

from composedyn.dynamics.symbolic.chain import Chain, chain_from_model
from composedyn.errors import ModelError


def as_chain(system, parameters=None, convention: str = "standard") -> Chain:
    """A :class:`Chain` from a Robot, Model, kinematic graph, Chain or list of DH rows."""
    from composedyn.dynamics.model import compile_graph

    if isinstance(system, Chain):
        return system
    if isinstance(system, (list, tuple)):
        from composedyn.dynamics.symbolic.dh import chain_from_dh

        return chain_from_dh(system, convention=convention)
    if isinstance(system, nx.DiGraph):
        for _, _, d in system.edges(data=True):
            if d.get("type") not in ("revolute", "continuous", "prismatic", "fixed"):
                raise ModelError(f"joint {d.get('name')!r} has type {d.get('type')!r}, which the symbolic path "
                                 "does not handle (revolute, continuous, prismatic, fixed)")
        return chain_from_model(compile_graph(system), parameters)
    model = getattr(system, "model", system)
    if not hasattr(model, "tree_R"):
        raise ModelError(f"symbolic.equations expects a Robot, Model, graph, Chain or DH rows, "
                         f"got {type(system).__name__}")
    return chain_from_model(model, parameters)


def coordinate_symbols(names, n: int):
    """Coordinate, rate and acceleration symbols (real) for the given names or 'q'."""
    q = sp.symbols(f"q1:{n + 1}", real=True) if names is None else tuple(names)
    if len(q) != n or not all(isinstance(s, sp.Symbol) for s in q):
        raise ValueError(f"need {n} coordinate symbols, got {names!r}")
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
