"""``DynamicsModel``: the structural type that controllers, simulation and
trajectory checks are written against.

Any object with these members works with :class:`ComputedTorqueController`,
:func:`simulate` and :func:`check_trajectory` -- a :class:`composedyn.Robot`,
a constrained (mimic / closed-chain) model, or existing robot code wrapped to
match.  Joint arrays are (..., n) in ``joint_names`` order, SI units.
"""

from __future__ import annotations

from typing import Mapping, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class DynamicsModel(Protocol):
    """Structural type of a rigid-body dynamics model with n joint coordinates.

    ``limits`` maps ``lower``, ``upper``, ``velocity``, ``effort`` to (n,)
    arrays (+-inf where a limit is absent).
    """

    @property
    def dof(self) -> int: ...

    @property
    def joint_names(self) -> tuple: ...

    @property
    def limits(self) -> dict: ...

    def inverse_dynamics(self, q, qd, qdd, f_ext: Mapping | None = None,
                         friction: bool = True) -> np.ndarray:
        """tau (..., n) = M(q) qdd + C(q, qd) qd + g(q) + tau_friction - J^T f_ext."""
        ...

    def forward_dynamics(self, q, qd, tau, f_ext: Mapping | None = None,
                         friction: bool = True) -> np.ndarray:
        """qdd (..., n) solving the equations of motion for the applied torques."""
        ...

    def mass_matrix(self, q) -> np.ndarray:
        """M(q) (..., n, n)."""
        ...

    def bias_torques(self, q, qd) -> np.ndarray:
        """C(q, qd) qd + g(q) (..., n)."""
        ...
