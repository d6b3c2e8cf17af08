"""Third-party description formats through the entry-point group
``composedyn.importers``.

A package adds a format by declaring, in its ``pyproject.toml``::

    [project.entry-points."composedyn.importers"]
    myfmt = "mypkg.io:load_myfmt"

The entry-point *name* is the file suffix (without the dot, matched
case-insensitively) and the object is a function ``path -> networkx.DiGraph``
following the graph schema of docs/architecture.md.  :func:`composedyn.load`
consults these for suffixes it does not handle itself.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Callable

import networkx as nx

from composedyn.errors import ModelError

GROUP = "composedyn.importers"


def importers() -> dict[str, EntryPoint]:
    """Registered importer entry points, keyed by lower-case suffix (no dot)."""
    return {ep.name.lower().lstrip("."): ep for ep in entry_points(group=GROUP)}


def find_importer(suffix: str) -> Callable[[str], nx.DiGraph] | None:
    """The importer function registered for ``suffix`` (".myfmt" or "myfmt"), or None.

    Raises ModelError naming the entry point when it cannot be loaded.
    """
    ep = importers().get(suffix.lower().lstrip("."))
    if ep is None:
        return None
    try:
        fn = ep.load()
    except Exception as e:  # a broken third-party package must not crash with a traceback
        raise ModelError(f"importer {ep.name!r} ({ep.value}) of group {GROUP} failed to load: {e}") from e
    if not callable(fn):
        raise ModelError(f"importer {ep.name!r} ({ep.value}) is not callable")
    return fn
