"""``FloatingRobot``: a robot whose base moves freely (legged robots, humanoids, flying bases).

Coordinates are Pinocchio's free-flyer convention (see CONTRACT conventions):
``q = (x, y, z, qx, qy, qz, qw, joints...)`` (``nq = 7 + n``), ``v = (base
linear velocity, base angular velocity, both in base axes, joint rates...)``
(``nv = 6 + n``), ``a = dv/dt``; the first six entries of a generalised force
are the wrench on the base (force, moment about the base origin) in base
axes.  A planar base has ``q = (x, y, cos θ, sin θ, joints...)`` and
``v = (vx, vy, w, joints...)``.

Every quantity (inverse and forward dynamics with external wrenches, the mass matrix, gravity
and bias torques, the Coriolis matrix, the centre of mass, its Jacobian, the regressor, the frame
quantities, the centroidal momentum matrix, the derivatives of inverse and forward dynamics), one
sample or a batch, runs the kernels of any tree on the robot as a tree whose root joint is the
base's free-flyer (or planar) joint (:data:`ON_TREE`; dependent mimic joints on the tree's
coordinates, reduced by Kolev's projection); under ``COMPOSEDYN_BACKEND=numpy`` the array-API
algorithms run on NumPy (:attr:`FloatingRobot.numpy`), the source ``to_torch`` and ``to_jax`` share.
The fixed-base chart of :mod:`composedyn.dynamics.floating.base` (a fixed-base ``Robot`` with
six virtual joints, ``self.chart``) holds the description (model, names, limits, parameters).
The dynamics and task-space methods are :class:`composedyn.tree_dynamics.TreeDynamics`'s, which
:class:`composedyn.tree_robot.TreeRobot` shares.
"""

from __future__ import annotations

from functools import cached_property
from typing import Mapping

import networkx as nx
import numpy as np

from composedyn import tree_dynamics
from composedyn.checks import joint_array, random_generator
from composedyn.dynamics import dispatch as _dispatch
from composedyn.dynamics.floating import base as chart
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
from composedyn.joint_space import joint_records, random_joints, sample_shape, time_step
from composedyn.robot import Robot
from composedyn.tree_dynamics import TreeDynamics

# The declared quantities a floating robot computes on its tree (whose root joint is the base's joint) and
# offers through robot.fast; its derivatives run there too
ON_TREE = tree_dynamics.QUANTITIES

# What robot.fast offers: those, and the derivatives of inverse and forward dynamics (on the tree too)
FAST = ON_TREE | {"inverse_dynamics_derivatives", "forward_dynamics_derivatives"}



def _rotate_rows(R: np.ndarray, X: np.ndarray) -> np.ndarray:
    """blockdiag(R, R) X for X (..., 6, k) (linear rows, then angular rows)."""
    return np.concatenate([R @ X[..., :3, :], R @ X[..., 3:, :]], -2)


