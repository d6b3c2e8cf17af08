"""Loop closures (closed kinematic chains) from TOML.

URDF can only describe trees, so the loop closures of ``robot.urdf`` live in a
side file ``robot.loops.toml`` next to it; a DH table (``robot.toml``) carries
the same keys in its own file.  Format (lengths in m, angles in rad)::

    [closure]
    independent = ["crank_joint"]              # actuated joints (required)
    guess = {crank_joint = 0.3, rocker_joint = 1.6}   # assembly guess, selects the branch;
                                               # joints not listed start at 0
    [[loops]]                                  # one table per loop closure
    name = "pin_C"                             # optional label
    link_a = "coupler"                         # the two links the loop joins
    point_a = [0.6, 0.0, 0.0]                  # closure point in link_a's frame (default 0)
    link_b = "rocker"
    point_b = [0.5, 0.0, 0.0]
    kind = "planar"                            # planar (2 eqs) | position (3) | pose (6) | planar_pose (3)
    plane = "xz"                               # for planar kinds: xy | xz | yz (world)
    rpy_a = [0, 0, 0]                          # closure frame orientation, pose kinds (default 0)
    rpy_b = [0, 0, 0]

Reading never checks link names against a robot; :class:`composedyn.ClosedChain` does.
"""

from __future__ import annotations

import os
from pathlib import Path

from composedyn.dynamics.constraints.loops import LoopClosure
from composedyn.dynamics.errors import ModelError
from composedyn.importers.toml_file import read_toml

LOOP_KEYS = ("name", "link_a", "point_a", "link_b", "point_b", "kind", "plane", "rpy_a", "rpy_b")
CLOSURE_KEYS = ("independent", "guess")


def side_file(path: str | os.PathLike) -> Path:
    """The loop-closure file of a description: ``x.loops.toml`` for ``x.urdf``, the file itself for ``x.toml``."""
    p = Path(path)
    return p if p.suffix.lower() == ".toml" else p.with_suffix(".loops.toml")


def read_loops(path: str | os.PathLike) -> tuple[list[LoopClosure], list[str], dict]:
    """(loops, independent joint names, guess {joint: value}) from a TOML file; ModelError names file and key."""
    src = str(Path(path))
    doc = read_toml(path, "no loop-closure file (expected [closure] and [[loops]] tables)")
    return loops_from_doc(doc, src)


def loops_from_doc(doc: dict, src: str) -> tuple[list[LoopClosure], list[str], dict]:
    """Parse the ``closure`` table and ``loops`` array of a TOML document (other keys ignored)."""
    raw = doc.get("loops")
    if not isinstance(raw, list) or not raw:
        raise ModelError(f"{src}: no [[loops]] tables (a closed chain needs at least one loop closure)")
    closure = doc.get("closure")
    if not isinstance(closure, dict) or "independent" not in closure:
        raise ModelError(f"{src}: missing [closure] table with 'independent' = [actuated joint names]")
    bad = [k for k in closure if k not in CLOSURE_KEYS]
    if bad:
        raise ModelError(f"{src}: [closure]: unknown key {bad[0]!r} (allowed: {', '.join(CLOSURE_KEYS)})")
    ind = closure["independent"]
    if not isinstance(ind, list) or not all(isinstance(j, str) for j in ind):
        raise ModelError(f"{src}: [closure] independent must be a list of joint names, got {ind!r}")
    guess = closure.get("guess", {})
    if not isinstance(guess, dict) or not all(isinstance(v, (int, float)) for v in guess.values()):
        raise ModelError(f"{src}: [closure] guess must map joint names to numbers, got {guess!r}")
    loops = []
    for i, t in enumerate(raw):
        where = f"{src}: loops[{i}]"
        if not isinstance(t, dict):
            raise ModelError(f"{where}: must be a table")
        bad = [k for k in t if k not in LOOP_KEYS]
        if bad:
            raise ModelError(f"{where}: unknown key {bad[0]!r} (allowed: {', '.join(LOOP_KEYS)})")
        for key in ("link_a", "link_b"):
            if not isinstance(t.get(key), str):
                raise ModelError(f"{where}: missing or non-string {key!r}")
        try:
            loops.append(LoopClosure(**t))
        except (TypeError, ValueError) as e:
            raise ModelError(f"{where}: {e}") from None
        except ModelError as e:
            raise ModelError(f"{src}: {e}") from None
    return loops, list(ind), {str(k): float(v) for k, v in guess.items()}
