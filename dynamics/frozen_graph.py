"""A read-only copy of a kinematic graph (``robot.graph``).

A robot's results come from the graph it was built from, so the graph it shows
must not change under them: :func:`frozen_graph` returns a deep copy whose
structure is frozen (``networkx.freeze``: no node or edge can be added or
removed), whose attribute dictionaries (graph, links, joints) refuse every
change, and whose arrays are read-only in fact.  ``g.copy()`` of it (or
``networkx.DiGraph(g)``) is an ordinary, editable graph to build a changed
robot from (assign new arrays there: the arrays themselves stay read-only).
"""

from __future__ import annotations

import copy

import networkx as nx
import numpy as np

from composedyn.dynamics.model import frozen_array

_REFUSED = ("a robot's graph is read-only (its results were computed from it); edit a copy, "
            "g = robot.graph.copy(), and build a new robot from it (composedyn.from_graph(g))")


class ReadOnlyAttributes(dict):
    """An attribute dictionary that refuses changes once sealed (see :func:`frozen_graph`)."""

    __slots__ = ("sealed",)

    def _check(self):
        if getattr(self, "sealed", False):
            raise TypeError(_REFUSED)

    def __setitem__(self, key, value):
        self._check()
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self._check()
        super().__delitem__(key)

    def __ior__(self, other):
        self._check()
        return super().__ior__(other)

    def update(self, *args, **kwargs):
        self._check()
        super().update(*args, **kwargs)

    def setdefault(self, key, default=None):
        self._check()
        return super().setdefault(key, default)

    def pop(self, *args):
        self._check()
        return super().pop(*args)

    def popitem(self):
        self._check()
        return super().popitem()

    def clear(self):
        self._check()
        super().clear()

    def __reduce__(self):  # pickle and deepcopy: rebuilt sealed as it was
        return (_rebuilt, (dict(self), getattr(self, "sealed", False)))


def _rebuilt(items: dict, sealed: bool) -> ReadOnlyAttributes:
    d = ReadOnlyAttributes({k: _frozen_value(v) for k, v in items.items()} if sealed else items)
    d.sealed = sealed
    return d


class FrozenGraph(nx.DiGraph):
    """A ``networkx.DiGraph`` whose attribute dictionaries are :class:`ReadOnlyAttributes`."""

    graph_attr_dict_factory = node_attr_dict_factory = edge_attr_dict_factory = ReadOnlyAttributes


def _frozen_value(value):
    if isinstance(value, np.ndarray):
        return frozen_array(value)
    if isinstance(value, list):
        return tuple(_frozen_value(v) for v in value)
    return value


def frozen_graph(g: nx.DiGraph) -> FrozenGraph:
    """A deep copy of ``g``, read-only in fact (see the module doc)."""
    out = FrozenGraph()
    out.graph.update({k: _frozen_value(copy.deepcopy(v)) for k, v in g.graph.items()})
    for node, d in g.nodes(data=True):
        out.add_node(node, **{k: _frozen_value(copy.deepcopy(v)) for k, v in d.items()})
    for u, v, d in g.edges(data=True):
        out.add_edge(u, v, **{k: _frozen_value(copy.deepcopy(x)) for k, x in d.items()})
    for d in (out.graph, *(d for _, d in out.nodes(data=True)), *(d for _, _, d in out.edges(data=True))):
        d.sealed = True
    return nx.freeze(out)
