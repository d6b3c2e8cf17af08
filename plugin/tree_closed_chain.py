"""``TreeClosedChain``: loop closures on a tree whose joints may have several coordinates.

The closed chain of :class:`composedyn.closed_chain.ClosedChain` (Kolev's modified Lagrange equations by
coordinate partitioning, :mod:`composedyn.dynamics.constraints.reduced`) on a
:class:`composedyn.tree_robot.TreeRobot`: spherical, universal, helical joints (parallel mechanisms,
MJCF ``ball`` joints closed by ``<equality connect>``) anywhere in the spanning tree.  The loop closures
are the same :class:`~composedyn.dynamics.constraints.loops.LoopClosure` (kinds ``position``, ``planar``,
``pose``, ``planar_pose``), evaluated from the robot's frame methods: a closure point ``c`` on a link whose
world pose is (R, p) is at x = p + R c and moves with the rows J_x = J_v - [R c]× J_ω of the link's world
Jacobian; its classical acceleration at q̈ = 0 is a_o + α × r + ω × (ω × r) (``frame_acceleration``), so
γ = -(dJ/dt) v is minus the closure's relative acceleration there.

Coordinates.  The independent (actuated) joints are chosen by name; each brings all its coordinates:
positions (..., nq) in their order (``joint_names``), velocities, accelerations and torques (..., dof).
The dependent joints' velocity coordinates must number the loop equations.  Positions may also be given
as every joint's (..., robot.nq) when they close the loops.  The position closure moves the dependent
joints on their own configuration spaces (Newton steps through ``robot.integrate``), continuing from the
last assembled configuration in steps of at most ``STEP`` (rad or m) so that it stays on that assembly
branch (revolute angles the short way round, their whole turns kept); a batch is closed as a path.
Arrays are NumPy; there are no compiled kernels for these chains.
"""

from __future__ import annotations

from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from composedyn.chain_dynamics import ChainDynamics
from composedyn.checks import joint_array, smooth_width
from composedyn.dynamics.compiled.closed_layout import wrap_angles
from composedyn.dynamics.constraints.loops import LoopClosure, loop_rows, row_labels, rpy_matrix
from composedyn.dynamics.constraints.reduced import projection, rank_report
from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.reference.spatial import skew


def _rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vectors θ u (..., 3), θ in [0, π], of rotation matrices R = exp(θ [u]×) (..., 3, 3).

    From R's skew part sin θ u and its trace 1 + 2 cos θ, exact to rounding near the identity (where the
    loops close); within about 8° of a half turn, where the skew part no longer gives the axis, SciPy's
    ``Rotation.from_matrix``."""
    s = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1)
    c = 0.5 * (R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2] - 1.0)
    sn = np.linalg.norm(s, axis=-1)
    k = np.where(sn > 1e-300, np.arctan2(sn, c) / np.maximum(sn, 1e-300), 1.0)  # θ / sin θ
    out = k[..., None] * s
    half_turn = c < -0.99
    if np.any(half_turn):
        from scipy.spatial.transform import Rotation

        out[half_turn] = Rotation.from_matrix(R[half_turn].reshape(-1, 3, 3)).as_rotvec()
    return out


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b (..., 3) (``np.cross`` without its axis handling, which dominates on single vectors)."""
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)


