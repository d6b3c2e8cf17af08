"""Trajectory torque checks: the joint torques a planned motion requires,
compared with the effort and velocity limits.

Missing velocities and accelerations come from differentiating a spline
through each joint's positions.  By default (``smoothing=0``) it is the
quintic spline that *interpolates* the samples
(:func:`scipy.interpolate.make_interp_spline`, k = 5, not-a-knot ends): exact
for clean planner output, e.g. accelerations of a minimum-jerk motion to
~1e-8 relative at 1 kHz.  For measured, noisy positions pass
``smoothing="gcv"`` (cubic smoothing spline with the parameter chosen by
generalised cross-validation, :func:`scipy.interpolate.make_smoothing_spline`)
or ``smoothing=lam > 0`` (its lambda, in units of q^2 s^3).  The smoothing
spline is *natural* (zero second derivative at both ends), and
cross-validation over-smooths noise-free data, so only use it on noisy data.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_array
from composedyn.protocol import DynamicsModel
from composedyn.report import TrajectoryReport

MIN_SAMPLES = 6  # a quintic spline needs 6 samples (a cubic smoothing spline 5)


def check_times(t) -> np.ndarray:
    """Sample times as a (T,) float array, finite and strictly increasing (ValueError naming the row)."""
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"t must be one-dimensional, got shape {t.shape}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValueError(f"t is not finite at sample {bad[0]}")
    step = np.diff(t)
    if np.any(step <= 0):
        k = int(np.flatnonzero(step <= 0)[0]) + 1
        what = "duplicate" if step[k - 1] == 0 else "decreasing"
        raise ValueError(f"t is not strictly increasing: {what} time {t[k]:g} at sample {k}")
    return t


def differentiate(t: np.ndarray, q: np.ndarray, smoothing: float | str = 0.0):
    """Velocities and accelerations (T, n) of positions q (T, n) sampled at t (T,).

    ``smoothing``: 0 interpolating quintic spline; "gcv" or lambda > 0: cubic
    smoothing spline per joint (see the module docstring).
    """
    from scipy.interpolate import make_interp_spline, make_smoothing_spline

    if len(t) < MIN_SAMPLES:
        raise ValueError(f"need at least {MIN_SAMPLES} samples to differentiate positions, got {len(t)}")
    if smoothing != "gcv" and (isinstance(smoothing, (str, bool)) or not isinstance(smoothing, (int, float, np.number))
                               or not 0 <= smoothing < np.inf):
        raise ValueError(f'smoothing must be 0, a positive finite lambda or "gcv", got {smoothing!r}')
    if smoothing == 0:
        s = make_interp_spline(t, q, k=5, axis=0)
        return s(t, 1), s(t, 2)
    if not isinstance(smoothing, str) and not smoothing > 0:
        raise ValueError(f'smoothing must be 0, a positive lambda or "gcv", got {smoothing!r}')
    lam = None if smoothing == "gcv" else float(smoothing)
    qd, qdd = np.empty_like(q), np.empty_like(q)
    for i in range(q.shape[1]):
        s = make_smoothing_spline(t, q[:, i], lam=lam)
        qd[:, i], qdd[:, i] = s(t, 1), s(t, 2)
    return qd, qdd


def check_trajectory(robot: DynamicsModel, t, q, qd=None, qdd=None, smoothing: float | str = 0.0,
                     f_ext=None, friction: bool = True, source: str = "<array>") -> TrajectoryReport:
    """Check a sampled joint trajectory against the robot's effort and velocity limits.

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

    Returns
    -------
    TrajectoryReport
        Peaks, margins and limit-violation intervals; torques for all samples
        come from one batched inverse-dynamics call.
    """
    t = check_times(t)
    n, T = robot.dof, len(t)
    if T < 2:
        raise ValueError(f"a trajectory needs at least 2 samples, got {T}")
    q = _samples("q", q, T, n)
    qd = None if qd is None else _samples("qd", qd, T, n)
    qdd = None if qdd is None else _samples("qdd", qdd, T, n)
    if qd is None:
        qd_fit, qdd_fit = differentiate(t, q, smoothing)
        qd = qd_fit
        qdd = qdd_fit if qdd is None else qdd
    elif qdd is None:
        qdd = differentiate(t, qd, smoothing)[0]
    tau = robot.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=friction)
    lim = robot.limits
    return TrajectoryReport(getattr(robot, "name", type(robot).__name__), source, robot.joint_names,
                            t, q, qd, qdd, tau, lim["effort"], lim["velocity"])


def _samples(name: str, x, T: int, n: int) -> np.ndarray:
    x = joint_array(name, x, n)
    if x.shape != (T, n):
        raise ValueError(f"{name} has shape {x.shape}, expected ({T}, {n}) = (len(t), dof)")
    return x
