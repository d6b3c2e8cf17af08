"""NumPy front end: the Robot's methods over :mod:`composedyn.dynamics.array_api` on NumPy arrays.

The NumPy path of a robot whose joints have configuration spaces of their own
(:class:`composedyn.tree_robot.TreeRobot`): the same algorithms PyTorch and JAX
run, in float64, with NumPy itself as the array namespace (NumPy 2 follows the
array API standard).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics import array_api as aa
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import FloatingDynamics


class NumpyDynamics(FloatingDynamics):
    """A robot's dynamics on float64 NumPy arrays, with ``integrate``, ``difference`` and
    ``centroidal_momentum_matrix``; see :mod:`composedyn.tensors.front`."""

    def __init__(self, robot, am):
        FloatingDynamics.__init__(self, robot, am, np)
        self.floating = bool(robot.floating)
        self._bm = aa.on(am, np)

    def _array(self, name: str, x):
        return np.array(real_array(name, x), dtype=float)  # a copy: never shares the caller's memory

    def _model(self, like):
        return self._bm

    def _default(self):
        return np.zeros(0)
