"""Forward simulation of a dynamics model with :func:`scipy.integrate.solve_ivp`.

The state is (q, qd); each right-hand side call evaluates the applied torque
and the dynamics.  Written against :class:`DynamicsModel` only, so
constrained models (mimic joints, closed chains) simulate the same way; a
model may also offer ``project(q, qd) -> (q, qd)``, applied to every output
sample to remove constraint drift.  A floating-base model (``nq != dof``, e.g. a
:class:`composedyn.floating_robot.FloatingRobot`) integrates its configuration
through ``configuration_rate(q, v)`` (the base quaternion's kinematics) and
returns unit quaternions (``normalize``); in flight its momentum is conserved.

Coulomb friction: a :class:`composedyn.Robot` (or a floating or tree robot, each velocity
coordinate on its own) whose joints have Coulomb
friction is integrated with the event-driven stick-slip model of
:mod:`composedyn.simulation.stick_slip` (joints at rest stay stuck while the static
friction can hold them), so ``friction * sgn(qd)`` never makes the integrator
chatter at zero velocity.  ``smooth_friction=w`` replaces it by the
regularised model tanh(qd / w) (w in rad/s or m/s); models without known
Coulomb levels (a bare :class:`DynamicsModel`, mimic joints, closed chains)
use their own ``forward_dynamics``.  A run that cannot advance stops with a
SimulationError (a RuntimeError) after ``max_evaluations`` right-hand side evaluations or
``timeout`` seconds of wall time, naming the time reached.  The wall time is counted from the
end of the first right-hand side evaluation, which compiles (or loads) the kernels the run uses:
a first run in a process with an empty kernel cache is not stopped for compiling.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from composedyn.checks import joint_array, joint_arrays
from composedyn.errors import SimulationError
from composedyn.protocol import DynamicsModel
from composedyn.sampled import check_times
from composedyn.simulation.stick_slip import StickSlip

MAX_EVALUATIONS = 1_000_000  # right-hand side evaluations before a run is stopped
DEFAULT_TIMEOUT = 60.0  # s of wall time before a run is stopped (simulate's ``timeout``)
IMPLAUSIBLE_TORQUE = 1e6  # N m: a failed run of a robot without effort limits blames larger applied torques


@dataclass(frozen=True)
class Simulation:
    """Result of :func:`simulate`: samples at the requested times.

    t (T,) s; q, qd, qdd, tau (T, n).  ``energy`` (T,) J (T + V, when the model
    offers ``energy(q, qd)``, else None).  ``energy_drift``: for unactuated
    runs (no torque, no external wrench), max |E(t) - E(0)| divided by
    max(|E(0)|, max kinetic energy); None otherwise.  ``nfev``: right-hand
    side evaluations.  ``friction_model``: "stick-slip", "smooth" (tanh),
    "sign" (sgn(qd), no sticking), "model" (the model's own forward dynamics) or
    "none"; ``switches``: stick-slip mode changes.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray | None
    energy_drift: float | None
    nfev: int
    friction_model: str = "model"
    switches: int = 0


class _Stop(Exception):
    pass


def simulate(robot: DynamicsModel, q0, qd0, t, torque=None, reference: Callable | None = None,
             f_ext=None, friction: bool = True, smooth_friction: float | None = None,
             method: str = "DOP853", rtol: float = 1e-8, atol: float = 1e-10,
             max_step: float = np.inf, progress: Callable[[float], None] | str | None = "auto",
             max_evaluations: int = MAX_EVALUATIONS, timeout: float | None = DEFAULT_TIMEOUT) -> Simulation:
    """Integrate the equations of motion from (q0, qd0) and sample at times t.

    Parameters
    ----------
    robot : DynamicsModel
        The *true* plant.
    q0, qd0 : arrays (n,)
        Initial joint positions and velocities ((nq,) and (nv,) for a floating base).
    t : array (T,)
        Strictly increasing output times, s (T >= 2); integration runs from t[0] to t[-1].
    torque : None, array (n,), or callable
        None: no actuation.  An array: constant torques.  With ``reference``:
        a controller ``torque(q, qd, q_des, qd_des, qdd_des)`` (e.g. a
        :class:`ComputedTorqueController`); without: ``torque(t, q, qd) -> (n,)``.
    reference : callable, optional
        ``reference(t) -> (q_des, qd_des, qdd_des)`` for the controller.
    f_ext : mapping or callable, optional
        Link name -> world wrench (6,) at the link's centre of mass, or
        ``f_ext(t, q, qd) -> mapping``.
    friction : bool
        Joint friction (viscous and Coulomb) on or off.
    smooth_friction : float, optional
        None (default): Coulomb friction by the stick-slip model (see the module
        docstring); w > 0: the regularised model tanh(qd / w), w in rad/s or m/s;
        0: friction * sgn(qd) with sgn(0) = 0 (no static friction; may chatter).
    method, rtol, atol, max_step
        Passed to :func:`scipy.integrate.solve_ivp`.
    progress : callable, "auto" or None
        Called with the fraction (0..1) of the time span integrated so far;
        "auto" (default) draws a bar on stderr when it is a terminal and the
        run lasts over a second.
    max_evaluations, timeout
        Stop after this many right-hand side evaluations (default 1,000,000) or
        seconds of wall time (default 60 s; None: no time limit) counted from the end of
        the first evaluation (which compiles or loads the kernels).

    Raises
    ------
    SimulationError
        when the integrator gives up or the guard stops it before ``t[-1]``
        (the message names the time reached and the largest torque applied),
        or when the state stops being finite although the inputs were (the
        message names the time and the largest torque applied).
    """
    from scipy.integrate import solve_ivp  # imported here: keeps `import composedyn` light

    n = robot.dof
    nq = int(getattr(robot, "nq", n))  # a floating base: q (nq,) on the Lie group, qd (n = nv,)
    rate = getattr(robot, "configuration_rate", None) if nq != n else None
    t = check_times(t)
    if len(t) < 2:
        raise ValueError("t needs at least 2 samples")
    if timeout is not None and not (isinstance(timeout, (int, float, np.integer, np.floating)) and timeout >= 0):
        raise ValueError(f"simulate: timeout must be None (no limit) or a number of seconds >= 0, got {timeout!r}")
    if not (isinstance(max_evaluations, (int, np.integer)) and max_evaluations >= 1):
        raise ValueError(f"simulate: max_evaluations must be an integer >= 1, got {max_evaluations!r}")
    if rate is None:
        q0, qd0 = joint_arrays(n, q0=q0, qd0=qd0)
    else:
        q0, qd0 = joint_array("q0", q0, nq), joint_array("qd0", qd0, n)
    if q0.shape != (nq,) or qd0.shape != (n,):
        raise ValueError(f"q0 and qd0 must have shapes ({nq},) and ({n},), got {q0.shape} and {qd0.shape}")
    peak = [0.0]  # largest |torque| applied so far: what a diverged or stalled run is blamed on
    tau_fn = _peak_tracked(_torque_function(torque, reference, n), peak)
    fext_fn = f_ext if callable(f_ext) else (lambda tt, q, qd: f_ext)
    levels = joint_friction(robot) if friction and smooth_friction is None else None
    stick = levels is not None and bool(np.any(levels[0] > 0))
    kw = {} if smooth_friction is None else {"smooth_friction": smooth_friction}
    span = t[-1] - t[0]
    report, bar = _progress(progress)
    count, start = [0], [None]  # the clock starts when the first evaluation (compiling kernels) is done

    def guard(tt, y):
        count[0] += 1
        if count[0] == 2:
            start[0] = time.monotonic()
        if count[0] > max_evaluations or (timeout is not None and start[0] is not None
                                          and time.monotonic() - start[0] > timeout):
            raise _Stop(tt)
        if not np.all(np.isfinite(y)):
            raise SimulationError(f"simulate: the state diverged at t = {tt:.6g} s (q or qd is no longer finite) "
                                  f"from finite initial values; {_applied(peak[0], robot)}")
        if report is not None:
            report((tt - t[0]) / span)

    try:
        if stick:
            ss = StickSlip(robot, *levels, tau_fn, fext_fn, nq=nq, rate=rate)
            y, qdd, switches = _stick_slip(ss, q0, qd0, t, guard, solve_ivp, lambda: _applied(peak[0], robot),
                                           method=method, rtol=rtol, atol=atol, max_step=max_step)
            q, qd = y[:, :nq].copy(), y[:, nq:].copy()
            if rate is not None:  # back onto the group: unit quaternions
                q = robot.normalize(q)
        else:
            def rhs(tt, y):
                guard(tt, y)
                q, qd = y[:nq], y[nq:]
                qdd = robot.forward_dynamics(q, qd, tau_fn(tt, q, qd), f_ext=fext_fn(tt, q, qd), friction=friction,
                                             **kw)
                return np.concatenate([qd if rate is None else rate(q, qd), qdd])

            sol = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([q0, qd0]), method=method, t_eval=t,
                            rtol=rtol, atol=atol, max_step=max_step)
            if sol.status != 0:
                reached = float(np.ravel(sol.t)[-1]) if np.size(sol.t) else float(t[0])
                raise SimulationError(f"simulate: integration failed at t = {reached:g} s: {sol.message}; "
                                      f"{_applied(peak[0], robot)}")
            q, qd, qdd, switches = sol.y[:nq].T.copy(), sol.y[nq:].T.copy(), None, 0
            if rate is not None:  # back onto the group: unit quaternions
                q = robot.normalize(q)
    except _Stop as stop:
        why = (f"{max_evaluations} right-hand side evaluations" if count[0] > max_evaluations
               else f"{timeout:g} s of wall time")
        raise SimulationError(f"simulate: stopped at t = {float(stop.args[0]):.6g} s of {t[-1]:g} s after {why}: "
                              f"the dynamics are too stiff or chatter; {_applied(peak[0], robot)} (raise "
                              "max_evaluations/timeout, or pass smooth_friction=width)") from None
    finally:
        if bar is not None:
            bar.close()
    project = getattr(robot, "project", None)
    if callable(project):
        q, qd = project(q, qd)
    tau = np.array([tau_fn(tt, a, b) for tt, a, b in zip(t, q, qd)]).reshape(len(t), n)
    if qdd is None:
        qdd = np.array([robot.forward_dynamics(a, b, c, f_ext=fext_fn(tt, a, b), friction=friction, **kw)
                        for tt, a, b, c in zip(t, q, qd, tau)])
    energy_fn = getattr(robot, "energy", None)
    energy = np.asarray(energy_fn(q, qd), float) if callable(energy_fn) else None
    drift = None
    if energy is not None and torque is None and f_ext is None:
        kinetic = getattr(robot, "kinetic_energy", None)
        t_max = float(np.max(kinetic(q, qd))) if callable(kinetic) else 0.0
        drift = float(np.max(np.abs(energy - energy[0])) / max(abs(energy[0]), t_max, 1e-300))
    model = ("stick-slip" if stick else "none" if not friction else "model" if not kw
             else "sign" if not smooth_friction else "smooth")
    return Simulation(t, q, qd, qdd, tau, energy, drift, int(count[0]), model, switches)


