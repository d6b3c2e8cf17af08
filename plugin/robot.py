"""The ``Robot`` facade: the public dynamics API over a compiled model.

Each method checks its arguments once and calls one function of
``composedyn.dynamics``.  Joint arrays are (..., n) with n = ``robot.dof`` in
``robot.joint_names`` order; leading batch axes broadcast.  SI units, radians.
"""

from __future__ import annotations

import inspect
from functools import cached_property, update_wrapper
from typing import TYPE_CHECKING, Mapping

import networkx as nx
import numpy as np

from composedyn import joint_space as _joint_space  # configuration-space methods
from composedyn import task_space as _task_space  # task-space methods (end of the class)
from composedyn.checks import joint_arrays, output_array, random_generator, smooth_width, wrenches
from composedyn.dynamics import dispatch  # the general path: compiled batch loops or NumPy
from composedyn.dynamics.constraints.mimic import select_mimic
from composedyn.dynamics.data import Arrays, Data, ThreadData, packed
from composedyn.dynamics.dispatch import deliver
from composedyn.dynamics.frozen_graph import frozen_graph
from composedyn.dynamics.model import Model, compile_graph, frozen_array
from composedyn.dynamics.reference.energy import kinetic_energy, potential_energy
from composedyn.dynamics.reference.forward import solve_mass
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.dynamics.reference.kinematics import body_poses, link_poses
from composedyn.link_wrenches import body_forces, one_sample
from composedyn.task_space import REFERENCES

if TYPE_CHECKING:  # names in annotations only
    from pathlib import Path

    from composedyn.dynamics.compiled.fast import FastDynamics
    from composedyn.dynamics.reference.composed import ComposedVectors


_ABSENT = object()  # no qd / qdd argument

try:
    from composedyn.dynamics.compiled._call import Method
except ImportError:  # the first compiled call reports it (composedyn.dynamics.compiled.declare)
    Method = None


def perturbed_graph(graph: nx.DiGraph, name: str, scale: float, seed) -> nx.DiGraph:
    """A copy of ``graph`` whose links' masses and inertias are each multiplied by one factor drawn
    uniformly from [1 - scale, 1 + scale] (``numpy.random.default_rng(seed)``), named
    ``"{name} (perturbed {scale})"`` (see :meth:`Robot.perturbed`)."""
    try:
        ok = 0.0 <= float(scale) < 1.0
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"perturbed: scale must be a number in [0, 1), got {repr(scale)[:40]}")
    g = graph.copy()
    rng = random_generator(seed, "perturbed")
    for link in g.nodes:
        f = 1.0 + float(scale) * rng.uniform(-1.0, 1.0)
        d = g.nodes[link]
        d["mass"] = f * float(d.get("mass", 0.0))
        if d.get("inertia") is not None:
            d["inertia"] = f * np.asarray(d["inertia"], dtype=float)
    g.graph["name"] = f"{name} (perturbed {scale:g})"
    return g


def direct_call(name: str, inputs: int, keywords: tuple = (), frame: int = 0):
    """Decorator: plain calls of the method -- ``inputs`` positional arrays, keywords among
    ``keywords`` (with ``frame``: the frame name and reference after the arrays) -- go from C
    straight to this thread's C caller of the declared quantity ``name`` (``_call.Method``: no
    Python frame in between); every other call, and every call the caller declines, runs the
    method's own body.  ``help``, ``inspect.signature`` and the docs see the method itself."""

    def wrap(method):
        if Method is None:
            return method
        return update_wrapper(Method(name, method, inputs, keywords, frame), method)

    return wrap


