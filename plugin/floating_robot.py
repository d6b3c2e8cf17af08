"""``FloatingRobot``: a robot whose base moves freely (legged robots, humanoids, flying bases).

Coordinates are Pinocchio's free-flyer convention (see CONTRACT conventions):
``q = (x, y, z, qx, qy, qz, qw, joints...)`` (``nq = 7 + n``), ``v = (base
linear velocity, base angular velocity, both in base axes, joint rates...)``
(``nv = 6 + n``), ``a = dv/dt``; the first six entries of a generalised force
are the wrench on the base (force, moment about the base origin) in base
axes.  A planar base has ``q = (x, y, cos θ, sin θ, joints...)`` and
``v = (vx, vy, w, joints...)``.

The robot is a :class:`composedyn.tree_robot.TreeRobot` whose root joint is the base's free-flyer
(or planar) joint, Pinocchio's ``JointModelFreeFlyer`` (``JointModelPlanar``): every quantity (inverse
and forward dynamics with external wrenches, the mass matrix, gravity and bias torques, the Coriolis
matrix, the centre of mass, its Jacobian, the regressor, the frame quantities, the centroidal
momentum matrix, the derivatives of inverse and forward dynamics, the composed vectors), one sample or
a batch, runs the kernels of any tree (:data:`ON_TREE`; dependent mimic joints on the tree's
coordinates, reduced by Kolev's projection); under ``COMPOSEDYN_BACKEND=numpy`` the array-API
algorithms run on NumPy.  What this class adds is the base's: its description
(:class:`composedyn.dynamics.floating.base.Base`), its configuration space in closed form
(:mod:`composedyn.dynamics.floating.lie`), errors naming the base joint, the centroidal momentum from
the mass matrix's base rows, URDF export with a floating root joint.
"""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import numpy as np

from composedyn import tree_dynamics
from composedyn.checks import batch_shape, joint_array, random_generator
from composedyn.dynamics import dispatch as _dispatch
from composedyn.dynamics.floating.base import Base, base_pose, check_base_inertia, tree_graph
from composedyn.dynamics.floating.lie import (
    se2_difference,
    se2_integrate,
    se2_rate,
    se3_difference,
    se3_integrate,
    se3_rate,
    unit_and_norm,
)
from composedyn.dynamics.frozen_graph import frozen_graph
from composedyn.joint_space import random_joints, sample_shape, time_step
from composedyn.tree_dynamics import TreeDynamics
from composedyn.tree_robot import TreeRobot

# The declared quantities a floating robot computes on its tree (whose root joint is the base's joint) and
# offers through robot.fast; its derivatives run there too
ON_TREE = tree_dynamics.QUANTITIES

# What robot.fast offers: those, and the derivatives of inverse and forward dynamics (on the tree too)
FAST = tree_dynamics.FAST



def _rotate_rows(R: np.ndarray, X: np.ndarray) -> np.ndarray:
    """blockdiag(R, R) X for X (..., 6, k) (linear rows, then angular rows)."""
    return np.concatenate([R @ X[..., :3, :], R @ X[..., 3:, :]], -2)


