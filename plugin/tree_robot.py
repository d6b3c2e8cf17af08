"""``TreeRobot``: a robot whose joints may have configuration spaces of their own.

A kinematic graph with spherical, universal or helical joints (MJCF ``ball``, SDFormat ``ball``,
``universal``, ``screw``), or with free-flyer or planar joints below the root, loads as a
``TreeRobot``.  Each joint has its own coordinates (:attr:`TreeRobot.joints`: ``kind``, ``nq``,
``nv``, ``idx_q``, ``idx_v``; Pinocchio's conventions: a spherical joint's q is a unit quaternion
(x, y, z, w) and its v the angular velocity in the child frame), so ``nq`` and ``nv`` may differ.

Every quantity runs the compiled kernels of any tree (:mod:`composedyn.dynamics.compiled`, packed
by :func:`composedyn.dynamics.compiled.layout.packed_tree`): one sample through its C caller, a
batch through the declaration's batch loop; under ``COMPOSEDYN_BACKEND=numpy`` the array-API
algorithms run on NumPy (:mod:`composedyn.tensors.arrays`), the same source as ``to_torch`` and
``to_jax``.  The methods shared with a floating robot are
:class:`composedyn.tree_dynamics.TreeDynamics`'s.  Array shapes: q (..., nq); v, a and generalised
forces (..., nv); leading batch axes broadcast.
"""

from __future__ import annotations

from typing import Mapping

import networkx as nx
import numpy as np

from composedyn import tree_dynamics
from composedyn.checks import batch_shape, joint_array, random_generator
from composedyn.dynamics.array_api.joints import moves_freely, unit_part
from composedyn.dynamics.frozen_graph import frozen_graph
from composedyn.joint_space import sample_shape, time_step
from composedyn.tree_dynamics import TreeDynamics

QUANTITIES = tree_dynamics.QUANTITIES  # the declared quantities a TreeRobot computes on its tree
FAST = tree_dynamics.FAST  # what its robot.fast offers: those and the derivatives of inverse and forward dynamics



