"""``TreeDynamics``: the methods of a robot computed on its tree of joint models.

The quantities of :class:`composedyn.tree_robot.TreeRobot` (joints of several coordinates anywhere)
and of :class:`composedyn.floating_robot.FloatingRobot` (the base's free-flyer or planar joint at the
root) are one code: every declared quantity runs the compiled kernels of any tree on the robot's
:class:`composedyn.dynamics.array_api.model.ArrayModel` (``robot._tree``, packed by
:func:`composedyn.dynamics.compiled.layout.packed_tree`): one sample through its C caller
(:func:`composedyn.robot.direct_call`), a batch through the declaration's batch loop.  Dependent mimic
joints run on the tree's coordinates (every joint: q_full = Gq q + bq, rates Gv x) and their results are
reduced (Gvᵀ τ, Gvᵀ A Gv, J Gv; Kolev's projection).  Under ``COMPOSEDYN_BACKEND=numpy`` the array-API
algorithms run on NumPy (:mod:`composedyn.tensors.arrays`, the same source as ``to_torch`` and
``to_jax``), link wrenches entering as Σ J_cᵀ w (:func:`composedyn.task_space.wrench_forces`).

Array shapes: q (..., nq); v, a and generalised forces (..., nv); leading batch axes broadcast.  A
class using this sets ``_tree``, ``_link_body`` (link -> its tree body, -1 welded to the world) and
``_link_com`` (link -> centre of mass (3,), link frame, m), and has ``name``, ``nq``, ``nv``,
``frame_names``, ``mass`` and ``_state`` (the checked arguments).
"""

from __future__ import annotations

from functools import cached_property
from typing import Mapping

import numpy as np

from composedyn.checks import output_array, output_arrays, smooth_width, wrenches
from composedyn.dynamics import dispatch as _dispatch
from composedyn.dynamics.array_api.joints import unit_part
from composedyn.dynamics.data import Data, ThreadData
from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.reference.spatial import skew
from composedyn.link_wrenches import body_forces, one_sample
from composedyn.robot import direct_call
from composedyn.task_space import local_flag

# The declared quantities the methods compute on the tree
QUANTITIES = frozenset({"inverse_dynamics", "forward_dynamics", "mass_matrix", "gravity_torques", "bias_torques",
                        "coriolis_matrix", "center_of_mass", "com_jacobian", "regressor", "frame_pose", "jacobian",
                        "frame_velocity", "frame_acceleration"})

# What robot.fast offers: those, and the derivatives of inverse and forward dynamics (compiled for every tree)
FAST = QUANTITIES | {"inverse_dynamics_derivatives", "forward_dynamics_derivatives"}

# The result of each declared quantity that has generalised-force rows or velocity columns: (rows, columns)
_REDUCED = {"inverse_dynamics": (1, 0), "forward_dynamics": (1, 0), "gravity_torques": (1, 0),
            "bias_torques": (1, 0), "mass_matrix": (1, 1), "coriolis_matrix": (1, 1), "regressor": (1, 0),
            "jacobian": (0, 1), "com_jacobian": (0, 1), "inverse_dynamics_derivatives": (1, 1)}


