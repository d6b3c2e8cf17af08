"""Trajectory checks: the joint torques a planned or logged motion requires,
compared with every joint limit (see :mod:`composedyn.torque_check.limits`).

Missing velocities and accelerations (and jerks, when a jerk limit is given)
come from differentiating a spline through each joint's samples: by default
(``smoothing=0``) the quintic spline that interpolates them, exact for clean
planner output; ``smoothing="gcv"`` or ``lam > 0`` smooths measured, noisy
positions (:mod:`composedyn.sampled`, which also lists the times and
positions that are refused).  Long inputs are differentiated in overlapping
windows (:mod:`composedyn.torque_check.chunked`), equal to the whole-array spline to 1e-9.
Derivatives or torques that come out non-finite from finite inputs are
refused (ValueError, one line).
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_array
from composedyn.protocol import DynamicsModel
from composedyn.sampled import check_times, differentiate
from composedyn.torque_check.report import TrajectoryReport


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
        Extra or overriding limits (acceleration, jerk, ...; see :mod:`composedyn.torque_check.limits`).
    margin : float
        Factor 0 < margin <= 1 tightening every limit.
    contacts, friction_coefficient, surface, foot
        Floating-base robots only: q (T, nq) free-flyer configurations, qd and
        qdd (T, nv), ``contacts`` maps frames to (T,) stance flags; checked by
        :func:`composedyn.floating.legged.check_legged_trajectory` (joint limits, infeasible
        samples, friction cones), which returns a :class:`LeggedReport`.

    Returns
    -------
    TrajectoryReport
        Peaks, margins, violation intervals of position, velocity, acceleration,
        jerk (when limited) and effort, and the samples.  Computed by
        :func:`composedyn.torque_check.chunked.check_chunks` (one pass over windows of the arrays).
    """
    from composedyn.joint_space import refuse_several_coordinates
    from composedyn.torque_check.chunked import check_chunks

    refuse_several_coordinates(robot, "check_trajectory")
    if getattr(robot, "floating", False):
        if f_ext is not None:
            raise ValueError("f_ext: a floating-base check takes the contact wrenches from the stance frames")
        from composedyn.floating.legged import check_legged_trajectory

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