class FloatingRobot(TreeDynamics):
    """A robot with a floating base: kinematic graph + base + dynamics in free-flyer coordinates.

    Build one with ``composedyn.load(path, floating=True)`` (or ``from_urdf``,
    ``from_graph``); a URDF whose root joint is ``floating`` or ``planar`` loads
    as one by default.  Array shapes: q (..., nq), v and a (..., nv), generalised
    forces (..., nv); leading batch axes broadcast.
    """

    floating = True
    FAST_QUANTITIES = FAST

    def __init__(self, graph: nx.DiGraph, base: chart.Base, strict: bool = False, mimic: str = "dependent"):
        self.chart = Robot(chart.virtual_graph(graph, base), strict=strict, mimic=mimic)
        self.graph = frozen_graph(graph)  # read-only: results always match the graph shown
        self.base = base
        self.model = self.chart.model
        self._mimic_mode = mimic
        hidden = set(base.virtual) | {f"{base.joint}::world"}
        self._frames = tuple(f for f in self.chart.frame_names if f not in hidden)
        nb = base.nv
        self._what_q = f"(nq = {base.nq} base + {self.chart.dof - nb} joints)"
        self._what_v = f"(nv = {nb} base + {self.chart.dof - nb} joints)"
        chart.check_base_inertia(base, self.model, strict)

    # ---- description ----
    @property
    def name(self) -> str:
        return self.chart.name

    @property
    def nq(self) -> int:
        """Configuration size: base (7 free flyer, 4 planar) + joints."""
        return self.base.nq + self.chart.dof - self.base.nv

    @property
    def nv(self) -> int:
        """Tangent size: base (6 free flyer, 3 planar) + joints."""
        return self.chart.dof

    @property
    def dof(self) -> int:
        """Degrees of freedom = ``nv``."""
        return self.chart.dof

    @property
    def joint_names(self) -> tuple:
        """The joints (coordinates after the base), in array order."""
        return self.chart.joint_names[self.base.nv:]

    @property
    def all_joint_names(self) -> tuple:
        return self.chart.all_joint_names[self.base.nv:]

    @property
    def mimic_joint_names(self) -> tuple:
        return self.chart.mimic_joint_names

    @property
    def frame_names(self) -> tuple:
        """Every link frame (base link first, links merged by fixed joints included)."""
        return self._frames

    @property
    def limits(self) -> dict:
        """Arrays (nv,) ``lower``, ``upper``, ``velocity``, ``effort``: ±inf on the base, then the joints'."""
        return self.chart.limits

    def __repr__(self) -> str:
        return f"FloatingRobot({self.name!r}, base={self.base.kind!r}, nq={self.nq}, nv={self.nv})"

    @cached_property
    def _tree(self):
        """The robot as a tree whose root joint is the base's free-flyer (or planar) joint
        (:class:`composedyn.dynamics.array_api.model.ArrayModel`; its joints cover every coordinate,
        dependent mimic joints included, with the mimic map ``Gq``, ``bq``, ``Gv``)."""
        from composedyn.dynamics.array_api.model import from_robot

        return from_robot(self)

    @cached_property
    def _link_com(self) -> dict:
        """Link -> its centre of mass (3,) in the link frame, m."""
        m = self.model
        return {name: np.asarray(m.link_com[k], float) for k, name in enumerate(m.link_names)}

    @cached_property
    def _link_body(self) -> dict:
        """Link -> its body of the tree (the base's body 0)."""
        return dict(zip(self._tree.frame_names, self._tree.frame_body))

    def _check_units(self, q: np.ndarray) -> None:
        """ValueError naming the base joint when its quaternion (or planar (cos, sin)) has zero norm."""
        unit = q[..., 3:7] if self.base.kind == "free" else q[..., 2:4]
        if not np.all(np.linalg.norm(unit, axis=-1) >= 1e-12):  # (a tiny or NaN norm: base_pose decides)
            chart.base_pose(self.base, q)

    # ---- configuration space ----
    @cached_property
    def joints(self) -> tuple:
        """The joint records (name, kind, nq, nv, idx_q, idx_v, axis), the base's free-flyer (or
        planar) joint first, then the joints in array order (:mod:`composedyn.joint_space`)."""
        return joint_records(self)

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
        chart.base_pose(self.base, q)  # refuses zero-norm quaternions
        nqb, nb, v = self.base.nq, self.base.nv, v * time_step(dt)
        step = se3_integrate if self.base.kind == "free" else se2_integrate
        return np.concatenate([step(q[..., :nqb], v[..., :nb]), q[..., nqb:] + v[..., nb:]], -1)

    def difference(self, q0, q1) -> np.ndarray:
        """v (..., nv) with integrate(q0, v) = q1: log(q0⁻¹ q1) for the base (body twist), q1 - q0 for joints."""
        q0 = joint_array("q0", q0, self.nq, self._what_q)
        q1 = joint_array("q1", q1, self.nq, self._what_q)
        chart.base_pose(self.base, q0), chart.base_pose(self.base, q1)  # refuses zero-norm quaternions
        q0, q1 = np.broadcast_arrays(q0, q1)
        nqb = self.base.nq
        log = se3_difference if self.base.kind == "free" else se2_difference
        return np.concatenate([log(q0[..., :nqb], q1[..., :nqb]), q1[..., nqb:] - q0[..., nqb:]], -1)

    def configuration_rate(self, q, v) -> np.ndarray:
        """dq/dt (..., nq) of the configuration moving with velocity v: the base's quaternion
        (or planar) kinematics, joint rates unchanged; what an ODE solver integrates."""
        q, v = self._state(q, v)
        chart.base_pose(self.base, q)  # refuses zero-norm quaternions
        nqb, nb = self.base.nq, self.base.nv
        rate = se3_rate if self.base.kind == "free" else se2_rate
        return np.concatenate([rate(q[..., :nqb], v[..., :nb]), v[..., nb:]], -1)

    def normalize(self, q) -> np.ndarray:
        """q (..., nq) with the base quaternion (or planar (cos θ, sin θ)) scaled to unit norm."""
        q = joint_array("q", q, self.nq, self._what_q).copy()
        chart.base_pose(self.base, q)  # refuses a zero norm
        k = slice(3, 7) if self.base.kind == "free" else slice(2, 4)
        q[..., k] = unit_and_norm(q[..., k])[0]
        return q

    # ---- argument handling ----
    def _state(self, q, *rates, names=("v", "a")):
        """Checked q (..., nq) and rates (..., nv), broadcast to one batch shape."""
        q = joint_array("q", q, self.nq, self._what_q)
        rates = [joint_array(k, x, self.nv, self._what_v) for k, x in zip(names, rates)]
        shape = np.broadcast_shapes(q.shape[:-1], *(r.shape[:-1] for r in rates))
        if all(x.shape[:-1] == shape for x in (q, *rates)):  # common case: nothing to broadcast
            return (q, *rates)
        return (np.broadcast_to(q, shape + q.shape[-1:]),
                *(np.broadcast_to(r, shape + r.shape[-1:]) for r in rates))

    # ---- energy and momentum ----
    @property
    def mass(self) -> float:
        """Total mass of the moving bodies (base included), kg."""
        return float(np.sum(self.model.mass))

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
        R0, p0 = chart.base_pose(self.base, q)  # M's base rows and the COM in base axes, from the base origin
        M = self.mass_matrix(q)[..., :6, :]
        c = np.einsum("...ji,...j->...i", R0, self.center_of_mass(q) - p0)[..., :, None]
        L = M[..., :3, :]  # angular momentum about the COM: M[3:6] - c x L, column by column
        cL = np.stack([c[..., 1, :] * L[..., 2, :] - c[..., 2, :] * L[..., 1, :],
                       c[..., 2, :] * L[..., 0, :] - c[..., 0, :] * L[..., 2, :],
                       c[..., 0, :] * L[..., 1, :] - c[..., 1, :] * L[..., 0, :]], -2)
        return _rotate_rows(R0, np.concatenate([L, M[..., 3:, :] - cL], -2))

    def centroidal_momentum(self, q, v) -> np.ndarray:
        """h_G (..., 6) = A_G v: linear momentum (kg m/s), angular momentum about the COM (kg m²/s), world axes."""
        q, v = self._state(q, v)
        return np.einsum("...ij,...j->...i", self.centroidal_momentum_matrix(q), v)

    # ---- model mismatch, export, speed ----
    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> "FloatingRobot":
        """A copy with link masses and inertias off by up to ``scale`` (see :meth:`Robot.perturbed`)."""
        g = self.chart.perturbed(scale, seed).graph.copy()
        g.remove_nodes_from([n for n in g if n not in self.graph])
        g.graph["root"] = self.graph.graph.get("root")
        return FloatingRobot(g, self.base, mimic=self._mimic_mode)

    def to_urdf(self, path):
        """Write the robot as URDF at ``path``; return the path.  The floating base is a ``world`` link
        and a ``floating`` (``planar``) root joint, which composedyn loads back as this robot and
        Pinocchio as a free-flyer (planar) joint (see :mod:`composedyn.importers.urdf_export`)."""
        from composedyn.importers.urdf_export import to_urdf

        return to_urdf(self.graph, path, self.base)

    def warm_up(self, batch: bool = False) -> dict:
        """Compile (or load from the disk cache) the kernels now, the floating entries included
        (``batch=True``: the batch loops too); returns the seconds each first call took."""
        import time

        times = self.chart.warm_up(batch=batch)
        q, z = self.neutral(), np.zeros(self.nv)
        calls = {"floating_inverse_dynamics": lambda x, y: self.inverse_dynamics(x, y, y),
                 "floating_mass_matrix": lambda x, y: self.mass_matrix(x),
                 "floating_forward_dynamics": lambda x, y: self.forward_dynamics(x, y, y),
                 "floating_gravity_torques": lambda x, y: self.gravity_torques(x),
                 "floating_bias_torques": lambda x, y: self.bias_torques(x, y),
                 "floating_coriolis_matrix": lambda x, y: self.coriolis_matrix(x, y),
                 "floating_center_of_mass": lambda x, y: self.center_of_mass(x),
                 "floating_com_jacobian": lambda x, y: self.com_jacobian(x),
                 "floating_regressor": lambda x, y: self.regressor(x, y, y)}
        frame = self._frames[-1]
        for name, call in {"floating_frame_pose": lambda: self.frame_pose(q, frame),
                           "floating_jacobian": lambda: self.jacobian(q, frame),
                           "floating_frame_velocity": lambda: self.frame_velocity(q, z, frame),
                           "floating_frame_acceleration": lambda: self.frame_acceleration(q, z, z, frame)}.items():
            t0 = time.perf_counter()
            call()
            times[name] = time.perf_counter() - t0
        for name, call in calls.items():
            for tag, x, y in (("", q, z),) + ((("_batch", np.stack([q, q]), np.stack([z, z])),) if batch else ()):
                t0 = time.perf_counter()
                call(x, y)
                times[name + tag] = time.perf_counter() - t0
        return times

    # ---- identification ----
    def regressor(self, q, v, a, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
        """Y (..., nv, 10 bodies [+ 3 or 4 per joint]) with ``regressor(q, v, a) @
        inertial_parameters()`` = the inverse dynamics without friction and armature: the base
        body first (Pinocchio's ``computeJointTorqueRegressor`` with a free flyer), then the
        joints' bodies; ``joint_terms`` / ``offset`` as for :meth:`Robot.regressor`, for the
        joints only (see :mod:`composedyn.parameters`)."""
        from composedyn.parameters import floating_joint_terms

        if not joint_terms and (res := self._threads.data["regressor"](q, v, a)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        Y = self._compute("regressor", (q, v, a), lambda: self.numpy.regressor(q, v, a))
        if not joint_terms:
            return Y
        _, vf, af = self._expand(q, v, a)  # every joint's terms (mimic joints' too), then reduced
        return np.concatenate([Y, self._reduce("regressor", floating_joint_terms(self, vf, af, offset))], -1)

    def inertial_parameters(self) -> np.ndarray:
        """Standard inertial parameters (10 bodies,) in the regressor's column order, base first."""
        from composedyn.parameters import parameters

        return parameters(self)

    def parameter_names(self, joint_terms: bool = False, offset: bool = False) -> tuple:
        """Names of the regressor columns (``"m1"`` the base's mass, ..., ``"fv2"``, ...)."""
        from composedyn.parameters import parameter_names

        return parameter_names(self, joint_terms=joint_terms, offset=offset)

    def base_parameters(self, joint_terms: bool = False, offset: bool = False, samples: int = 60,
                        seed: int | None = 0):
        """Identifiable parameter combinations (Gautier's QR on the regressor at ``samples`` random states,
        :class:`composedyn.dynamics.reference.base_parameters.BaseParameters`); computed once per set of
        arguments."""
        from composedyn.parameters import cached_base_parameters

        return cached_base_parameters(self, joint_terms, offset, samples, seed)

    # ---- derivatives ----
    def inverse_dynamics_derivatives(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None):
        """(dtau/dq, dtau/dv) (..., nv, nv) of :meth:`inverse_dynamics`, q perturbed on the group
        (q ⊕ dq = integrate(q, dq), Pinocchio's ``computeRNEADerivatives``); ``f_ext`` held fixed in
        world axes.  The compiled kernels on the robot's tree, the base's joint at its root
        (:meth:`~composedyn.tree_dynamics.TreeDynamics.tree_derivatives`); under the NumPy backend, the
        algorithm of any joints (:mod:`composedyn.dynamics.array_api.derivatives`)."""
        return self._derivatives("inverse_dynamics_derivatives", q, v, a, f_ext, friction, smooth_friction)

    def forward_dynamics_derivatives(self, q, v, tau, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None):
        """(da/dq, da/dv, M⁻¹) (..., nv, nv) of :meth:`forward_dynamics`, q perturbed on the group
        (Pinocchio's ``computeABADerivatives``); as :meth:`inverse_dynamics_derivatives`."""
        return self._derivatives("forward_dynamics_derivatives", q, v, tau, f_ext, friction, smooth_friction)

    # ---- for functions built on the robot ----
    @property
    def mimic_mode(self) -> str:
        """How mimic joints are handled, as given to the constructor: ``"dependent"`` or ``"independent"``
        (see :class:`composedyn.Robot`)."""
        return self._mimic_mode
