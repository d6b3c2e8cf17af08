"""Validation of Denavit-Hartenberg rows (Python dicts or TOML ``[[links]]``).

A row describes one joint and the link it moves::

    {"a": 0.4318, "alpha": 0.0, "d": 0.0, "theta": 0.0,      # required
     "joint": "revolute" | "prismatic",                        # default revolute
     "mass": 17.4, "com": [x, y, z], "inertia": 3x3 or [Ixx, Iyy, Izz],
     "limits": {"lower", "upper", "velocity", "effort"} or [lower, upper, velocity, effort],
     "damping": 0.0, "friction": 0.0, "armature": 0.0,
     "name": "link2", "joint_name": "joint2"}

``mass``, ``com`` and ``inertia`` come together or not at all (a massless
link).  Every error is a :class:`composedyn.ModelError` that names the source
(file or ``"<dh table>"``), the row (counted from 1) and the key.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from composedyn.dynamics.errors import ModelError

GEOMETRY = ("a", "alpha", "d", "theta")
INERTIAL = ("mass", "com", "inertia")
OPTIONAL = ("joint", "limits", "damping", "friction", "armature", "name", "joint_name")
ALLOWED = GEOMETRY + INERTIAL + OPTIONAL
JOINTS = ("revolute", "prismatic")
LIMIT_KEYS = ("lower", "upper", "velocity", "effort")


def number(src: str, where: str, value: Any) -> float:
    """A finite float, or ModelError naming ``where`` (bools and strings refused)."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ModelError(f"{src}: {where} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{src}: {where} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ModelError(f"{src}: {where} is {x} (NaN or infinite values are not allowed)")
    return x


def array(src: str, where: str, value: Any, shapes: tuple) -> np.ndarray:
    """A finite float array of one of ``shapes``, or ModelError naming ``where``."""
    if isinstance(value, (str, bytes, Mapping)):
        raise ModelError(f"{src}: {where} must be an array of shape {' or '.join(map(str, shapes))}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{src}: {where} must be an array of shape {' or '.join(map(str, shapes))}") from None
    if arr.shape not in shapes:
        raise ModelError(f"{src}: {where} has shape {arr.shape}, expected {' or '.join(map(str, shapes))}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{src}: {where} contains NaN or infinite values")
    return arr


def check_rows(rows: Sequence[Mapping], src: str = "<dh table>") -> list[dict]:
    """Validate DH rows and return them normalised (floats, arrays, defaults filled).

    Returns one dict per row with every key of :data:`ALLOWED`; ``limits`` is a
    4-tuple (lower, upper, velocity, effort) with None where absent; ``name``
    and ``joint_name`` are None when not given.
    """
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise ModelError(f"{src}: DH rows must be a list of dicts, got {type(rows).__name__}")
    if len(rows) == 0:
        raise ModelError(f"{src}: the DH table has no rows")
    return [_check_row(src, i + 1, row) for i, row in enumerate(rows)]


def _check_row(src: str, k: int, row: Mapping) -> dict:
    where = f"row {k}"
    if not isinstance(row, Mapping):
        raise ModelError(f"{src}: {where} must be a dict/table, got {type(row).__name__}")
    extra = [key for key in row if key not in ALLOWED]
    if extra:
        raise ModelError(f"{src}: {where}: unknown key {extra[0]!r} (allowed: {', '.join(ALLOWED)})")
    for key in GEOMETRY:
        if key not in row:
            raise ModelError(f"{src}: {where}: missing key {key!r} (required: {', '.join(GEOMETRY)})")
    given = [key for key in INERTIAL if key in row]
    if given and len(given) < 3:
        missing = next(key for key in INERTIAL if key not in row)
        raise ModelError(f"{src}: {where}: missing key {missing!r} (mass, com and inertia come together)")
    out: dict = {key: number(src, f"{where} key {key!r}", row[key]) for key in GEOMETRY}
    joint = row.get("joint", "revolute")
    if joint not in JOINTS:
        raise ModelError(f"{src}: {where} key 'joint' is {joint!r}; expected 'revolute' or 'prismatic'")
    out["joint"] = joint
    out["mass"] = number(src, f"{where} key 'mass'", row.get("mass", 0.0))
    if out["mass"] < 0:
        raise ModelError(f"{src}: {where} key 'mass' is negative ({out['mass']})")
    out["com"] = array(src, f"{where} key 'com'", row.get("com", (0.0, 0.0, 0.0)), ((3,),))
    inertia = array(src, f"{where} key 'inertia'", row.get("inertia", np.zeros((3, 3))), ((3, 3), (3,)))
    out["inertia"] = np.diag(inertia) if inertia.shape == (3,) else inertia
    out["limits"] = _limits(src, f"{where} key 'limits'", row.get("limits"))
    for key in ("damping", "friction", "armature"):
        out[key] = number(src, f"{where} key {key!r}", row.get(key, 0.0))
        if out[key] < 0:
            raise ModelError(f"{src}: {where} key {key!r} is negative ({out[key]})")
    for key in ("name", "joint_name"):
        value = row.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ModelError(f"{src}: {where} key {key!r} must be a non-empty string, got {value!r}")
        out[key] = value
    return out


def _limits(src: str, where: str, value: Any) -> tuple:
    """(lower, upper, velocity, effort) with None where absent."""
    if value is None:
        return (None, None, None, None)
    if isinstance(value, Mapping):
        bad = [key for key in value if key not in LIMIT_KEYS]
        if bad:
            raise ModelError(f"{src}: {where}: unknown key {bad[0]!r} (allowed: {', '.join(LIMIT_KEYS)})")
        items = [value.get(key) for key in LIMIT_KEYS]
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 4:
        items = list(value)
    else:
        raise ModelError(f"{src}: {where} must be a table {{lower, upper, velocity, effort}} or a list of 4")
    lim = tuple(None if v is None else number(src, f"{where} {key}", v) for key, v in zip(LIMIT_KEYS, items))
    lo, hi, vel, eff = lim
    if lo is not None and hi is not None and lo > hi:
        raise ModelError(f"{src}: {where}: lower {lo} is above upper {hi}")
    for key, v in (("velocity", vel), ("effort", eff)):
        if v is not None and v < 0:
            raise ModelError(f"{src}: {where} {key} is negative ({v})")
    return lim
