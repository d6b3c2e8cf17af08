"""Torque checks of floating-base (legged) motions: per sample, the contact inverse
dynamics with the stance frames of that sample, compared with the joint limits
and the friction cones.

For each sample the joint torques and contact wrenches come from
:func:`composedyn.floating.contact.contact_inverse_dynamics` with the frames in stance
(least-norm wrenches without a friction coefficient, Coulomb cones with one).
The joint positions, velocities, accelerations (jerks) and these torques are
checked against the joint limits exactly as a fixed-base trajectory
(:class:`composedyn.torque_check.report.TrajectoryReport`); samples at which no contact
wrenches realise the motion (``"infeasible"``, e.g. a flight phase that is not
free fall, or too few stance feet) and samples that need wrenches outside the
friction cones (``"outside friction cones"``) are reported as intervals of
consecutive samples.  At such samples the torques are those of the closest
wrenches (:class:`composedyn.floating.contact.ContactResult`).  The stance frames are
not checked for sliding or lifting off.

Missing velocities and accelerations are differentiated on the Lie group
(:mod:`composedyn.floating.base_motion`); the samples are held in memory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import Mapping

import numpy as np

from composedyn.checks import joint_array
from composedyn.floating.contact import CONES, INFEASIBLE, KINDS, OK, check_frame, contact_inverse_dynamics
from composedyn.sampled import check_positions, check_times
from composedyn.torque_check.limits import JointLimits, resolve_limits
from composedyn.torque_check.report import TrajectoryReport


@dataclass(frozen=True)
class ContactInterval:
    """Consecutive samples [start, end] (s) with contact status ``kind`` ("infeasible" or
    "outside friction cones"); ``residual``: the largest base-row residual ‖A f - b_base‖
    there (N, N m); ``stance``: the frames in contact at that worst sample."""

    kind: str
    start: float
    end: float
    samples: int
    residual: float
    stance: tuple


def joint_limits(robot, limits=None, margin: float = 1.0) -> JointLimits:
    """The joint limits of a floating robot (base coordinates left out), see :func:`resolve_limits`."""
    if isinstance(limits, JointLimits) and margin == 1:
        return limits
    nb = robot.base.nv
    view = SimpleNamespace(joint_names=robot.joint_names, model=robot.model,
                           limits={k: np.asarray(x)[nb:] for k, x in robot.limits.items()})
    return resolve_limits(view, limits, margin)


def check_legged_trajectory(robot, t, q, v=None, a=None, *, contacts: Mapping, friction_coefficient=None,
                            surface=(), foot=None, normal=(0.0, 0.0, 1.0), smoothing: float | str = 0.0, limits=None,
                            margin: float = 1.0, friction: bool = True, source: str = "<array>") -> "LeggedReport":
    """Check a floating-base trajectory against the joint limits and the contact constraints.

    Parameters
    ----------
    robot : FloatingRobot (free-flyer base)
    t : (T,) strictly increasing times, s.
    q : (T, nq) free-flyer configurations; v, a : (T, nv) or None (differentiated, see the module docstring).
    contacts : mapping frame -> (T,) stance flags (bool or 0/1)
    friction_coefficient : float, optional
        mu of the Coulomb cones; None: least-norm wrenches, cones unchecked.
    surface : frames whose contacts are surfaces (6-D wrenches) rather than points.
    foot, normal, friction : as in :func:`composedyn.floating.contact.contact_inverse_dynamics`.
    smoothing, limits, margin : as in :func:`composedyn.check_trajectory` (joint limits).

    Returns
    -------
    LeggedReport
    """
    if getattr(robot.base, "kind", None) != "free":
        raise ValueError(f"{robot.name}: legged trajectory checks need a free-flyer base")
    t = check_times(t)
    T = len(t)
    if T < 2:
        raise ValueError(f"a trajectory needs at least 2 samples, got {T}")
    q = _samples("q", q, T, robot.nq, "(nq = 7 base + joints)")
    v = None if v is None else _samples("v", v, T, robot.nv, "(nv = 6 base + joints)")
    a = None if a is None else _samples("a", a, T, robot.nv, "(nv = 6 base + joints)")
    stance = _stance(robot, contacts, T)
    surface = tuple(surface)
    for f in surface:
        if f not in stance:
            raise ValueError(f"surface contact {f!r} is not one of the contact frames ({', '.join(stance)})")
    lim = joint_limits(robot, limits, margin)
    check_positions(q[:, 7:], t, robot.joint_names)
    from composedyn.floating.base_motion import floating_rates

    v, a, jerk = floating_rates(t, q, v, a, smoothing, jerk=bool(lim.checked("jerk").any()))
    for name, x in (("velocity", v), ("acceleration", a)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} is not finite at t = {t[np.argwhere(~np.isfinite(x))[0, 0]]:g} s")
    kinds = {f: ("surface" if f in surface else "point") for f in stance}
    options = {"normal": normal, "friction": friction, "foot": foot}
    tau, forces, status, residual = _solve(robot, q, v, a, stance, kinds, friction_coefficient, options)
    slip = stance_motion(robot, q, v, a, stance)
    return LeggedReport(robot.name, source, robot.joint_names, t, q[:, 7:], v[:, 6:], a[:, 6:], tau, limits=lim,
                        qddd=jerk, base=(q[:, :7], v[:, :6], a[:, :6]), stance=stance, kinds=kinds, forces=forces,
                        slip=slip,
                        status=status, residual=residual, friction_coefficient=friction_coefficient)


def _samples(name: str, x, T: int, n: int, what: str) -> np.ndarray:
    x = joint_array(name, x, n, what)
    if x.shape != (T, n):
        raise ValueError(f"{name} has shape {x.shape}, expected ({T}, {n}) = (len(t), {n}) {what}")
    return x


def _stance(robot, contacts, T: int) -> dict:
    if not isinstance(contacts, Mapping) or not contacts:
        raise ValueError("contacts must map contact frames to (T,) stance flags (0/1), one frame at least")
    out = {}
    for frame, flags in contacts.items():
        check_frame(robot, frame)
        x = np.asarray(flags)
        if x.shape != (T,) or not np.isin(x, (0, 1)).all():
            raise ValueError(f"stance flags of {frame!r} must be {T} values 0/1 (one per sample), got shape {x.shape}")
        out[frame] = x.astype(bool)
    return out


def _solve(robot, q, v, a, stance: dict, kinds: dict, mu, options: dict):
    """Per-sample torques (T, n), wrenches frame -> (T, 3|6) (zero out of stance), status (T,), residual (T,),
    one batched call per distinct stance pattern."""
    T = len(q)
    frames = list(stance)
    pattern = np.stack([stance[f] for f in frames], 1)
    tau = np.zeros((T, robot.nv - 6))
    forces = {f: np.zeros((T, KINDS[kinds[f]])) for f in frames}
    status, residual = np.full(T, OK, dtype=object), np.zeros(T)
    for row in np.unique(pattern, axis=0):
        idx = np.flatnonzero((pattern == row).all(1))
        active = {f: kinds[f] for f, on in zip(frames, row) if on}
        feet = options["foot"]
        if isinstance(feet, Mapping):  # the feet of the frames in stance
            feet = {f: size for f, size in feet.items() if f in active} or None
        elif feet is not None and "surface" not in active.values():
            feet = None
        res = contact_inverse_dynamics(robot, q[idx], v[idx], a[idx], active, mu, **(options | {"foot": feet}))
        tau[idx], status[idx], residual[idx] = res.tau, res.status, res.residual
        for f, w in res.forces.items():
            forces[f][idx] = w
    return tau, forces, status, residual


def stance_motion(robot, q, v, a, stance: dict) -> tuple:
    """(speed (T,), acceleration (T,)): the largest linear velocity and classical acceleration
    (m/s, m/s^2, world) of a frame origin in stance at each sample (0 without stance): a
    planted foot gives ~0; large values point at wrong stance flags or a sliding foot."""
    speed, acc = np.zeros(len(q)), np.zeros(len(q))
    for f, on in stance.items():
        if on.any():
            speed[on] = np.maximum(speed[on], np.linalg.norm(robot.frame_velocity(q[on], v[on], f)[:, :3], axis=1))
            acc[on] = np.maximum(acc[on], np.linalg.norm(
                robot.frame_acceleration(q[on], v[on], a[on], f)[:, :3], axis=1))
    return speed, acc


def contact_intervals(t: np.ndarray, status: np.ndarray, residual: np.ndarray, stance: dict) -> list:
    """Runs of consecutive samples with the same status other than "ok", as ContactIntervals."""
    out, k, T = [], 0, len(t)
    while k < T:
        if status[k] == OK:
            k += 1
            continue
        e = k
        while e + 1 < T and status[e + 1] == status[k]:
            e += 1
        w = k + int(np.argmax(residual[k:e + 1]))
        out.append(ContactInterval(str(status[k]), float(t[k]), float(t[e]), e - k + 1, float(residual[w]),
                                   tuple(f for f, s in stance.items() if s[w])))
        k = e + 1
    return out


class LeggedReport(TrajectoryReport):
    """A :class:`TrajectoryReport` of the joints plus the contacts of a floating-base motion.

    Extra attributes: ``base`` (q (T, 7), v (T, 6), a (T, 6)), ``stance`` (frame -> (T,) bool),
    ``kinds`` (frame -> "point" | "surface"), ``forces`` (frame -> (T, 3 | 6), world axes, zero
    out of stance), ``contact_status`` (T,), ``contact_residual`` (T,), ``friction_coefficient``,
    ``contact_violations`` (tuple of :class:`ContactInterval`), ``stance_speed`` and
    ``stance_acceleration`` (T,) (:func:`stance_motion`; reported, not checked).
    """

    def __init__(self, *args, base, stance, kinds, forces, status, residual, friction_coefficient, slip,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.stance_speed, self.stance_acceleration = slip
        self.base, self.stance, self.kinds, self.forces = base, stance, kinds, forces
        self.contact_status, self.contact_residual = status, residual
        self.friction_coefficient = friction_coefficient
        self.contact_violations = tuple(contact_intervals(self.t, status, residual, stance))

    @property
    def ok(self) -> bool:
        """No joint limit exceeded and every sample's contact wrenches realise the motion (in the cones)."""
        return super().ok and not self.contact_violations

    @property
    def complete(self) -> bool:
        """Every joint limit checked, and the friction cones (a friction coefficient was given)."""
        return super().complete and self.friction_coefficient is not None

    def _counts(self) -> dict:
        return {kind: sum(c.samples for c in self.contact_violations if c.kind == kind) for kind in (INFEASIBLE, CONES)}

    def verdict(self) -> str:
        if self.ok:
            return super().verdict()
        parts = [f"{len(self.violations) + self.omitted} limit violation(s)"] if not super().ok else []
        counts = self._counts()
        if counts[INFEASIBLE]:
            parts.append(f"{counts[INFEASIBLE]} infeasible sample(s)")
        if counts[CONES]:
            parts.append(f"{counts[CONES]} sample(s) outside the friction cones")
        return ", ".join(parts)

    def summary(self, max_lines: int = 50) -> str:
        lines = [super().summary(max_lines)]
        kinds = ", ".join(f"{f} ({k})" for f, k in self.kinds.items())
        mu = self.friction_coefficient
        cones = (f"friction coefficient {mu:g}" if mu is not None
                 else "friction cones UNCHECKED (no friction coefficient)")
        lines.append(f"  contacts: {kinds}; {cones}")
        lines.append(f"  stance frames move up to {self.stance_speed.max():.3g} m/s, "
                     f"{self.stance_acceleration.max():.3g} m/s^2 while in contact (not checked)")
        for c in self.contact_violations[:max_lines]:
            what = "no contact wrenches realise the motion" if c.kind == INFEASIBLE else (
                f"the motion needs wrenches outside the friction cones (mu {mu:g})")
            stance = ", ".join(c.stance) or "no contact"
            lines.append(f"  {what} from {c.start:.4g} s to {c.end:.4g} s ({c.samples} sample(s), stance: {stance}; "
                         f"base residual up to {c.residual:.4g})")
        hidden = max(len(self.contact_violations) - max_lines, 0)
        if hidden:
            lines.append(f"  ... and {hidden} more contact interval(s) (all in the JSON and violations CSV)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        d = super().to_dict()
        counts = self._counts()
        d.update({"floating": True, "contacts": dict(self.kinds), "friction_coefficient": self.friction_coefficient,
                  "infeasible_samples": counts[INFEASIBLE], "friction_cone_samples": counts[CONES],
                  "peak_stance_speed": float(self.stance_speed.max()),
                  "peak_stance_acceleration": float(self.stance_acceleration.max()),
                  "contact_violations": [asdict(c) | {"stance": list(c.stance)} for c in self.contact_violations]})
        return d

    def violations_csv(self, path=None) -> str:
        """Joint limit intervals, then one row per contact interval: joint = the stance frames
        joined by "+", quantity = "contact infeasible" or "friction cone", peak = excess = residual."""
        text = super().violations_csv()
        for c in self.contact_violations:
            what = "contact infeasible" if c.kind == INFEASIBLE else "friction cone"
            text += (f"{'+'.join(c.stance) or '(none)'},{what},{c.start:.10g},{c.end:.10g},{c.residual:.10g},"
                     f"0,{c.residual:.10g}\n")
        if path is not None:
            from composedyn.writing import write_atomic

            write_atomic(path, text)
        return text

    def to_csv(self, path=None) -> str:
        """Per-sample table: the joint table of :meth:`TrajectoryReport.to_csv`, then the base pose,
        per contact frame its stance flag and wrench (``<frame>_fx ... _fz`` [``_mx ... _mz``], world
        axes), and ``contact_status`` (0 ok, 1 infeasible, 2 outside the friction cones), ``contact_residual``."""
        lines = super().to_csv().splitlines()
        cols = ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"]
        data = [self.base[0]]
        for f, w in self.forces.items():
            cols += [f + "_contact"] + [f"{f}_{c}" for c in ("fx", "fy", "fz", "mx", "my", "mz")[:w.shape[1]]]
            data += [self.stance[f][:, None].astype(float), w]
        code = {OK: 0.0, INFEASIBLE: 1.0, CONES: 2.0}
        cols += ["contact_status", "contact_residual"]
        data += [np.array([code[s] for s in self.contact_status])[:, None], self.contact_residual[:, None]]
        extra = np.concatenate(data, 1)
        rows = [lines[0] + "," + ",".join(cols)]
        rows += [f"{ln},{','.join(f'{x:.10g}' for x in row)}" for ln, row in zip(lines[1:], extra)]
        text = "\n".join(rows) + "\n"
        if path is not None:
            from composedyn.writing import write_atomic

            write_atomic(path, text)
        return text
