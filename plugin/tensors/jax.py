"""JAX front end: the Robot's dynamics as pure functions of JAX arrays.

Each method is a function of its array arguments only (the model's constants are
closed over; frame names, ``reference``, ``friction`` and ``smooth_friction`` are
Python values, static under ``jax.jit``), so it composes with ``jax.jit``,
``jax.vmap``, ``jax.grad`` and ``jax.jacfwd``/``jacrev``.  A call computes in the
promoted floating dtype of its arrays (integers as JAX's default float): float64
when ``jax_enable_x64`` is on and the arrays are float64, float32 otherwise.

A method maps the one-sample algorithm over the batch axes with ``jax.vmap``:
under ``jax.jit`` XLA fuses the small per-sample operations of the unrolled
recursions better than the same algorithm written on rows of the whole batch.
Like any JAX code, the methods run operation by operation unless the caller
compiles them with ``jax.jit``.

Forward dynamics carries its own derivative rule (``jax.custom_jvp``): qdd solves
``ID(q, qd, qdd, params, ...) = tau``, so by the implicit function theorem its
tangent is ``M^-1 (dtau - dID)``, the tangent of inverse dynamics at the solution
with qdd held.  Reverse mode transposes it: one inverse-dynamics pass backwards
and one solve with the factorised M, not a pass back through the factorisation.
Inverse dynamics (joints of one coordinate) carries the RNEA's written-out tangent
(:func:`inverse_dynamics`) and the mass matrix (float64, the same joints) the CRBA's
(:func:`mass_matrix`): each transpose is a pass of the algorithm's size.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from composedyn.dynamics import array_api as aa
from composedyn.dynamics.array_api import crba, rnea
from composedyn.dynamics.array_api.kinematics import tree
from composedyn.dynamics.array_api.rnea import check_width
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import Dynamics, FloatingDynamics, split_options

SCALARS = ("dt", "smooth_friction")
"""Keyword arguments that are one number per sample (the others end in a coordinate axis)."""


def forward_dynamics(bm, q, qd, tau, friction: bool = True, smooth_friction=None, **terms):
    """:func:`composedyn.dynamics.array_api.forward_dynamics` with the implicit-function
    derivative rule (module docstring); ``terms``: params, damping, coulomb, armature or None."""
    static, arrays = split_options(friction, smooth_friction, terms, jax.Array)

    @jax.custom_jvp
    def solved(q, qd, tau, arrays):
        return aa.forward_dynamics(bm, q, qd, tau, **static, **arrays)

    @solved.defjvp
    def tangent(primals, tangents):
        (q, qd, tau, arrays), (dq, dqd, dtau, darrays) = primals, tangents
        qdd, M = aa.accelerations_and_mass(bm, q, qd, tau, **static, **arrays)

        def residual(q, qd, arrays):  # inverse dynamics at the solution, qdd held
            return inverse_dynamics(bm, q, qd, qdd, **static, **arrays)

        _, dres = jax.jvp(residual, (q, qd, arrays), (dq, dqd, darrays))
        return qdd, aa.solve_mass(bm, M, dtau - dres)

    return solved(q, qd, tau, arrays)


def inverse_dynamics(bm, q, qd, qdd, **options):
    """:func:`composedyn.dynamics.array_api.inverse_dynamics` whose rigid-body part, on trees of
    one-coordinate joints (:func:`~composedyn.dynamics.array_api.crba.scalar_tree`), carries the
    RNEA's written-out tangent (:func:`~composedyn.dynamics.array_api.rnea.rigid_torques_jvp`);
    reverse mode transposes it, a pass of the RNEA's size instead of one back through the
    kinematics."""
    rigid = _rigid_torques if crba.scalar_tree(bm) else None
    return aa.inverse_dynamics(bm, q, qd, qdd, rigid=rigid, **options)


def _rigid_torques(bm, q, v, a, params=None):
    """:func:`~composedyn.dynamics.array_api.rnea.rigid_torques` with the tangent of
    :func:`inverse_dynamics`."""

    @jax.custom_jvp
    def rigid(q, v, a, params):
        return rnea.rigid_torques(bm, q, v, a, params)

    @rigid.defjvp
    def tangent(primals, tangents):
        return rnea.rigid_torques_jvp(bm, *primals, *tangents)

    return rigid(q, v, a, params)


def mass_matrix(bm, q, params=None, armature=None):
    """:func:`composedyn.dynamics.array_api.mass_matrix` whose derivative, in float64 on trees of
    one-coordinate joints (:func:`~composedyn.dynamics.array_api.crba.scalar_tree`), is the CRBA's
    written-out tangent (:func:`~composedyn.dynamics.array_api.crba.mass_matrix_jvp`, linear in dq
    with coefficients from the forward pass); reverse mode transposes it, a pass of the CRBA's
    size instead of one back through the kinematics.  M is linear in the inertial parameters, so
    their tangent is M at dparams."""
    rigid = _rigid_mass_matrix if bm.dtype == jnp.float64 and crba.scalar_tree(bm) else None
    return aa.mass_matrix(bm, q, params, armature, rigid=rigid)


def _rigid_mass_matrix(bm, q, params=None, kinematics=None):
    """:func:`~composedyn.dynamics.array_api.crba.rigid_mass_matrix` with the tangent of :func:`mass_matrix`
    (``kinematics`` unused: the rule needs the root-axes terms of its own pass)."""

    @jax.custom_jvp
    def rigid(q, params):
        return crba.rigid_mass_matrix(bm, q, params)

    @rigid.defjvp
    def tangent(primals, tangents):
        (q, params), (dq, dparams) = primals, tangents
        terms = crba.root_terms(bm, *tree(bm, q), params)
        dM = crba.mass_matrix_jvp(bm, terms, dq)
        if params is not None:
            dM = dM + crba.rigid_mass_matrix(bm, q, dparams)
        return crba.root_mass_matrix(bm, terms, q.shape[0]), dM

    return rigid(q, params)


class _Jax:
    """The JAX hooks of :class:`composedyn.tensors.front.Dynamics`."""

    _inverse_dynamics = staticmethod(inverse_dynamics)
    _forward_dynamics = staticmethod(forward_dynamics)
    _mass_matrix = staticmethod(mass_matrix)

    def _setup(self) -> None:
        self._models: dict = {}

    def _call(self, fn, *args, **options):
        """``fn(model, *args, **options)`` mapped over the batch axes (module docstring); arrays
        are mapped, every other argument (frame, reference, flags, numbers) passed as given."""
        like = args[0]
        if isinstance(options.get("smooth_friction"), (int, float)):
            options["smooth_friction"] = check_width(options["smooth_friction"]) or None
        bm = self._model(like)
        place = tuple(isinstance(a, jax.Array) for a in args)
        fixed = [a for a, p in zip(args, place) if not p]
        named = {k: v for k, v in options.items() if isinstance(v, jax.Array)}
        static = {k: v for k, v in options.items() if k not in named}

        def one(arrays, named):
            given, constant = iter(arrays), iter(fixed)
            return fn(bm, *(next(given) if p else next(constant) for p in place), **static, **named)

        return _mapped(one, [a for a, p in zip(args, place) if p], named)

    def _array(self, name: str, x):
        if not isinstance(x, jax.Array):
            x = jnp.asarray(real_array(name, x))
        if not jnp.issubdtype(x.dtype, jnp.floating):
            if jnp.issubdtype(x.dtype, jnp.complexfloating):
                raise ValueError(f"{name} is complex ({x.dtype}); expected real values")
            x = x.astype(jnp.result_type(float))
        return x

    def _common(self, arrays: list) -> list:
        dtype = jnp.result_type(*arrays)
        return [x if x.dtype == dtype else x.astype(dtype) for x in arrays]

    def _default(self):
        return jnp.zeros(0, dtype=jnp.result_type(float))

    def _model(self, like):
        dtype = jnp.dtype(like.dtype)
        bm = self._models.get(dtype)
        if bm is None:
            with jax.ensure_compile_time_eval():  # concrete constants, also when first called under a trace
                bm = self._models[dtype] = aa.on(self._am, jnp, dtype=dtype)
        return bm


def _number(x, kind) -> bool:
    """Whether ``x`` is a Python number of ``kind`` (bool excluded)."""
    return isinstance(x, kind) and not isinstance(x, bool)


def _mapped(one, arrays: list, named: dict):
    """``one(arrays, named)`` mapped (``jax.vmap``) over the broadcast batch axes of its arguments:
    a coordinate axis last for each array, none for the scalars ``dt`` and ``smooth_friction``."""
    core = [1] * len(arrays) + [0 if k in SCALARS else 1 for k in named]
    xs = [*arrays, *named.values()]
    batch = tuple(np.broadcast_shapes(*(tuple(x.shape[:x.ndim - c]) for x, c in zip(xs, core))))
    if not batch:
        return one(arrays, named)
    n = math.prod(batch)
    flat, axes = [], []
    for x, c in zip(xs, core):
        mapped = x.ndim > c
        flat.append(jnp.reshape(jnp.broadcast_to(x, batch + x.shape[x.ndim - c:]), (n, *x.shape[x.ndim - c:]))
                    if mapped else x)
        axes.append(0 if mapped else None)
    k = len(arrays)
    out = jax.vmap(lambda *ys: one(list(ys[:k]), dict(zip(named, ys[k:]))), in_axes=tuple(axes))(*flat)
    return jnp.reshape(out, batch + out.shape[1:])


class JaxDynamics(_Jax, Dynamics):
    """A fixed-base robot's dynamics as pure JAX functions; see :mod:`composedyn.tensors.front`."""

    def __init__(self, robot, am):
        Dynamics.__init__(self, robot, am, jnp)
        self._setup()


class JaxFloatingDynamics(_Jax, FloatingDynamics):
    """A floating robot's dynamics as pure JAX functions, with ``integrate``, ``difference`` and
    ``centroidal_momentum_matrix``."""

    def __init__(self, robot, am):
        FloatingDynamics.__init__(self, robot, am, jnp)
        self._setup()


def jax_dynamics(robot) -> JaxDynamics:
    """The JAX front end of ``robot`` (see :func:`composedyn.tensors.to_jax`)."""
    am = aa.from_robot(robot)
    cls = JaxFloatingDynamics if robot.floating or hasattr(robot, "array_model") else JaxDynamics
    return cls(robot, am)
