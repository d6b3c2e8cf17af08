"""Computed-torque tracking runs: simulate a controller following a
reference and report the torques it applied against the limits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.control.computed_torque import ComputedTorqueController
from composedyn.simulation.simulate import Simulation, simulate
from composedyn.torque_check.limits import resolve_limits
from composedyn.torque_check.report import TrajectoryReport


@dataclass(frozen=True)
class Tracking:
    """A tracking run: the simulation, the limit report of the applied
    torques and the tracking error |q_des - q| (T, n), rad or m."""

    simulation: Simulation
    report: TrajectoryReport
    error: np.ndarray

    def summary(self) -> str:
        e = self.error.max(axis=1)
        return (f"tracking: max error {e.max():.3g}, final error {e[-1]:.3g} "
                f"(max over joints, rad or m) after {self.simulation.t[-1]:g} s")


def track(robot, reference, t, kp: float = 100.0, kd: float | None = None, mismatch: float = 0.0,
          saturate: bool = False, offset: float = 0.0, seed: int = 0, source: str = "<tracking>",
          limits=None, **sim_kwargs) -> Tracking:
    """Simulate ``robot`` under computed-torque control towards ``reference``.

    The controller uses ``robot.perturbed(mismatch, seed)`` when ``mismatch``
    > 0 (saturating at the true robot's effort limits if ``saturate``); the
    run starts ``offset`` (rad or m, every joint) away from the reference at
    rest.  ``kd`` defaults to 2 sqrt(kp) (critical damping).  ``limits``: the report's
    limits (a :class:`composedyn.torque_check.limits.JointLimits` or mapping, see
    :func:`composedyn.torque_check.limits.resolve_limits`; default the robot's).
    """
    kd = 2.0 * np.sqrt(kp) if kd is None else kd
    model = robot.perturbed(mismatch, seed) if mismatch > 0 else robot
    ctrl = ComputedTorqueController(model, kp, kd, saturate=saturate, effort=robot.limits["effort"])
    t = np.asarray(t, dtype=float)
    q0 = reference(t[0])[0] + offset
    sim = simulate(robot, q0, np.zeros(robot.dof), t, torque=ctrl, reference=reference, **sim_kwargs)
    report = TrajectoryReport(robot.name, source, robot.joint_names, sim.t, sim.q, sim.qd, sim.qdd, sim.tau,
                              limits=resolve_limits(robot, limits))
    return Tracking(sim, report, np.abs(reference(sim.t)[0] - sim.q))
