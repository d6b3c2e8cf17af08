"""Trajectory limit reports: per-joint peaks and margins, every interval in
which a limit is exceeded, and which limits could not be checked.

Built by :func:`composedyn.check_trajectory` and :func:`composedyn.check_chunks`
(planned or logged motion) and by the ``simulate`` command (torques a
controller applied).  Quantities: position (lower/upper), velocity,
acceleration, jerk, effort (see :mod:`composedyn.torque_check.limits`); the intervals come
from :class:`composedyn.torque_check.limit_scan.LimitScan`.  A quantity with no limit on a
joint is *unchecked* (a continuous joint's position is *unbounded*), never
"within limits": :attr:`TrajectoryReport.unchecked` lists them and the verdict
line says so.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from composedyn.torque_check.limit_scan import Interval, LimitScan
from composedyn.torque_check.limits import MEASURED_EFFORT, QUANTITIES, JointLimits
from composedyn.writing import write_atomic

DESCRIBED = ("position", "velocity", "effort")  # limits a robot description gives
OPTIONAL = ("acceleration", "jerk")  # limits only a user gives


@dataclass(frozen=True)
class JointSummary:
    """Per-joint peaks (signed, largest magnitude) and worst margins (min over time of the
    distance to the limit; negative when exceeded, inf when unchecked).  ``status`` maps each
    quantity to "ok", "exceeded", "unchecked" (no limit), "unbounded" (continuous joint's
    position) or "not computed" (jerk without a jerk limit)."""

    joint: str
    peak_torque: float
    peak_torque_time: float
    effort_limit: float
    torque_margin: float
    peak_velocity: float
    velocity_limit: float
    velocity_margin: float
    lower_limit: float = -math.inf
    upper_limit: float = math.inf
    min_position: float = 0.0
    max_position: float = 0.0
    position_margin: float = math.inf
    peak_acceleration: float = 0.0
    acceleration_limit: float = math.inf
    acceleration_margin: float = math.inf
    peak_jerk: float | None = None
    jerk_limit: float = math.inf
    jerk_margin: float = math.inf
    status: dict = field(default_factory=dict)


def exceedances(t: np.ndarray, x: np.ndarray, limit: float, joint: str, quantity: str) -> list[Interval]:
    """Intervals of t (T,) where |x| (T,) > limit (scalar, may be inf)."""
    lim = replace(default_limits((joint,), [np.inf], [np.inf]), **{quantity: np.array([float(limit)])})
    scan = LimitScan(lim)
    scan.add(np.asarray(t, float), {quantity: np.asarray(x, float).reshape(-1, 1)})
    return scan.finish().intervals


def default_limits(joint_names, effort, velocity) -> JointLimits:
    """Effort and velocity limits only (position, acceleration, jerk unchecked)."""
    n = len(joint_names)
    inf = np.full(n, np.inf)
    return JointLimits(tuple(joint_names), -inf, inf.copy(), np.array(velocity, float).reshape(n), inf.copy(),
                       inf.copy(), np.array(effort, float).reshape(n), np.zeros(n, bool), np.zeros(n, bool))


class TrajectoryReport:
    """Positions, velocities, accelerations (jerks) and torques of a motion compared with the limits.

    Attributes: ``robot`` name, ``source`` (file or "<array>"), ``joint_names``,
    ``t`` (T,), ``q``, ``qd``, ``qdd``, ``tau`` (T, n) (None for a streamed
    check, which keeps no samples), ``limits`` (:class:`JointLimits`, a copy),
    ``effort``, ``velocity`` (n,) limits, ``joints`` (tuple of JointSummary),
    ``violations`` (tuple of Interval, sorted by start time), ``samples``,
    ``t_start``, ``t_end``.

    Constructed from sample arrays (positional), or with ``scan=``
    a finished :class:`LimitScan` of a streamed check (arrays may be None);
    ``envelope`` (an :class:`Envelope` of the torques) serves the plot then.
    ``measured_effort`` (n,) is the signed peak of a log's measured efforts once
    :meth:`add_measured_effort` compared them with the effort limits (None before).
    """

    def __init__(self, robot: str, source: str, joint_names, t, q, qd, qdd, tau, effort=None, velocity=None, *,
                 limits: JointLimits | None = None, qddd=None, scan: LimitScan | None = None, envelope=None):
        self.robot, self.source, self.joint_names = robot, source, tuple(joint_names)
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        if limits is None:
            limits = scan.limits if scan is not None else default_limits(self.joint_names, effort, velocity)
        self.limits, self.envelope = limits, envelope
        self.effort, self.velocity = limits.effort, limits.velocity
        if scan is None:
            scan = LimitScan(limits)
            values = {"position": q, "velocity": qd, "acceleration": qdd, "effort": tau}
            if qddd is not None:
                values["jerk"] = qddd
            scan.add(np.asarray(t, float), {k: np.asarray(v, float) for k, v in values.items()})
            scan.finish()
        self.scan = scan
        self.samples, self.t_start, self.t_end = scan.samples, scan.t_first, scan.t_last
        self.joints = tuple(self._summary(i) for i in range(len(self.joint_names)))
        self.violations = tuple(scan.intervals)
        self.omitted = scan.omitted
        self.measured_effort = None
        self.measured_unchecked: tuple = ()  # joints whose measured effort is missing at some sample

    def add_measured_effort(self, t, effort) -> None:
        """Compare measured efforts (T, n) at ``t`` (T,) (a log's, in :attr:`joint_names` order) with the
        effort limits: each interval where an effort's magnitude exceeds its limit joins :attr:`violations` as
        quantity "measured effort" (so :attr:`ok` and :meth:`verdict` count it); the signed peaks
        are kept in :attr:`measured_effort`.  A joint with a NaN (not measured) sample has its
        measured effort compared where it is measured only: it is listed in :attr:`unchecked`
        as (joint, "measured effort"), and its peak is NaN when no sample was measured."""
        effort = np.asarray(effort, float)
        missing = ~np.isfinite(effort)
        scan = LimitScan(self.limits)
        scan.add(np.asarray(t, float), {"effort": np.where(missing, 0.0, effort)})
        scan.finish()
        found = [replace(v, quantity=MEASURED_EFFORT) for v in scan.intervals]
        self.violations = tuple(sorted(self.violations + tuple(found), key=lambda v: (v.start, v.joint, v.quantity)))
        self.omitted += scan.omitted
        self.measured_effort = np.where(missing.all(axis=0), np.nan, scan.peak["effort"])
        self.measured_unchecked = tuple(j for j, m in zip(self.joint_names, missing.any(axis=0)) if m)

    def _status(self, quantity: str, i: int) -> str:
        lim = self.limits
        if quantity == "position" and lim.continuous[i]:
            return "unbounded"
        if quantity not in self.scan.seen:
            return "not computed"
        if not lim.checked(quantity)[i]:
            return "unchecked"
        return "exceeded" if self.scan.worst[quantity][i] > 0 else "ok"

    def _summary(self, i: int) -> JointSummary:
        s, lim = self.scan, self.limits
        margin = {q: float(-s.worst[q][i]) for q in QUANTITIES}
        return JointSummary(
            self.joint_names[i], float(s.peak["effort"][i]), float(s.peak_t["effort"][i]), float(lim.effort[i]),
            margin["effort"], float(s.peak["velocity"][i]), float(lim.velocity[i]), margin["velocity"],
            float(lim.lower[i]), float(lim.upper[i]), float(s.low[i]), float(s.high[i]), margin["position"],
            float(s.peak["acceleration"][i]), float(lim.acceleration[i]), margin["acceleration"],
            float(s.peak["jerk"][i]) if "jerk" in s.seen else None, float(lim.jerk[i]), margin["jerk"],
            {q: self._status(q, i) for q in QUANTITIES})

    @property
    def ok(self) -> bool:
        """True when no checked limit is exceeded anywhere (see :attr:`unchecked` for what was not checked)."""
        return not self.violations and not self.omitted

    @property
    def unchecked(self) -> tuple:
        """(joint, quantity) pairs not checked for want of a limit: position (unless the joint is
        continuous), velocity and effort always; acceleration and jerk when some joint has one;
        then (joint, "measured effort") for joints whose measured effort is missing at some sample."""
        given = {q for q in OPTIONAL if self.limits.checked(q).any()}
        return tuple((j.joint, q) for q in DESCRIBED + OPTIONAL for j in self.joints
                     if (q in DESCRIBED or q in given) and j.status[q] == "unchecked") + tuple(
            (j, MEASURED_EFFORT) for j in self.measured_unchecked)

    @property
    def unbounded(self) -> tuple:
        """Continuous joints: their position has no limit to check."""
        return tuple(j.joint for j in self.joints if j.status["position"] == "unbounded")

    @property
    def complete(self) -> bool:
        """True when every limit the description can give was checked on every joint."""
        return not self.unchecked

    def verdict(self) -> str:
        """"within limits" only when nothing was exceeded and nothing left unchecked."""
        if not self.ok:
            return f"{len(self.violations) + self.omitted} limit violation(s)"
        return "within limits" if self.complete else "no checked limit exceeded, but some limits are unchecked"

    def summary(self, max_lines: int = 50) -> str:
        """A few human-readable lines (used by the CLI): the verdict, up to ``max_lines``
        violation intervals (all are in :meth:`to_json` and :meth:`violations_csv`), the
        unchecked and unbounded quantities."""
        t0, t1 = self.t_start, self.t_end
        lines = [f"{self.source}: {self.verdict()} ({self.samples} samples, {t0:g}..{t1:g} s, robot {self.robot})"]
        for v in self.violations[:max_lines]:
            i = self.joint_names.index(v.joint)
            unit = self.limits.unit("effort" if v.quantity == MEASURED_EFFORT else v.quantity, i)
            if v.quantity == "position":
                rel = f"{v.peak:.4g} {'>' if v.peak > v.limit else '<'} {'upper' if v.peak > v.limit else 'lower'}"
            else:
                rel = f"{abs(v.peak):.4g} >"
            lines.append(f"  {v.joint}: {v.quantity} {rel} {v.limit:.4g} {unit} "
                         f"from {v.start:.4g} s to {v.end:.4g} s (by {v.excess:.4g})")
        hidden = max(len(self.violations) - max_lines, 0)
        if hidden:
            lines.append(f"  ... and {hidden} more violation interval(s) (all in the JSON and violations CSV)")
        if self.omitted:
            lines.append(f"  ... and {self.omitted} more violation interval(s) beyond the first "
                         f"{len(self.violations)}, not kept")
        by_quantity: dict = {}
        for joint, q in self.unchecked:
            by_quantity.setdefault(q, []).append(joint)
        if by_quantity:
            what = "; ".join(f"{q} of {', '.join(js)}" for q, js in by_quantity.items())
            lines.append(f"  UNCHECKED (no limit, or not measured): {what}")
        if self.unbounded:
            lines.append(f"  position unbounded (continuous joints): {', '.join(self.unbounded)}")
        missing = [q for q in OPTIONAL if not self.limits.checked(q).any()]
        if missing:
            lines.append(f"  no {' or '.join(missing)} limits given (--limits FILE.toml / limits=)")
        if self.limits.margin != 1:
            lines.append(f"  limits tightened by margin {self.limits.margin:g}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready dict: robot, source, ok (true only "within limits": nothing exceeded and
        nothing unchecked; :attr:`ok` and ``complete`` separately), verdict, per-joint summaries,
        violations, unchecked pairs (inf -> None); with measured efforts compared
        (:meth:`add_measured_effort`), ``measured_effort``: joint -> signed peak."""
        def clean(d: dict) -> dict:
            return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in d.items()}

        return {"robot": self.robot, "source": self.source, "ok": self.ok and self.complete, "complete": self.complete,
                "verdict": self.verdict(), "margin": self.limits.margin,
                "samples": int(self.samples), "t_start": self.t_start, "t_end": self.t_end,
                "joints": [clean(asdict(j)) for j in self.joints],
                "violations": [clean(asdict(v)) for v in self.violations],
                "omitted_violations": int(self.omitted),
                "unchecked": [{"joint": j, "quantity": q} for j, q in self.unchecked],
                "unbounded": list(self.unbounded),
                **({} if self.measured_effort is None else
                   {"measured_effort": {j: None if math.isnan(x) else float(x)
                                        for j, x in zip(self.joint_names, self.measured_effort)}})}

    def to_json(self, path=None, indent: int = 2) -> str:
        """The report as JSON text; also written (atomically) to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False) + "\n"
        if path is not None:
            write_atomic(path, text)
        return text

    def to_csv(self, path=None) -> str:
        """Per-sample table: time, then per joint ``j, j_vel, j_acc, j_tau``; written to ``path`` if given.

        Only for reports that keep their samples (a streamed check writes this table while it
        runs: ``check_chunks(..., csv=path)``)."""
        if self.t is None:
            raise ValueError(f"{self.source}: a streamed check keeps no samples; pass csv= to the check instead")
        text = sample_table(self.joint_names, self.t, self.q, self.qd, self.qdd, self.tau, header=True)
        if path is not None:
            write_atomic(path, text)
        return text

    def violations_csv(self, path=None) -> str:
        """One row per violation interval: joint, quantity, start, end, peak, limit, excess."""
        cols = ("joint", "quantity", "start", "end", "peak", "limit", "excess")
        rows = [",".join(cols)] + [f"{v.joint},{v.quantity},{v.start:.10g},{v.end:.10g},{v.peak:.10g},"
                                   f"{v.limit:.10g},{v.excess:.10g}" for v in self.violations]
        text = "\n".join(rows) + "\n"
        if path is not None:
            write_atomic(path, text)
        return text

    def plot(self, path) -> None:
        """Torque and +-effort band per joint, violations shaded; saved to ``path``.

        Needs matplotlib (``pip install "composedyn[plot]"``); raises MissingExtra (an ImportError) otherwise.
        """
        from composedyn.torque_check.plotting import plot_report

        plot_report(self, path)


def sample_table(joint_names, t, q, qd, qdd, tau, header: bool) -> str:
    """CSV text of samples: time, then per joint ``j, j_vel, j_acc, j_tau``."""
    cols = ["time"] + [f"{j}{s}" for j in joint_names for s in ("", "_vel", "_acc", "_tau")]
    n = len(joint_names)
    data = np.empty((len(t), 1 + 4 * n))
    data[:, 0] = t
    for k, a in enumerate((q, qd, qdd, tau)):
        data[:, 1 + k::4] = a
    buf = io.StringIO()
    np.savetxt(buf, data, delimiter=",", header=",".join(cols) if header else "", comments="", fmt="%.10g")
    text = buf.getvalue()
    return text