def declared(name: str, arguments: tuple, doc: str):
    """A ``Robot`` method computing the declared quantity ``name``
    (:mod:`composedyn.dynamics.compiled.quantities`) from its joint arrays (..., dof), named
    ``arguments`` in the declaration's input order: the quantity's C caller, else the checked
    arguments (mimic coordinates expanded) through the general path, the result reduced to the
    coordinates (G^T tau, G^T A G, J G by its shape)."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature([inspect.Parameter(a, kind) for a in ("self",) + tuple(arguments)])

    def method(self, *args, **kwargs):
        if not kwargs and len(args) == len(arguments) and (out := self._threads.data[name](*args)) is not None:
            return out
        try:
            bound = signature.bind(self, *args, **kwargs).arguments
        except TypeError as exc:
            raise TypeError(f"{name}({', '.join(arguments)}): {exc}") from None
        arrays = joint_arrays(self.dof, **{a: bound[a] for a in arguments})
        result, shape = self.compute(name, *self.to_all_joints(*arrays)), dispatch.quantity(name).results[0]
        if shape[-1] == "nv" and self._mimic is not None:
            return self.to_coordinates(result, matrix=len(shape) == 2 and shape[0] == "nv") if shape[0] == "nv" \
                else result @ self._mimic.G
        return result

    method.__name__, method.__doc__, method.__signature__ = name, doc, signature
    return method


class Robot:
    """A fixed-base robot: kinematic graph + compiled model + dynamics.

    Build one with :func:`composedyn.load`, :func:`composedyn.from_urdf`,
    :func:`composedyn.from_dh` or :func:`composedyn.from_graph`.
    """

    def __init__(self, graph: nx.DiGraph, strict: bool = False, mimic: str = "dependent"):
        """``mimic="dependent"``: URDF mimic joints are dependent coordinates, so
        ``dof``, ``joint_names`` and every joint array cover the independent joints
        only (Kolev's projection, see :mod:`composedyn.dynamics.constraints.mimic`);
        ``"independent"``: every joint is a coordinate (mimic ignored)."""
        self.model: Model = compile_graph(graph, strict=strict)
        self.graph = frozen_graph(graph)  # read-only: results always match the graph shown
        self._mimic_mode = mimic
        self._mimic = select_mimic(self.model, mimic)

    @property
    def mimic_map(self):
        """The map of the dependent mimic joints (:class:`composedyn.dynamics.constraints.mimic.MimicMap`:
        q_all = G q + b), or None when every joint is a coordinate."""
        return self._mimic

    def to_all_joints(self, q, *rates):
        """Coordinates -> every joint's: positions (..., n_all) = G q + b and rates G x (unchanged
        without dependent mimic joints); no argument checks."""
        mm = self._mimic
        return (q, *rates) if mm is None else (mm.full(q), *(mm.full(x, offset=False) for x in rates))

    def to_coordinates(self, tau, matrix: bool = False):
        """Every joint's generalised forces (..., n_all) -> the coordinates': Gᵀ τ; with ``matrix``,
        a matrix over every joint's velocities -> Gᵀ A G (unchanged without dependent mimic joints)."""
        mm = self._mimic
        if mm is None:
            return tau
        return mm.reduce_matrix(tau) if matrix else mm.reduce(tau)

    @cached_property
    def arrays(self) -> Arrays | None:
        """The model packed for the compiled kernels (:class:`composedyn.dynamics.compiled.layout.Arrays`,
        read only, made once), or None without moving joints."""
        return packed(self.model) if self.model.n else None

    @cached_property
    def _threads(self) -> ThreadData:
        """This robot's compiled state, per thread: ``.data`` maps a quantity's name to its C caller
        (:mod:`composedyn.dynamics.data`); every caller returns None with dependent mimic joints
        or without moving joints (the methods' general path serves those); ``.general``: the
        callers of the general path (all-joint coordinates)."""
        return ThreadData(self.arrays, direct=self._mimic is None)

    def compute(self, name: str, *inputs, out: np.ndarray | None = None, **arguments):
        """The declared quantity ``name`` (:mod:`composedyn.dynamics.compiled.quantities`) at
        all-joint inputs (..., n_all) by the general path (:func:`composedyn.dynamics.dispatch.call`:
        batch axes broadcast, the compiled batch loop or the NumPy reference); ``arguments``: its
        options, number and extras by keyword.  No argument checks: the methods check first."""
        return dispatch.call(name, self.model, self.arrays, *inputs, out=out, data=self._threads.general, **arguments)

    @property
    def data(self) -> "Data":
        """This thread's compiled data (:class:`composedyn.dynamics.data.Data`): ``data[name]`` is
        the C caller of the declared quantity ``name`` on this robot (all-joint coordinates),
        returning None for what it does not take; ``data.arrays`` the packed model arrays (None,
        and callers that always return None, with dependent mimic joints or no moving joint)."""
        return self._threads.data

    def __getstate__(self) -> dict:
        """Pickle the graph and the model; the compiled state (C callers holding machine addresses,
        per-thread scratch; the array-API model, which holds the NumPy module) is left out and made again on
        first use after unpickling."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_threads", "_frame_index", "arrays", "_numpy_model")}

    def __setstate__(self, state: dict) -> None:
        """Unpickle; the arrays are read-only again."""
        self.__dict__.update({k: frozen_array(v) if isinstance(v, np.ndarray) else v for k, v in state.items()})

    # ---- description -------------------------------------------------
    @property
    def name(self) -> str:
        return self.model.name

    floating = False  # a fixed base; see composedyn.floating_robot.FloatingRobot

    @property
    def nq(self) -> int:
        """Configuration size: ``dof`` for a fixed base."""
        return self.dof

    @property
    def nv(self) -> int:
        """Velocity size: ``dof`` for a fixed base."""
        return self.dof

    @property
    def dof(self) -> int:
        """Number of (independent) joint coordinates n; mimic joints excluded when dependent."""
        return self.model.n if self._mimic is None else len(self._mimic.names)

    @property
    def joint_names(self) -> tuple:
        """Names of the coordinates, in the order of every joint array."""
        return self.model.joint_names if self._mimic is None else self._mimic.names

    @property
    def all_joint_names(self) -> tuple:
        """Every moving joint, mimic (dependent) joints included, in model order."""
        return self.model.joint_names

    @property
    def mimic_joint_names(self) -> tuple:
        """The dependent (mimic) joints, in the order of :meth:`mimic_torques`; () if none."""
        return () if self._mimic is None else self._mimic.dependent_names

    @property
    def mimic_jacobian(self) -> np.ndarray:
        """G (n_all, dof) with q_all = G q + b (``all_joint_names`` order); identity without mimic."""
        return np.eye(self.model.n) if self._mimic is None else self._mimic.G.copy()

    def full_positions(self, q) -> np.ndarray:
        """Positions of all joints (..., n_all) from the coordinates q (..., dof): G q + b."""
        (q,) = joint_arrays(self.dof, q=q)
        return self.to_all_joints(q)[0]

    def mimic_torques(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Torque (or force) (..., n_dep) each mimic joint must carry, ``mimic_joint_names`` order.

        It is the all-joint inverse dynamics at the dependent joints: what the
        coupling (gear, tendon) transmits to them.  Same arguments as
        :meth:`inverse_dynamics`; empty (..., 0) without dependent mimic joints.
        """
        q, qd, qdd = joint_arrays(self.dof, q=q, qd=qd, qdd=qdd)
        tau = self._full_inverse_dynamics(*self.to_all_joints(q, qd, qdd), f_ext, friction)
        return tau[..., self._mimic.dependent] if self._mimic is not None else tau[..., :0]

    def _full_inverse_dynamics(self, q, qd, qdd, f_ext, friction: bool, out: np.ndarray | None = None) -> np.ndarray:
        """Inverse dynamics of all joints (mimic joints as free coordinates) at all-joint arrays,
        armature and (with ``friction``) joint friction included; into ``out`` when given."""
        return self.compute("inverse_dynamics", q, qd, qdd, f_world=self._body_forces(q, f_ext), friction=friction,
                            out=out)

    @property
    def limits(self) -> dict:
        """Arrays (dof,) ``lower``, ``upper``, ``velocity``, ``effort`` (+-inf where absent).

        Fresh copies on every access: changing them changes nothing in the robot
        (pass tightened limits to the checks explicitly instead)."""
        m = self.model
        idx = slice(None) if self._mimic is None else self._mimic.independent
        return {k: np.array(getattr(m, k)[idx]) for k in ("lower", "upper", "velocity", "effort")}

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, dof={self.dof}, source={self.model.source!r})"

    # ---- kinematics --------------------------------------------------
    def link_poses(self, q) -> dict:
        """World pose (4x4, (..., 4, 4)) of every link frame, keyed by link name."""
        (q,) = joint_arrays(self.dof, q=q)
        (q,) = self.to_all_joints(q)
        Rl, pl = link_poses(self.model, *body_poses(self.model, q))
        T = np.zeros(q.shape[:-1] + (len(self.model.link_names), 4, 4))
        T[..., :3, :3], T[..., :3, 3], T[..., 3, 3] = Rl, pl, 1.0
        return {name: T[..., k, :, :] for k, name in enumerate(self.model.link_names)}

    # ---- dynamics ----------------------------------------------------
    @direct_call("inverse_dynamics", 3, ("friction", "out"))
    def inverse_dynamics(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True,
                         out: np.ndarray | None = None) -> np.ndarray:
        """Joint torques tau (..., n) = M(q) qdd + C(q, qd) qd + g(q) + tau_friction - J^T f_ext.

        M includes the armature (rotor inertia) on its diagonal.  ``f_ext``:
        link name -> wrench (..., 6) (fx, fy, fz, tx, ty, tz) in world axes at
        the link's centre of mass.  ``friction=False`` drops joint friction.
        With dependent mimic joints: the generalised forces G^T tau_all of the
        independent joints (Kolev eq. 2.20); see :meth:`mimic_torques`.

        ``out``: a float64 C-contiguous array of the result's shape to write into and
        return (no new array: for batches called again and again); the same for
        :meth:`forward_dynamics` and :meth:`mass_matrix`.
        """
        call = self._threads.data["inverse_dynamics"]
        if f_ext is None and (res := call(q, qd, qdd, friction, out=out)) is not None:
            return res
        if f_ext is not None and (res := self._one_with_wrenches("inverse_dynamics", q, (qd, qdd), f_ext,
                                                                  (friction,), out)) is not None:
            return res
        q, qd, qdd = joint_arrays(self.dof, q=q, qd=qd, qdd=qdd)
        if out is not None:
            out = output_array(out, q.shape, q, qd, qdd)
        if self._mimic is None:
            return self._full_inverse_dynamics(q, qd, qdd, f_ext, friction, out)
        tau = self._full_inverse_dynamics(*self.to_all_joints(q, qd, qdd), f_ext, friction)
        return deliver(self.to_coordinates(tau), out)

    @direct_call("forward_dynamics", 3, ("friction", "out"))
    def forward_dynamics(self, q, qd, tau, f_ext: Mapping | None = None, friction: bool = True,
                         smooth_friction: float | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Joint accelerations qdd (..., n) solving M qdd = tau - C qd - g - tau_friction + J^T f_ext.

        ``smooth_friction`` (rad/s): replace sgn(qd) in Coulomb friction by
        tanh(qd / smooth_friction), for simulation.  Raises ModelError naming
        the joints when M(q) is singular.
        """
        if smooth_friction is not None:
            smooth_friction = smooth_width(smooth_friction)
        if f_ext is None and (res := self._threads.data["forward_dynamics"](
                q, qd, tau, smooth_friction or 0.0, friction, out=out)) is not None:
            return res
        if f_ext is not None and (res := self._one_with_wrenches("forward_dynamics", q, (qd, tau), f_ext,
                                                                  (smooth_friction or 0.0, friction), out)) is not None:
            return res
        q, qd, tau = joint_arrays(self.dof, q=q, qd=qd, tau=tau)
        if out is not None:
            out = output_array(out, q.shape, q, qd, tau)
        if self._mimic is None:
            return self.compute("forward_dynamics", q, qd, tau, f_world=self._body_forces(q, f_ext),
                                friction=friction, smooth_friction=smooth_friction, out=out)
        M = self.mass_matrix(q)
        m = self.model
        q, qd = self.to_all_joints(q, qd)
        h = self.compute("inverse_dynamics", q, qd, np.zeros_like(q), f_world=self._body_forces(q, f_ext), friction=0)
        if friction:
            h = h + friction_torques(m, qd, smooth=smooth_friction)
        return deliver(solve_mass(self._mimic.solve_view(m), M, tau - self.to_coordinates(h)), out)

    @direct_call("mass_matrix", 1, ("out",))
    def mass_matrix(self, q, out: np.ndarray | None = None) -> np.ndarray:
        """Joint-space inertia M(q) (..., n, n), armature on the diagonal; ``out`` as in
        :meth:`inverse_dynamics`."""
        if (res := self._threads.data["mass_matrix"](q, out=out)) is not None:
            return res
        (q,) = joint_arrays(self.dof, q=q)
        if out is not None:
            out = output_array(out, q.shape + (self.dof,), q)
        if self._mimic is None:
            return self.compute("mass_matrix", q, out=out)
        return deliver(self.to_coordinates(self.compute("mass_matrix", self.to_all_joints(q)[0]), matrix=True), out)

    @direct_call("coriolis_matrix", 2)
    def coriolis_matrix(self, q, qd) -> np.ndarray:
        """Coriolis matrix C(q, qd) (..., n, n) in Christoffel form: dM/dt - 2C is skew."""
        if (out := self._threads.data["coriolis_matrix"](q, qd)) is not None:
            return out
        q, qd = joint_arrays(self.dof, q=q, qd=qd)
        return self.to_coordinates(self.compute("coriolis_matrix", *self.to_all_joints(q, qd)), matrix=True)

    @direct_call("gravity_torques", 1)
    def gravity_torques(self, q) -> np.ndarray:
        """Gravity torques g(q) (..., n)."""
        if (out := self._threads.data["gravity_torques"](q)) is not None:
            return out
        (q,) = joint_arrays(self.dof, q=q)
        return self.to_coordinates(self.compute("gravity_torques", self.to_all_joints(q)[0]))

    @direct_call("bias_torques", 2)
    def bias_torques(self, q, qd) -> np.ndarray:
        """C(q, qd) qd + g(q) (..., n), friction not included."""
        if (out := self._threads.data["bias_torques"](q, qd)) is not None:
            return out
        q, qd = joint_arrays(self.dof, q=q, qd=qd)
        return self.to_coordinates(self.compute("bias_torques", *self.to_all_joints(q, qd)))

    def composed_vectors(self, q) -> "ComposedVectors":
        """The paper's composed vectors at q (..., n): vω_α, PL_α, XY_βγ, a_γα, brackets.

        Returns a :class:`composedyn.dynamics.reference.composed.ComposedVectors`; its
        ``mass_matrix`` excludes the armature, and ``generalized_forces(FN)``
        gives Q_γ = FN ∘ vω_γ for any composed force-torque vector (see
        :func:`composedyn.dynamics.reference.composed.gravity_FN` and ``wrench_FN``).
        """
        from composedyn.dynamics.array_api.composed import composed_vectors
        from composedyn.dynamics.array_api.model import from_robot

        (q,) = joint_arrays(self.dof, q=q)
        return composed_vectors(from_robot(self), self.to_all_joints(q)[0])  # all joints, mimic included

    def _one_with_wrenches(self, name: str, q, rates: tuple, f_ext, options: tuple, out):
        """One sample of ``name`` with link wrenches through C callers
        (:func:`composedyn.link_wrenches.one_sample`), or None for the general path."""
        if self._mimic is not None:
            return None
        f = wrenches(f_ext, self.model.link_names)
        if not f:
            return None
        body_of, com_of = self._link_bodies
        return one_sample(self._threads.data, name, q, rates, f, self._frame_index, body_of, com_of, self.model.n,
                          options, out)

    @cached_property
    def _link_bodies(self) -> tuple:
        """(link -> its body (-1: welded to the world), link -> its centre of mass in link axes (3,))."""
        m = self.model
        return dict(zip(m.link_names, (int(b) for b in m.link_body))), dict(zip(m.link_names, m.link_com))

    def _body_forces(self, q: np.ndarray, f_ext: Mapping | None):
        """The bodies' spatial forces (..., n, 6) of the link wrenches ``f_ext`` (checked here) at
        all-joint q (:func:`composedyn.link_wrenches.body_forces`), or None without wrenches."""
        f = wrenches(f_ext, self.model.link_names)
        if not f:
            return None
        ids = self._frame_index
        return body_forces(lambda q, link: self.compute("frame_pose", q, frame=ids[link]), q, f, *self._link_bodies,
                           self.model.n)

    # ---- energy ------------------------------------------------------
    def kinetic_energy(self, q, qd) -> np.ndarray:
        """Kinetic energy T (...,) in J: 1/2 qd^T M(q) qd, armature included."""
        q, qd = joint_arrays(self.dof, q=q, qd=qd)
        return kinetic_energy(self.model, *self.to_all_joints(q, qd))

    def potential_energy(self, q) -> np.ndarray:
        """Gravitational potential energy V (...,) in J: -sum m_i g . c_i over moving bodies
        (links welded to the fixed base left out; zero at the world origin)."""
        (q,) = joint_arrays(self.dof, q=q)
        return potential_energy(self.model, self.to_all_joints(q)[0])

    def energy(self, q, qd) -> np.ndarray:
        """Total mechanical energy T + V (...,) in J."""
        q, qd = joint_arrays(self.dof, q=q, qd=qd)
        q, qd = self.to_all_joints(q, qd)
        return kinetic_energy(self.model, q, qd) + potential_energy(self.model, q)

    # ---- model mismatch ----------------------------------------------
    def perturbed(self, scale: float = 0.1, seed: int | None = 0) -> "Robot":
        """A copy whose link masses and inertias are off by up to ``scale`` (0.1 = 10 %).

        Each link's mass and inertia tensor are multiplied by one factor drawn
        uniformly from [1 - scale, 1 + scale] (``numpy.random.default_rng(seed)``),
        which keeps every link physically consistent.  For studying how a
        model-based controller copes with a wrong model.
        """
        return type(self)(perturbed_graph(self.graph, self.name, scale, seed), mimic=self._mimic_mode)

    # ---- export --------------------------------------------------------
    def to_urdf(self, path) -> "Path":
        """Write this robot's kinematic graph as a URDF file at ``path``; return the path.

        Inertials at the centre of mass, limits, damping/friction, mimic and a
        non-standard ``armature`` attribute (see :mod:`composedyn.importers.urdf_export`).
        """
        from composedyn.importers.urdf_export import to_urdf

        return to_urdf(self.graph, path)

    # ---- speed ---------------------------------------------------------
    def warm_up(self, batch: bool = False) -> dict:
        """Compile (or load from the on-disk cache) the compiled dynamics and task-space
        kernels now, so that a controller's first call does not pause; ``batch=True`` also the
        trajectory loops.  Returns the seconds each kernel's first call took.  Writes one line per
        group on stderr when kernels had to be compiled (not found in the install's or the
        per-user cache)."""
        from composedyn.kernels.warm import Steps

        steps = Steps(2 if batch else 1)
        compiled = self._threads.arrays is not None
        times = steps.run("dynamics and task space", lambda: dispatch.warm_up(self.model, entries_too=compiled))
        if batch:
            times = steps.run("trajectory loops", lambda: dispatch.warm_up(self.model, batch=True, entries_too=False))
        return times

    @property
    def fast(self) -> "FastDynamics":
        """The compiled quantities for control loops (this thread's), without the general path or
        mimic reduction (all-joint coordinates); see :mod:`composedyn.dynamics.compiled.fast`."""
        threads = self._threads
        fd = threads.fast
        if fd is None:
            from composedyn.dynamics.compiled.fast import FastDynamics

            fd = threads.fast = FastDynamics(self.model, Data(self.arrays))
        return fd

    # ---- task space ----
    @cached_property
    def _frame_index(self) -> dict:
        """Frame name -> its index in the model's frames (the task-space quantities' option)."""
        return {name: k for k, name in enumerate(self.model.link_names)}

    def _frame_path(self, name: str, q, frame, reference, qd=_ABSENT, qdd=_ABSENT):
        """The task-space quantity ``name`` of one frame through its C caller, or None.

        Taken when ``frame`` is one of ``frame_names`` and ``reference`` "world" or
        "local": the caller checks that q (and qd, qdd when passed) are float64 vectors
        of n entries, finite.  Anything else returns None and the method's general path
        (:mod:`composedyn.task_space`) converts and raises the named error.  Explicit
        arguments rather than ``*rates``: unpacking costs more than the checks.
        """
        try:
            k, local = self._frame_index[frame], REFERENCES[reference]
        except (KeyError, TypeError):  # unknown or unhashable: the general path names it
            return None
        call = self._threads.data[name]
        if qd is _ABSENT:
            return call(q, k) if name == "frame_pose" else call(q, k, local)
        if qdd is _ABSENT:
            return call(q, qd, k, local)
        return call(q, qd, qdd, k, local)

    @property
    def frame_names(self) -> tuple:
        """Every link frame (links merged by fixed joints included; DH links as in the table)."""
        return self.model.link_names

    @direct_call("frame_pose", 1, ("frame",), frame=2)
    def frame_pose(self, q, frame: str) -> np.ndarray:
        """World <- ``frame`` homogeneous transform (..., 4, 4) at q (..., dof)."""
        if (out := self._frame_path("frame_pose", q, frame, "world")) is not None:
            return out
        return _task_space.frame_pose(self, q, frame)

    @direct_call("jacobian", 1, ("frame", "reference"), frame=1)
    def jacobian(self, q, frame: str, reference: str = "world") -> np.ndarray:
        """Frame Jacobian (..., 6, dof), linear rows first: ``"world"`` = origin velocity and
        angular velocity in world axes (Pinocchio LOCAL_WORLD_ALIGNED), ``"local"`` = frame axes."""
        if (out := self._frame_path("jacobian", q, frame, reference)) is not None:
            return out
        return _task_space.jacobian(self, q, frame, reference)

    @direct_call("frame_velocity", 2, ("frame", "reference"), frame=1)
    def frame_velocity(self, q, qd, frame: str, reference: str = "world") -> np.ndarray:
        """Frame twist (..., 6) = J(q) qd, linear first (m/s, rad/s)."""
        if (out := self._frame_path("frame_velocity", q, frame, reference, qd)) is not None:
            return out
        return _task_space.frame_velocity(self, q, qd, frame, reference)

    @direct_call("frame_acceleration", 3, ("frame", "reference"), frame=1)
    def frame_acceleration(self, q, qd, qdd, frame: str, reference: str = "world") -> np.ndarray:
        """Classical acceleration (..., 6) of the frame origin and angular acceleration:
        J qdd + Jdot qd (qdd = 0 gives Jdot qd)."""
        if (out := self._frame_path("frame_acceleration", q, frame, reference, qd, qdd)) is not None:
            return out
        return _task_space.frame_acceleration(self, q, qd, qdd, frame, reference)

    def center_of_mass(self, q) -> np.ndarray:
        """Centre of mass (..., 3) of the moving bodies in world coordinates (links welded to
        the fixed base excluded, as pinocchio.centerOfMass)."""
        if (out := self._threads.data["center_of_mass"](q)) is not None:
            return out
        return _task_space.center_of_mass(self, q)

    def com_jacobian(self, q) -> np.ndarray:
        """Jacobian of :meth:`center_of_mass` (..., 3, dof)."""
        if (out := self._threads.data["com_jacobian"](q)) is not None:
            return out
        return _task_space.com_jacobian(self, q)

    center_of_mass_velocity = declared("center_of_mass_velocity", ("q", "qd"), "Velocity (..., 3) of the centre of "
                                       "mass, world coordinates (m/s): J_com(q) qd, for q, qd (..., dof).")

    def centroidal_momentum_matrix(self, q) -> np.ndarray:
        """A_G(q) (..., 6, dof): centroidal momentum h_G = A_G qd, linear (kg m/s) then angular about the
        centre of mass (kg m²/s), world axes, over the moving bodies (Orin, Goswami and Lee, "Centroidal
        dynamics of a humanoid robot", Auton. Robots 2013, eq. (13); Pinocchio's ``computeCentroidalMap``);
        dependent mimic joints through their coordinates.  The array-API algorithm on NumPy arrays."""
        from composedyn.dynamics.array_api.frames import centroidal_momentum_matrix

        (q,) = joint_arrays(self.dof, q=q)
        return np.asarray(centroidal_momentum_matrix(self._numpy_model, q), dtype=float)

    @cached_property
    def _numpy_model(self):
        """This robot's array-API model on NumPy arrays (made once)."""
        from composedyn.dynamics.array_api.model import from_robot, on

        return on(from_robot(self), np)

    def centroidal_momentum(self, q, qd) -> np.ndarray:
        """h_G (..., 6) = A_G(q) qd: linear momentum (kg m/s), angular momentum about the centre of mass
        (kg m²/s), world axes."""
        q, qd = joint_arrays(self.dof, q=q, qd=qd)
        return np.einsum("...ij,...j->...i", self.centroidal_momentum_matrix(q), qd)

    def task_inertia(self, q, frame: str, reference: str = "world", translational: bool = False,
                     damping: float = 0.0) -> np.ndarray:
        """Task-space inertia Lambda = (J M^-1 J^T)^-1 (..., 6, 6), or (..., 3, 3) with
        ``translational=True``; see :mod:`composedyn.dynamics.reference.task_inertia` (``damping``)."""
        return _task_space.task_inertia(self, q, frame, reference, translational, damping)

    def inverse_kinematics(self, frame: str, target, q0=None, position_only: bool = False, **options):
        """Joint positions placing ``frame`` at ``target`` (4x4, or a 3-vector with
        ``position_only``) within the joint limits; see :func:`composedyn.ik.inverse_kinematics`."""
        from composedyn.ik import inverse_kinematics

        return inverse_kinematics(self, frame, target, q0=q0, position_only=position_only, **options)

    # ---- identification ----
    def regressor(self, q, qd, qdd, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
        """Joint torque regressor Y (..., dof, 10 bodies [+ 3 or 4 per joint]), tau = Y @ parameters.

        Pinocchio's ``computeJointTorqueRegressor`` layout: per body ``[m, m cx, m cy, m cz, Ixx,
        Ixy, Iyy, Ixz, Iyz, Izz]`` in the body's joint frame, inertia about its origin, so that
        ``regressor(q, qd, qdd) @ inertial_parameters()`` is the inverse dynamics without
        friction and armature.  ``joint_terms=True`` appends per joint ``[fv, fc, Ia]`` (columns
        qd, sgn qd, qdd) and with ``offset=True`` a constant ``off``; see
        :mod:`composedyn.parameters`.
        """
        from composedyn.parameters import regressor

        return regressor(self, q, qd, qdd, joint_terms=joint_terms, offset=offset)

    def inertial_parameters(self, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
        """The parameters (P,) in the regressor's column order: standard inertial parameters (10 per
        body), then with ``joint_terms`` each joint's [damping, Coulomb friction, armature(, offset 0)],
        so that ``regressor(q, qd, qdd, joint_terms=True) @ inertial_parameters(joint_terms=True)`` is
        the inverse dynamics with friction and armature."""
        from composedyn.parameters import parameters

        return parameters(self, joint_terms=joint_terms, offset=offset)

    def parameter_names(self, joint_terms: bool = False, offset: bool = False) -> tuple:
        """Names of the regressor columns (``"m1"``, ``"mx1"``, ..., ``"fv1"``, ...)."""
        from composedyn.parameters import parameter_names

        return parameter_names(self, joint_terms=joint_terms, offset=offset)

    def base_parameters(self, joint_terms: bool = False, offset: bool = False, samples: int = 60,
                        seed: int | None = 0):
        """Identifiable parameter combinations (:class:`composedyn.dynamics.reference.base_parameters.BaseParameters`),
        from the regressor at ``samples`` random states; computed once per set of arguments."""
        from composedyn.parameters import cached_base_parameters

        return cached_base_parameters(self, joint_terms, offset, samples, seed)

    # ---- derivatives ----
    def inverse_dynamics_derivatives(self, q, qd, qdd, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None,
                                     out: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(d tau / d q, d tau / d qd), each (..., n, n), of :meth:`inverse_dynamics`: analytic,
        O(n * depth).  ``smooth_friction``: differentiate the tanh Coulomb model instead of the
        sign (whose derivative, 0 away from qd = 0, is returned as 0 at qd = 0); external
        wrenches stay fixed in world axes.  ``out``: a tuple of two writeable C-contiguous float64
        arrays of the results' shape, written and returned (the compiled batch loops write into it).  See
        :mod:`composedyn.derivatives`."""
        from composedyn.derivatives import inverse_dynamics_derivatives

        return inverse_dynamics_derivatives(self, q, qd, qdd, f_ext, friction, smooth_friction, out)

    def forward_dynamics_derivatives(self, q, qd, tau, f_ext: Mapping | None = None, friction: bool = True,
                                     smooth_friction: float | None = None,
                                     out: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(d qdd / d q, d qdd / d qd, d qdd / d tau = M^-1), each (..., n, n), of
        :meth:`forward_dynamics`: -M^-1 d tau / d x at qdd = forward dynamics.  ``out``: a tuple of
        three arrays, as in :meth:`inverse_dynamics_derivatives`."""
        from composedyn.derivatives import forward_dynamics_derivatives

        return forward_dynamics_derivatives(self, q, qd, tau, f_ext, friction, smooth_friction, out)

    def linearize(self, q, qd, tau, dt: float | None = None, f_ext: Mapping | None = None, friction: bool = True,
                  smooth_friction: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) of xdot = f(x, u), x = (q, qd), u = tau: (..., 2n, 2n), (..., 2n, n); with ``dt``
        (s) the exact zero-order-hold discrete pair.  See :func:`composedyn.derivatives.linearize`."""
        from composedyn.derivatives import linearize

        return linearize(self, q, qd, tau, dt, f_ext, friction, smooth_friction)

    # ---- for functions built on the robot ----
    @property
    def mimic_mode(self) -> str:
        """How mimic joints are handled, as given to the constructor: ``"dependent"`` (mimic joints follow
        their leader and are not coordinates) or ``"independent"`` (every joint is a coordinate).  Pass it on
        to build a robot of the same kind from a changed graph."""
        return self._mimic_mode

    # ---- tensors ----
    # ---- configuration space -----------------------------------------
    @cached_property
    def joints(self) -> tuple:
        """The joint records (name, kind, nq, nv, idx_q, idx_v, axis) of the coordinates, in array
        order (:mod:`composedyn.joint_space`)."""
        return _joint_space.joint_records(self)

    def neutral(self) -> np.ndarray:
        """The neutral configuration (nq,): every joint at 0."""
        return np.zeros(self.nq)

    def random_configuration(self, size=None, seed: int | None = None) -> np.ndarray:
        """Random configurations (*size, nq), uniform within the joint limits (±π where a limit is infinite)."""
        return _joint_space.random_configuration(self, size, seed)

    def integrate(self, q, v, dt: float = 1.0) -> np.ndarray:
        """The configuration (..., nq) reached from q at velocity v in ``dt`` s: q + v dt."""
        return _joint_space.integrate(self, q, v, dt)

    def difference(self, q0, q1) -> np.ndarray:
        """The velocity (..., nv) with integrate(q0, v) = q1: q1 - q0."""
        return _joint_space.difference(self, q0, q1)

    def to_torch(self, device=None, dtype=None):
        """This robot's dynamics on torch tensors (``device``: default torch's; ``dtype``: ``torch.float64``
        (default) or ``torch.float32``), batched and differentiable; see :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_torch

        return to_torch(self, device, dtype)

    def to_jax(self):
        """This robot's dynamics as pure JAX functions (jit, vmap, grad); see :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_jax

        return to_jax(self)
