"""Forward simulation of a dynamics model with :func:`scipy.integrate.solve_ivp`.

The state is (q, qd); each right-hand side call evaluates the applied torque
and ``robot.forward_dynamics``.  Written against :class:`DynamicsModel` only,
so constrained models (mimic joints, closed chains) simulate the same way;
a model may also offer ``project(q, qd) -> (q, qd)``, applied to every
output sample to remove constraint drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.errors import SimulationError
from composedyn.protocol import DynamicsModel
from composedyn.trajectory import check_times


@dataclass(frozen=True)
class Simulation:
    """Result of :func:`simulate`: samples at the requested times.

    t (T,) s; q, qd, qdd, tau (T, n).  ``energy`` (T,) J (T + V, when the model
    offers ``energy(q, qd)``, else None).  ``energy_drift``: for unactuated
    runs (no torque, no external wrench), max |E(t) - E(0)| divided by
    max(|E(0)|, max kinetic energy); None otherwise.  ``nfev``: right-hand
    side evaluations.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray | None
    energy_drift: float | None
    nfev: int


def simulate(robot: DynamicsModel, q0, qd0, t, torque=None, reference: Callable | None = None,
             f_ext=None, friction: bool = True, smooth_friction: float | None = None,
             method: str = "DOP853", rtol: float = 1e-8, atol: float = 1e-10,
             max_step: float = np.inf, progress: Callable[[float], None] | None = None) -> Simulation:
    """Integrate the equations of motion from (q0, qd0) and sample at times t.

    Parameters
    ----------
    robot : DynamicsModel
        The *true* plant.
    q0, qd0 : arrays (n,)
        Initial joint positions and velocities.
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
    friction, smooth_friction
        As in :meth:`Robot.forward_dynamics` (``smooth_friction`` avoids
        chattering of Coulomb friction at zero velocity).
    method, rtol, atol, max_step
        Passed to :func:`scipy.integrate.solve_ivp`.
    progress : callable, optional
        Called with the fraction (0..1) of the time span integrated so far.

    Raises
    ------
    SimulationError
        when the integrator gives up before ``t[-1]`` (the message names the time reached).
    """
    from scipy.integrate import solve_ivp  # imported here: keeps `import composedyn` light

    n = robot.dof
    t = check_times(t)
    if len(t) < 2:
        raise ValueError("t needs at least 2 samples")
    q0, qd0 = joint_arrays(n, q0=q0, qd0=qd0)
    if q0.shape != (n,):
        raise ValueError(f"q0 and qd0 must have shape ({n},), got {q0.shape}")
    tau_fn = _torque_function(torque, reference, n)
    fext_fn = f_ext if callable(f_ext) else (lambda tt, q, qd: f_ext)
    kw = {} if smooth_friction is None else {"smooth_friction": smooth_friction}

    span = t[-1] - t[0]

    def rhs(tt, y):
        if progress is not None:
            progress((tt - t[0]) / span)
        q, qd = y[:n], y[n:]
        qdd = robot.forward_dynamics(q, qd, tau_fn(tt, q, qd), f_ext=fext_fn(tt, q, qd), friction=friction, **kw)
        return np.concatenate([qd, qdd])

    sol = solve_ivp(rhs, (t[0], t[-1]), np.concatenate([q0, qd0]), method=method, t_eval=t,
                    rtol=rtol, atol=atol, max_step=max_step)
    if sol.status != 0:
        raise SimulationError(f"simulate: integration failed at t = {sol.t[-1]:g} s: {sol.message}")
    q, qd = sol.y[:n].T.copy(), sol.y[n:].T.copy()
    project = getattr(robot, "project", None)
    if callable(project):
        q, qd = project(q, qd)
    tau = np.array([tau_fn(tt, a, b) for tt, a, b in zip(t, q, qd)]).reshape(len(t), n)
    qdd = np.array([robot.forward_dynamics(a, b, c, f_ext=fext_fn(tt, a, b), friction=friction, **kw)
                    for tt, a, b, c in zip(t, q, qd, tau)])
    energy_fn = getattr(robot, "energy", None)
    energy = np.asarray(energy_fn(q, qd), float) if callable(energy_fn) else None
    drift = None
    if energy is not None and torque is None and f_ext is None:
        kinetic = getattr(robot, "kinetic_energy", None)
        t_max = float(np.max(kinetic(q, qd))) if callable(kinetic) else 0.0
        drift = float(np.max(np.abs(energy - energy[0])) / max(abs(energy[0]), t_max, 1e-300))
    return Simulation(t, q, qd, qdd, tau, energy, drift, int(sol.nfev))


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
