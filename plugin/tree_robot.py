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
``to_jax``.  Array shapes: q (..., nq); v, a and generalised forces (..., nv); leading batch axes
broadcast.
"""

from __future__ import annotations

from functools import cached_property
from typing import Mapping

import networkx as nx
import numpy as np

from composedyn.checks import joint_array, output_array, random_generator, smooth_width, wrenches
from composedyn.dynamics import dispatch as _dispatch
from composedyn.dynamics.array_api.joints import moves_freely, scalar, unit_part
from composedyn.dynamics.data import ThreadData
from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.frozen_graph import frozen_graph
from composedyn.joint_space import sample_shape, time_step
from composedyn.robot import direct_call
from composedyn.task_space import REFERENCES

# The declared quantities a TreeRobot computes (what robot.fast offers)
QUANTITIES = frozenset({"inverse_dynamics", "forward_dynamics", "mass_matrix", "gravity_torques", "bias_torques",
                        "coriolis_matrix", "center_of_mass", "com_jacobian", "regressor", "frame_pose", "jacobian",
                        "frame_velocity", "frame_acceleration"})

# Robot methods not available with joints of several coordinates: a one-line error naming the robot.
_NOT_YET = {"linearize": "linearisation",
            "composed_vectors": "the composed vectors", "to_urdf": "URDF export (URDF has no such joints)"}


class TreeRobot:
    """A robot whose joints may have several coordinates (module docstring).

    Build one with ``composedyn.load`` / ``from_graph`` / ``from_mjcf`` / ``from_sdf`` on a
    description with such joints.  ``floating`` is True when the root joint is a free-flyer or
    planar joint (a URDF ``floating`` root with such joints below it).
    """

    def __init__(self, graph: nx.DiGraph, strict: bool = False):
        from composedyn.dynamics.array_api.graph_model import graph_model

        self.array_model, stand_in = graph_model(graph, strict=strict)
        self.graph = frozen_graph(graph)  # read-only: results always match the graph shown
        am = self.array_model
        self._per_coordinate = np.repeat([j.nq == 1 for j in am.joints], [j.nv for j in am.joints])
        self._limits = {k: self._spread(getattr(stand_in, k), np.inf if k in ("upper", "velocity", "effort")
                                        else -np.inf) for k in ("lower", "upper", "velocity", "effort")}
        self._link_com = dict(zip(stand_in.link_names, np.asarray(stand_in.link_com, float)))
        self._link_body = dict(zip(stand_in.link_names, (int(b) for b in stand_in.link_body)))
        self.floating = moves_freely(am.joints[0]) and list(am.parent).count(-1) == 1

    def _spread(self, per_body: np.ndarray, missing: float) -> np.ndarray:
        """A per-body array of the stand-in model over the velocity coordinates: the value of a
        one-coordinate joint, ``missing`` for the others."""
        am = self.array_model
        x = np.repeat(np.asarray(per_body, float), [j.nv for j in am.joints])
        out = np.where(self._per_coordinate, x, missing)
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
        """The joint records (name, kind, nq, nv, idx_q, idx_v, axis, axis2, pitch) in array order."""
        return self.array_model.joints

    @property
    def joint_names(self) -> tuple:
        """The joints in array order (without the floating base's joint)."""
        return tuple(j.name for j in self.joints[int(self.floating):])

    all_joint_names = joint_names
    mimic_joint_names = ()
    mimic_mode = "independent"

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

    def __getattr__(self, name: str):
        if name in _NOT_YET:
            raise ModelError(f"robot {self.name!r}: {name} ({_NOT_YET[name]}) is not available for joints of "
                             "several coordinates (spherical, universal, helical, free-flyer or planar joints in "
                             "the tree)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- compiled state ----
    @cached_property
    def _threads(self) -> ThreadData:
        from composedyn.dynamics.compiled.layout import packed_tree

        return ThreadData(packed_tree(self.array_model))

    @property
    def data(self):
        """This thread's compiled data: ``data[name]`` the C caller of a declared quantity on this robot."""
        return self._threads.data

    @cached_property
    def numpy(self):
        """The array-API algorithms on NumPy arrays (:class:`composedyn.tensors.arrays.NumpyDynamics`):
        the NumPy backend of this robot."""
        from composedyn.tensors.arrays import NumpyDynamics

        return NumpyDynamics(self, self.array_model)

    @property
    def fast(self):
        """The compiled quantities of :data:`QUANTITIES` for control loops (this thread's), without the
        general path: q (nq,) or (N, nq), rates (nv,) or (N, nv) as float64 arrays, a frame by its
        index in :attr:`frame_names`; see :mod:`composedyn.dynamics.compiled.fast`."""
        threads = self._threads
        if threads.fast is None:
            from composedyn.dynamics.compiled.fast import FastDynamics
            from composedyn.dynamics.data import Data

            threads.fast = FastDynamics(None, Data(threads.arrays), names=QUANTITIES, name=self.name)
        return threads.fast

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_threads", "numpy")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---- argument handling ----
    def _state(self, q, *rates, names=("v", "a")):
        """Checked q (..., nq) and rates (..., nv), broadcast to one batch shape."""
        q = joint_array("q", q, self.nq, f"nq of {self.name}")
        rates = [joint_array(k, x, self.nv, f"nv of {self.name}") for k, x in zip(names, rates)]
        shape = np.broadcast_shapes(q.shape[:-1], *(r.shape[:-1] for r in rates))
        return (np.broadcast_to(q, shape + q.shape[-1:]),
                *(np.broadcast_to(r, shape + r.shape[-1:]) for r in rates))

    def _check_units(self, q: np.ndarray) -> None:
        """ValueError naming the joint whose quaternion (or planar (cos, sin)) has a norm below 1e-12."""
        for j in self.joints:
            part = unit_part(j)
            if part is not None:
                x = q[..., j.idx_q:j.idx_q + j.nq][..., part]
                if np.any(np.linalg.norm(x, axis=-1) < 1e-12):
                    what = "quaternion" if part.stop - part.start == 4 else "(cos, sin) pair"
                    raise ValueError(f"q: the {what} of joint {j.name!r} (q[{j.idx_q + part.start}:"
                                     f"{j.idx_q + part.stop}]) has zero norm")

    def _compute(self, name: str, inputs: tuple, numpy_call, out=None, extra=None, **options):
        """The declared quantity ``name`` at checked ``inputs``: the compiled batch loop (one sample
        as a batch of one), or ``numpy_call()`` under the NumPy backend; a refused sample (a zero
        quaternion, a singular mass matrix) raises its named error."""
        if out is not None:
            out = output_array(out, self._shape(name, inputs[0].shape[:-1]), *inputs)
        if _dispatch.backend() != "numpy":
            res = _dispatch.call(name, self, self._threads.arrays, *inputs, out=out, refuse=True,
                                 **({} if extra is None else {"f_world": extra}), **options)
            if res is not None:
                return res
        self._check_units(inputs[0])
        if _dispatch.backend() != "numpy":
            raise ModelError(f"robot {self.name!r}: {name}: the mass matrix is singular at q (a massless body "
                             "moved by a joint)")
        from composedyn.tensors.arrays import numpy_result

        return _dispatch.deliver(numpy_result(self.name, name, numpy_call), out)

    def _wrench_forces(self, q: np.ndarray, f: dict):
        """The generalised forces (..., nv) of checked link wrenches ``f`` for the NumPy backend
        (:func:`composedyn.task_space.wrench_forces`); 0 without wrenches."""
        from composedyn.task_space import wrench_forces

        return wrench_forces(self, q, f, self._link_com) if f else 0.0

    def _shape(self, name: str, lead: tuple) -> tuple:
        nv = self.nv
        return lead + {"mass_matrix": (nv, nv), "coriolis_matrix": (nv, nv)}.get(name, (nv,))

    def _body_forces(self, q: np.ndarray, f: dict) -> np.ndarray | None:
        """Checked link wrenches ``f`` (link name -> (..., 6) in world axes at the link's centre of mass)
        as the bodies' spatial forces (..., n, 6) of the compiled kernels: moment about the world
        origin, then force; None without wrenches or under the NumPy backend."""
        if not f or _dispatch.backend() == "numpy":
            return None
        out = np.zeros(q.shape[:-1] + (len(self.joints), 6))
        for link, w in f.items():
            b = self._link_body[link]
            if b < 0:  # welded to the world: the world takes it
                continue
            T = self.frame_pose(q, link)
            c = T[..., :3, 3] + np.einsum("...ij,j->...i", T[..., :3, :3], self._link_com[link])
            force = np.broadcast_to(w[..., :3], c.shape)
            out[..., b, :3] += w[..., 3:] + np.cross(c, force)
            out[..., b, 3:] += force
        return out

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

    # ---- dynamics ----
    @direct_call("inverse_dynamics", 3, ("friction", "out"))
    def inverse_dynamics(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True,
                         out: np.ndarray | None = None) -> np.ndarray:
        """Generalised forces (..., nv) = M a + C v + g + friction - J^T f_ext.  ``f_ext``: link name ->
        wrench (..., 6) in world axes at the link's centre of mass; ``out``: a float64 C-contiguous array
        of the result's shape to write into."""
        if f_ext is None and (res := self.data["inverse_dynamics"](q, v, a, friction, out=out)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        f = wrenches(f_ext, self.frame_names)
        return self._compute("inverse_dynamics", (q, v, a),
                             lambda: self.numpy.inverse_dynamics(q, v, a, friction) - self._wrench_forces(q, f),
                             out=out, extra=self._body_forces(q, f), friction=friction)

    @direct_call("forward_dynamics", 3, ("friction", "out"))
    def forward_dynamics(self, q, v, tau, f_ext: Mapping | None = None, friction: bool = True,
                         smooth_friction: float | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Accelerations a (..., nv) under the generalised forces tau (..., nv); ``smooth_friction``
        (rad/s): tanh(v / width) in place of sgn(v); ``f_ext`` and ``out`` as in :meth:`inverse_dynamics`."""
        if smooth_friction is not None:
            smooth_friction = smooth_width(smooth_friction)
        if f_ext is None and (res := self.data["forward_dynamics"](
                q, v, tau, smooth_friction or 0.0, friction, out=out)) is not None:
            return res
        q, v, tau = self._state(q, v, tau, names=("v", "tau"))
        f = wrenches(f_ext, self.frame_names)
        return self._compute("forward_dynamics", (q, v, tau),
                             lambda: self.numpy.forward_dynamics(q, v, tau + self._wrench_forces(q, f), friction,
                                                                 smooth_friction),
                             out=out, extra=self._body_forces(q, f), friction=friction,
                             smooth_friction=smooth_friction)

    @direct_call("mass_matrix", 1, ("out",))
    def mass_matrix(self, q, out: np.ndarray | None = None) -> np.ndarray:
        """M(q) (..., nv, nv), armature on the diagonal."""
        if (res := self.data["mass_matrix"](q, out=out)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("mass_matrix", (q,), lambda: self.numpy.mass_matrix(q), out=out)

    @direct_call("gravity_torques", 1)
    def gravity_torques(self, q) -> np.ndarray:
        """g(q) (..., nv): the generalised forces holding the robot still against gravity."""
        if (res := self.data["gravity_torques"](q)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("gravity_torques", (q,), lambda: self.numpy.gravity_torques(q))

    @direct_call("bias_torques", 2)
    def bias_torques(self, q, v) -> np.ndarray:
        """C(q, v) v + g(q) (..., nv), friction not included."""
        if (res := self.data["bias_torques"](q, v)) is not None:
            return res
        q, v = self._state(q, v)
        return self._compute("bias_torques", (q, v), lambda: self.numpy.bias_torques(q, v))

    @direct_call("coriolis_matrix", 2)
    def coriolis_matrix(self, q, v) -> np.ndarray:
        """C(q, v) (..., nv, nv) with C v + g = bias forces and Ṁ - 2C skew-symmetric."""
        if (res := self.data["coriolis_matrix"](q, v)) is not None:
            return res
        q, v = self._state(q, v)
        return self._compute("coriolis_matrix", (q, v), lambda: self.numpy.coriolis_matrix(q, v))

    def regressor(self, q, v, a) -> np.ndarray:
        """Y (..., nv, 10 bodies) with ``regressor(q, v, a) @ inertial_parameters()`` = the inverse
        dynamics without friction and armature (Pinocchio's ``computeJointTorqueRegressor``)."""
        if (res := self.data["regressor"](q, v, a)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        return self._compute("regressor", (q, v, a), lambda: self.numpy.regressor(q, v, a))

    def inertial_parameters(self) -> np.ndarray:
        """Standard inertial parameters (10 bodies,) in the regressor's column order."""
        return self.array_model.inertia.reshape(-1).copy()

    def parameter_names(self) -> tuple:
        """Names of the regressor's columns: ``"m1", "mx1", ..., "Izz1", "m2", ...`` (bodies in joint order)."""
        from composedyn.dynamics.reference.regressor import PARAM_NAMES

        return tuple(f"{p}{i + 1}" for i in range(len(self.joints)) for p in PARAM_NAMES)

    def base_parameters(self, samples: int = 60, seed: int | None = 0):
        """Identifiable parameter combinations (:class:`composedyn.dynamics.reference.base_parameters.BaseParameters`):
        Gautier's QR on the regressor at ``samples`` random states (configurations of
        :meth:`random_configuration`, standard-normal rates)."""
        from composedyn.dynamics.reference.base_parameters import base_parameters
        from composedyn.parameters import sample_count

        count = sample_count(samples)
        rng = random_generator(seed, "base_parameters")
        q = self.random_configuration(size=count, seed=rng)
        v, a = rng.normal(size=(2, count, self.nv))
        Y = self.regressor(q, v, a)
        return base_parameters(Y.reshape(-1, Y.shape[-1]), self.parameter_names())

    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> "TreeRobot":
        """A copy whose link masses and inertias are off by up to ``scale`` (see :meth:`composedyn.Robot.perturbed`)."""
        from composedyn.robot import perturbed_graph

        return TreeRobot(perturbed_graph(self.graph, self.name, scale, seed))

    # ---- derivatives ----
    def _derivatives(self, name: str, q, v, x, f_ext, friction: bool, smooth_friction):
        """The compiled derivatives ``name`` (one sample or a batch), or ModelError naming what the
        kernels do not take: joints of several coordinates other than a free-flyer, planar or spherical
        root, external wrenches, the NumPy backend."""
        if f_ext is not None:
            raise ModelError(f"robot {self.name!r}: {name} with f_ext is not available for joints of several "
                             "coordinates (differentiate without f_ext, or load the robot without them)")
        if smooth_friction is not None:
            smooth_friction = smooth_width(smooth_friction)
        if (res := self.data[name](q, v, x, smooth_friction or 0.0, friction)) is not None:
            return res
        q, v, x = self._state(q, v, x, names=("v", "tau" if name.startswith("forward") else "a"))
        if _dispatch.backend() != "numpy":
            res = _dispatch.call(name, self, self._threads.arrays, q, v, x, refuse=True, friction=friction,
                                 smooth_friction=smooth_friction or 0.0)
            if res is not None:
                return res
            self._check_units(q)
        other = [j for k, j in enumerate(self.joints) if not scalar(j) and not (k == 0 and unit_part(j) is not None)]
        what = (f"joint {other[0].name!r} ({other[0].kind})" if other else
                "the NumPy backend" if _dispatch.backend() == "numpy" else "a singular mass matrix at q")
        raise ModelError(f"robot {self.name!r}: {name} takes revolute and prismatic joints after a free-flyer, "
                         f"planar or spherical root joint (compiled); not {what}")

    def inverse_dynamics_derivatives(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None):
        """(dtau/dq, dtau/dv) (..., nv, nv) of :meth:`inverse_dynamics`, q perturbed on the configuration
        space (q ⊕ dq = integrate(q, dq), Pinocchio's ``computeRNEADerivatives``).  Trees whose joints of
        several coordinates are a free-flyer, planar or spherical root joint only; others raise ModelError."""
        return self._derivatives("inverse_dynamics_derivatives", q, v, a, f_ext, friction, smooth_friction)

    def forward_dynamics_derivatives(self, q, v, tau, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None):
        """(da/dq, da/dv, M⁻¹) (..., nv, nv) of :meth:`forward_dynamics` (Pinocchio's
        ``computeABADerivatives``); the trees of :meth:`inverse_dynamics_derivatives`."""
        return self._derivatives("forward_dynamics_derivatives", q, v, tau, f_ext, friction, smooth_friction)

    # ---- energy and momentum ----
    def kinetic_energy(self, q, v) -> np.ndarray:
        """1/2 vᵀ M v (...,) in J (armature included, as :meth:`mass_matrix`)."""
        q, v = self._state(q, v)
        return 0.5 * (v[..., None, :] @ self.mass_matrix(q) @ v[..., :, None])[..., 0, 0]

    def potential_energy(self, q) -> np.ndarray:
        """-m g . c (...,) in J: total mass m, centre of mass c in the world."""
        return -self.mass * (self.center_of_mass(q) @ self.array_model.gravity)

    def energy(self, q, v) -> np.ndarray:
        """Total mechanical energy T + V (...,) in J."""
        return self.kinetic_energy(q, v) + self.potential_energy(q)

    def centroidal_momentum_matrix(self, q) -> np.ndarray:
        """A_G(q) (..., 6, nv): centroidal momentum (linear, then angular about the centre of mass),
        world axes, h_G = A_G v (Pinocchio's ``ccrba``)."""
        (q,) = self._state(q)
        self._check_units(q)
        return np.asarray(self.numpy.centroidal_momentum_matrix(q))

    # ---- kinematics and task space ----
    def _frame(self, frame) -> int:
        try:
            return self._frame_index[frame]
        except (KeyError, TypeError):
            from composedyn.dynamics.reference.frames import unknown_frame

            raise unknown_frame(self.name, frame, self.frame_names) from None

    @cached_property
    def _frame_index(self) -> dict:
        return {name: k for k, name in enumerate(self.frame_names)}

    @staticmethod
    def _reference(reference) -> int:
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
        return REFERENCES[reference]

    @direct_call("frame_pose", 1, ("frame",), frame=2)
    def frame_pose(self, q, frame: str) -> np.ndarray:
        """World <- ``frame`` transform (..., 4, 4)."""
        k = self._frame(frame)
        if (res := self.data["frame_pose"](q, k)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("frame_pose", (q,), lambda: self.numpy.frame_pose(q, frame), frame=k)

    @direct_call("jacobian", 1, ("frame", "reference"), frame=1)
    def jacobian(self, q, frame: str, reference: str = "world") -> np.ndarray:
        """Frame Jacobian (..., 6, nv), linear rows first (``"world"``: origin velocity and angular
        velocity in world axes; ``"local"``: frame axes)."""
        k, local = self._frame(frame), self._reference(reference)
        if (res := self.data["jacobian"](q, k, local)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("jacobian", (q,), lambda: self.numpy.jacobian(q, frame, reference), frame=k,
                             local=local)

    @direct_call("frame_velocity", 2, ("frame", "reference"), frame=1)
    def frame_velocity(self, q, v, frame: str, reference: str = "world") -> np.ndarray:
        """Frame twist (..., 6) = J v, linear first."""
        k, local = self._frame(frame), self._reference(reference)
        if (res := self.data["frame_velocity"](q, v, k, local)) is not None:
            return res
        q, v = self._state(q, v)
        return self._compute("frame_velocity", (q, v), lambda: self.numpy.frame_velocity(q, v, frame, reference),
                             frame=k, local=local)

    @direct_call("frame_acceleration", 3, ("frame", "reference"), frame=1)
    def frame_acceleration(self, q, v, a, frame: str, reference: str = "world") -> np.ndarray:
        """Classical acceleration (..., 6) of the frame origin and angular acceleration: J a + J̇ v."""
        k, local = self._frame(frame), self._reference(reference)
        if (res := self.data["frame_acceleration"](q, v, a, k, local)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        return self._compute("frame_acceleration", (q, v, a),
                             lambda: self.numpy.frame_acceleration(q, v, a, frame, reference), frame=k, local=local)

    def link_poses(self, q) -> dict:
        """World pose (..., 4, 4) of every link frame, keyed by link name."""
        return {f: self.frame_pose(q, f) for f in self.frame_names}

    def center_of_mass(self, q) -> np.ndarray:
        """Centre of mass (..., 3) of the whole robot, world coordinates."""
        if (res := self.data["center_of_mass"](q)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("center_of_mass", (q,), lambda: self.numpy.center_of_mass(q))

    def com_jacobian(self, q) -> np.ndarray:
        """d com / d v (..., 3, nv): COM velocity in world axes."""
        if (res := self.data["com_jacobian"](q)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("com_jacobian", (q,), lambda: self.numpy.com_jacobian(q))

    def task_inertia(self, q, frame: str, reference: str = "world", translational: bool = False,
                     damping: float = 0.0) -> np.ndarray:
        """Λ = (J M⁻¹ Jᵀ)⁻¹ (..., 6, 6), or (..., 3, 3) with ``translational``."""
        from composedyn.task_space import inertia_of

        return inertia_of(self.jacobian(q, frame, reference), self.mass_matrix(q), frame, translational, damping)

    def inverse_kinematics(self, frame: str, target, q0=None, position_only: bool = False, **options):
        """q (nq,) with frame_pose(q, frame) = target: damped least squares on the configuration space
        (each step through :meth:`integrate`), one-coordinate joints within their limits, random restarts;
        returns an :class:`~composedyn.ik.IKResult`.  Options as for :meth:`composedyn.Robot.inverse_kinematics`."""
        from composedyn.ik import inverse_kinematics

        return inverse_kinematics(self, frame, target, q0, position_only, **options)

    # ---- for functions built on the robot ----
    def check_state(self, q, *rates, names: tuple = ("v", "a")) -> tuple:
        """``(q, *rates)`` checked and broadcast to one batch shape: q (..., nq), each rate (..., nv)."""
        return self._state(q, *rates, names=names)

    def warm_up(self, batch: bool = False) -> dict:
        """Load (or compile) the kernels of :data:`QUANTITIES` now; returns the seconds each first call took."""
        import time

        q, z, frame = self.neutral(), np.zeros(self.nv), self.frame_names[-1]
        calls = {"inverse_dynamics": lambda: self.inverse_dynamics(q, z, z),
                 "forward_dynamics": lambda: self.forward_dynamics(q, z, z),
                 "mass_matrix": lambda: self.mass_matrix(q), "gravity_torques": lambda: self.gravity_torques(q),
                 "bias_torques": lambda: self.bias_torques(q, z), "coriolis_matrix": lambda: self.coriolis_matrix(q, z),
                 "center_of_mass": lambda: self.center_of_mass(q), "com_jacobian": lambda: self.com_jacobian(q),
                 "regressor": lambda: self.regressor(q, z, z), "frame_pose": lambda: self.frame_pose(q, frame),
                 "jacobian": lambda: self.jacobian(q, frame),
                 "frame_velocity": lambda: self.frame_velocity(q, z, frame),
                 "frame_acceleration": lambda: self.frame_acceleration(q, z, z, frame)}
        times = {}
        for name, call in calls.items():
            t0 = time.perf_counter()
            call()
            times[name] = time.perf_counter() - t0
        return times

    # ---- tensors ----
    def to_torch(self, device=None, dtype=None):
        """This robot's dynamics on torch tensors; see :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_torch

        return to_torch(self, device, dtype)

    def to_jax(self):
        """This robot's dynamics as pure JAX functions; see :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_jax

        return to_jax(self)