class TreeClosedChain(ChainDynamics):
    """A closed chain on a tree of joint models: ``robot`` (the spanning tree, a ``TreeRobot``),
    ``loops``, actuated ``independent`` joints; ``guess`` {joint: its configuration ((nq,) or a number)}
    near the wanted assembly (the other joints start neutral).  ModelError for a loop on an unknown link,
    a partition whose dependent coordinates do not number the equations or leave their Jacobian
    singular (naming the joints), or a guess from which the loops cannot close."""

    STEP = 0.2  # continuation step of the position closure, rad or m

    def __init__(self, robot, loops: Sequence[LoopClosure], independent: Sequence[str],
                 guess: Mapping[str, object] | None = None, tol: float = 1e-13):
        self.robot, self.loops, self.tol = robot, tuple(loops), float(tol)
        src = robot.array_model.source
        frames = set(robot.frame_names)
        for lp in self.loops:
            for link in (lp.link_a, lp.link_b):
                if link not in frames:
                    raise ModelError(f"{src}: loop {lp.name!r} names link {link!r}, which does not exist "
                                     f"(links: {', '.join(robot.frame_names)})")
            if lp.link_a == lp.link_b:
                raise ModelError(f"{src}: loop {lp.name!r} closes link {lp.link_a!r} on itself")
        self.rows = row_labels(self.loops)
        self._source = src
        joints = {j.name: j for j in robot.joints}
        independent = [independent] if isinstance(independent, str) else list(independent)
        unknown = [j for j in independent if j not in joints]
        if unknown or len(set(independent)) != len(independent):
            raise ModelError(f"{src}: independent joints {independent}: {unknown or 'a joint repeats'} "
                             f"(joints: {', '.join(joints)})")
        self._ind_joints = [joints[j] for j in independent]
        self._dep_joints = [j for j in robot.joints if j.name not in independent]
        span = lambda js, q: np.array([k for j in js for k in  # noqa: E731
                                       range(j.idx_q if q else j.idx_v, (j.idx_q + j.nq) if q else (j.idx_v + j.nv))],
                                      dtype=int)
        self._ind, self._dep, self._ind_q = span(self._ind_joints, False), span(self._dep_joints, False), \
            span(self._ind_joints, True)
        if len(self._dep) != len(self.rows):
            raise ModelError(f"{src}: the loops give {len(self.rows)} equations but the dependent joints "
                             f"{[j.name for j in self._dep_joints]} have {len(self._dep)} velocity coordinates; "
                             f"choose independent joints with {robot.nv - len(self.rows)} coordinates")
        self._coordinate_names = tuple(j.name if j.nv == 1 else f"{j.name}[{k}]"
                                       for j in robot.joints for k in range(j.nv))
        self._ends = [[(link, np.asarray(point, float), rpy_matrix(rpy)) for link, point, rpy in
                       ((lp.link_a, lp.point_a, lp.rpy_a), (lp.link_b, lp.point_b, lp.rpy_b))] for lp in self.loops]
        q0 = robot.neutral()
        for name, value in (guess or {}).items():
            if name not in joints:
                raise ModelError(f"{src}: guess names {name!r}, which is not a joint of the robot")
            j = joints[name]
            q0[j.idx_q:j.idx_q + j.nq] = joint_array(f"guess[{name!r}]", np.atleast_1d(value), j.nq, f"nq of {name}")
        q0 = robot.normalize(q0)
        self._check_rank(q0)
        self._last = self._close(q0[self._ind_q], q0, "the assembly guess")

    # ---- description ----
    name = property(lambda self: self.robot.name)
    dof = property(lambda self: len(self._ind), doc="Number of independent velocity coordinates.")
    nq = property(lambda self: len(self._ind_q), doc="Number of independent configuration coordinates.")
    joint_names = property(lambda self: tuple(j.name for j in self._ind_joints))
    _what_q = property(lambda self: f"(nq = {self.nq} position coordinates)")  # the last axes, in messages
    _what_v = property(lambda self: f"(nv = {self.dof} velocity coordinates)")
    _what_all_q = property(lambda self: f"(robot.nq = {self.robot.nq} position coordinates of every joint)")
    dependent_names = property(lambda self: tuple(j.name for j in self._dep_joints))
    all_joint_names = property(lambda self: self.robot.joint_names)

    def __repr__(self) -> str:
        return f"TreeClosedChain({self.name!r}, dof={self.dof}, loops={[lp.name for lp in self.loops]})"

    # ---- constraints ----
    def _terms(self, q, v=None):
        """(phi (..., m), J (..., m, nv), gamma (..., m) or None) at every joint's q (..., nq) (and v)."""
        ends = self._ends_at(q)
        phis = []
        for lp, ((xa, Ra, *_), (xb, Rb, *_)) in zip(self.loops, ends):
            rows = loop_rows(lp)
            phi = xa - xb
            if rows[-1] >= 3:  # orientation rows: the rotation from b's closure frame to a's
                phi = np.concatenate([phi, _rotvec(Ra @ np.swapaxes(Rb, -1, -2))], -1)
            phis.append(phi[..., rows])
        return np.concatenate(phis, -1), self._jacobian(ends), None if v is None else self._gamma(q, v, ends)

    def _jacobian(self, ends) -> np.ndarray:
        """J (..., m, nv): the loops' rows of the closure points' relative (linear, angular) velocity."""
        return np.concatenate([np.concatenate([a[2] - b[2], a[3] - b[3]], -2)[..., loop_rows(lp), :]
                               for lp, (a, b) in zip(self.loops, ends)], -2)

    def _ends_at(self, q) -> list:
        """Per loop, per end: (closure point x (..., 3) and frame R (..., 3, 3) in the world, the point's
        rows J_x = J_v - [R c]× J_ω (..., 3, nv) and J_ω, R c, the link) at every joint's q; each link's
        pose and Jacobian computed once."""
        r, links = self.robot, {}
        ends = []
        for lp_ends in self._ends:
            parts = []
            for link, c, Rc in lp_ends:
                if link not in links:
                    links[link] = r.frame_pose(q, link), r.jacobian(q, link)
                T, Jl = links[link]
                R = T[..., :3, :3]
                rc = R @ c
                Jw = Jl[..., 3:, :]
                parts.append((T[..., :3, 3] + rc, R @ Rc, Jl[..., :3, :] - skew(rc) @ Jw, Jw, rc, link))
            ends.append(parts)
        return ends

    def _gamma(self, q, v, ends) -> np.ndarray:
        """gamma (..., m) = -(dJ/dt) v: minus the closures' relative classical accelerations at q̈ = 0."""
        r, accelerations, gams = self.robot, {}, []
        zero = np.zeros(np.shape(v))
        for lp, parts in zip(self.loops, ends):
            acc = []
            for _, _, _, Jw, rc, link in parts:
                if link not in accelerations:
                    accelerations[link] = r.frame_acceleration(q, v, zero, link)
                a = accelerations[link]
                w = np.einsum("...ij,...j->...i", Jw, v)
                alpha = a[..., 3:]
                acc.append(np.concatenate([a[..., :3] + _cross(alpha, rc) + _cross(w, _cross(w, rc)), alpha], -1))
            gams.append(-(acc[0] - acc[1])[..., loop_rows(lp)])
        return np.concatenate(gams, -1)

    def constraint(self, q) -> np.ndarray:
        """phi (..., m) at every joint's q (..., robot.nq); rows named by ``rows``."""
        return self._terms(joint_array("q", q, self.robot.nq, self._what_all_q))[0]

    def constraint_jacobian(self, q) -> np.ndarray:
        """J (..., m, robot.nv): d phi along q ⊕ δ (exact where phi = 0), every velocity coordinate."""
        return self._terms(joint_array("q", q, self.robot.nq, self._what_all_q))[1]

    def _check_rank(self, q0: np.ndarray) -> None:
        rng = np.random.default_rng(0)
        for trial in range(4):
            q = q0 if trial == 0 else self.robot.integrate(q0, rng.uniform(-0.5, 0.5, self.robot.nv))
            msg = rank_report(self._terms(q)[1], self._coordinate_names, self._dep, self.rows)
            if msg is None:
                return
        raise ModelError(f"{self._source}: independent joints {list(self.joint_names)}: {msg}")

    def _scatter(self, idx, x) -> np.ndarray:
        out = np.zeros(self.robot.nv)
        out[idx] = x
        return out

    @cached_property
    def _angles(self) -> tuple[np.ndarray, np.ndarray]:
        """(configuration, velocity) indices of the periodic coordinates (the joint model's
        ``periodic_coordinates``: revolute angles and a universal joint's two) that no mimic joint
        follows (a follower with a multiplier other than an integer would not be periodic)."""
        from composedyn.dynamics.array_api.joints import periodic_coordinates

        followed = np.count_nonzero(self.robot.mimic_jacobian, axis=0) > 1  # rows beyond the joint's own
        models = {j.name: j for j in self.robot.array_model.joints}
        pairs = [(j.idx_q + k, j.idx_v + k) for j in self.robot.joints
                 for k in periodic_coordinates(models[j.name]) if not followed[j.idx_v + k]]
        return np.array([a for a, _ in pairs], dtype=int), np.array([b for _, b in pairs], dtype=int)

    def _close(self, qi: np.ndarray, start: np.ndarray, what: str) -> np.ndarray:
        """Close the loops at the independent configuration qi, continuing from the closed ``start`` in steps
        of at most ``STEP`` (rad or m) along ``robot.difference(start, target)`` so that Newton stays on
        start's assembly branch.

        Revolute angles (:attr:`_angles`) enter the loop equations through their sines and cosines only, so
        their changes are reduced to [-pi, pi) (an independent angle whole turns away from ``start`` is
        reached the short way round) and Newton runs on angles reduced to [-pi, pi), where the residual is
        exact to rounding (at 2000 rad a sine carries errors of ~1e-13, the default tolerance).  The result
        continues ``start``: every revolute angle is start's plus the small changes of the steps, and the
        independent coordinates are exactly ``qi``."""
        r = self.robot
        aq, av = self._angles
        target = start.copy()
        target[self._ind_q] = qi
        moved = not np.array_equal(target, start)  # else only Newton from start (a closed configuration)
        delta = r.difference(start, target) if moved else np.zeros(r.nv)
        q, turned = start.copy(), np.zeros(len(aq))  # turned: the steps' angle changes, added to start's at the end
        q[aq] = wrap_angles(start[aq])
        delta[av] = wrap_angles(wrap_angles(target[aq]) - q[aq])
        steps = max(1, int(np.ceil(np.abs(delta).max(initial=0.0) / self.STEP)))
        res, it = 0.0, 0
        for _ in range(steps):
            before = q[aq]
            if moved:
                q = r.integrate(q, delta / steps)
            for it in range(60):
                phi, J, _ = self._terms(q)
                res = float(np.abs(phi).max(initial=0.0))
                if res <= self.tol:
                    break
                try:
                    d = -np.linalg.solve(J[:, self._dep], phi)
                except np.linalg.LinAlgError:
                    break
                big = np.abs(d).max()
                q = r.integrate(q, self._scatter(self._dep, d if big <= 0.5 else d * (0.5 / big)))
            if res > self.tol:
                worst = self.rows[int(np.argmax(np.abs(self._terms(q)[0])))]
                raise ModelError(f"{self._source}: the loops cannot close at {what}: outside the assembly range or "
                                 f"at a singular configuration (residual {res:.3g} in {worst} after {it} Newton "
                                 "steps)")
            turned += wrap_angles(q[aq] - before)
            q[aq] = wrap_angles(q[aq])
        q[aq] = start[aq] + turned
        q[self._ind_q] = qi
        return q

    def _state(self, q, qd):
        """(q_all, qd_all, W, J, gamma) for independent velocities qd (..., dof)."""
        qd = joint_array("qd", qd, self.dof, self._what_v)
        qa = self._with_rates(self._positions(q), qd)
        ends = self._ends_at(qa)
        J = self._jacobian(ends)
        try:
            W = projection(J, self._ind, self._dep)
        except np.linalg.LinAlgError:
            raise ModelError(f"{self._source}: singular configuration: the dependent joints "
                             f"{list(self.dependent_names)} cannot follow the independent ones there") from None
        qda = np.einsum("...ij,...j->...i", W, qd)
        return qa, qda, W, J, self._gamma(qa, qda, ends)

    def _jacobian_rate(self, q, qd) -> np.ndarray:
        """dJ/dt (..., m, nv) of the loop Jacobian at every joint's q (..., nq) and v (..., nv): each world column
        J_α of the tree turns as Σ_β v_β ∂_β J_α (:func:`~composedyn.dynamics.array_api.composed.world_columns`,
        derivatives along the configuration space), and a closure point x, moving at ẋ, has the columns
        J_x,α = L_α + Ω_α × x, so dJ_x,α/dt = dL_α/dt + dΩ_α/dt × x + Ω_α × ẋ (columns moving its link)."""
        from composedyn.dynamics.array_api.composed import world_columns

        r = self.robot
        am = r.array_model
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
        q = np.broadcast_to(q, batch + q.shape[-1:])
        G = r.mimic_jacobian
        v = np.broadcast_to(qd, batch + (r.nv,)).reshape(-1, r.nv) @ G.T
        _, _, Jc, D, A = world_columns(am, r.full_positions(q).reshape(-1, am.nq_full))
        Jd = np.einsum("nb,nbac->nac", v, D)  # (N, nv_full, 6): dJ_α/dt
        rows = []
        for lp, ends in zip(self.loops, self._ends):
            parts = []
            for link, c, _ in ends:
                T = r.frame_pose(q, link).reshape(-1, 4, 4)
                x = (T[:, :3, 3] + T[:, :3, :3] @ c)[:, None, :]
                b = am.frame_body[am.frame_index(link)]
                moved = A[:, b][None, :, None] if b >= 0 else np.zeros((1, A.shape[0], 1))
                Jx = Jc[..., :3] + np.cross(Jc[..., 3:], x)
                xdot = np.einsum("na,nac->nc", v, Jx * moved)[:, None, :]
                parts.append(np.concatenate((Jd[..., :3] + np.cross(Jd[..., 3:], x) + np.cross(Jc[..., 3:], xdot),
                                             Jd[..., 3:]), -1) * moved)
            rows.append(np.swapaxes(parts[0] - parts[1], -1, -2)[:, loop_rows(lp)])
        return (np.concatenate(rows, -2) @ G).reshape(batch + (len(self.rows), r.nv))

    def _fast(self, mode: str, q, qd=None, x=None, friction: bool = True):
        """No compiled kernel for these chains: the NumPy path of :class:`ChainDynamics`."""
        return None

    # ---- dynamics ----
    def _tree_tau(self, q, qd, qdd, f_ext, friction: bool, smooth=None) -> np.ndarray:
        """The tree's inverse dynamics (..., robot.nv), friction tanh-smoothed with ``smooth``."""
        r = self.robot
        if not (smooth is not None and smooth_width(smooth) > 0.0):  # None or 0: the exact sign
            return r.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=friction)
        tau = r.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=False)
        if friction:
            t = r.array_model
            G = np.eye(r.nv) if t.Gv is None else t.Gv
            w = np.asarray(qd) @ G.T
            tau = tau + (t.damping * w + t.coulomb * np.tanh(w / smooth_width(smooth))) @ G
        return tau
