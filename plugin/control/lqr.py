"""Linear-quadratic regulator about a set point of a robot's dynamics.

At the set point x_ref = (q_ref, 0) with the holding torque tau_ref =
ID(q_ref, 0, 0) (gravity; friction vanishes at rest), the dynamics linearise to
dx' = A dx + B du (:meth:`Robot.linearize`).  The regulator minimises

    continuous:  J = int (dx^T Q dx + du^T R du) dt,   K = R^-1 B^T P,
                 A^T P + P A - P B R^-1 B^T P + Q = 0  (scipy.linalg.solve_continuous_are)
    discrete:    J = sum (dx_k^T Q dx_k + du_k^T R du_k),   K = (R + B_d^T P B_d)^-1 B_d^T P A_d,
                 P = A_d^T P A_d - A_d^T P B_d K + Q   (scipy.linalg.solve_discrete_are)

with (A_d, B_d) the zero-order-hold pair for the sample time ``dt``, and
applies tau = tau_ref - K (x - x_ref).

References
----------
B. D. O. Anderson and J. B. Moore, *Optimal Control: Linear Quadratic
Methods*, Prentice Hall, 1990, Ch. 3 (continuous) and 2.4 (discrete).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.protocol import DynamicsModel


@runtime_checkable
class LinearizableModel(DynamicsModel, Protocol):
    """A :class:`DynamicsModel` that also offers ``linearize(q, qd, tau, dt=None, ...) -> (A, B)``."""

    def linearize(self, q, qd, tau, dt: float | None = None, **kwargs) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) of xdot = f(x, u), x = (q, qd), u = tau (discrete pair with ``dt``)."""
        ...


def _stack(dq: np.ndarray, dqd: np.ndarray) -> np.ndarray:
    """dx (..., 2n) = (dq, dqd), their batch axes broadcast together."""
    try:
        return np.concatenate(np.broadcast_arrays(dq, dqd), axis=-1)
    except ValueError:
        raise ValueError(f"batch shapes do not broadcast: q {dq.shape[:-1]}, qd {dqd.shape[:-1]}") from None