class FloatingRobot(TreeRobot):
    """A robot with a floating base: kinematic graph + base + dynamics in free-flyer coordinates.

    Build one with ``composedyn.load(path, floating=True)`` (or ``from_urdf``,
    ``from_graph``); a URDF whose root joint is ``floating`` or ``planar`` loads
    as one by default.  Array shapes: q (..., nq), v and a (..., nv), generalised
    forces (..., nv); leading batch axes broadcast.
    """

    def __init__(self, graph: nx.DiGraph, base: Base, strict: bool = False, mimic: str = "dependent"):
        """``graph``: the description without the base's joint (``base`` says where the base is and how it
        moves); ``mimic`` as for :class:`composedyn.Robot`."""
        super().__init__(tree_graph(graph, base), strict=strict, mimic=mimic)
        self.graph = frozen_graph(graph)  # read-only, without the base's joint: results always match the graph shown
        self.base = base
        hidden = f"{base.joint}::world"
        am = self.array_model
        keep = [k for k, name in enumerate(am.frame_names) if name != hidden]
        self.array_model = replace(am, frame_names=tuple(am.frame_names[k] for k in keep),
                                   frame_body=tuple(am.frame_body[k] for k in keep),
                                   frame_R=am.frame_R[keep], frame_p=am.frame_p[keep])
        self._link_com.pop(hidden, None)
        self._link_body.pop(hidden, None)
        nb = base.nv
        self._what_q = f"(nq = {base.nq} base + {self.nv - nb} joints)"
        self._what_v = f"(nv = {nb} base + {self.nv - nb} joints)"
        check_base_inertia(base, self, strict)

    @property
    def model(self):
        """The compiled description the robot's tree is built from (:class:`composedyn.dynamics.model.Model`):
        bodies (the base's first), links, masses and inertias, joint limits and terms; the base's joint stands
        there as one coordinate (``joints`` and ``array_model`` have its coordinates)."""
        return self._stand_in

    def __repr__(self) -> str:
        return f"FloatingRobot({self.name!r}, base={self.base.kind!r}, nq={self.nq}, nv={self.nv})"

    def _check_units(self, q: np.ndarray) -> None:
        """ValueError naming the base joint when its quaternion (or planar (cos, sin)) has zero norm."""
        unit = q[..., 3:7] if self.base.kind == "free" else q[..., 2:4]
        if not np.all(np.linalg.norm(unit, axis=-1) >= 1e-12):  # (a tiny or NaN norm: base_pose decides)
            base_pose(self.base, q)

    # ---- configuration space ----
    def neutral(self) -> np.ndarray:
        """The neutral configuration (nq,): base at the world origin, identity orientation, joints 0."""
        q = np.zeros(self.nq)
        q[6 if self.base.kind == "free" else 2] = 1.0
        return q

    def random_configuration(self, size=None, seed: int | None = None, position_range: float = 1.0) -> np.ndarray:
        """Random configurations (*size, nq): base position uniform in ±``position_range`` m,
        orientation uniform on SO(3) (or the circle), joints uniform within their limits
        (±π where a limit is infinite)."""
        rng = random_generator(seed, "random_configuration")
        shape = sample_shape(size)
        nb = self.base.nv
        joints = random_joints(self.limits["lower"][nb:], self.limits["upper"][nb:], shape, rng)
        if self.base.kind == "free":
            quat = rng.normal(size=shape + (4,))
            quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
            head = np.concatenate([rng.uniform(-position_range, position_range, shape + (3,)), quat], -1)
        else:
            t = rng.uniform(-np.pi, np.pi, shape)
            head = np.concatenate([rng.uniform(-position_range, position_range, shape + (2,)),
                                   np.stack([np.cos(t), np.sin(t)], -1)], -1)
        return np.concatenate([head, joints], -1)

    def integrate(self, q, v, dt: float = 1.0) -> np.ndarray:
        """q ⊕ v dt (..., nq): the base moved by exp(v_base dt) (right composition), joints + v dt."""
        q, v = self._state(q, v)
        base_pose(self.base, q)  # refuses zero-norm quaternions
        nqb, nb, v = self.base.nq, self.base.nv, v * time_step(dt)
        step = se3_integrate if self.base.kind == "free" else se2_integrate
        return np.concatenate([step(q[..., :nqb], v[..., :nb]), q[..., nqb:] + v[..., nb:]], -1)

    def difference(self, q0, q1) -> np.ndarray:
        """v (..., nv) with integrate(q0, v) = q1: log(q0⁻¹ q1) for the base (body twist), q1 - q0 for joints."""
        q0 = joint_array("q0", q0, self.nq, self._what_q)
        q1 = joint_array("q1", q1, self.nq, self._what_q)
        base_pose(self.base, q0), base_pose(self.base, q1)  # refuses zero-norm quaternions
        shape = batch_shape({"q0": q0, "q1": q1}, f"(..., {self.nq})") + (self.nq,)
        q0, q1 = np.broadcast_to(q0, shape), np.broadcast_to(q1, shape)
        nqb = self.base.nq
        log = se3_difference if self.base.kind == "free" else se2_difference
        return np.concatenate([log(q0[..., :nqb], q1[..., :nqb]), q1[..., nqb:] - q0[..., nqb:]], -1)

    def configuration_rate(self, q, v) -> np.ndarray:
        """dq/dt (..., nq) of the configuration moving with velocity v: the base's quaternion
        (or planar) kinematics, joint rates unchanged; what an ODE solver integrates."""
        q, v = self._state(q, v)
        base_pose(self.base, q)  # refuses zero-norm quaternions
        nqb, nb = self.base.nq, self.base.nv
        rate = se3_rate if self.base.kind == "free" else se2_rate
        return np.concatenate([rate(q[..., :nqb], v[..., :nb]), v[..., nb:]], -1)

    def normalize(self, q) -> np.ndarray:
        """q (..., nq) with the base quaternion (or planar (cos θ, sin θ)) scaled to unit norm."""
        q = joint_array("q", q, self.nq, self._what_q).copy()
        base_pose(self.base, q)  # refuses a zero norm
        k = slice(3, 7) if self.base.kind == "free" else slice(2, 4)
        q[..., k] = unit_and_norm(q[..., k])[0]
        return q

    # ---- argument handling ----
    def _state(self, q, *rates, names=("v", "a")):
        """Checked q (..., nq) and rates (..., nv), broadcast to one batch shape."""
        q = joint_array("q", q, self.nq, self._what_q)
        rates = [joint_array(k, x, self.nv, self._what_v) for k, x in zip(names, rates)]
        shape = batch_shape(dict(zip(("q", *names), (q, *rates))), f"(..., {self.nq}) and (..., {self.nv})")
        if all(x.shape[:-1] == shape for x in (q, *rates)):  # common case: nothing to broadcast
            return (q, *rates)
        return (np.broadcast_to(q, shape + q.shape[-1:]),
                *(np.broadcast_to(r, shape + r.shape[-1:]) for r in rates))

    # ---- momentum ----
    def centroidal_momentum_matrix(self, q) -> np.ndarray:
        """A_G(q) (..., 6, nv): centroidal momentum (linear, then angular about the centre of
        mass), world axes, h_G = A_G v (Orin, Goswami, Lee, "Centroidal dynamics of a humanoid
        robot", Auton. Robots 2013, eq. (13)); Pinocchio's ``ccrba``.

        The base rows of M are the spatial momentum about the base origin in base axes
        (M[:6] v = Σ Iᵢ vᵢ); moving it to the COM and rotating it gives A_G.  A planar base (and
        the NumPy backend) take :meth:`TreeDynamics.centroidal_momentum_matrix`'s sum over the bodies."""
        if self.base.kind != "free" or _dispatch.backend() == "numpy":
            return TreeDynamics.centroidal_momentum_matrix(self, q)
        (q,) = self._state(q)
        R0, p0 = base_pose(self.base, q)  # M's base rows and the COM in base axes, from the base origin
        M = self.mass_matrix(q)[..., :6, :]
        c = np.einsum("...ji,...j->...i", R0, self.center_of_mass(q) - p0)[..., :, None]
        L = M[..., :3, :]  # angular momentum about the COM: M[3:6] - c x L, column by column
        cL = np.stack([c[..., 1, :] * L[..., 2, :] - c[..., 2, :] * L[..., 1, :],
                       c[..., 2, :] * L[..., 0, :] - c[..., 0, :] * L[..., 2, :],
                       c[..., 0, :] * L[..., 1, :] - c[..., 1, :] * L[..., 0, :]], -2)
        return _rotate_rows(R0, np.concatenate([L, M[..., 3:, :] - cL], -2))

    # ---- model mismatch, export, speed ----
    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> "FloatingRobot":
        """A copy with link masses and inertias off by up to ``scale`` (see :meth:`Robot.perturbed`)."""
        from composedyn.robot import perturbed_graph

        return FloatingRobot(perturbed_graph(self.graph, self.name, scale, seed), self.base, mimic=self.mimic_mode)

    def to_urdf(self, path):
        """Write the robot as URDF at ``path``; return the path.  The floating base is a ``world`` link
        and a ``floating`` (``planar``) root joint, which composedyn loads back as this robot and
        Pinocchio as a free-flyer (planar) joint (see :mod:`composedyn.importers.urdf_export`)."""
        from composedyn.importers.urdf_export import to_urdf

        return to_urdf(self.graph, path, self.base)