def joint_friction(robot) -> tuple[np.ndarray, np.ndarray] | None:
    """(Coulomb levels, viscous coefficients) (nv,) over the velocity coordinates of a model whose
    coordinates are exactly its compiled model's (a Robot, a FloatingRobot or a TreeRobot without
    dependent mimic joints: a floating base's coordinates with none), else None."""
    am = getattr(robot, "array_model", None)
    if am is not None:
        if am.Gv is not None or am.nv_full != robot.dof:
            return None
        return np.asarray(am.coulomb, float), np.asarray(am.damping, float)
    model = getattr(robot, "model", None)
    if model is None or tuple(getattr(model, "joint_names", ())) != tuple(robot.joint_names):
        return None
    return np.asarray(model.friction, float), np.asarray(model.damping, float)


def _stick_slip(ss: StickSlip, q0, qd0, t, guard, solve_ivp, applied: Callable[[], str], **options):
    """Integrate mode by mode; returns (y (T, nq + n), qdd (T, n), number of switches).  ``applied()``:
    the sentence on the applied torques that a failure message ends with."""
    n = ss.n
    Y, QDD = np.empty((len(t), ss.nq + n)), np.empty((len(t), n))
    y = ss.settle(t[0], np.concatenate([q0, qd0]), qd0 == 0)
    Y[0], QDD[0], k, ts, switches, stalls = y, ss.acceleration(t[0], y), 1, t[0], 0, 0

    def rhs(tt, yy):
        guard(tt, yy)
        return ss.rhs(tt, yy)

    while k < len(t):
        events = ss.events()
        sol = solve_ivp(rhs, (ts, t[-1]), y, t_eval=t[k:], events=events or None, **options)
        if sol.status == -1:
            reached = float(np.ravel(sol.t)[-1]) if np.size(sol.t) else ts
            raise SimulationError(f"simulate: integration failed at t = {reached:g} s: {sol.message}; {applied()}")
        for j in range(len(sol.t)):
            Y[k + j], QDD[k + j] = sol.y[:, j], ss.acceleration(sol.t[j], sol.y[:, j])
        k += len(sol.t)
        if sol.status != 1:
            break
        fired = [j for j, e in enumerate(sol.t_events) if len(e)]
        te, ye = sol.t_events[fired[0]][0], sol.y_events[fired[0]][0]
        joints = np.flatnonzero(ss.F > 0)[fired]
        release = [i for i in joints if ss.stuck[i]]  # holding torque reached the friction level
        at_rest = ss.stuck.copy()
        at_rest[joints] = True  # and sliding joints whose velocity reached zero
        stalls = stalls + 1 if te <= ts else 0
        if stalls > 1000:
            raise SimulationError(f"simulate: stick-slip switching does not advance at t = {te:g} s")
        y, ts, switches = ss.settle(te, ye, at_rest, release), te, switches + 1
    return Y, QDD, switches


