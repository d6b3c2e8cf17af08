"""Configuration-space operations on the robot's coordinates, on the array API: neutral
configuration, integration along a velocity and the difference of two configurations.

Each joint of the robot's coordinates (``am.coordinate_joints``) integrates on its own
configuration space (:mod:`composedyn.dynamics.array_api.joints`): Euclidean for one-DOF joints,
``q exp(v dt)`` (right composition, Pinocchio's convention) for a free-flyer or planar base.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.kinematics import batch_shape, coords


def neutral(bm):
    """The neutral configuration (nq,): joints at 0, a floating base at the origin with identity orientation."""
    q = np.concatenate([jm.neutral(j) for j in bm.am.coordinate_joints]) if bm.am.coordinate_joints \
        else np.zeros(0)
    return bm.xp.asarray(q, dtype=bm.dtype, device=bm.device)


def integrate(bm, q, v, dt=1.0):
    """q (+) v dt (..., nq): the configuration reached from q (..., nq) moving with the constant
    velocity v (..., nv) for ``dt`` seconds (a number or an array broadcasting against (...,))."""
    xp = bm.xp
    batch = batch_shape(q, v)
    step = v * (dt[..., None] if hasattr(dt, "shape") and len(dt.shape) else dt)
    parts = [jm.integrate(xp, j, coords(q, j, velocity=False), coords(step, j)) for j in bm.am.coordinate_joints]
    return xp.concat([xp.broadcast_to(p, batch + p.shape[-1:]) for p in parts], axis=-1)


def difference(bm, q0, q1):
    """v (..., nv) with integrate(q0, v) = q1 (the logarithm per joint; angles in (-pi, pi] for
    rotations of a floating base, q1 - q0 for one-DOF joints)."""
    xp = bm.xp
    batch = batch_shape(q0, q1)
    parts = [jm.difference(xp, j, coords(q0, j, velocity=False), coords(q1, j, velocity=False))
             for j in bm.am.coordinate_joints]
    return xp.concat([xp.broadcast_to(p, batch + p.shape[-1:]) for p in parts], axis=-1)