class TreeDynamics:
    """The dynamics and task-space methods of a robot computed on its tree (module docstring)."""

    FAST_QUANTITIES = FAST  # what robot.fast offers

    # ---- compiled state ----
    @property
    def fast(self):
        """The compiled quantities of :attr:`FAST_QUANTITIES` for control loops (this thread's), without
        the general path: q (nq,) or (N, nq), rates (nv,) or (N, nv) as float64 arrays, a frame by its
        index in :attr:`frame_names`; see :mod:`composedyn.dynamics.compiled.fast`.  With dependent
        mimic joints, on the tree's coordinates, every joint's, as a fixed-base ``Robot.fast``: q is
        :meth:`full_positions` (q), rates are ``mimic_jacobian @ v``, and results are not reduced
        (Gvᵀ τ, Gvᵀ M Gv give the robot's)."""
        threads = self._threads
        if threads.fast is None:
            from composedyn.dynamics.compiled.fast import FastDynamics

            threads.fast = FastDynamics(None, Data(threads.arrays), names=self.FAST_QUANTITIES, name=self.name)
        return threads.fast

    @cached_property
    def _threads(self) -> ThreadData:
        """This robot's compiled state per thread (``.data``: its quantities' C callers, see
        :mod:`composedyn.dynamics.data`) on its tree; with dependent mimic joints the callers return
        None (the tree's coordinates are every joint's: :meth:`_compute` maps them)."""
        from composedyn.dynamics.compiled.layout import packed_tree

        return ThreadData(packed_tree(self._tree), direct=self._tree.Gv is None)

    @property
    def data(self):
        """This thread's compiled data: ``data[name]`` the C caller of a declared quantity on this robot."""
        return self._threads.data

    @cached_property
    def numpy(self):
        """The array-API algorithms on NumPy arrays (:class:`composedyn.tensors.arrays.NumpyDynamics`):
        this robot's NumPy backend (``COMPOSEDYN_BACKEND=numpy``)."""
        from composedyn.tensors.arrays import NumpyDynamics

        return NumpyDynamics(self, self._tree)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_threads", "numpy")}  # pickled without them

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---- the general path ----
    def _check_units(self, q: np.ndarray) -> None:
        """ValueError naming the joint whose quaternion (or planar (cos, sin)) has a norm below 1e-12."""
        for j in self._tree.coordinate_joints:
            part = unit_part(j)
            if part is not None:
                x = q[..., j.idx_q:j.idx_q + j.nq][..., part]
                if np.any(np.linalg.norm(x, axis=-1) < 1e-12):
                    what = "quaternion" if part.stop - part.start == 4 else "(cos, sin) pair"
                    raise ValueError(f"q: the {what} of joint {j.name!r} (q[{j.idx_q + part.start}:"
                                     f"{j.idx_q + part.stop}]) has zero norm")

    def _expand(self, q, *rates) -> tuple:
        """Coordinates -> the tree's (every joint's) with dependent mimic joints: q_full = Gq q + bq,
        rates Gv x; unchanged without them."""
        t = self._tree
        if t.Gv is None:
            return (q, *rates)
        return (q @ t.Gq.T + t.bq, *(x @ t.Gv.T for x in rates))

    def _reduce(self, name: str, x: np.ndarray) -> np.ndarray:
        """A result of the quantity ``name`` on the tree's coordinates -> these coordinates: Gᵀ τ,
        Gᵀ A G, J G, Gᵀ Y (by the declared result's shape); unchanged without dependent mimic joints."""
        G = self._tree.Gv
        if G is None:
            return x
        rows, cols = _REDUCED.get(name, (0, 0))
        if rows and cols:
            return np.swapaxes(G, 0, 1) @ x @ G
        if rows:  # a regressor's rows, or a vector of generalised forces
            return np.swapaxes(G, 0, 1) @ x if name == "regressor" else x @ G
        return x @ G if cols else x

    def _compute(self, name: str, inputs: tuple, numpy_call, out=None, f_ext: dict | None = None, **options):
        """The declared quantity ``name`` at checked ``inputs`` (q (..., nq), rates (..., nv)): the
        compiled batch loop on the tree (one sample as a batch of one; dependent mimic joints through
        :meth:`_expand` / :meth:`_reduce`), or ``numpy_call()`` under the NumPy backend (which applies
        the wrenches itself).  ``f_ext``: checked link wrenches or None.  A sample the loop refuses
        raises its named error (a zero quaternion; a singular mass matrix)."""
        if out is not None:
            out = output_array(out, inputs[0].shape[:-1] + self._result_shape(name), *inputs)
        if _dispatch.backend() == "numpy":
            from composedyn.tensors.arrays import numpy_result

            self._check_units(inputs[0])
            return _dispatch.deliver(numpy_result(self.name, name, numpy_call), out)
        mimic = self._tree.Gv is not None
        full = self._expand(*inputs)
        extra = {"f_world": self._body_forces(inputs[0], f_ext)} if f_ext else {}
        res = _dispatch.call(name, None, self._threads.arrays, *full, out=None if mimic else out, refuse=True,
                             **extra, **options)
        if res is None:
            self._check_units(inputs[0])
            raise ModelError(f"robot {self.name!r}: {name}: the mass matrix is singular at q (a massless body "
                             "moved by a joint)")
        return _dispatch.deliver(self._reduce(name, res), out) if mimic else res

    def _result_shape(self, name: str) -> tuple:
        nv = self.nv
        return (nv, nv) if name in ("mass_matrix", "coriolis_matrix") else (nv,)

    def _one_with_wrenches(self, name: str, q, rates: tuple, f: dict, options: tuple, out):
        """One sample of ``name`` with checked link wrenches ``f`` through C callers
        (:func:`composedyn.link_wrenches.one_sample`; none with dependent mimic joints), or None."""
        return one_sample(self.data, name, q, rates, f, self._frame_index, self._link_body, self._link_com,
                          len(self._tree.joints), options, out)

    def _body_forces(self, q: np.ndarray, f: dict, lever_arms: bool = False):
        """Checked link wrenches ``f`` as the tree bodies' spatial forces (..., n, 6) of the compiled
        kernels, with the lever-arm matrices P (..., n, 9) of the derivative kernels when
        ``lever_arms`` (:func:`composedyn.link_wrenches.body_forces`)."""
        return body_forces(self.frame_pose, q, f, self._link_body, self._link_com, len(self._tree.joints),
                           lever_arms)

    def _wrench_forces(self, q: np.ndarray, f: dict):
        """The generalised forces (..., nv) of checked link wrenches ``f`` for the NumPy backend
        (:func:`composedyn.task_space.wrench_forces`); 0 without wrenches."""
        from composedyn.task_space import wrench_forces

        return wrench_forces(self, q, f, self._link_com) if f else 0.0

    def _mimic_forward(self, q, v, tau, f: dict, friction: bool, smooth_friction) -> np.ndarray:
        """Forward dynamics with dependent mimic joints: M a = tau - Gᵀ h(q_full, v_full), M = Gᵀ M_full G
        (Kolev's projection), solved with the joints named when M is singular."""
        from types import SimpleNamespace

        from composedyn.dynamics.reference.forward import solve_mass
        from composedyn.dynamics.reference.friction import friction_torques

        t = self._tree
        h = self._compute("inverse_dynamics", (q, v, np.zeros(v.shape)), None, f_ext=f, friction=False)
        if friction:  # the law of the kernels on every joint's rate, then reduced
            terms = SimpleNamespace(damping=t.damping, friction=t.coulomb)
            h = h + self._reduce("inverse_dynamics", friction_torques(terms, self._expand(q, v)[1], smooth_friction))
        names = SimpleNamespace(n=self.nv, joint_names=tuple(j.name for j in t.coordinate_joints), source=t.source)
        return solve_mass(names, self.mass_matrix(q), tau - h)

    def _derivatives(self, name: str, q, v, x, f_ext, friction: bool, smooth_friction, out: tuple | None = None):
        """The derivatives ``name`` (``inverse_dynamics_derivatives`` or ``forward_dynamics_derivatives``;
        one sample or a batch; link wrenches ``f_ext`` held in world axes): the compiled kernels, or under
        the NumPy backend the algorithm of any joints on NumPy arrays (:meth:`array_derivatives`); written
        into ``out`` (a tuple of arrays of the results' shape) when given."""
        if smooth_friction is not None:
            smooth_friction = smooth_width(smooth_friction)
        compiled = _dispatch.backend() != "numpy"
        forward = name.startswith("forward")
        if compiled and f_ext is None and \
                (res := self.data[name](q, v, x, smooth_friction or 0.0, friction)) is not None:  # one sample: C
            return res if out is None else _dispatch.deliver(res, output_arrays(out, len(res), res[0].shape, q, v, x))
        q, v, x = self._state(q, v, x, names=("v", "tau" if forward else "a"))
        if out is not None:
            out = output_arrays(out, 3 if forward else 2, q.shape[:-1] + (self.nv, self.nv), q, v, x)
        f = wrenches(f_ext, self.frame_names)
        if not compiled:
            return _dispatch.deliver(self.array_derivatives(forward, q, v, x, friction, smooth_friction, f), out)
        if (res := self.tree_derivatives(forward, q, v, x, friction, smooth_friction, f, out)) is not None:
            return res
        self._check_units(q)
        raise ModelError(f"robot {self.name!r}: {name}: the mass matrix is singular at q")

    def tree_derivatives(self, forward: bool, q, v, x, friction: bool, smooth_friction, f: dict | None = None,
                         out: tuple | None = None):
        """The derivatives of inverse dynamics (dtau/dq, dtau/dv) at checked (q, v, a = x), or of forward
        dynamics (da/dq, da/dv, M⁻¹) at (q, v, tau = x) with ``forward``, on the tree; None for a sample
        the kernels refuse.  With dependent mimic joints: those of inverse dynamics at the tree's
        coordinates (q_full = Gq q + bq moves by Gv dq on the configuration space) reduced as Gvᵀ D Gv,
        at a = forward dynamics for the forward ones (-M⁻¹ dτ, M⁻¹: Carpentier and Mansard, "Analytical
        derivatives of rigid body dynamics algorithms", RSS 2018, Sec. V).  ``f``: checked link wrenches
        (held in world axes), or None; ``out``: checked arrays to write the results into, or None."""
        from composedyn.derivatives import forward_from_inverse

        smooth = 0.0 if smooth_friction is None else smooth_width(smooth_friction)
        mimic = self._tree.Gv is not None
        if mimic or f:  # inverse-dynamics derivatives at the accelerations
            name = "inverse_dynamics_derivatives"
            a = self.forward_dynamics(q, v, x, f_ext=f or None, friction=friction, smooth_friction=smooth_friction) \
                if forward else x
            full = self._expand(q, v, a)
        else:
            name = f"{'forward' if forward else 'inverse'}_dynamics_derivatives"
            full = (q, v, x)
        extras = dict(zip(("f_world", "P"), self._body_forces(q, f, lever_arms=True))) if f else {}
        direct = name == "forward_dynamics_derivatives" or not (mimic or forward)  # the kernel's results as they are
        res = _dispatch.call(name, None, self._threads.arrays, *full, refuse=True, friction=friction,
                             smooth_friction=smooth, out=out if direct else None, **extras)
        if res is None or direct:
            return res
        dq, dv = (self._reduce(name, d) for d in res)
        return _dispatch.deliver(forward_from_inverse(dq, dv, self.mass_matrix(q)) if forward else (dq, dv), out)

    def array_derivatives(self, forward: bool, q, v, x, friction: bool, smooth_friction, f: dict | None = None):
        """:meth:`tree_derivatives` by the algorithm of any joints on NumPy arrays
        (:func:`composedyn.dynamics.array_api.derivatives.rnea_derivatives`), the NumPy backend's.  Same
        arguments and results; the forward ones are -M⁻¹ dτ and M⁻¹ at a = forward dynamics (which refuses
        a singular mass matrix)."""
        from composedyn.derivatives import forward_from_inverse
        from composedyn.dynamics.array_api.derivatives import rnea_derivatives

        self._check_units(q)
        a = self.forward_dynamics(q, v, x, f_ext=f or None, friction=friction, smooth_friction=smooth_friction) \
            if forward else x
        t, batch = self._tree, q.shape[:-1]
        full = self._expand(q, v, a)
        fw, P = self._body_forces(q, f, lever_arms=True) if f else (None, None)

        def rows(y):
            return None if y is None else np.ascontiguousarray(y, dtype=float).reshape((-1,) + y.shape[len(batch):])

        dq, dv = rnea_derivatives(t, *(rows(y) for y in full), rows(fw), rows(P))
        if friction:
            vf = rows(full[1])
            d = np.broadcast_to(t.damping, vf.shape).copy()
            if smooth_friction is not None and (w := smooth_width(smooth_friction)) > 0.0:
                d += t.coulomb * (1.0 - np.tanh(vf / w) ** 2) / w
            k = np.arange(t.nv_full)
            dv[:, k, k] += d
        dq, dv = (self._reduce("inverse_dynamics_derivatives", y.reshape(batch + y.shape[1:])) for y in (dq, dv))
        return forward_from_inverse(dq, dv, self.mass_matrix(q)) if forward else (dq, dv)

    def linearize(self, q, v, tau, dt: float | None = None, f_ext: Mapping | None = None, friction: bool = True,
                  smooth_friction: float | None = None):
        """(A, B), (..., 2 nv, 2 nv) and (..., 2 nv, nv): the linearisation of the flow in the error state
        (q ⊕ δq, v + δv), δq in the tangent space at q (the error state of a Lie-group Kalman filter or
        iLQR).  Each joint's configuration moves as q̇ = q v on its own space, so δq̇ = δv - ad_v δq
        per joint (ad_v: v × on a free-flyer joint's twist, linear first, ad_(u,ω)(p, θ) = (ω × p + u × θ,
        ω × θ); ω × on a spherical joint's; the planar analogue; 0 on joints whose configuration adds):
        A = [[-ad_v, 1], [da/dq, da/dv]], B = [[0], [M⁻¹]] (Solà, Deray, Atchuthan, "A micro Lie theory
        for state estimation in robotics", 2018).  With ``dt`` (s) the zero-order-hold pair
        (:func:`composedyn.derivatives.discretize`): it maps (δq, δv) at t to (δq, δv) at t + dt,
        δq(t + dt) = difference(q_ref(t + dt), q(t + dt))."""
        from composedyn.derivatives import discretize

        aq, av, Minv = self.forward_dynamics_derivatives(q, v, tau, f_ext=f_ext, friction=friction,
                                                         smooth_friction=smooth_friction)
        q, v = self._state(q, v)
        n, batch = self.nv, Minv.shape[:-2]
        A = np.zeros(batch + (2 * n, 2 * n))
        A[..., :n, n:] = np.eye(n)
        A[..., :n, :n] = -np.broadcast_to(self._error_adjoint(v), batch + (n, n))
        A[..., n:, :n], A[..., n:, n:] = aq, av
        B = np.zeros(batch + (2 * n, n))
        B[..., n:, :] = Minv
        return (A, B) if dt is None else discretize(A, B, dt)

    def _error_adjoint(self, v: np.ndarray) -> np.ndarray:
        """ad_v (..., nv, nv), block-diagonal over the joints (:meth:`linearize`;
        :func:`composedyn.dynamics.array_api.joints.velocity_adjoint`)."""
        from composedyn.dynamics.array_api.joints import velocity_adjoint

        out = np.zeros(v.shape[:-1] + (self.nv, self.nv))
        for j in self._tree.coordinate_joints:
            k = slice(j.idx_v, j.idx_v + j.nv)
            block = velocity_adjoint(j, v[..., k])
            if block is not None:
                out[..., k, k] = block
        return out

    # ---- mimic joints ----
    @property
    def mimic_jacobian(self) -> np.ndarray:
        """Gv (nv_full, nv): the tree's velocity coordinates (every joint's, dependent mimic joints included,
        in ``all_joint_names`` order after a floating base's) from the robot's, v_full = Gv v; identity
        without dependent mimic joints."""
        t = self._tree
        return np.eye(t.nv_full) if t.Gv is None else t.Gv.copy()

    def full_positions(self, q) -> np.ndarray:
        """The tree's configuration (..., nq_full) (every joint's coordinates) from q (..., nq): Gq q + bq."""
        (q,) = self._state(q)
        return np.array(self._expand(q)[0], float)

    def mimic_torques(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True) -> np.ndarray:
        """Generalised force (..., n_dep) each dependent mimic joint must carry (``mimic_joint_names``
        order): the tree's inverse dynamics (every joint a coordinate) at its coordinate, what the
        coupling transmits to it; empty (..., 0) without dependent mimic joints.  Same arguments as
        :meth:`inverse_dynamics` (the compiled kernels under either backend)."""
        q, v, a = self._state(q, v, a)
        t = self._tree
        if t.Gv is None:
            return np.zeros(v.shape[:-1] + (0,))
        f = wrenches(f_ext, self.frame_names)
        extra = {"f_world": self._body_forces(q, f)} if f else {}
        tau = _dispatch.call("inverse_dynamics", None, self._threads.arrays, *self._expand(q, v, a), refuse=True,
                             friction=friction, **extra)
        if tau is None:
            self._check_units(q)
            raise ModelError(f"robot {self.name!r}: mimic_torques: a sample the kernels refuse")
        at = {j.name: j.idx_v for j in t.joints}
        return tau[..., [at[name] for name in self.mimic_joint_names]]

    # ---- dynamics ----
    @direct_call("inverse_dynamics", 3, ("friction", "out"))
    def inverse_dynamics(self, q, v, a, f_ext: Mapping | None = None, friction: bool = True,
                         out: np.ndarray | None = None) -> np.ndarray:
        """Generalised forces (..., nv) = M a + C v + g + friction - J^T f_ext (a floating base's
        wrench first: force, moment in base axes).  ``f_ext``: link name -> wrench (..., 6) in world
        axes at the link's centre of mass; ``out``: a float64 C-contiguous array of the result's shape
        to write into and return (as for :meth:`forward_dynamics` and :meth:`mass_matrix`)."""
        if f_ext is None and (res := self.data["inverse_dynamics"](q, v, a, friction, out=out)) is not None:
            return res
        f = wrenches(f_ext, self.frame_names)
        if f and (res := self._one_with_wrenches("inverse_dynamics", q, (v, a), f, (friction,), out)) is not None:
            return res
        q, v, a = self._state(q, v, a)
        return self._compute("inverse_dynamics", (q, v, a),
                             lambda: self.numpy.inverse_dynamics(q, v, a, friction) - self._wrench_forces(q, f),
                             out=out, f_ext=f, friction=friction)

    @direct_call("forward_dynamics", 3, ("friction", "out"))
    def forward_dynamics(self, q, v, tau, f_ext: Mapping | None = None, friction: bool = True,
                         smooth_friction: float | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Accelerations a (..., nv) under the generalised forces tau (..., nv) (a floating base's: the
        derivative of its body twist; its wrench zero in flight); ``smooth_friction`` (rad/s): tanh(v /
        width) in place of sgn(v); ``f_ext`` and ``out`` as in :meth:`inverse_dynamics`."""
        if smooth_friction is not None:
            smooth_friction = smooth_width(smooth_friction)
        if f_ext is None and (res := self.data["forward_dynamics"](
                q, v, tau, smooth_friction or 0.0, friction, out=out)) is not None:
            return res
        f = wrenches(f_ext, self.frame_names)
        if f and (res := self._one_with_wrenches("forward_dynamics", q, (v, tau), f, (smooth_friction or 0.0, friction),
                                                 out)) is not None:
            return res
        q, v, tau = self._state(q, v, tau, names=("v", "tau"))
        if self._tree.Gv is not None and _dispatch.backend() != "numpy":  # M a = tau - h on the coordinates
            if out is not None:
                out = output_array(out, v.shape, q, v, tau)
            return _dispatch.deliver(self._mimic_forward(q, v, tau, f, friction, smooth_friction), out)
        return self._compute("forward_dynamics", (q, v, tau),
                             lambda: self._numpy_forward(q, v, tau + self._wrench_forces(q, f), friction,
                                                         smooth_friction),
                             out=out, f_ext=f, friction=friction, smooth_friction=smooth_friction)

    def _numpy_forward(self, q, v, tau, friction: bool, smooth_friction) -> np.ndarray:
        """Forward dynamics under the NumPy backend, refusing as the compiled kernels do a mass matrix
        with a pivot at or below its floor (:mod:`composedyn.dynamics.pivots`; dependent mimic joints:
        the reduced matrix, which has no floors, is refused only where it is not positive definite)."""
        if self._tree.Gv is None:
            from composedyn.dynamics.compiled.layout import PIVOT
            from composedyn.dynamics.pivots import low_pivots, singular_at

            floors = self._threads.arrays.bodies[1][:self.nv, PIVOT]
            low = np.nonzero(low_pivots(self.numpy.mass_matrix(q), floors).reshape(-1, self.nv).any(axis=0))[0]
            if low.size:
                names = dict.fromkeys(j.name for j in self._tree.joints for k in low if j.idx_v <= k < j.idx_v + j.nv)
                raise ModelError(f"robot {self.name!r}: forward_dynamics: {singular_at(names)}")
        return self.numpy.forward_dynamics(q, v, tau, friction, smooth_friction)

    @direct_call("mass_matrix", 1, ("out",))
    def mass_matrix(self, q, out: np.ndarray | None = None) -> np.ndarray:
        """M(q) (..., nv, nv), armature on the diagonal; ``out`` as in :meth:`inverse_dynamics`."""
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
        """C(q, v) (..., nv, nv) with C v + g = bias forces and Ṁ - 2C skew-symmetric (Pinocchio's
        ``computeCoriolisMatrix``)."""
        if (res := self.data["coriolis_matrix"](q, v)) is not None:
            return res
        q, v = self._state(q, v)
        return self._compute("coriolis_matrix", (q, v), lambda: self.numpy.coriolis_matrix(q, v))

    # ---- energy ----
    def kinetic_energy(self, q, v) -> np.ndarray:
        """1/2 vᵀ M v (...,) in J (armature included, as :meth:`mass_matrix`)."""
        q, v = self._state(q, v)
        return 0.5 * (v[..., None, :] @ self.mass_matrix(q) @ v[..., :, None])[..., 0, 0]

    def potential_energy(self, q) -> np.ndarray:
        """-m g . c (...,) in J: total mass m, centre of mass c in the world."""
        return -self.mass * (self.center_of_mass(q) @ self._tree.gravity)

    def energy(self, q, v) -> np.ndarray:
        """Total mechanical energy T + V (...,) in J."""
        return self.kinetic_energy(q, v) + self.potential_energy(q)

    # ---- composed vectors ----
    def composed_vectors(self, q):
        """The composed vectors of Giacaglia & Lamas at q (..., nq), world axes, over the tree's
        velocity coordinates (every joint's, dependent mimic joints included, as ``Robot``'s):
        vω_α, PL_α, XY_βγ (along the configuration space's directions), a_γα (no armature) and the
        brackets, with ``coriolis_matrix(v)`` = :meth:`coriolis_matrix` without friction and
        ``velocity_terms(v)`` its C v (:mod:`composedyn.dynamics.array_api.composed`).  Gravity acts
        as FN = (m_i g, 0) on each body: ``generalized_forces(FN)`` = -:meth:`gravity_torques`."""
        from composedyn.dynamics.array_api.composed import composed_vectors

        (q,) = self._state(q)
        self._check_units(q)
        return composed_vectors(self._tree, self._expand(q)[0])

    # ---- momentum ----
    def centroidal_momentum_matrix(self, q) -> np.ndarray:
        """A_G(q) (..., 6, nv): centroidal momentum (linear, then angular about the centre of mass), world
        axes, h_G = A_G v (Orin, Goswami, Lee, "Centroidal dynamics of a humanoid robot", Auton. Robots
        2013, eq. (13); Pinocchio's ``ccrba``): the sum over the bodies of m J_c (linear) and
        I_c J_ω + m (c - c_G) × J_c (angular), J_c the world Jacobian of the body's centre of mass c,
        J_ω of its angular velocity, I_c its inertia about c in world axes (the compiled frame
        Jacobians and poses, for one sample; a batch, and the NumPy backend, take the array-API algorithm,
        which is faster on many samples at once)."""
        (q,) = self._state(q)
        self._check_units(q)
        if q.ndim > 1 or _dispatch.backend() == "numpy":
            return np.asarray(self.numpy.centroidal_momentum_matrix(q), float)
        names, R_fb, p_fb, m, c_b, I_b = self._bodies
        T = np.stack([self.frame_pose(q, k) for k in names], -3)  # (..., n, 4, 4): a frame on each body
        J = np.stack([self.jacobian(q, k, "world") for k in names], -3)  # (..., n, 6, nv), at that frame
        R = T[..., :3, :3] @ np.swapaxes(R_fb, -1, -2)  # the bodies' axes
        c = T[..., :3, 3] + np.einsum("...ij,...j->...i", R, c_b - p_fb)  # their centres of mass, world
        Jc = J[..., :3, :] - skew(c - T[..., :3, 3]) @ J[..., 3:, :]  # d c / d v
        mJc = m[:, None, None] * Jc
        total = float(np.sum(m))
        cG = np.einsum("i,...ij->...j", m, c) / total
        lin = np.sum(mJc, -3)
        ang = np.sum(R @ I_b @ np.swapaxes(R, -1, -2) @ J[..., 3:, :] + skew(c - cG[..., None, :]) @ mJc, -3)
        return np.concatenate([lin, ang], -2)

    def centroidal_momentum(self, q, v) -> np.ndarray:
        """h_G (..., 6) = A_G v: linear momentum (kg m/s), angular momentum about the COM (kg m²/s), world axes."""
        q, v = self._state(q, v)
        return np.einsum("...ij,...j->...i", self.centroidal_momentum_matrix(q), v)

    @cached_property
    def _bodies(self) -> tuple:
        """Per body of the tree: a frame on it (its name), that frame's pose in the body frame (R (n, 3, 3),
        p (n, 3)), the mass m (n,), the centre of mass c (n, 3) and the inertia about it (n, 3, 3) in body
        axes (massless bodies: c = 0, I = 0)."""
        t = self._tree
        first = {}
        for k, b in enumerate(t.frame_body):
            first.setdefault(int(b), k)
        idx = [first[b] for b in range(len(t.joints))]
        m = np.asarray(t.inertia[:, 0], float)
        h = np.asarray(t.inertia[:, 1:4], float)
        c = np.divide(h, m[:, None], out=np.zeros_like(h), where=m[:, None] > 0)
        xx, xy, yy, xz, yz, zz = np.asarray(t.inertia[:, 4:], float).T
        I_o = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2)
        cc = np.einsum("ni,nj->nij", c, c)
        I_c = I_o - m[:, None, None] * (np.einsum("ni,ni->n", c, c)[:, None, None] * np.eye(3) - cc)
        return (tuple(t.frame_names[k] for k in idx), np.asarray(t.frame_R, float)[idx],
                np.asarray(t.frame_p, float)[idx], m, c, I_c)

    # ---- kinematics and task space ----
    def _frame(self, frame) -> int:
        """The index of ``frame`` in :attr:`frame_names` (the tree's frame order); ValueError naming
        close frames otherwise."""
        try:
            return self._frame_index[frame]
        except (KeyError, TypeError):
            from composedyn.dynamics.reference.frames import unknown_frame

            raise unknown_frame(self.name, frame, self.frame_names) from None

    @cached_property
    def _frame_index(self) -> dict:
        return {name: k for k, name in enumerate(self.frame_names)}

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
        velocity in world axes; ``"local"``: frame axes); a floating base's columns map its twist."""
        k, local = self._frame(frame), local_flag(reference)
        if (res := self.data["jacobian"](q, k, local)) is not None:
            return res
        (q,) = self._state(q)
        return self._compute("jacobian", (q,), lambda: self.numpy.jacobian(q, frame, reference), frame=k,
                             local=local)

    @direct_call("frame_velocity", 2, ("frame", "reference"), frame=1)
    def frame_velocity(self, q, v, frame: str, reference: str = "world") -> np.ndarray:
        """Frame twist (..., 6) = J v, linear first."""
        k, local = self._frame(frame), local_flag(reference)
        if (res := self.data["frame_velocity"](q, v, k, local)) is not None:
            return res
        q, v = self._state(q, v)
        return self._compute("frame_velocity", (q, v), lambda: self.numpy.frame_velocity(q, v, frame, reference),
                             frame=k, local=local)

    @direct_call("frame_acceleration", 3, ("frame", "reference"), frame=1)
    def frame_acceleration(self, q, v, a, frame: str, reference: str = "world") -> np.ndarray:
        """Classical acceleration (..., 6) of the frame origin and angular acceleration: J a + J̇ v."""
        k, local = self._frame(frame), local_flag(reference)
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
        (each step through ``integrate``; a floating base moves too), one-coordinate joints within
        their limits, random restarts; an :class:`~composedyn.ik.IKResult`.  Options as for
        :meth:`composedyn.Robot.inverse_kinematics`."""
        from composedyn.ik import inverse_kinematics

        return inverse_kinematics(self, frame, target, q0, position_only, **options)

    def contact_inverse_dynamics(self, q, v, a, contacts, friction_coefficient: float | None = None, **options):
        """Joint torques and contact wrenches realising the motion (q, v, a) of a robot whose root joint
        moves freely (a floating base) with the given contacts: ``inverse_dynamics(q, v, a) = Sᵀ tau +
        Σ J_cᵀ f_c`` (world-axes Jacobians, no actuation of the root joint).  Least-norm wrenches without
        ``friction_coefficient``, Coulomb cones with it; options ``normal``, ``objective``, ``friction``,
        ``tolerance``.  See :func:`composedyn.floating.contact.contact_inverse_dynamics`; returns a
        :class:`~composedyn.floating.contact.ContactResult`."""
        from composedyn.floating.contact import contact_inverse_dynamics

        return contact_inverse_dynamics(self, q, v, a, contacts, friction_coefficient, **options)

    # ---- for functions built on the robot ----
    def check_state(self, q, *rates, names: tuple = ("v", "a")) -> tuple:
        """``(q, *rates)`` checked and broadcast to one batch shape: q (..., nq), each rate (..., nv);
        ValueError naming the argument and the expected length."""
        return self._state(q, *rates, names=names)

    # ---- tensors ----
    def to_torch(self, device=None, dtype=None):
        """This robot's dynamics on torch tensors (``device``: default torch's; ``dtype``:
        ``torch.float64`` (default) or ``torch.float32``), batched and differentiable; see
        :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_torch

        return to_torch(self, device, dtype)

    def to_jax(self):
        """This robot's dynamics as pure JAX functions (jit, vmap, grad); see :mod:`composedyn.tensors`."""
        from composedyn.tensors import to_jax

        return to_jax(self)
