"""Exciting trajectories for identification: finite Fourier series optimised for the base regressor.

Joint j follows Swevers' periodic finite Fourier series with base pulsation
w_f = 2 pi f_base and H harmonics,

    q_j(t)   = q0_j + sum_l  a_jl / (w_f l) sin(w_f l t) - b_jl / (w_f l) cos(w_f l t)
    qd_j(t)  = sum_l a_jl cos(w_f l t) + b_jl sin(w_f l t)
    qdd_j(t) = sum_l w_f l (b_jl cos(w_f l t) - a_jl sin(w_f l t))

(period 1 / f_base: a log of whole periods can be averaged period by period).
The motion starts from rest: qd(0) = sum_l a_jl = 0 and qdd(0) = sum_l w_f l b_jl
= 0 fix the first harmonic's coefficients (a_j1 = -sum_{l>1} a_jl, b_j1 =
-sum_{l>1} l b_jl), so it also comes to rest after every whole period; at
least two harmonics are needed.  The free coefficients minimise log cond(Y_b) of the base regressor (joint terms
included) stacked at ``points`` instants of one period (or, with
``criterion="d-optimal"``, maximise log det(Y_b^T Y_b)), with quadratic
penalties for leaving the position range (q0 = mid-range, a margin kept),
the velocity limits and the effort limits (inverse dynamics of the robot's
own parameters), by L-BFGS-B from a random start.  Afterwards the
amplitudes are scaled down until every limit holds at every output sample, and
of the optimum and the start, so scaled, the one with the better criterion is
returned.

References
----------
J. Swevers, C. Ganseman, D. B. Tukel, J. De Schutter and H. Van Brussel,
"Optimal robot excitation and identification", IEEE Trans. Robotics and
Automation 13(5), 1997 (the finite Fourier series parametrisation).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from composedyn.checks import random_generator
from composedyn.parameters import refuse_floating

MARGIN = 0.9  # share of each limit the trajectory may use
RANGE = np.pi  # position half-range assumed for joints without limits (rad or m)
SPEED = 1.0  # velocity limit assumed for joints without one (rad/s or m/s)
SAMPLES_PER_PERIOD = 4  # of the highest harmonic, at least (Nyquist's 2, and a shape the samples follow)


@dataclass(frozen=True)
class ExcitationTrajectory:
    """Samples t (T,), q, qd, qdd (T, dof); Fourier ``a``, ``b`` (dof, H), ``q0`` (dof,),
    ``base_frequency`` (Hz), ``condition`` of the base regressor at the optimisation points."""

    joint_names: tuple
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    base_frequency: float
    condition: float

    def to_csv(self, path) -> Path:
        """Write the trajectory CSV: ``time``, one column per joint, ``<joint>_vel``, ``<joint>_acc``."""
        from composedyn.writing import write_atomic

        header = ["time", *self.joint_names, *(j + "_vel" for j in self.joint_names),
                  *(j + "_acc" for j in self.joint_names)]
        data = np.column_stack([self.t, self.q, self.qd, self.qdd])

        def write(tmp):
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(header)
                w.writerows([[repr(float(x)) for x in row] for row in data])
        write_atomic(path, write)
        return Path(path)


def fourier(t, a, b, q0, base_frequency: float):
    """q, qd, qdd (T, dof) of the series with coefficients a, b (dof, H) at times t (T,)."""
    t = np.asarray(t, float)
    H = a.shape[1]
    wl = 2.0 * np.pi * base_frequency * np.arange(1, H + 1)  # (H,)
    s, c = np.sin(t[:, None] * wl), np.cos(t[:, None] * wl)  # (T, H)
    q = q0 + (s / wl) @ a.T - (c / wl) @ b.T
    qd = c @ a.T + s @ b.T
    qdd = (c * wl) @ b.T - (s * wl) @ a.T
    return q, qd, qdd


def from_rest(a_rest, b_rest):
    """Coefficients a, b (dof, H) whose series has zero velocity and acceleration at t = 0, from
    those of harmonics 2..H (dof, H - 1): a_1 = -sum a_l, b_1 = -sum l b_l."""
    wl = np.arange(2, a_rest.shape[1] + 2)
    return (np.column_stack([-a_rest.sum(axis=1), a_rest]),
            np.column_stack([-(b_rest * wl).sum(axis=1), b_rest]))


def _limits(robot):
    lim = robot.limits
    lo, hi = lim["lower"], lim["upper"]
    finite = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(finite, lo, -RANGE), np.where(finite, hi, RANGE)
    q0, half = 0.5 * (lo + hi), MARGIN * 0.5 * (hi - lo)
    vel = MARGIN * np.where(np.isfinite(lim["velocity"]), lim["velocity"], SPEED)
    eff = MARGIN * lim["effort"]
    return q0, half, vel, eff


def _violation(robot, q, qd, qdd, q0, half, vel, eff) -> float:
    """Sum of squared relative limit excesses (0 when every limit holds)."""
    out = np.sum(np.maximum(np.abs(q - q0) / half - 1.0, 0.0) ** 2)
    out += np.sum(np.maximum(np.abs(qd) / vel - 1.0, 0.0) ** 2)
    if np.any(np.isfinite(eff)):
        tau = robot.inverse_dynamics(q, qd, qdd)
        ok = np.isfinite(eff)
        out += np.sum(np.maximum(np.abs(tau[:, ok]) / eff[ok] - 1.0, 0.0) ** 2)
    return float(out)


def check_arguments(duration, harmonics, base_frequency, rate, points, names: dict | None = None) -> tuple:
    """(duration, harmonics, base_frequency, rate, points) as float, int, float, float, int; ValueError
    naming the argument (as ``names`` maps it, e.g. to a command-line option) that is out of range: a
    duration, frequency or rate that is not finite and positive, fewer than 2 harmonics (a motion from
    rest), a rate or ``points`` per period below :data:`SAMPLES_PER_PERIOD` samples per period of the
    highest harmonic, or a duration shorter than one sample."""
    names = {k: (names or {}).get(k, k) for k in ("duration", "harmonics", "base_frequency", "rate", "points")}

    def number(key, x, kind=float):
        try:
            value = kind(x)
        except (TypeError, ValueError, OverflowError):
            value = None
        if value is None or (kind is int and value != x) or not np.isfinite(value) or not value > 0:
            raise ValueError(f"{names[key]} must be a finite positive "
                             f"{'integer' if kind is int else 'number'}, got {x!r}")
        return value

    duration, base_frequency, rate = (number(k, x) for k, x in (("duration", duration),
                                                                  ("base_frequency", base_frequency), ("rate", rate)))
    harmonics, points = number("harmonics", harmonics, int), number("points", points, int)
    if harmonics < 2:
        raise ValueError(f"need {names['harmonics']} >= 2 (a motion from rest), got {harmonics}")
    top = harmonics * base_frequency  # Hz, the highest harmonic
    for key, per_second in (("rate", rate), ("points", points * base_frequency)):
        if per_second < SAMPLES_PER_PERIOD * top:
            raise ValueError(f"{names[key]} gives {per_second / top:.3g} samples per period "
                             f"of the highest harmonic ({names['harmonics']} {harmonics} x "
                             f"{names['base_frequency']} {base_frequency:g} Hz = {top:.3g} Hz), at least "
                             f"{SAMPLES_PER_PERIOD} are needed: raise {names[key]} or lower "
                             f"{names['base_frequency']} or {names['harmonics']}")
    if duration * rate < 1:
        raise ValueError(f"{names['duration']} {duration:g} s at {names['rate']} {rate:g} "
                         "Hz is shorter than one sample step")
    return duration, harmonics, base_frequency, rate, points


def excitation_trajectory(robot, duration: float, harmonics: int = 5, base_frequency: float = 0.1,
                          rate: float = 100.0, points: int = 100, seed: int | None = 0,
                          maxiter: int = 30, penalty: float = 1e3,
                          criterion: str = "condition") -> ExcitationTrajectory:
    """An exciting trajectory of ``duration`` s sampled at ``rate`` Hz (see the module docstring).

    ``harmonics`` H, ``base_frequency`` (Hz, the period is its inverse);
    ``points`` instants per period enter the condition number; ``maxiter``
    L-BFGS-B iterations (0: the random start itself, scaled to the limits);
    ``penalty`` weight of the limit terms; ``seed`` of the random start (None, a
    non-negative integer or a numpy Generator).  ``rate`` and ``points`` must
    sample the highest harmonic (``harmonics`` x ``base_frequency``) at least
    :data:`SAMPLES_PER_PERIOD` times per period.  ``criterion``:
    ``"condition"`` minimises log cond(Y_b); ``"d-optimal"`` maximises
    log det(Y_b^T Y_b) / r (D-optimality: the smallest confidence ellipsoid of the
    base parameters under white torque noise).  ValueError naming the argument
    that is out of range.
    """
    from scipy.optimize import minimize

    refuse_floating(robot, "excitation_trajectory")
    if criterion not in ("condition", "d-optimal"):
        raise ValueError(f"criterion must be 'condition' or 'd-optimal', got {criterion!r}")
    duration, harmonics, base_frequency, rate, points = check_arguments(duration, harmonics, base_frequency,
                                                                        rate, points)
    rng = random_generator(seed, "excitation_trajectory")
    n, H = robot.dof, harmonics
    q0, half, vel, eff = _limits(robot)
    base = robot.base_parameters(joint_terms=True)
    tk = np.linspace(0.0, 1.0 / base_frequency, int(points), endpoint=False)
    wl = 2.0 * np.pi * base_frequency * np.arange(1, H + 1)
    # amplitude bound per coefficient so that each harmonic alone stays within the range and speed
    bound = np.minimum(vel[:, None] / H, half[:, None] * wl[None, :] / H)

    free = bound[:, 1:].ravel()  # the first harmonic follows from the others (start from rest)

    def unpack(x):
        return from_rest(x[: n * (H - 1)].reshape(n, H - 1), x[n * (H - 1):].reshape(n, H - 1))

    def score(q, qd, qdd):
        """The criterion at the optimisation points (lower is better)."""
        Yb = base.base_regressor(robot.regressor(q, qd, qdd, joint_terms=True)).reshape(-1, base.rank)
        ev = np.linalg.eigvalsh(Yb.T @ Yb)  # singular values squared (LAPACK's SVD was erratic in time here)
        floor = 1e-300 + 1e-16 * ev[-1]
        if criterion == "condition":
            return 0.5 * float(np.log(ev[-1] / max(ev[0], floor)))
        return -float(np.mean(np.log(np.maximum(ev, floor))))

    def cost(x):
        a, b = unpack(x)
        q, qd, qdd = fourier(tk, a, b, q0, base_frequency)
        return score(q, qd, qdd) + penalty * _violation(robot, q, qd, qdd, q0, half, vel, eff)

    x0 = np.concatenate([rng.uniform(-1, 1, (n, H - 1)).ravel(), rng.uniform(-1, 1, (n, H - 1)).ravel()]) * 0.5
    x0 *= np.concatenate([free, free])
    bounds = [(-u, u) for u in np.concatenate([free, free])]
    x = minimize(cost, x0, method="L-BFGS-B", bounds=bounds, options={"maxiter": int(maxiter)}).x if maxiter else x0
    t = np.arange(round(duration * rate) + 1) / rate

    def within_limits(x):
        """(a, b, q, qd, qdd at t) of x with the amplitudes scaled down until every limit holds at every
        output sample, and the criterion's score of that motion (lower is better)."""
        for _ in range(60):
            a, b = unpack(x)
            q, qd, qdd = fourier(t, a, b, q0, base_frequency)
            if _violation(robot, q, qd, qdd, q0, half, vel, eff) == 0.0:
                return (a, b, q, qd, qdd), score(*fourier(tk, a, b, q0, base_frequency))
            x = 0.95 * x  # the first harmonic follows the others linearly
        raise ValueError(f"{robot.name}: no motion found within {MARGIN:.0%} of the limits (does gravity "
                         "alone exceed an effort limit?)")

    # the optimum and the start, each scaled to the limits on the output samples: the better one (the scaling
    # can cost the optimum more than the start)
    (a, b, q, qd, qdd), _ = min(within_limits(x), within_limits(x0), key=lambda found: found[1])
    Yb = base.base_regressor(robot.regressor(*fourier(tk, a, b, q0, base_frequency), joint_terms=True))
    cond = float(np.linalg.cond(Yb.reshape(-1, base.rank)))
    return ExcitationTrajectory(tuple(robot.joint_names), t, q, qd, qdd, a, b, q0, base_frequency, cond)
