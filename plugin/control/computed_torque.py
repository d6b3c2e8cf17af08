"""Computed-torque control (feedback linearisation) on a dynamics model.

    tau = M(q) (qdd_des + Kd (qd_des - qd) + Kp (q_des - q)) + C(q, qd) qd + g(q) + tau_friction

With an exact model the closed loop is e'' + Kd e' + Kp e = 0 for the
tracking error e = q_des - q, which converges exponentially for positive
gains (Coulomb friction is compensated as friction sgn(qd), 0 at rest: a joint
at rest whose feedback torque stays below its Coulomb level stays stuck, so with
Coulomb friction this holds while the joints move); for joints with configuration spaces of their own (a ball joint's
quaternion) q and q_des have ``robot.nq`` entries, the rates ``robot.nv``, and
the error is ``robot.difference(q, q_des)``.  Build the controller on ``robot.perturbed(0.1)`` to study a 10 %
model mismatch.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.protocol import DynamicsModel


def configuration_state(robot, q, *, configurations: dict, rates: dict) -> list:
    """Configurations (..., nq) and rates (..., dof) of ``robot`` checked (ValueError naming the
    argument), in the order given; ``nq == dof`` unless the robot's joints have configuration
    spaces of their own (spherical, universal, ...: ``robot.nq``)."""
    nq, n = int(getattr(robot, "nq", robot.dof)), robot.dof
    if nq == n:
        return joint_arrays(n, q=q, **configurations, **rates)
    return [*joint_arrays(nq, q=q, **configurations), *joint_arrays(n, **rates)]


def configuration_error(robot, q, q_des) -> np.ndarray:
    """The tracking error (..., dof) from q to q_des: ``q_des - q``, or ``robot.difference(q, q_des)``
    on a configuration space (the v with integrate(q, v) = q_des)."""
    if int(getattr(robot, "nq", robot.dof)) == robot.dof:
        return q_des - q
    return robot.difference(q, q_des)


def gain_vector(name: str, k, n: int) -> np.ndarray:
    """A scalar or (n,) gain as a (n,) array of finite, non-negative numbers."""
    try:
        arr = np.broadcast_to(np.asarray(k, dtype=float), (n,)) if np.ndim(k) == 0 else np.asarray(k, float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {k!r}") from None
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    return arr.copy()


def refuse_floating(robot, what: str) -> None:
    """ValueError when ``robot`` has a floating base: ``what`` drives joint coordinates of a fixed base."""
    if getattr(robot, "floating", False):
        raise ValueError(f"{what} drives the joints of a fixed-base robot; {robot.name!r} has a floating base "
                         "(its base is moved by contact forces: see contact_inverse_dynamics, or LQRController)")


class ComputedTorqueController:
    """Computed-torque controller ``tau = ctrl(q, qd, q_des, qd_des, qdd_des)``.

    Parameters
    ----------
    robot : DynamicsModel
        The model the controller *believes* (e.g. ``robot.perturbed(0.1)``).
    kp, kd : float or array (n,)
        Proportional (1/s^2) and derivative (1/s) gains of the error dynamics;
        ``kd = 2 sqrt(kp)`` is critically damped.
    saturate : bool
        Clip tau to +-effort limits (``limits["effort"]``; joints without a
        limit are not clipped).
    effort : array (n,), optional
        Limits to saturate at instead of the model's own (e.g. the true
        robot's when the model is perturbed).
    friction : bool
        Compensate joint friction (viscous + Coulomb) from the model.
    """

    def __init__(self, robot: DynamicsModel, kp, kd, saturate: bool = False, effort=None,
                 friction: bool = True):
        refuse_floating(robot, "the computed-torque controller")
        n = robot.dof
        self.robot = robot
        self.kp, self.kd = gain_vector("kp", kp, n), gain_vector("kd", kd, n)
        lim = robot.limits["effort"] if effort is None else effort
        self.effort = gain_vector("effort", lim, n) if saturate else None
        self.friction = friction

    def __call__(self, q, qd, q_des, qd_des, qdd_des) -> np.ndarray:
        """Joint torques (..., n) for state (q, qd) and reference (q_des, qd_des, qdd_des) (q, q_des
        (..., nq), the rates (..., n))."""
        q, q_des, qd, qd_des, qdd_des = configuration_state(self.robot, q, configurations={"q_des": q_des},
                                                            rates={"qd": qd, "qd_des": qd_des, "qdd_des": qdd_des})
        a = qdd_des + self.kd * (qd_des - qd) + self.kp * configuration_error(self.robot, q, q_des)
        tau = self.robot.inverse_dynamics(q, qd, a, friction=self.friction)
        if self.effort is not None:
            tau = np.clip(tau, -self.effort, self.effort)
        return tau

    def __repr__(self) -> str:
        sat = "" if self.effort is None else ", saturate=True"
        return f"ComputedTorqueController({self.robot!r}, kp={self.kp}, kd={self.kd}{sat})"
