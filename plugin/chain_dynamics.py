"""``ChainDynamics``: the reduced dynamics of a closed chain, shared by
:class:`~composedyn.closed_chain.ClosedChain` and :class:`~composedyn.tree_closed_chain.TreeClosedChain`.

Coordinate partitioning (:mod:`composedyn.dynamics.constraints.reduced`): with the velocity closure
qd_all = W qd and the acceleration closure qdd_all = W qdd + w (J_D w_D = gamma), Kolev's modified
Lagrange equations give the actuator forces Wᵀ τ_tree(q, qd_all, qdd_all), the reduced inertia Wᵀ M W
and the closure forces from J_Dᵀ λ = τ_tree,D.  A class using this has ``robot``, ``dof``, ``_ind``,
``_dep``, ``nq`` and ``_ind_q`` (the independent positions' count and indices in every joint's),
``_last`` (the last closed configuration), ``_close(qi, start, what)`` (the position closure),
``constraint(q)``, ``_terms(q)`` (its [1] the constraint Jacobian), ``_state(q, qd)`` -> (q_all, qd_all,
W, J, gamma), ``_jacobian_rate(q_all, qd_all)`` (dJ/dt), ``_tree_tau(q, qd, qdd, f_ext, friction, smooth)``
and ``_fast(mode, q, qd, qdd, friction)`` (a compiled result, or None for the NumPy path here).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from composedyn.checks import joint_array
from composedyn.dynamics.constraints.reduced import closure_forces, dependent_part, projection


class ChainDynamics:
    """The closure and reduced-dynamics methods of a closed chain (module docstring)."""

    # what the last axis counts, in messages: of the independent positions q, of the rates qd, qdd, tau and
    # of every joint's positions ("": one coordinate per joint, joint_array's "with n = … joints")
    _what_q = _what_v = _what_all_q = ""

    @property
    def limits(self) -> dict:
        """Limits (dof,) of the independent (velocity) coordinates."""
        return {k: v[self._ind] for k, v in self.robot.limits.items()}

    @property
    def assembly(self) -> np.ndarray:
        """Every joint's configuration (robot.nq,) of the last single-sample :meth:`assemble` (at first,
        the assembly closed from ``guess``): where the next position closure starts, so it picks the
        branch.

        Assigning a configuration that closes the loops (an earlier ``assembly``, or a row of
        :meth:`assemble`) moves that start back, e.g. after closing a path sample by sample; a
        configuration that does not close them raises ValueError.
        """
        return self._last.copy()

    @assembly.setter
    def assembly(self, q) -> None:
        nq = self.robot.nq
        q = joint_array("q", q, nq, self._what_all_q)
        if q.ndim != 1:
            raise ValueError(f"assembly must have shape ({nq},), got {q.shape}")
        gap = float(np.abs(self.constraint(q)).max(initial=0.0))
        if gap > 1e-8:
            raise ValueError(f"{self.name}: the assembly does not close the loops (max |phi| = {gap:.3g})")
        self._last = np.array(q, dtype=float)

    def assemble(self, q) -> np.ndarray:
        """Position closure: every joint's configuration (..., robot.nq) from the independent ones
        (..., nq), by Newton on the dependent joints (``_close``); a batch is solved as a path from the
        sample nearest the last assembled configuration.  ModelError when a configuration is outside
        the assembly range."""
        if (out := self._fast("positions", q)) is not None:
            return out
        q = joint_array("q", q, self.nq, self._what_q)
        flat = q.reshape(-1, self.nq)
        if not len(flat):  # an empty batch: nothing to close
            return np.empty(q.shape[:-1] + (self.robot.nq,))
        out = np.empty((len(flat), self.robot.nq))
        s0 = int(np.argmin(np.abs(flat - self._last[self._ind_q]).sum(axis=-1)))
        out[s0] = self._close(flat[s0], self._last, "the given position")
        for order in (range(s0 + 1, len(flat)), range(s0 - 1, -1, -1)):
            prev = out[s0]
            for s in order:
                out[s] = prev = self._close(flat[s], prev, f"sample {s}")
        if len(flat) == 1:
            self._last = out[0].copy()
        return out.reshape(q.shape[:-1] + (self.robot.nq,))

    def _positions(self, q) -> np.ndarray:
        """Every joint's configuration (..., robot.nq) from q given as the independent positions (..., nq)
        or as every joint's, which must close the loops (ValueError otherwise)."""
        if (out := self._fast("positions", q)) is not None:
            return out
        q = np.asarray(q, dtype=float)
        if q.ndim and q.shape[-1] == self.robot.nq:
            gap = np.abs(self.constraint(q)).max(initial=0.0)
            if gap > 1e-8:
                raise ValueError(f"q has {self.robot.nq} entries (all joints) but does not close the loops "
                                 f"(max |phi| = {gap:.3g}); pass the independent joints instead")
            return q
        return self.assemble(q)

    @staticmethod
    def _with_rates(qa: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Every joint's configuration qa (..., robot.nq) broadcast to the batch shape it shares with the
        rates qd (..., dof): one configuration with a batch of velocities is that batch."""
        shape = np.broadcast_shapes(qa.shape[:-1], qd.shape[:-1])
        return qa if qa.shape[:-1] == shape else np.broadcast_to(qa, shape + qa.shape[-1:])

    def velocities(self, q, qd) -> np.ndarray:
        """Velocity closure: qd_all (..., n) = W qd from independent qd (..., k)."""
        if (out := self._fast("velocities", q, qd)) is not None:
            return out
        return self._state(q, qd)[1]

    def accelerations(self, q, qd, qdd) -> np.ndarray:
        """Acceleration closure: qdd_all (..., n) = W qdd + w, J qdd_all = gamma."""
        if (out := self._fast("accelerations", q, qd, qdd)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        return self._closed_accelerations(W, J, gam, qdd)

    def _closed_accelerations(self, W, J, gam, qdd) -> np.ndarray:
        """qdd_all (..., n) = W qdd + w (J_D w_D = gamma) from the independent qdd (..., dof), checked here."""
        qdd = joint_array("qdd", qdd, self.dof, self._what_v)
        return np.einsum("...ij,...j->...i", W, qdd) + dependent_part(J, self._dep, gam)

    def project(self, q, qd):
        """Identity: independent coordinates satisfy the closure by construction (simulate hook)."""
        return q, qd

    def inverse_dynamics(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Actuator torques (..., k) at the independent joints: W^T tau_tree(q, qd_all, qdd_all).

        Kolev eq. (2.20) with unactuated dependent joints.  ``f_ext`` and
        ``friction`` as in :meth:`Robot.inverse_dynamics` (friction of every joint counts).
        """
        if f_ext is None and (out := self._fast("inverse_dynamics", q, qd, qdd, friction)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        qdda = self._closed_accelerations(W, J, gam, qdd)
        return np.einsum("...ij,...i->...j", W, self._tree_tau(qa, qda, qdda, f_ext, friction))

    def constraint_forces(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Closure forces lambda (..., m), rows ``rows``: force (N) / torque (N m) that link b exerts on link a.

        From the tree equations M qdd + h = B tau + J^T lambda at the dependent joints.
        """
        if f_ext is None and (out := self._fast("constraint_forces", q, qd, qdd, friction)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        qdda = self._closed_accelerations(W, J, gam, qdd)
        return closure_forces(J, self._dep, self._tree_tau(qa, qda, qdda, f_ext, friction))

    def mass_matrix(self, q) -> np.ndarray:
        """Reduced inertia W^T M W (..., k, k)."""
        if (out := self._fast("mass_matrix", q)) is not None:
            return out
        qa = self._positions(q)
        W = projection(self._terms(qa)[1], self._ind, self._dep)
        return np.swapaxes(W, -1, -2) @ self.robot.mass_matrix(qa) @ W

    def bias_torques(self, q, qd) -> np.ndarray:
        """Reduced velocity and gravity torques (..., k): inverse dynamics at qdd = 0, no friction."""
        return self.inverse_dynamics(q, qd, np.zeros(np.shape(qd)), friction=False)

    def gravity_torques(self, q) -> np.ndarray:
        """Actuator torques (..., k) holding the mechanism still at q: W^T g."""
        z = np.zeros(np.shape(q)[:-1] + (self.dof,))
        return self.inverse_dynamics(q, z, z, friction=False)

    def forward_dynamics(self, q, qd, tau, f_ext: Mapping | None = None, friction: bool = True,
                         smooth_friction: float | None = None) -> np.ndarray:
        """Independent accelerations (..., k): (W^T M W) qdd = tau - W^T tau_tree(q, qd_all, w)."""
        if f_ext is None and smooth_friction is None and (
                out := self._fast("forward_dynamics", q, qd, tau, friction)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        tau = joint_array("tau", tau, self.dof, self._what_v)
        Wt = np.swapaxes(W, -1, -2)
        h = np.einsum("...ij,...i->...j", W, self._tree_tau(qa, qda, dependent_part(J, self._dep, gam),
                                                              f_ext, friction, smooth_friction))
        return np.linalg.solve(Wt @ self.robot.mass_matrix(qa) @ W, (tau - h)[..., None])[..., 0]

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Kinetic energy (...,) J of the whole mechanism."""
        return self.robot.kinetic_energy(self._positions(q), self.velocities(q, qd))

    def potential_energy(self, q) -> np.ndarray:
        """Gravitational potential energy (...,) J of the whole mechanism."""
        return self.robot.potential_energy(self._positions(q))

    def energy(self, q, qd) -> np.ndarray:
        """T + V (...,) J."""
        return self.robot.energy(self._positions(q), self.velocities(q, qd))

    def coriolis_matrix(self, q, qd) -> np.ndarray:
        """Reduced Coriolis matrix (..., dof, dof) in Christoffel form: C_red = Wᵀ C W + Wᵀ M dW/dt.

        With the closed configurations a function of the independent ones and W its Jacobian (the
        velocity closure), these are the Christoffel symbols of the reduced inertia Wᵀ M W (the pull-back
        of the tree's metric; over a spherical joint's angular velocity, the quasi-velocity form of the
        tree's C), so that d/dt(M_red) - 2 C_red is skew-symmetric and C_red qd = bias_torques -
        gravity_torques.  dW/dt = [0; -J_D⁻¹ (dJ/dt) W] on the dependent rows (J W = 0 along the motion).
        C is the tree's Coriolis matrix (``robot.coriolis_matrix``), M its inertia, both at (q_all, W qd).
        """
        qa, qda, W, J, _ = self._state(q, qd)
        r = self.robot
        Wd = np.zeros(W.shape)
        Wd[..., self._dep, :] = -np.linalg.solve(J[..., self._dep], self._jacobian_rate(qa, qda) @ W)
        Wt = np.swapaxes(W, -1, -2)
        return Wt @ (r.coriolis_matrix(qa, qda) @ W + r.mass_matrix(qa) @ Wd)

    def perturbed(self, scale: float = 0.1, seed: int | None = 0):
        """The same mechanism on ``robot.perturbed`` (masses and inertias off by up to ``scale``); the loops,
        independent joints and assembly branch are kept."""
        guess = {j.name: (self._last[j.idx_q] if j.nq == 1 else self._last[j.idx_q:j.idx_q + j.nq])
                 for j in self.robot.joints}
        return type(self)(self.robot.perturbed(scale, seed), self.loops, self.joint_names, guess=guess, tol=self.tol)
