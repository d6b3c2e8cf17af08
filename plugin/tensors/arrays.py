"""NumPy front end: the Robot's methods over :mod:`composedyn.dynamics.array_api` on NumPy arrays.

The NumPy path of a robot whose joints have configuration spaces of their own
(:class:`composedyn.tree_robot.TreeRobot`): the same algorithms PyTorch and JAX
run, in float64, with NumPy itself as the array namespace (NumPy 2 follows the
array API standard).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics import array_api as aa
from composedyn.dynamics.array_api.joints import unit_part
from composedyn.dynamics.errors import ModelError
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import FloatingDynamics


class NumpyDynamics(FloatingDynamics):
    """A robot's dynamics on float64 NumPy arrays, with ``integrate``, ``difference`` and
    ``centroidal_momentum_matrix``; see :mod:`composedyn.tensors.front`."""

    def __init__(self, robot, am):
        FloatingDynamics.__init__(self, robot, am, np)
        self.floating = bool(robot.floating)
        self._bm = aa.on(am, np)
        self._units = [slice(j.idx_q + p.start, j.idx_q + p.stop) for j in am.coordinate_joints
                       if (p := unit_part(j)) is not None]  # the quaternions and (cos, sin) pairs in q

    def _array(self, name: str, x):
        x = np.array(real_array(name, x), dtype=float)  # a copy: never shares the caller's memory
        if name in ("q", "q0", "q1") and x.ndim and x.shape[-1] == self.nq:
            for part in self._units:  # scaled by their largest entry: squares of 1e200 do not overflow
                m = np.max(np.abs(x[..., part]), axis=-1, keepdims=True)
                x[..., part] /= np.where((m > 0) & np.isfinite(m), m, 1.0)
        return x

    def _model(self, like):
        return self._bm

    def _default(self):
        return np.zeros(0)


def numpy_result(robot: str, name: str, call) -> np.ndarray:
    """``call()`` (an algorithm of :class:`NumpyDynamics`) as a float64 array; a singular mass matrix
    (NumPy's solver error) as a ModelError naming the robot and the quantity."""
    try:
        return np.asarray(call(), float)
    except np.linalg.LinAlgError:
        raise ModelError(f"robot {robot!r}: {name}: the mass matrix is singular at q (a massless body moved "
                         "by a joint)") from None
