"""Joint torque and velocity limit reports: per-joint peaks and margins,
and every interval in which a limit is exceeded.

Built by :func:`composedyn.check_trajectory` (planned motion) and by the
``simulate`` command (torques a controller applied).  A limit is exceeded
where |tau_i(t)| > effort_i or |qd_i(t)| > velocity_i; interval ends are
interpolated linearly between the samples on either side of the crossing.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import asdict, dataclass

import numpy as np

from composedyn.writing import write_atomic


@dataclass(frozen=True)
class Interval:
    """One stretch [start, end] (s) where ``quantity`` ("effort" or "velocity")
    of ``joint`` exceeds ``limit``; ``peak`` is the signed worst value and
    ``excess`` = |peak| - limit > 0 (N m, N, rad/s or m/s)."""

    joint: str
    quantity: str
    start: float
    end: float
    peak: float
    limit: float
    excess: float


@dataclass(frozen=True)
class JointSummary:
    """Per-joint peaks (signed, largest magnitude) and worst margins
    (min over time of limit - |value|; negative when exceeded, inf without a limit)."""

    joint: str
    peak_torque: float
    peak_torque_time: float
    effort_limit: float
    torque_margin: float
    peak_velocity: float
    velocity_limit: float
    velocity_margin: float


def exceedances(t: np.ndarray, x: np.ndarray, limit: float, joint: str, quantity: str) -> list[Interval]:
    """Intervals of t (T,) where |x| (T,) > limit (scalar, may be inf)."""
    e = np.abs(x) - limit
    over = e > 0
    if not over.any():
        return []
    edges = np.diff(np.concatenate([[0], over.astype(np.int8), [0]]))
    out = []
    for i, j in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1):
        start = t[i] if i == 0 else _crossing(t, e, i - 1, i)
        end = t[j] if j == len(t) - 1 else _crossing(t, e, j, j + 1)
        k = i + int(np.argmax(e[i:j + 1]))
        out.append(Interval(joint, quantity, float(start), float(end), float(x[k]), float(limit), float(e[k])))
    return out


def _crossing(t, e, a: int, b: int) -> float:
    """Time where e crosses 0 between samples a and b (linear interpolation)."""
    return t[a] + (t[b] - t[a]) * (-e[a]) / (e[b] - e[a])


class TrajectoryReport:
    """Torques (and velocities) of a motion compared with the joint limits.

    Attributes: ``robot`` name, ``source`` (file or "<array>"), ``joint_names``,
    ``t`` (T,), ``q``, ``qd``, ``qdd``, ``tau`` (T, n), ``effort``,
    ``velocity`` (n,) limits, ``joints`` (tuple of JointSummary),
    ``violations`` (tuple of Interval, sorted by start time).
    """

    def __init__(self, robot: str, source: str, joint_names, t, q, qd, qdd, tau, effort, velocity):
        self.robot, self.source, self.joint_names = robot, source, tuple(joint_names)
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        self.effort, self.velocity = np.asarray(effort, float), np.asarray(velocity, float)
        joints, violations = [], []
        for i, name in enumerate(self.joint_names):
            k, kv = int(np.argmax(np.abs(tau[:, i]))), int(np.argmax(np.abs(qd[:, i])))
            joints.append(JointSummary(
                name, float(tau[k, i]), float(t[k]), float(self.effort[i]),
                float(self.effort[i] - abs(tau[k, i])), float(qd[kv, i]), float(self.velocity[i]),
                float(self.velocity[i] - abs(qd[kv, i]))))
            violations += exceedances(t, tau[:, i], self.effort[i], name, "effort")
            violations += exceedances(t, qd[:, i], self.velocity[i], name, "velocity")
        self.joints = tuple(joints)
        self.violations = tuple(sorted(violations, key=lambda v: (v.start, v.joint)))

    @property
    def ok(self) -> bool:
        """True when no effort or velocity limit is exceeded anywhere."""
        return not self.violations

    def summary(self) -> str:
        """A few human-readable lines (used by the CLI)."""
        head = f"{self.source}: {'within limits' if self.ok else f'{len(self.violations)} limit violation(s)'}"
        lines = [head + f" ({len(self.t)} samples, {self.t[0]:g}..{self.t[-1]:g} s, robot {self.robot})"]
        for v in self.violations:
            unit = "N m" if v.quantity == "effort" else "rad/s"
            lines.append(f"  {v.joint}: {v.quantity} {abs(v.peak):.4g} > {v.limit:.4g} {unit} "
                         f"from {v.start:.4g} s to {v.end:.4g} s (by {v.excess:.4g})")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready dict: robot, source, ok, per-joint summaries, violations (inf -> None)."""
        clean = lambda d: {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in d.items()}  # noqa: E731
        return {"robot": self.robot, "source": self.source, "ok": self.ok,
                "samples": int(len(self.t)), "t_start": float(self.t[0]), "t_end": float(self.t[-1]),
                "joints": [clean(asdict(j)) for j in self.joints],
                "violations": [clean(asdict(v)) for v in self.violations]}

    def to_json(self, path=None, indent: int = 2) -> str:
        """The report as JSON text; also written (atomically) to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=indent) + "\n"
        if path is not None:
            write_atomic(path, text)
        return text

    def to_csv(self, path=None) -> str:
        """Per-sample table: time, then per joint ``j, j_vel, j_acc, j_tau``; written to ``path`` if given."""
        cols = ["time"] + [f"{j}{s}" for j in self.joint_names for s in ("", "_vel", "_acc", "_tau")]
        data = np.column_stack([self.t] + [a[:, i] for i in range(len(self.joint_names))
                                           for a in (self.q, self.qd, self.qdd, self.tau)])
        buf = io.StringIO()
        np.savetxt(buf, data, delimiter=",", header=",".join(cols), comments="", fmt="%.10g")
        text = buf.getvalue()
        if path is not None:
            write_atomic(path, text)
        return text

    def plot(self, path) -> None:
        """Torque and +-effort band per joint, violations shaded; saved to ``path``.

        Needs matplotlib (``pip install 'composedyn[plot]'``); raises ImportError otherwise.
        """
        from composedyn.plotting import plot_report

        plot_report(self, path)
