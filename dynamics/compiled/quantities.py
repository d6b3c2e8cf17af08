"""Every declared compiled quantity (:mod:`.declare`), by name.

The declarations are found, not listed: every module of this package whose source
declares a ``Quantity(`` is imported and its module-level ``Quantity`` objects are
collected, so a new algorithm module is all it takes.  The ``Robot`` and
``FloatingRobot`` methods reach a quantity through their per-thread
:class:`composedyn.dynamics.data.Data`, the general path
(:func:`composedyn.dynamics.dispatch.call`) by its name here.
"""

from __future__ import annotations

import importlib
import pathlib

from composedyn.dynamics.compiled.declare import Quantity


def _declared() -> list:
    found = []
    for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        if path.stem not in ("declare", "quantities") and "Quantity(" in path.read_text(encoding="utf-8"):
            module = importlib.import_module(f"{__package__}.{path.stem}")
            found += [q for q in vars(module).values() if isinstance(q, Quantity)]
    return found


def _by_name(declared: list) -> dict:
    table: dict = {}
    for q in declared:
        if table.setdefault(q.name, q) is not q:
            raise RuntimeError(f"two compiled quantities are declared as {q.name!r}")
    return table


DECLARED = _by_name(_declared())
