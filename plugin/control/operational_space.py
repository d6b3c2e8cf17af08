"""Operational-space control of one frame (Khatib's formulation).

    tau = J^T Lambda (xdd_d + Kd edot + Kp e - Jdot qd) + h(q, qd) + N^T tau_0

J (r, n) is the frame's world Jacobian (r = 6, or 3 with ``position_only``),
Lambda = (J M^-1 J^T)^-1 the task-space inertia, h = C qd + g (+ friction) the
bias torques, and the task error is taken on SE(3), not on Euler angles:

    e = (p_d - p, log(R_d R^T)),    edot = v_d - v   (world axes; v = J qd)

With an exact model the task acceleration is then xdd = xdd_d + Kd edot + Kp e,
so the position error obeys e'' + Kd e' + Kp e = 0 (and the orientation error
too while it rotates about a fixed axis, e.g. regulation from rest; in general
to first order in e; with Coulomb friction only while the joints move: it is
compensated as friction sgn(qd), 0 at rest, as in the computed-torque controller).
For a redundant arm (n > r) the posture torque
tau_0 = M (Kp0 (q_0 - q) - Kd0 qd) acts through the dynamically consistent
null-space projector N^T = I - J^T Jbar^T, Jbar = M^-1 J^T Lambda, which
leaves the task acceleration untouched (J M^-1 N^T = 0).

References
----------
O. Khatib, "A unified approach for motion and force control of robot
manipulators: the operational space formulation", IEEE J. Robotics and
Automation 3(1), 1987, eqs. (8), (14), (51).
J. Nakanishi et al., "Operational space control: a theoretical and empirical
comparison", Int. J. Robotics Research 27(6), 2008, sec. 3 (null-space posture).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.control.computed_torque import configuration_error, configuration_state, gain_vector
from composedyn.dynamics.reference.ik import log3
from composedyn.dynamics.reference.task_inertia import task_inertia
from composedyn.ik import target_transform
from composedyn.protocol import DynamicsModel


@runtime_checkable
class TaskSpaceModel(DynamicsModel, Protocol):
    """A :class:`DynamicsModel` that also offers the frame kinematics of a :class:`composedyn.Robot`."""

    @property
    def frame_names(self) -> tuple: ...

    def frame_pose(self, q, frame: str) -> np.ndarray: ...

    def jacobian(self, q, frame: str, reference: str = "world") -> np.ndarray: ...

    def frame_acceleration(self, q, qd, qdd, frame: str, reference: str = "world") -> np.ndarray: ...


class OperationalSpaceController:
    """Task-space controller ``tau = ctrl(q, qd, pose_des, twist_des, acc_des)``.

    Used with :func:`composedyn.simulate` like :class:`ComputedTorqueController`:
    ``reference(t)`` returns (pose_des (4, 4), twist_des (6,), acc_des (6,)),
    twists linear first in world axes (position_only: (3,) position, (3,)
    velocity, (3,) acceleration).

    Parameters
    ----------
    robot : TaskSpaceModel
        The model the controller believes.
    frame : str
        The controlled frame (one of ``robot.frame_names``).
    kp, kd : float or array (r,)
        Task stiffness (1/s^2) and damping (1/s) of the error dynamics;
        kd = 2 sqrt(kp) is critically damped.
    position_only : bool
        Control the frame origin only (r = 3).
    posture : array (n,), optional
        Posture q_0 for the null-space task of a redundant arm (None: damping only).
    kp_posture, kd_posture : float
        Gains of the posture task (1/s^2, 1/s).
    saturate : bool
        Clip tau to +-effort limits (``effort`` or the model's own).
    friction : bool
        Compensate the model's joint friction in h.
    damping : float
        0: Lambda exact (ValueError at a singularity); > 0: the damped
        Lambda of :func:`composedyn.dynamics.reference.task_inertia.task_inertia`.
    """

    def __init__(self, robot: TaskSpaceModel, frame: str, kp, kd, position_only: bool = False, posture=None,
                 kp_posture: float = 25.0, kd_posture: float = 10.0, saturate: bool = False, effort=None,
                 friction: bool = True, damping: float = 0.0):
        from composedyn.control.computed_torque import refuse_floating

        refuse_floating(robot, "the operational-space controller")
        if frame not in robot.frame_names:  # raises the one-line error with close names
            robot.frame_pose(robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.dof), frame)
        self.robot, self.frame, self.rows = robot, frame, 3 if position_only else 6
        self.kp, self.kd = gain_vector("kp", kp, self.rows), gain_vector("kd", kd, self.rows)
        n = int(getattr(robot, "nq", robot.dof))  # the posture is a configuration
        self.posture = None if posture is None else joint_arrays(n, posture=posture)[0].reshape(n)
        self.kp_posture = float(gain_vector("kp_posture", kp_posture, 1)[0])
        self.kd_posture = float(gain_vector("kd_posture", kd_posture, 1)[0])
        effort = robot.limits["effort"] if effort is None else effort
        self.effort = gain_vector("effort", effort, robot.dof) if saturate else None
        self.friction, self.damping = friction, float(damping)

    def error(self, q, pose_des) -> np.ndarray:
        """Task error e (r,) = (p_d - p, log(R_d R^T)) at q."""
        T = self.robot.frame_pose(q, self.frame)
        pd = target_transform(pose_des, self.rows == 3, "OperationalSpaceController: pose_des")
        if self.rows == 3:
            return pd[:3, 3] - T[:3, 3]
        return np.concatenate([pd[:3, 3] - T[:3, 3], log3(pd[:3, :3] @ T[:3, :3].T)])

    def __call__(self, q, qd, pose_des, twist_des, acc_des) -> np.ndarray:
        """Joint torques (n,) for the state (q, qd) (one sample) and the task reference."""
        r, rob = self.rows, self.robot
        q, qd = configuration_state(rob, q, configurations={}, rates={"qd": qd})
        if q.ndim != 1:
            raise ValueError(f"OperationalSpaceController takes one state q (n,), got shape {q.shape}")
        v_d, a_d = (np.asarray(x, float).reshape(-1) for x in (twist_des, acc_des))
        if v_d.shape != (r,) or a_d.shape != (r,):
            raise ValueError(f"twist_des and acc_des must have shape ({r},), got {v_d.shape} and {a_d.shape}")
        if not (np.all(np.isfinite(v_d)) and np.all(np.isfinite(a_d))):
            raise ValueError("OperationalSpaceController: twist_des and acc_des must be finite, got "
                             f"{v_d.tolist()} and {a_d.tolist()}")
        e = self.error(q, pose_des)  # checks the pose target first
        J = rob.jacobian(q, self.frame)[:r]
        jdqd = rob.frame_acceleration(q, qd, np.zeros_like(qd), self.frame)[:r]
        M = rob.mass_matrix(q)
        lam = task_inertia(J, M, self.frame, self.damping, three_rows="position_only=True")
        xdd = a_d + self.kd * (v_d - J @ qd) + self.kp * e
        tau = J.T @ (lam @ (xdd - jdqd)) + rob.inverse_dynamics(q, qd, np.zeros_like(qd), friction=self.friction)
        if qd.shape[0] > r:
            qdd0 = -self.kd_posture * qd
            if self.posture is not None:
                qdd0 = qdd0 + self.kp_posture * configuration_error(rob, q, self.posture)
            jbar = np.linalg.solve(M, J.T) @ lam  # (n, r)
            tau0 = M @ qdd0
            tau = tau + tau0 - J.T @ (jbar.T @ tau0)
        if self.effort is not None:
            tau = np.clip(tau, -self.effort, self.effort)
        return tau

    def __repr__(self) -> str:
        return (f"OperationalSpaceController({self.robot!r}, {self.frame!r}, kp={self.kp}, kd={self.kd}"
                f"{', position_only=True' if self.rows == 3 else ''})")
