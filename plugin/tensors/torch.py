"""PyTorch front end: the Robot's dynamics on torch tensors (CPU or CUDA, float32 or float64).

Arguments that are not tensors (NumPy arrays, lists, numbers) are converted to the
front end's device and dtype; a tensor of another dtype or device is refused with
a ValueError naming the argument (no silent copy or precision change).  Autograd
flows through every tensor argument.
"""

from __future__ import annotations

import torch
from array_api_compat import torch as xp_torch

from composedyn.dynamics import array_api as aa
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import Dynamics, FloatingDynamics

DTYPES = (torch.float64, torch.float32)


class _Torch:
    """The torch hooks of :class:`composedyn.tensors.front.Dynamics`."""

    device: torch.device
    dtype: torch.dtype

    def _setup(self, am, device, dtype) -> None:
        if dtype is None:
            dtype = torch.float64
        if dtype not in DTYPES:
            raise ValueError(f"to_torch: dtype must be torch.float64 or torch.float32, got {dtype!r}")
        try:
            device = torch.device(device) if device is not None else torch.empty(0).device
        except (RuntimeError, TypeError) as exc:
            raise ValueError(f"to_torch: device {device!r} is not a torch device ({exc})") from None
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.device, self.dtype = device, dtype
        self._bm = aa.on(am, xp_torch, device=device, dtype=dtype)

    def _array(self, name: str, x):
        if isinstance(x, torch.Tensor):
            if x.dtype != self.dtype:
                raise ValueError(f"{name} is a {x.dtype} tensor; this front end computes in {self.dtype} "
                                 f"(convert with .to({self.dtype}) or make another with robot.to_torch(dtype=...))")
            if x.device != self.device:
                raise ValueError(f"{name} is on {x.device}; this front end computes on {self.device} "
                                 f"(move it with .to('{self.device}') or use robot.to_torch(device=...))")
            return x
        # a copy: never shares the caller's memory
        return torch.tensor(real_array(name, x), dtype=self.dtype, device=self.device)

    def _model(self, like):
        return self._bm

    def _default(self):
        return torch.zeros(0, dtype=self.dtype, device=self.device)


class TorchDynamics(_Torch, Dynamics):
    """A fixed-base robot's dynamics on torch tensors; see :mod:`composedyn.tensors.front`."""

    def __init__(self, robot, am, device=None, dtype=None):
        Dynamics.__init__(self, robot, am, xp_torch)
        self._setup(am, device, dtype)


class TorchFloatingDynamics(_Torch, FloatingDynamics):
    """A floating robot's dynamics on torch tensors, with ``integrate``, ``difference`` and
    ``centroidal_momentum_matrix``."""

    def __init__(self, robot, am, device=None, dtype=None):
        FloatingDynamics.__init__(self, robot, am, xp_torch)
        self._setup(am, device, dtype)


def torch_dynamics(robot, device=None, dtype=None) -> TorchDynamics:
    """The torch front end of ``robot`` (see :func:`composedyn.tensors.to_torch`)."""
    am = aa.from_robot(robot)
    cls = TorchFloatingDynamics if robot.floating or hasattr(robot, "array_model") else TorchDynamics
    return cls(robot, am, device, dtype)
