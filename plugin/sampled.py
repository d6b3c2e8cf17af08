"""Sampled motions: the checks of times and positions, and their derivatives from splines.

Missing velocities and accelerations (and jerks, when a jerk limit is given)
come from differentiating a spline through each joint's samples.  With
``smoothing=0`` it is the quintic spline that *interpolates* the samples
(:func:`scipy.interpolate.make_interp_spline`, k = 5, not-a-knot ends): exact
for clean planner output, e.g. accelerations of a minimum-jerk motion to
~1e-8 relative at 1 kHz.  For measured, noisy positions pass
``smoothing="gcv"`` (cubic smoothing spline with the parameter chosen by
generalised cross-validation, :func:`scipy.interpolate.make_smoothing_spline`)
or ``smoothing=lam > 0`` (its lambda, in units of q^2 s^3).  The smoothing
spline is *natural* (zero second derivative at both ends), and
cross-validation over-smooths noise-free data, so only use it on noisy data.

Inputs that cannot be a robot motion are refused (ValueError, one line):

- times not finite or not strictly increasing, |t| > ``MAX_TIME`` = 1e10 s
  (~300 years: e.g. nanoseconds given as seconds), or two samples closer than
  ``MIN_SPACING`` = 1e-7 s (10 MHz: no joint log is sampled faster, and
  differences of closer times lose most of their digits);
- positions with |q| > ``MAX_POSITION`` = 1e4 rad or m.
"""

from __future__ import annotations

import numpy as np

MIN_SAMPLES = 6  # a quintic spline needs 6 samples (a cubic smoothing spline 5)
MAX_TIME = 1e10  # s
MIN_SPACING = 1e-7  # s
MAX_POSITION = 1e4  # rad or m


def check_times(t, after: float | None = None, offset: int = 0) -> np.ndarray:
    """Sample times as a (T,) float array: finite, |t| <= MAX_TIME, strictly increasing with
    spacing >= MIN_SPACING (also after ``after``, the previous block's last time); ValueError
    naming the sample (numbered from ``offset``)."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"t must be one-dimensional, got shape {t.shape}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValueError(f"t is not finite at sample {bad[0] + offset}")
    big = np.flatnonzero(np.abs(t) > MAX_TIME)
    if big.size:
        raise ValueError(f"t = {t[big[0]]:g} s at sample {big[0] + offset} is beyond {MAX_TIME:g} s: "
                         "not a time of a robot motion (nanoseconds given as seconds?)")
    full = t if after is None else np.r_[after, t]
    step = np.diff(full)
    if np.any(step < MIN_SPACING):
        k = int(np.flatnonzero(step < MIN_SPACING)[0]) + 1
        s = k + offset - (after is not None)
        if step[k - 1] == 0:
            raise ValueError(f"t is not strictly increasing: duplicate time {full[k]:g} at sample {s}")
        if step[k - 1] < 0:
            raise ValueError(f"t is not strictly increasing: decreasing time {full[k]:g} at sample {s}")
        raise ValueError(f"t: samples {s - 1} and {s} are {step[k - 1]:.3g} s apart, closer than "
                         f"{MIN_SPACING:g} s: too close to differentiate")
    return t


def check_positions(q: np.ndarray, t: np.ndarray, joint_names) -> None:
    """ValueError naming joint and time when |q| > MAX_POSITION (rad or m)."""
    big = np.abs(q) > MAX_POSITION
    if big.any():
        k, i = np.argwhere(big)[0]
        raise ValueError(f"position of joint {joint_names[i]!r} is {q[k, i]:g} at t = {t[k]:g} s, beyond "
                         f"{MAX_POSITION:g} rad or m: not a robot motion")


def check_smoothing(smoothing) -> float | str:
    """The ``smoothing`` argument: 0, a positive finite lambda or "gcv"; ValueError otherwise."""
    if isinstance(smoothing, str) and smoothing == "gcv":
        return smoothing
    if (isinstance(smoothing, (str, bool)) or not isinstance(smoothing, (int, float, np.number))
            or not 0 <= smoothing < np.inf):
        raise ValueError(f'smoothing must be 0, a positive finite lambda or "gcv", got {smoothing!r}')
    return float(smoothing)


def spline_derivatives(t: np.ndarray, y: np.ndarray, orders, smoothing: float | str = 0.0) -> list:
    """Derivatives (T, n) of the given ``orders`` (1, 2, 3) of the spline through y (T, n) at t (T,).

    ``smoothing``: 0 interpolating quintic spline; "gcv" or lambda > 0: cubic
    smoothing spline per column (see the module docstring).
    """
    from scipy.interpolate import make_interp_spline, make_smoothing_spline

    smoothing = check_smoothing(smoothing)
    if len(t) < MIN_SAMPLES:
        raise ValueError(f"need at least {MIN_SAMPLES} samples to differentiate positions, got {len(t)}")
    if smoothing == 0:
        s = make_interp_spline(t, y, k=5, axis=0)
        return [s(t, k) for k in orders]
    lam = None if smoothing == "gcv" else smoothing
    out = [np.empty_like(y) for _ in orders]
    for i in range(y.shape[1]):
        s = make_smoothing_spline(t, y[:, i], lam=lam)
        for o, k in zip(out, orders):
            o[:, i] = s(t, k)
    return out


def differentiate(t: np.ndarray, q: np.ndarray, smoothing: float | str = 0.0):
    """Velocities and accelerations (T, n) of positions q (T, n) sampled at t (T,).

    ``smoothing``: 0 interpolating quintic spline; "gcv" or lambda > 0: cubic
    smoothing spline per joint (see the module docstring).
    """
    qd, qdd = spline_derivatives(np.asarray(t, float) - t[0], q, (1, 2), smoothing)
    return qd, qdd
