"""The Robot's dynamics on PyTorch tensors and as pure JAX functions.

``robot.to_torch(device=None, dtype=torch.float64)`` and ``robot.to_jax()`` return
objects with the Robot's method names and meanings (see
:mod:`composedyn.tensors.front`), batched over leading axes and differentiable
with respect to every array argument, the inertial parameters included.  Both run
the algorithms of :mod:`composedyn.dynamics.array_api` (one source for NumPy,
PyTorch and JAX).  PyTorch and JAX are optional: without them these functions raise
:class:`composedyn.MissingExtra` naming the extra (``[torch]``, ``[jax]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from composedyn.dynamics.extras import require

if TYPE_CHECKING:
    from composedyn.tensors.jax import JaxDynamics
    from composedyn.tensors.torch import TorchDynamics

__all__ = ["to_jax", "to_torch"]


def to_torch(robot, device=None, dtype=None) -> "TorchDynamics":
    """``robot``'s dynamics on torch tensors of ``device`` (default: torch's default device)
    and ``dtype`` (``torch.float64`` or ``torch.float32``; default float64)."""
    require("torch", "robot.to_torch (PyTorch tensors)", extra="torch")
    require("array_api_compat", "robot.to_torch (PyTorch tensors)", extra="torch")
    from composedyn.tensors.torch import torch_dynamics

    return torch_dynamics(robot, device, dtype)


def to_jax(robot) -> "JaxDynamics":
    """``robot``'s dynamics as pure functions of JAX arrays (jit, vmap, grad, jacfwd/jacrev);
    float64 when ``jax_enable_x64`` is on, float32 otherwise (JAX's default float)."""
    require("jax", "robot.to_jax (JAX arrays)", extra="jax")
    require("array_api_compat", "robot.to_jax (JAX arrays)", extra="jax")
    from composedyn.tensors.jax import jax_dynamics

    return jax_dynamics(robot)
