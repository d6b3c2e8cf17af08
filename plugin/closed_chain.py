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

from composedyn.chain_dynamics import ChainDynamics
from composedyn.checks import joint_array
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.closed_layout import MODES, pack_closed, wrap_angles
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
    newton_close,
    projection,
    rank_report,
)
from composedyn.dynamics.joint_types import angular
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.errors import ModelError
from composedyn.robot import Robot

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


class ClosedChain(ChainDynamics):
    """A closed kinematic chain: ``robot`` (spanning tree), ``loops``, actuated ``independent`` joints.

    ``guess``: {joint name: value} (rad or m) near the wanted assembly; joints
    not named start at 0.  Raises ModelError for a loop on an unknown link, a
    choice of independent joints that leaves the constraint Jacobian singular
    (naming the joints), or a guess from which the loops cannot close.
    """

    def __new__(cls, robot, *args, **kwargs):
        """A :class:`~composedyn.tree_closed_chain.TreeClosedChain` for a spanning tree whose joints may
        have several coordinates (a ``TreeRobot``), else a ``ClosedChain``."""
        from composedyn.tree_robot import TreeRobot

        if cls is ClosedChain and isinstance(robot, TreeRobot):
            from composedyn.tree_closed_chain import TreeClosedChain

            return TreeClosedChain(robot, *args, **kwargs)
        return super().__new__(cls)

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
        periodic = self._revolute if robot.dof == model.n else np.zeros(model.n, dtype=bool)  # no kernel: mimic
        self._cm, self._cf = pack_closed(model.n, self._ind, self._dep, [loop_ends(model, lp) for lp in self.loops],
                                         [loop_rows(lp) for lp in self.loops], self.tol, periodic)
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
        leading axes and at least one sample, under the numba backend without mimic joints; any
        other input (a 0-d q, an empty batch), or a failed check in the kernel (wrong length,
        NaN, no closure, singular), returns None and the caller runs the NumPy reference path,
        which converts, broadcasts or raises.
        """
        if q.__class__ is not _ND or q.dtype is not _F64 or not q.ndim or dispatch.backend() != "numba":
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
        if not N:
            return None
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
    nq = dof
    _ind_q = property(lambda self: self._ind)  # the independent joints' positions in every joint's
    joint_names = property(lambda self: tuple(self.robot.joint_names[i] for i in self._ind))
    dependent_names = property(lambda self: tuple(self.robot.joint_names[i] for i in self._dep))
    all_joint_names = property(lambda self: self.robot.joint_names)

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
        return np.where(self._revolute, wrap_angles(x), x)

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
        w0 = self._wrap(start)
        delta = np.where(rev[ind], wrap_angles(wrap_angles(qi) - w0[ind]), qi - start[ind])
        q, acc = w0.copy(), np.zeros_like(start)  # acc: the steps' changes, added to start at the end
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
        acc = start + acc
        acc[ind] = qi
        return acc

    def _state(self, q, qd):
        """(q_all, qd_all, W, J, gamma) with qd (..., k)."""
        qd = joint_array("qd", qd, self.dof, self._what_v)
        qa = self._with_rates(self._positions(q), qd)
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

    # ---- dynamics ----------------------------------------------------
    def _tree_tau(self, q, qd, qdd, f_ext, friction: bool, smooth=None) -> np.ndarray:
        """Tree inverse dynamics (..., n), with (optionally smoothed) friction."""
        r = self.robot
        tau = r.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=False)
        if friction:
            G = r.mimic_jacobian
            tau = tau + friction_torques(r.model, np.asarray(qd) @ G.T, smooth=smooth) @ G
        return tau

    def _jacobian_rate(self, q, qd) -> np.ndarray:
        """dJ/dt (..., m, n) of the loop Jacobian at every joint's q and qd (:func:`loop_jacobian_rate`)."""
        r = self.robot
        G = r.mimic_jacobian
        kin = loop_jacobian(r.model, self.loops, r.full_positions(q))[2]
        return loop_jacobian_rate(r.model, self.loops, kin, np.asarray(qd) @ G.T) @ G


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
    from composedyn.tree_robot import TreeRobot

    graph, loops, independent, guess = load_mjcf_closed(source, root=root)
    if not independent and "independent" not in kwargs:
        raise ModelError(f"{graph.graph['source']}: a closed chain needs its actuated joints, and no <actuator> "
                         "drives a joint; pass independent=[joint names]")
    robot = make_robot(graph, floating=False)
    if isinstance(robot, TreeRobot):  # a tree of joint models (ball joints): the loops as MuJoCo states them
        kwargs.setdefault("independent", independent)
        kwargs.setdefault("guess", guess)
        return ClosedChain(robot, loops, **kwargs)
    q0 = np.array([guess.get(name, 0.0) for name in robot.model.joint_names])
    kwargs.setdefault("independent", independent)
    kwargs.setdefault("guess", guess)
    return ClosedChain(robot, planar_loops(robot.model, loops, q0), **kwargs)
