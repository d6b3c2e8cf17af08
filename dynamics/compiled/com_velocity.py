"""Velocity of the centre of mass: v_com = J_com(q) v (..., 3), world coordinates, m/s.

The NumPy reference, the kernel and the declaration of one quantity, written as every
quantity is (see "Adding a quantity" in ``docs/architecture.md``): the kernel is the
compiled COM Jacobian (:func:`.com.com_jacobian`, moving bodies only, as
``pinocchio.centerOfMass(model, data, q, v)`` gives ``data.vcom[0]``) applied to v.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.com import SCRATCH, com_jacobian
from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.reference import frames


def reference(model, q, v) -> np.ndarray:
    """NumPy reference (..., 3): the COM Jacobian of :mod:`composedyn.dynamics.reference.frames` times v."""
    return np.einsum("...ij,...j->...i", frames.com_jacobian(model, q), v)


@njit(cache=True, inline="always")
def center_of_mass_velocity(im, fm, q, v, out, W, J):
    """v_com (3,) into out; scratch W (n, com.SCRATCH), J (3, n); status 5 when nothing has mass."""
    status = com_jacobian(im, fm, q, J, W)
    if status:
        return status
    for r in range(3):
        s = 0.0
        for j in range(v.shape[0]):
            s += J[r, j] * v[j]
        out[r] = s
    return 0


CENTER_OF_MASS_VELOCITY = Quantity("center_of_mass_velocity", center_of_mass_velocity,
                                   inputs=(("q", "nq"), ("v", "nv")), results=((3,),),
                                   scratch=(("nv", SCRATCH), (3, "nv")), reference=reference)