def _peak_tracked(tau_fn: Callable, peak: list) -> Callable:
    """``tau_fn`` recording the largest magnitude it returns in ``peak[0]``."""
    def tracked(tt, q, qd):
        tau = tau_fn(tt, q, qd)
        m = float(np.max(np.abs(tau), initial=0.0))
        if not m <= peak[0]:
            peak[0] = m
        return tau
    return tracked


def _applied(peak: float, robot) -> str:
    """What the applied torques were, for a run that diverged, failed or stalled: their largest
    magnitude, compared with the robot's effort limits when it has any; the torque input is
    blamed when it exceeds them (or, without limits, ``IMPLAUSIBLE_TORQUE``)."""
    text = f"the largest applied torque was {peak:.3g} N m (or N)"
    limits = getattr(robot, "limits", None)
    effort = np.asarray(limits.get("effort", ()), float) if isinstance(limits, dict) else np.zeros(0)
    effort = effort[np.isfinite(effort) & (effort > 0)]
    if effort.size and peak > effort.max():
        return text + f", {peak / effort.max():.3g} times the largest effort limit ({effort.max():.3g}): " \
                      "check the torque input"
    if not effort.size and peak > IMPLAUSIBLE_TORQUE:
        return text + f", beyond any actuator (> {IMPLAUSIBLE_TORQUE:g}): check the torque input"
    return text