def _weight(name: str, W, m: int) -> np.ndarray:
    """A scalar, a diagonal (m,) or a full (m, m) symmetric weight as an (m, m) matrix."""
    try:
        W = np.asarray(W, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, a ({m},) diagonal or a ({m}, {m}) matrix, got {W!r}") from None
    if W.ndim == 0 or W.shape == (m,):
        W = np.diag(np.broadcast_to(W, (m,)))
    if W.shape != (m, m):
        raise ValueError(f"{name} must be a number, a ({m},) diagonal or a ({m}, {m}) matrix, got shape {W.shape}")
    if not np.all(np.isfinite(W)) or not np.allclose(W, W.T):
        raise ValueError(f"{name} must be finite and symmetric")
    return 0.5 * (W + W.T)


class LQRController:
    """LQR state feedback ``tau = ctrl(q, qd, q_des=None, qd_des=None, qdd_des=None)`` about a set point.

    Parameters
    ----------
    robot : LinearizableModel
        The model the controller believes (e.g. a :class:`composedyn.Robot`).
    q_ref : array (n,)
        Set point (rad, m); the reference velocity is zero.  A floating base
        (``robot.nq`` != ``robot.dof``): q_ref (nq,) and dx = (difference(q_ref, q), qd),
        the error state of :meth:`FloatingRobot.linearize`.
    Q : number, (2n,) or (2n, 2n)
        State weight on dx = (q - q_ref, qd) (positive semidefinite).
    R : number, (n,) or (n, n)
        Torque weight (positive definite).
    dt : float, optional
        Sample time (s): discrete Riccati equation on the zero-order-hold pair.
        None: continuous Riccati equation.
    friction, smooth_friction
        As in :meth:`Robot.linearize` (friction in the holding torque and the model).

    Attributes
    ----------
    K (n, 2n) gain, P (2n, 2n) Riccati solution, A, B the linearisation,
    tau_ref (n,) holding torque, q_ref (n,), ``poles`` the closed-loop
    eigenvalues (of A - B K, or A_d - B_d K with ``dt``).

    Called with only (q, qd) it regulates to the set point.  With a reference
    (the signature of :class:`composedyn.ComputedTorqueController`, for
    :func:`composedyn.simulate`'s ``reference=``) it applies the inverse
    dynamics of the reference plus the same fixed gain,
    tau = ID(q_des, qd_des, qdd_des) - K (x - x_des): valid near the set point.
    ``reference`` is a method giving the constant set point, so
    ``simulate(plant, q0, qd0, t, torque=lqr, reference=lqr.reference)`` holds it.
    """

    def __init__(self, robot: LinearizableModel, q_ref, Q, R, dt: float | None = None, friction: bool = True,
                 smooth_friction: float | None = None):
        from scipy.linalg import solve_continuous_are, solve_discrete_are

        n = robot.dof
        nq = self._nq = int(getattr(robot, "nq", n))  # a floating base: q on the group (nq,), qd (n,)
        (q_ref,) = joint_arrays(nq, q_ref=q_ref)
        if q_ref.shape != (nq,):
            raise ValueError(f"q_ref must have shape ({nq},), got {q_ref.shape}")
        self.robot, self.q_ref, self.dt = robot, q_ref.copy(), dt
        self.friction, self.smooth_friction = friction, smooth_friction
        self.Q, self.R = _weight("Q", Q, 2 * n), _weight("R", R, n)
        if np.any(np.linalg.eigvalsh(self.R) <= 0):
            raise ValueError("R must be positive definite")
        if np.any(np.linalg.eigvalsh(self.Q) < -1e-12 * max(1.0, np.abs(self.Q).max())):
            raise ValueError("Q must be positive semidefinite")
        zero = np.zeros(n)
        self.tau_ref = robot.inverse_dynamics(q_ref, zero, zero, friction=friction)
        kw = {} if smooth_friction is None else {"smooth_friction": smooth_friction}
        self.A, self.B = robot.linearize(q_ref, zero, self.tau_ref, dt=dt, friction=friction, **kw)
        try:
            if dt is None:
                self.P = solve_continuous_are(self.A, self.B, self.Q, self.R)
                self.K = np.linalg.solve(self.R, self.B.T @ self.P)
            else:
                self.P = solve_discrete_are(self.A, self.B, self.Q, self.R)
                BP = self.B.T @ self.P
                self.K = np.linalg.solve(self.R + BP @ self.B, BP @ self.A)
        except (np.linalg.LinAlgError, ValueError) as e:
            raise ValueError(f"LQR: no stabilising solution of the Riccati equation at q_ref = {q_ref} "
                             f"(is (A, B) stabilisable and (A, Q) detectable?): {e}") from None
        self.poles = np.linalg.eigvals(self.A - self.B @ self.K)

    def reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The set point as a reference for :func:`composedyn.simulate`: (q_ref, 0, 0) at every t."""
        zero = np.zeros(self.robot.dof)
        return self.q_ref, zero, zero

    def _dq(self, q, q_ref) -> np.ndarray:
        """The position part of dx: q - q_ref, or for a floating base the tangent vector
        robot.difference(q_ref, q) (q = q_ref ⊕ dq, the error state of its ``linearize``)."""
        return q - q_ref if self._nq == self.robot.dof else self.robot.difference(q_ref, q)

    def __call__(self, q, qd, q_des=None, qd_des=None, qdd_des=None) -> np.ndarray:
        """Joint torques (..., n) for the state (q, qd) (and optionally a reference near the set point)."""
        n = self.robot.dof
        if np.ndim(q) == 0:
            raise ValueError("LQRController is called as ctrl(q, qd, ...); with composedyn.simulate pass "
                             "torque=ctrl, reference=ctrl.reference")
        if q_des is None:
            (q,), (qd,) = joint_arrays(self._nq, q=q), joint_arrays(n, qd=qd)
            dx = _stack(self._dq(q, self.q_ref), qd)
            return self.tau_ref - dx @ self.K.T
        zero = np.zeros(n)
        qd_des = zero if qd_des is None else qd_des
        qdd_des = zero if qdd_des is None else qdd_des
        q, q_des = joint_arrays(self._nq, q=q, q_des=q_des)
        qd, qd_des, qdd_des = joint_arrays(n, qd=qd, qd_des=qd_des, qdd_des=qdd_des)
        tau_ff = self.robot.inverse_dynamics(q_des, qd_des, qdd_des, friction=self.friction)
        dx = _stack(self._dq(q, q_des), qd - qd_des)
        return tau_ff - dx @ self.K.T

    def __repr__(self) -> str:
        kind = "continuous" if self.dt is None else f"discrete, dt={self.dt:g} s"
        return f"LQRController({self.robot!r}, q_ref={self.q_ref}, {kind})"
