"""The joint limits a trajectory check compares against: a private copy.

The description gives position (``lower``, ``upper``), ``velocity`` and
``effort`` limits; a user may add ``acceleration`` and ``jerk`` limits and
override any of them, as a mapping (API ``limits=``) or a TOML file (CLI
``--limits``)::

    margin = 0.9                 # optional: tighten every limit by this factor
    acceleration = 15.0          # one value for every joint ...
    [jerk]                       # ... or per joint, by name
    joint1 = 7500.0
    joint2 = 3750.0

``margin`` (0 < margin <= 1) scales velocity, acceleration, jerk and effort
limits by the factor and shrinks each finite position range about its centre
to ``margin`` times its width (a one-sided position limit is left as is).
Values are SI: rad or m, rad/s or m/s, rad/s^2 or m/s^2, rad/s^3 or m/s^3,
N m or N.  The arrays are copies: changing them never changes the robot, and
changing ``robot.limits`` after a check never changes its report.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from composedyn.dynamics.joint_types import angular

QUANTITIES = ("position", "velocity", "acceleration", "jerk", "effort")
MEASURED_EFFORT = "measured effort"  # violations of a log's measured efforts (against the effort limits)
KEYS = ("lower", "upper", "velocity", "acceleration", "jerk", "effort")
UNITS = {  # (revolute, prismatic)
    "position": ("rad", "m"), "velocity": ("rad/s", "m/s"), "acceleration": ("rad/s^2", "m/s^2"),
    "jerk": ("rad/s^3", "m/s^3"), "effort": ("N m", "N")}


@dataclass(frozen=True, eq=False)
class JointLimits:
    """Resolved limits (n,) of one check, +-inf where absent; ``continuous`` (n,) bool marks
    joints with no position limit by construction; ``prismatic`` (n,) bool selects units."""

    joint_names: tuple
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray
    effort: np.ndarray
    continuous: np.ndarray
    prismatic: np.ndarray
    margin: float = 1.0

    def bounds(self, quantity: str) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) (n,) of ``quantity``: value v is within limits where lo <= v <= hi."""
        if quantity == "position":
            return self.lower, self.upper
        lim = getattr(self, quantity)
        return -lim, lim

    def checked(self, quantity: str) -> np.ndarray:
        """(n,) bool: joints on which ``quantity`` has at least one finite bound."""
        lo, hi = self.bounds(quantity)
        return np.isfinite(lo) | np.isfinite(hi)

    def unit(self, quantity: str, joint: int) -> str:
        return UNITS[quantity][int(bool(self.prismatic[joint]))]


def resolve_limits(robot, limits=None, margin: float = 1.0) -> JointLimits:
    """The limits to check ``robot`` against: the description's, overridden and extended by
    ``limits`` (mapping or JointLimits), tightened by ``margin``.

    ``limits`` maps a key of ``KEYS`` to a scalar (every joint), an (n,) array
    (``robot.joint_names`` order) or a mapping joint name -> value; it may also
    hold ``margin`` (multiplied with the argument).  ValueError names an unknown
    key or joint, or a value that is not a positive number (lower/upper: any
    finite number, lower < upper).
    """
    names = tuple(robot.joint_names)
    n = len(names)
    if isinstance(limits, JointLimits):
        base = {k: np.array(getattr(limits, k), float) for k in KEYS}
        flags, prior, limits = (limits.continuous.copy(), limits.prismatic.copy()), limits.margin, None
    else:
        lim = robot.limits
        base = {k: np.array(lim[k], dtype=float).reshape(n) if k in lim else np.full(n, np.inf) for k in KEYS}
        base["lower"] = np.array(lim["lower"], dtype=float).reshape(n) if "lower" in lim else np.full(n, -np.inf)
        flags, prior = joint_flags(robot), 1.0
    if not isinstance(limits, (Mapping, type(None))):
        raise TypeError(f"limits must be a mapping of {', '.join(KEYS)} to values, got {type(limits).__name__}")
    user = dict(limits or {})
    margin = margin * _number("margin", user.pop("margin", 1.0), "every joint")
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be in (0, 1] (a factor tightening every limit), got {margin:g}")
    for key, value in user.items():
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS + ("margin",), n=2)
            hint = f" (did you mean {' or '.join(close)}?)" if close else f" (known: {', '.join(KEYS)}, margin)"
            raise ValueError(f"limits: unknown quantity {key!r}{hint}")
        base[key] = _values(key, value, names, base[key])
    lower, upper = base["lower"], base["upper"]
    cont = flags[0] & ~np.isfinite(lower) & ~np.isfinite(upper)
    bad = np.flatnonzero(lower >= upper)
    if bad.size:
        i = bad[0]
        raise ValueError(f"limits: joint {names[i]!r} has lower {lower[i]:g} >= upper {upper[i]:g}")
    both = np.isfinite(lower) & np.isfinite(upper)
    centre, half = np.zeros(len(names)), np.zeros(len(names))
    centre[both], half[both] = 0.5 * (lower[both] + upper[both]), 0.5 * (upper[both] - lower[both])
    lower = np.where(both, centre - margin * half, lower)
    upper = np.where(both, centre + margin * half, upper)
    scaled = {k: margin * base[k] for k in ("velocity", "acceleration", "jerk", "effort")}
    return JointLimits(names, lower, upper, continuous=cont, prismatic=flags[1], margin=prior * margin, **scaled)


def _values(key: str, value, names: tuple, current: np.ndarray) -> np.ndarray:
    n = len(names)
    out = current.copy()
    if isinstance(value, Mapping):
        for joint, v in value.items():
            if joint not in names:
                close = difflib.get_close_matches(str(joint), names, n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else f" (joints: {', '.join(names)})"
                raise ValueError(f"limits: {key}: unknown joint {joint!r}{hint}")
            out[names.index(joint)] = _number(key, v, joint)
        return out
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        return np.full(n, _number(key, value, "every joint"))
    if arr.shape != (n,):
        raise ValueError(f"limits: {key} has shape {arr.shape}, expected a scalar, ({n},) or a joint -> value mapping")
    return np.array([_number(key, v, j) for v, j in zip(arr, names)])


def _number(key: str, v, joint: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"limits: {key} of {joint}: not a number: {v!r}") from None
    if key in ("lower", "upper"):
        if np.isnan(x):
            raise ValueError(f"limits: {key} of {joint} is NaN")
    elif not x > 0:
        raise ValueError(f"limits: {key} of {joint} must be positive (inf: no limit), got {v!r}")
    return x


def joint_flags(robot) -> tuple[np.ndarray, np.ndarray]:
    """(continuous, prismatic) (n,) bool for ``robot.joint_names``, from its compiled model
    when it has one (a bare DynamicsModel: all False)."""
    names = tuple(robot.joint_names)
    model = getattr(robot, "model", None)
    mnames = tuple(getattr(model, "joint_names", ()))
    where = {name: k for k, name in enumerate(mnames)}
    cont = np.array([bool(model.continuous[where[j]]) if j in where else False for j in names], dtype=bool)
    length = ~angular(model.jtype) if mnames else np.zeros(0, dtype=bool)
    pris = np.array([bool(length[where[j]]) if j in where else False for j in names], dtype=bool)
    return cont, pris


def read_limits_toml(path) -> dict:
    """The mapping of a ``--limits`` TOML file (see the module docstring); ValueError naming the file."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, expected a TOML file of limits") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a valid TOML file: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a valid TOML file: arrays or tables nested deeper than the parser's limit") \
            from None
    return data
