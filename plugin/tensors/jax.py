"""JAX front end: the Robot's dynamics as pure functions of JAX arrays.

Each method is a function of its array arguments only (the model's constants are
closed over; frame names, ``reference``, ``friction`` and ``smooth_friction`` are
Python values, static under ``jax.jit``), so it composes with ``jax.jit``,
``jax.vmap``, ``jax.grad`` and ``jax.jacfwd``/``jacrev``.  A call computes in the
promoted floating dtype of its arrays (integers as JAX's default float): float64
when ``jax_enable_x64`` is on and the arrays are float64, float32 otherwise.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from composedyn.dynamics import array_api as aa
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import Dynamics, FloatingDynamics


class _Jax:
    """The JAX hooks of :class:`composedyn.tensors.front.Dynamics`."""

    def _setup(self) -> None:
        self._models: dict = {}

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
    cls = JaxFloatingDynamics if robot.floating else JaxDynamics
    return cls(robot, am)