def _progress(progress):
    """(callback, bar to close) for the ``progress`` argument."""
    if progress != "auto":
        return progress, None
    if not getattr(sys.stderr, "isatty", lambda: False)():
        return None, None
    from composedyn.progress import Progress

    bar = Progress(1000, "simulating", delay=1.0)
    return (lambda f: bar.update(1000 * f)), bar


def _torque_function(torque, reference, n: int) -> Callable:
    """Normalise the ``torque`` argument to a function (t, q, qd) -> (n,)."""
    if torque is None:
        zero = np.zeros(n)
        return lambda tt, q, qd: zero
    if reference is not None:
        if not callable(torque) or not callable(reference):
            raise ValueError("with a reference, torque must be a controller torque(q, qd, q_des, qd_des, qdd_des)")
        def controlled(tt, q, qd):
            ref = reference(tt)
            if not isinstance(ref, (tuple, list)) or len(ref) != 3:
                raise ValueError(f"reference(t) must return (q_des, qd_des, qdd_des), got {type(ref).__name__}"
                                 + (f" of length {len(ref)}" if isinstance(ref, (tuple, list)) else ""))
            return torque(q, qd, *ref)

        return controlled
    if callable(torque):
        if hasattr(torque, "kp"):
            raise ValueError("a controller needs reference=callable t -> (q_des, qd_des, qdd_des)")
        return torque
    (tau,) = joint_arrays(n, torque=torque)
    if tau.shape != (n,):
        raise ValueError(f"constant torque must have shape ({n},), got {tau.shape}")
    return lambda tt, q, qd: tau
