"""``ClosedChain``: a tree robot plus loop closures, in its independent coordinates.

URDF and DH tables describe trees; a closed chain is such a tree (the *spanning
tree*, loaded as a :class:`Robot`) plus loop closures (:class:`LoopClosure`)
that tie frames on two links together.  The user chooses the independent
(actuated) joints; the others are dependent and follow from the closure
(Kolev's modified Lagrange equations, see :mod:`composedyn.dynamics.constraints.reduced`).

Coordinates.  Joint arrays are (..., k) in ``joint_names`` (= independent
joints) order.  Position arguments ``q`` may also be given as all robot
coordinates (..., n) (``all_joint_names`` order) that close the loops; then no
assembly is needed.  Given only the independent positions, the dependent ones
are solved by Newton (:meth:`assemble`) starting from the last configuration
this object assembled (initially the ``guess``), so a continuous motion stays
on its assembly branch; a batch is treated as a path (solved in order from the
sample nearest that configuration).

Simulation.  :func:`composedyn.simulate` integrates the independent
coordinates only (coordinate partitioning): the dependent ones are solved to
``tol`` (default 1e-13) at every evaluation, so the constraint cannot drift
(``project`` is the identity); the assembly tolerance bounds the loop error.

Routes.  For float64 arrays (one sample or a batch with the same leading axes),
no external wrench, no smoothed friction and no mimic joint, the methods run
the compiled kernel :mod:`composedyn.dynamics.compiled.closed` (closure,
projection and reduced dynamics in one call); otherwise, or when the kernel
reports a failure, the NumPy reference path, which raises the named error.
Both share the last assembled configuration, so a ``ClosedChain`` is stateful:
use one per thread.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from composedyn.checks import joint_array
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.closed_layout import MODES, pack_closed
from composedyn.dynamics.constraints.loops import (
    LoopClosure,
    check_loops,
    loop_bias,
    loop_ends,
    loop_jacobian,
    loop_jacobian_rate,
    loop_residual,
    loop_rows,
    row_labels,
)
from composedyn.dynamics.constraints.reduced import (
    check_partition,
    closure_forces,
    dependent_part,
    newton_close,
    projection,
    rank_report,
)
from composedyn.dynamics.joint_types import angular
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.errors import ModelError
from composedyn.robot import Robot

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


class ClosedChain:
    """A closed kinematic chain: ``robot`` (spanning tree), ``loops``, actuated ``independent`` joints.

    ``guess``: {joint name: value} (rad or m) near the wanted assembly; joints
    not named start at 0.  Raises ModelError for a loop on an unknown link, a
    choice of independent joints that leaves the constraint Jacobian singular
    (naming the joints), or a guess from which the loops cannot close.
    """

    def __init__(self, robot: Robot, loops: Sequence[LoopClosure], independent: Sequence[str],
                 guess: Mapping[str, float] | None = None, tol: float = 1e-13):
        self.robot, self.loops, self.tol = robot, tuple(loops), float(tol)
        src = robot.model.source
        check_loops(robot.model, self.loops)
        self.rows = row_labels(self.loops)
        names = robot.joint_names
        self._ind, self._dep = check_partition(robot.dof, len(self.rows), names,
                                              [independent] if isinstance(independent, str) else list(independent), src)
        model = robot.model
        self._cm, self._cf = pack_closed(model.n, self._ind, self._dep, [loop_ends(model, lp) for lp in self.loops],
                                         [loop_rows(lp) for lp in self.loops], self.tol)
        # the last closed configuration: shared with the compiled kernel (the tail of cf) without mimic joints
        self._last_buf = self._cf[len(self._cf) - model.n:] if robot.dof == model.n else np.zeros(robot.dof)
        self._zk = np.zeros(len(self._ind))  # unused velocity / acceleration argument, never written
        q0 = np.zeros(robot.dof)
        for j, val in (guess or {}).items():
            if j not in names:
                raise ModelError(f"{src}: guess names {j!r}, which is not a joint of the robot")
            q0[names.index(j)] = float(val)
        self._check_rank(q0)
        self._last, self._jac = q0, None
        self._last = self._close(q0[self._ind], q0, "the assembly guess")

    STEP = 0.2  # continuation step of the position closure, rad or m

    @property
    def _last(self) -> np.ndarray:
        """The last closed configuration (n,): start of the next position closure."""
        return self._last_buf

    @_last.setter
    def _last(self, q) -> None:
        self._last_buf[:] = q

    @cached_property
    def _kernels(self) -> tuple:
        """(one, batch, im, fm) of the compiled closed-chain kernels, or () for the NumPy path only
        (dependent mimic joints)."""
        if self.robot.dof != self.robot.model.n:
            return ()
        from composedyn.dynamics.compiled.closed import kernel

        im, fm = self.robot.arrays.bodies
        return kernel("one"), kernel("batch"), im, fm

    def _fast(self, mode: str, q, qd=None, x=None, friction: bool = True):
        """The compiled result of ``mode`` (see ``closed_layout.MODES``) for q, or None.

        Taken for float64 ndarrays q (..., k) or (..., n), qd and x (..., k) with the same
        leading axes, under the numba backend without mimic joints; any other input, or a
        failed check in the kernel (wrong length, NaN, no closure, singular), returns None and
        the caller runs the NumPy reference path, which converts, broadcasts or raises.
        """
        if q.__class__ is not _ND or q.dtype is not _F64 or dispatch.backend() != "numba":
            return None
        ker = self._kernels
        if not ker:
            return None
        code, width, shape = self._modes[mode]
        if qd is None:
            qd = self._zk
        if x is None:
            x = self._zk
        if qd.__class__ is not _ND or x.__class__ is not _ND:
            return None
        if q.ndim == 1:
            out = _empty(width)
            try:
                status = ker[0](ker[2], ker[3], self._cm, self._cf, code, friction, q, qd, x, out)
            except TypeError:
                return None
            return (out if len(shape) == 1 else out.reshape(shape)) if status == 0 else None
        lead = q.shape[:-1]
        if (qd is not self._zk and qd.shape[:-1] != lead) or (x is not self._zk and x.shape[:-1] != lead):
            return None
        N = int(np.prod(lead))
        rows = [np.ascontiguousarray(a if a.shape[:-1] == lead else np.broadcast_to(a, lead + a.shape[-1:]))
                .reshape(N, -1) for a in (q, qd, x)]
        out = _empty((N, width))
        try:
            status = ker[1](ker[2], ker[3], self._cm, self._cf, code, friction, *rows, out)
        except TypeError:
            return None
        return out.reshape(lead + shape) if status == 0 else None

    @cached_property
    def _modes(self) -> dict:
        """mode -> (kernel code, flat width, result shape of one sample)."""
        n, k, m = self.robot.model.n, self.dof, len(self.rows)
        shapes = {"forward_dynamics": (k,), "inverse_dynamics": (k,), "constraint_forces": (m,),
                  "mass_matrix": (k, k), "positions": (n,), "velocities": (n,), "accelerations": (n,)}
        return {name: (MODES[name], int(np.prod(s)), s) for name, s in shapes.items()}

    # ---- description -------------------------------------------------
    name = property(lambda self: self.robot.name)
    dof = property(lambda self: len(self._ind), doc="Number of independent coordinates k.")
    joint_names = property(lambda self: tuple(self.robot.joint_names[i] for i in self._ind))
    dependent_names = property(lambda self: tuple(self.robot.joint_names[i] for i in self._dep))
    all_joint_names = property(lambda self: self.robot.joint_names)

    @property
    def limits(self) -> dict:
        """Limits (k,) of the independent joints."""
        return {k: v[self._ind] for k, v in self.robot.limits.items()}

    @property
    def assembly(self) -> np.ndarray:
        """Every robot joint (n,), rad or m, of the last single-sample :meth:`assemble` (at first, the
        assembly closed from ``guess``): where the next position closure starts, so it picks the branch.

        Assigning a configuration that closes the loops (an earlier ``assembly``, or a row of
        :meth:`assemble`) moves that start back, e.g. after closing a path sample by sample; a
        configuration that does not close them raises ValueError.
        """
        return self._last.copy()

    @assembly.setter
    def assembly(self, q) -> None:
        q = joint_array("q", q, self.robot.dof)
        if q.ndim != 1:
            raise ValueError(f"assembly must have shape ({self.robot.dof},), got {q.shape}")
        gap = float(np.abs(self._residual(q)).max(initial=0.0))
        if gap > 1e-8:
            raise ValueError(f"{self.name}: the assembly does not close the loops (max |phi| = {gap:.3g})")
        self._last = q

    def __repr__(self) -> str:
        return f"ClosedChain({self.name!r}, dof={self.dof}, loops={[lp.name for lp in self.loops]})"

    # ---- constraints -------------------------------------------------
    def _terms(self, q):
        """(phi, J, kin) in robot coordinates (mimic joints mapped by G); kin for :meth:`_gamma`."""
        r = self.robot
        phi, J, kin = loop_jacobian(r.model, self.loops, r.full_positions(q))
        return phi, J @ r.mimic_jacobian, kin

    def _gamma(self, kin, qd) -> np.ndarray:
        """-(dJ/dt) qd (..., m) for robot velocities qd at the configuration of ``kin``."""
        return loop_bias(self.robot.model, self.loops, kin, np.asarray(qd) @ self.robot.mimic_jacobian.T)

    def _residual(self, q) -> np.ndarray:
        return loop_residual(self.robot.model, self.loops, self.robot.full_positions(q))

    def constraint(self, q) -> np.ndarray:
        """phi (..., m) at all robot coordinates q (..., n); rows named by ``rows``."""
        return self._residual(joint_array("q", q, self.robot.dof))

    def constraint_jacobian(self, q) -> np.ndarray:
        """J = d phi / d q (..., m, n) at all robot coordinates q (..., n)."""
        return self._terms(joint_array("q", q, self.robot.dof))[1]

    def _check_rank(self, q0: np.ndarray) -> None:
        """ModelError naming joints/rows when J_D is singular at q0 and at 3 nearby random configurations."""
        rng = np.random.default_rng(0)
        for trial in range(4):
            q = q0 if trial == 0 else q0 + rng.uniform(-0.5, 0.5, q0.shape)
            msg = rank_report(self._terms(q)[1], self.robot.joint_names, self._dep, self.rows)
            if msg is None:
                return
        raise ModelError(f"{self.robot.model.source}: independent joints {list(self.joint_names)}: {msg}")

    @cached_property
    def _revolute(self) -> np.ndarray:
        """(n,) bool over the robot coordinates: the periodic ones, revolute joints that no mimic
        joint follows (a follower with a multiplier other than an integer would not be periodic)."""
        m = self.robot.model
        angle = dict(zip(m.joint_names, angular(m.jtype)))
        followed = {m.joint_names[s] for s in m.mimic_source if s >= 0}
        return np.array([angle[j] and j not in followed for j in self.robot.joint_names], dtype=bool)

    def _wrap(self, x: np.ndarray) -> np.ndarray:
        """x with its revolute entries reduced to [-pi, pi) (prismatic ones unchanged)."""
        return np.where(self._revolute, np.remainder(x + np.pi, 2.0 * np.pi) - np.pi, x)

    def _close(self, qi: np.ndarray, start: np.ndarray, what: str) -> np.ndarray:
        """Close the loops at independent positions qi, continuing from the closed ``start`` in
        steps of at most ``STEP`` (rad or m) so that Newton stays on start's assembly branch.

        Revolute angles enter the loop equations through their sines and cosines only, so
        Newton runs on angles reduced to [-pi, pi): the residual is then exact to rounding
        at any angle (at 2000 rad an unreduced sine carries errors of ~1e-13, the default
        tolerance), and an independent angle that is whole turns away from ``start`` is
        reached the short way round.  The result continues ``start``: every revolute
        angle is start's plus the (small) changes of the steps, and the independent ones
        are exactly ``qi``."""
        ind, rev = self._ind, self._revolute
        delta = qi - start[ind]
        delta = np.where(rev[ind], np.remainder(delta + np.pi, 2.0 * np.pi) - np.pi, delta)
        w0 = self._wrap(start)
        q, acc = w0.copy(), start.copy()
        steps = max(1, int(np.ceil(np.abs(delta).max() / self.STEP))) if delta.size else 1
        for s in range(1, steps + 1):
            prev = q.copy()
            q[ind] = w0[ind] + delta * (s / steps)
            q, res, it = newton_close(self._residual, lambda x: self._terms(x)[1], q, self._dep,
                                      J0=self._jac, tol=self.tol)
            if res > self.tol:
                break
            acc += np.where(rev, self._wrap(q - prev), q - prev)
            q = self._wrap(q)
        if res > self.tol:
            worst = self.rows[int(np.argmax(np.abs(self._terms(q)[0])))]
            raise ModelError(f"{self.robot.model.source}: the loops cannot close at {what} "
                             f"({dict(zip(self.joint_names, np.round(qi, 6).tolist()))}): outside the assembly "
                             f"range or at a singular configuration (residual {res:.3g} in {worst} after {it} "
                             f"Newton steps)")
        acc[ind] = qi
        return acc

    def assemble(self, q) -> np.ndarray:
        """Position closure: all robot coordinates (..., n) from the independent ones (..., k).

        Newton on the dependent joints; a batch is solved as a path from the
        sample nearest the last assembled configuration.  ModelError when a
        configuration is outside the assembly range.
        """
        if (out := self._fast("positions", q)) is not None:
            return out
        q = joint_array("q", q, self.dof)
        flat = q.reshape(-1, self.dof)
        out = np.empty((len(flat), self.robot.dof))
        s0 = int(np.argmin(np.abs(flat - self._last[self._ind]).sum(axis=-1)))
        out[s0] = self._close(flat[s0], self._last, "the given position")
        for order in (range(s0 + 1, len(flat)), range(s0 - 1, -1, -1)):
            prev = out[s0]
            for s in order:
                out[s] = prev = self._close(flat[s], prev, f"sample {s}")
        if len(flat) == 1:
            self._last = out[0]
        return out.reshape(q.shape[:-1] + (self.robot.dof,))

    def _positions(self, q) -> np.ndarray:
        """All coordinates (..., n) from q given as (..., k) independent or (..., n) closed."""
        if (out := self._fast("positions", q)) is not None:
            return out
        q = np.asarray(q, dtype=float)
        if q.ndim and q.shape[-1] == self.robot.dof:
            phi = self.constraint(q)
            if np.abs(phi).max(initial=0.0) > 1e-8:
                raise ValueError(f"q has {self.robot.dof} entries (all joints) but does not close the loops "
                                 f"(max |phi| = {np.abs(phi).max():.3g}); pass the independent joints instead")
            return q
        return self.assemble(q)

    def _state(self, q, qd):
        """(q_all, qd_all, W, J, gamma) with qd (..., k)."""
        qa = self._positions(q)
        qd = joint_array("qd", qd, self.dof)
        _, J, kin = self._terms(qa)
        if J.ndim == 2:
            self._jac = J  # chord matrix for the next position closure
        try:
            W = projection(J, self._ind, self._dep)
        except np.linalg.LinAlgError:
            raise ModelError(f"{self.robot.model.source}: singular configuration: the dependent joints "
                             f"{list(self.dependent_names)} cannot follow the independent ones there "
                             f"(the constraint Jacobian of the dependent joints is singular)") from None
        qda = np.einsum("...ij,...j->...i", W, qd)
        return qa, qda, W, J, self._gamma(kin, qda)

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
        qdd = joint_array("qdd", qdd, self.dof)
        return np.einsum("...ij,...j->...i", W, qdd) + dependent_part(J, self._dep, gam)

    def project(self, q, qd):
        """Identity: independent coordinates satisfy the closure by construction (simulate hook)."""
        return q, qd

    # ---- dynamics ----------------------------------------------------
    def _tree_tau(self, q, qd, qdd, f_ext, friction: bool, smooth=None) -> np.ndarray:
        """Tree inverse dynamics (..., n), with (optionally smoothed) friction."""
        r = self.robot
        tau = r.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=False)
        if friction:
            G = r.mimic_jacobian
            tau = tau + friction_torques(r.model, np.asarray(qd) @ G.T, smooth=smooth) @ G
        return tau

    def inverse_dynamics(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Actuator torques (..., k) at the independent joints: W^T tau_tree(q, qd_all, qdd_all).

        Kolev eq. (2.20) with unactuated dependent joints.  ``f_ext`` and
        ``friction`` as in :meth:`Robot.inverse_dynamics` (friction of every joint counts).
        """
        if f_ext is None and (out := self._fast("inverse_dynamics", q, qd, qdd, friction)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        qdda = np.einsum("...ij,...j->...i", W, joint_array("qdd", qdd, self.dof)) + dependent_part(J, self._dep, gam)
        return np.einsum("...ij,...i->...j", W, self._tree_tau(qa, qda, qdda, f_ext, friction))

    def constraint_forces(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Closure forces lambda (..., m), rows ``rows``: force (N) / torque (N m) that link b exerts on link a.

        From the tree equations M qdd + h = B tau + J^T lambda at the dependent joints.
        """
        if f_ext is None and (out := self._fast("constraint_forces", q, qd, qdd, friction)) is not None:
            return out
        qa, qda, W, J, gam = self._state(q, qd)
        qdda = np.einsum("...ij,...j->...i", W, joint_array("qdd", qdd, self.dof)) + dependent_part(J, self._dep, gam)
        return closure_forces(J, self._dep, self._tree_tau(qa, qda, qdda, f_ext, friction))

    def mass_matrix(self, q) -> np.ndarray:
        """Reduced inertia W^T M W (..., k, k)."""
        if (out := self._fast("mass_matrix", q)) is not None:
            return out
        qa = self._positions(q)
        W = projection(self._terms(qa)[1], self._ind, self._dep)
        return np.swapaxes(W, -1, -2) @ self.robot.mass_matrix(qa) @ W

    def coriolis_matrix(self, q, qd) -> np.ndarray:
        """Reduced Coriolis matrix (..., k, k) in Christoffel form: C_red = W^T C W + W^T M dW/dt.

        With q_all = phi(q_I) and W = d phi / d q_I, these are the Christoffel symbols of the
        reduced inertia W^T M W (the pull-back of the tree's metric), so that
        d/dt(M_red) - 2 C_red is skew-symmetric and C_red qd = bias_torques - gravity_torques.
        dW/dt = [0; -J_D^-1 (dJ/dt) W] on the dependent rows.  C is the tree's Christoffel
        matrix (:meth:`Robot.coriolis_matrix`), M its inertia, both at (q_all, W qd).
        """
        qa, qda, W, J, _ = self._state(q, qd)
        r = self.robot
        G = r.mimic_jacobian
        kin = loop_jacobian(r.model, self.loops, r.full_positions(qa))[2]
        Jd = loop_jacobian_rate(r.model, self.loops, kin, qda @ G.T) @ G
        Wd = np.zeros(W.shape)
        Wd[..., self._dep, :] = -np.linalg.solve(J[..., self._dep], Jd @ W)
        Wt = np.swapaxes(W, -1, -2)
        return Wt @ (r.coriolis_matrix(qa, qda) @ W + r.mass_matrix(qa) @ Wd)

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
        tau = joint_array("tau", tau, self.dof)
        Wt = np.swapaxes(W, -1, -2)
        h = np.einsum("...ij,...i->...j", W, self._tree_tau(qa, qda, dependent_part(J, self._dep, gam),
                                                              f_ext, friction, smooth_friction))
        return np.linalg.solve(Wt @ self.robot.mass_matrix(qa) @ W, (tau - h)[..., None])[..., 0]

    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> ClosedChain:
        """The same mechanism on :meth:`Robot.perturbed` (masses and inertias off by up to ``scale``);
        the loops, independent joints and assembly branch are kept."""
        guess = dict(zip(self.robot.joint_names, self._last.tolist()))
        return ClosedChain(self.robot.perturbed(scale, seed), self.loops, self.joint_names, guess=guess, tol=self.tol)

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Kinetic energy (...,) J of the whole mechanism."""
        return self.robot.kinetic_energy(self._positions(q), self.velocities(q, qd))

    def potential_energy(self, q) -> np.ndarray:
        """Gravitational potential energy (...,) J of the whole mechanism."""
        return self.robot.potential_energy(self._positions(q))

    def energy(self, q, qd) -> np.ndarray:
        """T + V (...,) J."""
        return self.robot.energy(self._positions(q), self.velocities(q, qd))


def load_closed_chain(name_or_path: str | os.PathLike, **kwargs) -> ClosedChain:
    """A :class:`ClosedChain` from a URDF (+ ``.loops.toml`` side file), a DH ``.toml`` with
    ``[closure]``/``[[loops]]`` tables, or a bundled name ("fourbar", "slider_crank", "fivebar").

    An MJCF file or string (root ``<mujoco>``) is closed by its ``<equality connect>`` and
    ``<equality weld>`` elements (``position`` and ``pose`` loops), with its actuated joints
    independent and MuJoCo's reference configuration ``qpos0`` as the guess; ``root`` picks
    the robot as for :func:`composedyn.from_mjcf`.

    ``kwargs`` go to :class:`ClosedChain` (``tol``) and override ``guess``/``independent``.
    """
    from composedyn.importers.loops import read_loops, side_file
    from composedyn.importers.mjcf import is_mjcf
    from composedyn.loading import load
    from composedyn.robots import bundled_path

    if is_mjcf(name_or_path):
        return _mjcf_closed_chain(name_or_path, **kwargs)
    path = str(name_or_path)
    if not os.path.splitext(path)[1]:
        found = bundled_path(path)
        if found is None:
            raise ModelError(f"{path}: not a file nor a bundled robot (see `composedyn robots`)")
        path = str(found)
    robot = load(path)
    loops, independent, guess = read_loops(side_file(path))
    kwargs.setdefault("independent", independent)
    kwargs.setdefault("guess", guess)
    return ClosedChain(robot, loops, **kwargs)


def _mjcf_closed_chain(source, root: str | None = None, **kwargs) -> ClosedChain:
    """:func:`load_closed_chain` of an MJCF file or string."""
    from composedyn.importers.mjcf import load_mjcf_closed
    from composedyn.importers.mjcf_loops import planar_loops
    from composedyn.loading import make_robot

    graph, loops, independent, guess = load_mjcf_closed(source, root=root)
    if not independent and "independent" not in kwargs:
        raise ModelError(f"{graph.graph['source']}: a closed chain needs its actuated joints, and no <actuator> "
                         "drives a joint; pass independent=[joint names]")
    robot = make_robot(graph, floating=False)
    q0 = np.array([guess.get(name, 0.0) for name in robot.model.joint_names])
    kwargs.setdefault("independent", independent)
    kwargs.setdefault("guess", guess)
    return ClosedChain(robot, planar_loops(robot.model, loops, q0), **kwargs)
