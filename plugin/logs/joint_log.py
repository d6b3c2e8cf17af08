"""The joint log: joint positions, velocities and efforts on one time base.

Returned by :func:`composedyn.read_log` for every log format (CSV, ROS 1 bag,
ROS 2 bag folder, ``.mcap``, ``.db3``).
"""

from __future__ import annotations

import contextvars
import difflib
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np


class LogWarning(UserWarning):
    """A log reads, but something in it is suspicious (a gap, a backwards or
    duplicate stamp, a NaN velocity or effort); the message names topic and time."""


_collector: contextvars.ContextVar = contextvars.ContextVar("log_warning_collector", default=None)


def warn_log(message: str, stacklevel: int = 2) -> None:
    """A :class:`LogWarning`: appended to the list of the innermost :func:`collect_log_warnings`
    block of this thread (or context), else emitted with :func:`warnings.warn`."""
    found = _collector.get()
    if found is None:
        warnings.warn(message, LogWarning, stacklevel=stacklevel + 1)
    else:
        found.append(message)


@contextmanager
def collect_log_warnings():
    """The messages of the LogWarnings raised inside the block by this thread (or context) only,
    as a list; they are collected, not emitted.  Safe with several logs read in parallel threads."""
    found: list[str] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)


@dataclass(frozen=True)
class JointLog:
    """Joint samples of one log on one time base.

    Attributes
    ----------
    t : (T,) float
        Seconds from the first message's header stamp (``stamp0``), strictly increasing.
    joint_names : tuple of str
        Column order of ``q``, ``qd``, ``effort``.
    q : (T, n) float
        Positions, rad or m.
    qd : (T, n) float or None
        Velocities, rad/s or m/s; None when the log has none.
    effort : (T, n) float or None
        Measured joint torques or forces, N m or N; None when the log has none.
    source : str
        The file or folder read (with ``:topic`` for bags).
    qdd : (T, n) float or None
        Accelerations (CSV logs with ``_acc`` columns only).
    stamp0 : int
        Absolute time of ``t = 0`` in nanoseconds (header stamp; 0 for CSV).
    findings : tuple of LogFinding
        What is wrong with the data ("damaged" or "inconsistent", see
        :mod:`composedyn.logs.integrity`); empty for an intact log.
    measured : bool
        Measured data (a bag, or a CSV with ``_effort`` columns), differentiated by a
        smoothing spline by default; False for planner output (a CSV without efforts),
        differentiated by the interpolating spline (:mod:`composedyn.logs.derivatives`).
    """

    t: np.ndarray
    joint_names: tuple
    q: np.ndarray
    qd: np.ndarray | None
    effort: np.ndarray | None
    source: str
    qdd: np.ndarray | None = None
    stamp0: int = 0
    findings: tuple = ()
    measured: bool = True

    def reorder(self, names) -> JointLog:
        """The same log with columns in the order ``names`` (e.g. ``robot.joint_names``).

        Joints of the log not in ``names`` are dropped; a name the log lacks
        raises ValueError naming it (and close names of the log).
        """
        names = tuple(names)
        where = {j: i for i, j in enumerate(self.joint_names)}
        missing = [j for j in names if j not in where]
        if missing:
            close = difflib.get_close_matches(missing[0], self.joint_names, n=3)
            hint = f" (close: {', '.join(close)})" if close else f" (log joints: {', '.join(self.joint_names)})"
            raise ValueError(f"{self.source}: joint {missing[0]!r} is in no message{hint}")
        idx = np.array([where[j] for j in names], dtype=int)
        def pick(a):
            return None if a is None else a[:, idx]
        return replace(self, joint_names=names, q=pick(self.q), qd=pick(self.qd),
                       effort=pick(self.effort), qdd=pick(self.qdd))

    def for_robot(self, robot) -> JointLog:
        """:meth:`reorder` to ``robot.joint_names``."""
        return self.reorder(robot.joint_names)

    def __len__(self) -> int:
        return len(self.t)
