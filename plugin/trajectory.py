"""Trajectory checks: the joint torques a planned or logged motion requires,
compared with every joint limit (see :mod:`composedyn.limits`).

Missing velocities and accelerations (and jerks, when a jerk limit is given)
come from differentiating a spline through each joint's samples.  By default
(``smoothing=0``) it is the quintic spline that *interpolates* the samples
(:func:`scipy.interpolate.make_interp_spline`, k = 5, not-a-knot ends): exact
for clean planner output, e.g. accelerations of a minimum-jerk motion to
~1e-8 relative at 1 kHz.  For measured, noisy positions pass
``smoothing="gcv"`` (cubic smoothing spline with the parameter chosen by
generalised cross-validation, :func:`scipy.interpolate.make_smoothing_spline`)
or ``smoothing=lam > 0`` (its lambda, in units of q^2 s^3).  The smoothing
spline is *natural* (zero second derivative at both ends), and
cross-validation over-smooths noise-free data, so only use it on noisy data.
Long inputs are differentiated in overlapping windows
(:mod:`composedyn.chunked`), equal to the whole-array spline to 1e-9.

Inputs that cannot be a robot motion are refused (ValueError, one line):

- times not finite or not strictly increasing, |t| > ``MAX_TIME`` = 1e10 s
  (~300 years: e.g. nanoseconds given as seconds), or two samples closer than
  ``MIN_SPACING`` = 1e-7 s (10 MHz: no joint log is sampled faster, and
  differences of closer times lose most of their digits);
- positions with |q| > ``MAX_POSITION`` = 1e4 rad or m;
- derivatives or torques that come out non-finite from finite inputs.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_array
from composedyn.protocol import DynamicsModel
from composedyn.report import TrajectoryReport

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


def check_trajectory(robot: DynamicsModel, t, q, qd=None, qdd=None, smoothing: float | str = 0.0,
                     f_ext=None, friction: bool = True, source: str = "<array>", *, limits=None,
                     margin: float = 1.0, contacts=None, friction_coefficient: float | None = None,
                     surface=(), foot=None) -> TrajectoryReport:
    """Check a sampled joint trajectory against every limit of the robot (and the user's).

    Parameters
    ----------
    robot : DynamicsModel
    t : array (T,)
        Strictly increasing sample times, s.
    q, qd, qdd : arrays (T, n)
        Joint positions, velocities, accelerations in ``robot.joint_names``
        order.  Missing ``qd``/``qdd`` are differentiated from ``q`` (see the
        module docstring); a given ``qd`` is differentiated for ``qdd``.
    smoothing : float or "gcv"
        0 (default): interpolate; "gcv" or lambda > 0: smoothing spline.
    f_ext, friction
        As in :meth:`Robot.inverse_dynamics`.
    limits : mapping or JointLimits, optional
        Extra or overriding limits (acceleration, jerk, ...; see :mod:`composedyn.limits`).
    margin : float
        Factor 0 < margin <= 1 tightening every limit.
    contacts, friction_coefficient, surface, foot
        Floating-base robots only: q (T, nq) free-flyer configurations, qd and
        qdd (T, nv), ``contacts`` maps frames to (T,) stance flags; checked by
        :func:`composedyn.legged.check_legged_trajectory` (joint limits, infeasible
        samples, friction cones), which returns a :class:`LeggedReport`.

    Returns
    -------
    TrajectoryReport
        Peaks, margins, violation intervals of position, velocity, acceleration,
        jerk (when limited) and effort, and the samples.  Computed by
        :func:`composedyn.chunked.check_chunks` (one pass over windows of the arrays).
    """
    from composedyn.chunked import check_chunks

    if getattr(robot, "floating", False):
        if f_ext is not None:
            raise ValueError("f_ext: a floating-base check takes the contact wrenches from the stance frames")
        from composedyn.legged import check_legged_trajectory

        return check_legged_trajectory(robot, t, q, qd, qdd, contacts=contacts, surface=surface, foot=foot,
                                       friction_coefficient=friction_coefficient, smoothing=smoothing,
                                       limits=limits, margin=margin, friction=friction, source=source)
    if contacts is not None or friction_coefficient is not None or surface or foot is not None:
        raise ValueError(f"{getattr(robot, 'name', 'robot')}: contacts and friction_coefficient apply to "
                         "floating-base robots (cd.load(..., floating=True))")
    t = check_times(t)
    n, T = robot.dof, len(t)
    if T < 2:
        raise ValueError(f"a trajectory needs at least 2 samples, got {T}")
    q = _samples("q", q, T, n)
    qd = None if qd is None else _samples("qd", qd, T, n)
    qdd = None if qdd is None else _samples("qdd", qdd, T, n)
    if qdd is not None and qd is None:  # accelerations without velocities: velocities come from q
        qd = differentiate(t, q, smoothing)[0]
    block = (t, q) + tuple(a for a in (qd, qdd) if a is not None)
    return check_chunks(robot, [block], smoothing=smoothing, limits=limits, margin=margin, f_ext=f_ext,
                        friction=friction, source=source, keep=True,
                        window=T if smoothing == "gcv" else None)


def _samples(name: str, x, T: int, n: int) -> np.ndarray:
    x = joint_array(name, x, n)
    if x.shape != (T, n):
        raise ValueError(f"{name} has shape {x.shape}, expected ({T}, {n}) = (len(t), dof)")
    return x
