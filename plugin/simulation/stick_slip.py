"""Coulomb friction with sticking, for simulation: an event-driven switched model.

Each joint i with Coulomb level F_i > 0 is either *sliding* in direction
d_i = +-1, with friction torque F_i d_i opposing the motion, or *stuck*
(qd_i = qdd_i = 0), held by whatever friction torque phi_i that takes, as long
as |phi_i| <= F_i (static friction level = Coulomb level).  With the stuck set
S and the free set R, the equations of motion

    M(q) qdd = tau - h(q, qd) - c qd - phi,        h = C qd + g - J^T f_ext

give qdd_S = 0, qdd_R = M_RR^-1 (tau - h - c qd - F d)_R and the holding
torques phi_S = (tau - h - c qd)_S - M_SR qdd_R.  (A joint released while its
holding torque only grazes the friction level may start with a vanishing
acceleration of either sign; it counts as stopped again only when its velocity
reaches ``REST`` = 1e-9 rad/s or m/s against its direction.)  Within a mode the right-hand
side is smooth, so the integrator takes large steps; a mode ends at an event:
a sliding joint's velocity reaches zero (d_i qd_i = 0), or a stuck joint's
holding torque reaches the friction level (|phi_i| = F_i).  At an event the
joints at rest are re-sorted: all of them stuck, then, while some holding
torque exceeds its level, the joint with the largest ratio |phi_i| / F_i is
released in the direction d_i = sgn(phi_i) (Karnopp, "Computer simulation of
stick-slip friction in mechanical dynamic systems", J. Dyn. Sys. Meas.
Control 107, 1985; Leine, van Campen, de Kraker and van den Steen,
"Stick-slip vibrations induced by alternate friction models", Nonlinear
Dynamics 16, 1998, the switch model).  Friction does negative work in every
mode (phi_S acts on joints at rest, F d on joints moving in direction d), so
the total energy never increases.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_array

REST = 1e-9  # rad/s or m/s: a joint just released stops again only once it moves back this fast



class StickSlip:
    """Switched dynamics of ``robot`` with Coulomb levels ``coulomb`` (n,) and viscous
    coefficients ``damping`` (n,) on its n velocity coordinates; ``torque(t, q, qd)`` and
    ``f_ext(t, q, qd)`` as in simulate.  The state is (q (nq,), qd (n,)); ``rate(q, qd)``: the
    configuration's rate (a floating base's or a ball joint's quaternion), None when it is qd
    (nq = n).  A coordinate of a joint with several (a ball joint's angular velocity about one
    axis of its child frame) sticks and slips on its own."""

    def __init__(self, robot, coulomb, damping, torque, f_ext, nq: int | None = None, rate=None):
        self.robot, self.F, self.c = robot, np.asarray(coulomb, float), np.asarray(damping, float)
        self.torque, self.f_ext = torque, f_ext
        n = len(self.F)
        self.n, self.stuck, self.d, self.fresh = n, np.zeros(n, bool), np.zeros(n), np.zeros(n, bool)
        self.nq, self.rate = n if nq is None else int(nq), rate
        self._key, self._val = None, None

    def split(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q (nq,), qd (n,)) of a state y."""
        return y[:self.nq], y[self.nq:]

    def _solve(self, t: float, y: np.ndarray):
        """(qdd (n,), phi (n,), holding torques on stuck joints, 0 elsewhere) in the current mode."""
        key = (t, y.tobytes(), self.stuck.tobytes(), self.d.tobytes())
        if key == self._key:
            return self._val
        n, S = self.n, self.stuck
        q, qd = self.split(y)
        qd = np.where(S, 0.0, qd)
        fx = self.f_ext(t, q, qd)
        tau = joint_array("tau", self.torque(t, q, qd), n)  # named as forward dynamics names it: NaN, a shape
        if tau.shape != (n,):
            raise ValueError(f"tau must have shape ({n},) at t = {t:.6g} s, got {tau.shape}")
        drive = tau - self.robot.inverse_dynamics(q, qd, np.zeros(n), f_ext=fx, friction=False)
        drive = drive - self.c * qd
        R = ~S
        qdd, phi = np.zeros(n), np.zeros(n)
        M = self.robot.mass_matrix(q)
        if R.any():
            qdd[R] = np.linalg.solve(M[np.ix_(R, R)], (drive - self.F * self.d)[R])
        if S.any():
            phi[S] = drive[S] - M[np.ix_(S, R)] @ qdd[R]
        self._key, self._val = key, (qdd, phi)
        return qdd, phi

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        qdd, _ = self._solve(t, y)
        q, qd = self.split(y)
        qd = np.where(self.stuck, 0.0, qd)
        return np.concatenate([qd if self.rate is None else self.rate(q, qd), qdd])

    def events(self) -> list:
        """Terminal event functions of the current mode (each falls through zero at a switch)."""
        out = []
        for i in np.flatnonzero(self.F > 0):
            if self.stuck[i]:
                def g(t, y, i=i):
                    return self.F[i] - abs(self._solve(t, y)[1][i])
            else:
                tol = REST if self.fresh[i] else 0.0

                def g(t, y, i=i, tol=tol):
                    return self.d[i] * y[self.nq + i] + tol
            g.terminal, g.direction = True, -1
            out.append(g)
        return out

    def settle(self, t: float, y: np.ndarray, at_rest: np.ndarray, release=()) -> np.ndarray:
        """Re-sort the joints ``at_rest`` (n,) bool (those with F_i > 0) into stuck and released
        ones; returns the state with their velocities set to exactly 0.  Joints in ``release``
        (whose holding torque has just reached the friction level) are released first."""
        y = y.copy()
        qd = y[self.nq:]
        moving = ~(at_rest & (self.F > 0))
        self.d = np.where(moving, np.sign(qd), 0.0)
        self.stuck = ~moving
        qd[self.stuck] = 0.0
        if len(release):
            _, phi = self._solve(t, y)
            for i in release:
                self.stuck[i], self.d[i] = False, np.sign(phi[i]) or 1.0
        while self.stuck.any():
            _, phi = self._solve(t, y)
            ratio = np.where(self.stuck, np.abs(phi) / np.where(self.F > 0, self.F, 1.0), 0.0)
            i = int(np.argmax(ratio))
            if ratio[i] <= 1.0 + 1e-12:
                break
            self.stuck[i], self.d[i] = False, np.sign(phi[i])
        self.fresh = at_rest & ~self.stuck
        return y

    def acceleration(self, t: float, y: np.ndarray) -> np.ndarray:
        return self._solve(t, y)[0]