class TreeRobot(TreeDynamics):
    """A robot whose joints may have several coordinates (module docstring).

    Build one with ``composedyn.load`` / ``from_graph`` / ``from_mjcf`` / ``from_sdf`` on a
    description with such joints.  ``floating`` is True when the root joint is a free-flyer or
    planar joint (a URDF ``floating`` root with such joints below it).
    """

    def __init__(self, graph: nx.DiGraph, strict: bool = False, mimic: str = "dependent"):
        """``mimic="dependent"``: mimic joints (one-coordinate joints mimicking one-coordinate joints) are
        dependent coordinates, as for :class:`composedyn.Robot`; ``"independent"``: every joint is a
        coordinate of its own."""
        from composedyn.dynamics.array_api.graph_model import graph_model

        self.array_model, stand_in = graph_model(graph, strict=strict, mimic=mimic)
        self._stand_in = stand_in
        self.graph = frozen_graph(graph)  # read-only: results always match the graph shown
        self.mimic_mode = mimic
        am = self.array_model
        self._body = {j.name: c for c, j in enumerate(am.joints)}  # joint -> its body (stand-in coordinate)
        self._limits = {k: self._spread(getattr(stand_in, k), np.inf if k in ("upper", "velocity", "effort")
                                        else -np.inf) for k in ("lower", "upper", "velocity", "effort")}
        self._link_com = dict(zip(stand_in.link_names, np.asarray(stand_in.link_com, float)))
        self._link_body = dict(zip(stand_in.link_names, (int(b) for b in stand_in.link_body)))
        self.floating = moves_freely(am.joints[0]) and list(am.parent).count(-1) == 1

    def _spread(self, per_body: np.ndarray, missing: float) -> np.ndarray:
        """A per-body array of the stand-in model over the robot's velocity coordinates: the value of a
        one-coordinate joint, ``missing`` for the coordinates of the other joints."""
        x = [np.full(j.nv, float(per_body[self._body[j.name]]) if j.nq == 1 else missing) for j in self.joints]
        out = np.concatenate(x) if x else np.zeros(0)
        out.setflags(write=False)
        return out

    # ---- description ----
    @property
    def name(self) -> str:
        return self.array_model.name

    @property
    def nq(self) -> int:
        """Configuration size: the sum of the joints' ``nq``."""
        return self.array_model.nq

    @property
    def nv(self) -> int:
        """Tangent size: the sum of the joints' ``nv``."""
        return self.array_model.nv

    @property
    def dof(self) -> int:
        """Degrees of freedom = ``nv``."""
        return self.array_model.nv

    @property
    def joints(self) -> tuple:
        """The joint records (name, kind, nq, nv, idx_q, idx_v, axis, axis2, pitch) of the coordinates
        (dependent mimic joints left out), in array order."""
        return self.array_model.coordinate_joints

    @property
    def joint_names(self) -> tuple:
        """The joints in array order (without the floating base's joint)."""
        return tuple(j.name for j in self.joints[int(self.floating):])

    @property
    def all_joint_names(self) -> tuple:
        """Every joint with coordinates in the model (dependent mimic joints included), in model order."""
        return tuple(j.name for j in self.array_model.joints[int(self.floating):])

    @property
    def mimic_joint_names(self) -> tuple:
        """The dependent mimic joints (``mimic="dependent"``), in model order."""
        coordinates = {j.name for j in self.joints}
        return tuple(j.name for j in self.array_model.joints if j.name not in coordinates)

    @property
    def frame_names(self) -> tuple:
        """Every link frame (links merged by fixed joints included)."""
        return self.array_model.frame_names

    @property
    def limits(self) -> dict:
        """Arrays (nv,) ``lower``, ``upper``, ``velocity``, ``effort`` per velocity coordinate: a
        one-coordinate joint's limits, ±inf for the coordinates of the other joints."""
        return dict(self._limits)

    @property
    def mass(self) -> float:
        """Total mass of the moving bodies, kg."""
        return float(np.sum(self.array_model.inertia[:, 0]))

    def __repr__(self) -> str:
        kinds = sorted({j.kind for j in self.joints})
        return f"TreeRobot({self.name!r}, nq={self.nq}, nv={self.nv}, joints: {', '.join(kinds)})"

    def to_urdf(self, path):
        """URDF has no spherical, universal or helical joint, and the URDF writer takes floating and planar
        joints only as a floating base: a ModelError naming the file and each joint it cannot write
        (:func:`composedyn.importers.urdf_export.check_writable`)."""
        from composedyn.importers.urdf_export import check_writable, to_urdf

        check_writable(self.graph)
        return to_urdf(self.graph, path)

    @property
    def _tree(self):
        """The robot's tree (:attr:`array_model`), on which :class:`~composedyn.tree_dynamics.TreeDynamics`
        computes."""
        return self.array_model

    # ---- argument handling ----
    def _state(self, q, *rates, names=("v", "a")):
        """Checked q (..., nq) and rates (..., nv), broadcast to one batch shape."""
        q = joint_array("q", q, self.nq, f"nq of {self.name}")
        rates = [joint_array(k, x, self.nv, f"nv of {self.name}") for k, x in zip(names, rates)]
        shape = batch_shape(dict(zip(("q", *names), (q, *rates))), f"(..., {self.nq}) and (..., {self.nv})")
        return (np.broadcast_to(q, shape + q.shape[-1:]),
                *(np.broadcast_to(r, shape + r.shape[-1:]) for r in rates))

    # ---- configuration space ----
    def neutral(self) -> np.ndarray:
        """The neutral configuration (nq,): identity quaternions, zero angles and translations."""
        from composedyn.dynamics.array_api import joints as jm

        return np.concatenate([jm.neutral(j) for j in self.joints])

    def random_configuration(self, size=None, seed: int | None = None) -> np.ndarray:
        """Random configurations (*size, nq): one-coordinate joints uniform within their limits (±π
        where infinite), quaternions uniform on SO(3), other coordinates uniform in ±π (angles) or ±1 m."""
        from composedyn.dynamics.array_api import joints as jm

        rng = random_generator(seed, "random_configuration")
        shape = sample_shape(size)
        count = int(np.prod(shape, dtype=int))
        lo, hi = self._limits["lower"], self._limits["upper"]
        bounds = [(lo[j.idx_v], hi[j.idx_v]) if j.nq == 1 else (None, None) for j in self.joints]
        rows = [np.concatenate([jm.random_configuration(j, rng, *b) for j, b in zip(self.joints, bounds)])
                for _ in range(count)]
        return np.array(rows, float).reshape(shape + (self.nq,))

    def integrate(self, q, v, dt: float = 1.0) -> np.ndarray:
        """q ⊕ v dt (..., nq): each joint moved on its own configuration space (Pinocchio's ``integrate``)."""
        q, v = self._state(q, v)
        self._check_units(q)
        return np.asarray(self.numpy.integrate(q, v, time_step(dt)))

    def difference(self, q0, q1) -> np.ndarray:
        """v (..., nv) with integrate(q0, v) = q1 (Pinocchio's ``difference``)."""
        q0, q1 = self._state(q0), self._state(q1)
        self._check_units(q0[0]), self._check_units(q1[0])
        return np.asarray(self.numpy.difference(q0[0], q1[0]))

    def configuration_rate(self, q, v) -> np.ndarray:
        """dq/dt (..., nq) of the configuration moving with velocity v: each joint's rate (a quaternion's
        kinematics for spherical and free-flyer joints); what an ODE solver integrates."""
        from composedyn.dynamics.array_api.joints import configuration_rate

        q, v = self._state(q, v)
        self._check_units(q)
        return np.concatenate([configuration_rate(j, q[..., j.idx_q:j.idx_q + j.nq], v[..., j.idx_v:j.idx_v + j.nv])
                               for j in self.joints], -1)

    def normalize(self, q) -> np.ndarray:
        """q (..., nq) with every quaternion (and planar (cos, sin) pair) scaled to unit norm."""
        q = joint_array("q", q, self.nq, f"nq of {self.name}").copy()
        self._check_units(q)
        for j in self.joints:
            part = unit_part(j)
            if part is not None:
                k = slice(j.idx_q + part.start, j.idx_q + part.stop)
                q[..., k] /= np.linalg.norm(q[..., k], axis=-1, keepdims=True)
        return q

    # ---- identification ----
    def regressor(self, q, v, a, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
        """Y (..., nv, P) with ``regressor(q, v, a) @ inertial_parameters()`` = the inverse dynamics
        without friction and armature (Pinocchio's ``computeJointTorqueRegressor``): 10 columns per body.
        ``joint_terms``: then per joint with terms (every joint but a free-flyer or planar one; mimic
        joints included) ``[fv, fc, Ia]`` acting on each of its velocity coordinates (viscous v, Coulomb
        sgn v, armature a, as the kernels' law), so that Y @ parameters = :meth:`inverse_dynamics`;
        ``offset``: a fourth column ``off`` (a constant generalised force on each coordinate)."""
        if not joint_terms and (res := self.data["regressor"](q, v, a)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        Y = self._compute("regressor", (q, v, a), lambda: self.numpy.regressor(q, v, a))
        if not joint_terms:
            return Y
        _, vf, af = self._expand(q, v, a)
        k, terms = (4 if offset else 3), self._term_joints
        cols = np.zeros(vf.shape[:-1] + (vf.shape[-1], k * len(terms)))
        for t, j in enumerate(terms):
            rows = slice(j.idx_v, j.idx_v + j.nv)
            cols[..., rows, k * t], cols[..., rows, k * t + 1] = vf[..., rows], np.sign(vf[..., rows])
            cols[..., rows, k * t + 2] = af[..., rows]
            if offset:
                cols[..., rows, k * t + 3] = 1.0
        return np.concatenate([Y, self._reduce("regressor", cols)], -1)

    @property
    def _term_joints(self) -> list:
        """The joints with regressor joint terms (all but free-flyer and planar ones), in body order."""
        return [j for j in self.array_model.joints if not moves_freely(j)]

    def inertial_parameters(self, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
        """The parameters (P,) in the regressor's column order: standard inertial parameters (10 per
        body), then with ``joint_terms`` each joint's [damping, Coulomb friction, armature(, 0)]."""
        pi = self.array_model.inertia.reshape(-1)
        if not joint_terms:
            return pi.copy()
        am, k = self.array_model, (4 if offset else 3)
        terms = [[am.damping[j.idx_v], am.coulomb[j.idx_v], am.armature[j.idx_v], 0.0][:k] for j in self._term_joints]
        return np.concatenate([pi, np.ravel(terms)])

    def parameter_names(self, joint_terms: bool = False, offset: bool = False) -> tuple:
        """Names of the regressor's columns: ``"m1", "mx1", ..., "Izz1", "m2", ...`` (bodies in joint order),
        then with ``joint_terms`` ``"fv<b>", "fc<b>", "Ia<b>"`` (``"off<b>"``) of the joint moving body b."""
        from composedyn.dynamics.reference.regressor import JOINT_TERM_NAMES, PARAM_NAMES

        joints = self.array_model.joints
        names = [f"{p}{i + 1}" for i in range(len(joints)) for p in PARAM_NAMES]
        if joint_terms:
            body = {j.name: b for b, j in enumerate(joints)}
            names += [f"{p}{body[j.name] + 1}" for j in self._term_joints
                      for p in JOINT_TERM_NAMES[:4 if offset else 3]]
        return tuple(names)

    def base_parameters(self, joint_terms: bool = False, offset: bool = False, samples: int = 60,
                        seed: int | None = 0):
        """Identifiable parameter combinations (:class:`composedyn.dynamics.reference.base_parameters.BaseParameters`):
        Gautier's QR on the regressor at ``samples`` random states (configurations of
        :meth:`random_configuration`, standard-normal rates); computed once per set of arguments."""
        from composedyn.parameters import cached_base_parameters

        return cached_base_parameters(self, joint_terms, offset, samples, seed)

    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> "TreeRobot":
        """A copy whose link masses and inertias are off by up to ``scale`` (see :meth:`composedyn.Robot.perturbed`)."""
        from composedyn.robot import perturbed_graph

        return TreeRobot(perturbed_graph(self.graph, self.name, scale, seed), mimic=self.mimic_mode)

    # ---- derivatives ----
    def inverse_dynamics_derivatives(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None, out: tuple | None = None):
        """(dtau/dq, dtau/dv) (..., nv, nv) of :meth:`inverse_dynamics`, q perturbed on the configuration
        space (q ⊕ dq = integrate(q, dq), Pinocchio's ``computeRNEADerivatives``), on every joint type (a
        universal joint's columns turn with its second angle: :mod:`composedyn.dynamics.array_api.derivatives`).
        ``out``: a tuple of two writeable C-contiguous float64 arrays of the results' shape, written and
        returned (the compiled batch loops write into it)."""
        return self._derivatives("inverse_dynamics_derivatives", q, v, a, f_ext, friction, smooth_friction, out)

    def forward_dynamics_derivatives(self, q, v, tau, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None, out: tuple | None = None):
        """(da/dq, da/dv, M⁻¹) (..., nv, nv) of :meth:`forward_dynamics` (Pinocchio's
        ``computeABADerivatives``); the trees of :meth:`inverse_dynamics_derivatives`; ``out``: a tuple of
        three arrays, as there."""
        return self._derivatives("forward_dynamics_derivatives", q, v, tau, f_ext, friction, smooth_friction, out)

    # ---- speed ----
    def warm_up(self, batch: bool = False) -> dict:
        """Load (or compile) the kernels of :data:`QUANTITIES` now (``batch=True``: their batch loops too,
        keys ending in ``_batch``); returns the seconds each first call took."""
        import time

        frame = self.frame_names[-1]
        calls = {"inverse_dynamics": lambda q, z: self.inverse_dynamics(q, z, z),
                 "forward_dynamics": lambda q, z: self.forward_dynamics(q, z, z),
                 "mass_matrix": lambda q, z: self.mass_matrix(q),
                 "gravity_torques": lambda q, z: self.gravity_torques(q),
                 "bias_torques": lambda q, z: self.bias_torques(q, z),
                 "coriolis_matrix": lambda q, z: self.coriolis_matrix(q, z),
                 "center_of_mass": lambda q, z: self.center_of_mass(q),
                 "com_jacobian": lambda q, z: self.com_jacobian(q),
                 "regressor": lambda q, z: self.regressor(q, z, z),
                 "frame_pose": lambda q, z: self.frame_pose(q, frame),
                 "jacobian": lambda q, z: self.jacobian(q, frame),
                 "frame_velocity": lambda q, z: self.frame_velocity(q, z, frame),
                 "frame_acceleration": lambda q, z: self.frame_acceleration(q, z, z, frame)}
        q, z = self.neutral(), np.zeros(self.nv)
        samples = (("", q, z),) + ((("_batch", np.stack([q, q]), np.stack([z, z])),) if batch else ())
        times = {}
        for name, call in calls.items():
            for tag, x, y in samples:
                t0 = time.perf_counter()
                call(x, y)
                times[name + tag] = time.perf_counter() - t0
        return times
