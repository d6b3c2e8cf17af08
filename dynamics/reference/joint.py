"""The NumPy reference's joint model: the only reference code that asks a joint's type.

Same kinematics as the compiled joint model (:mod:`composedyn.dynamics.compiled.joint`), on the
frozen :class:`~composedyn.dynamics.model.Model`'s arrays and batched over leading axes.  Joint i
with unit axis a (joint frame = body frame), tree transform (tree_R, tree_p) and coordinate qi:

* :func:`joint_pose` -- the body frame in the parent body frame, x_parent = R x_body + p:
  revolute R = tree_R Rot(a, qi), p = tree_p; prismatic R = tree_R, p = tree_p + qi tree_R a;
* :func:`motion_subspaces` -- every joint's motion subspace S in world axes about a point,
  angular first, from the world axes a and the joint origins r relative to that point:
  (a, r x a) revolute, (0, a) prismatic.  The velocity-product terms follow from S alone
  (dS/dt = v x S, :func:`composedyn.dynamics.reference.kinematics.motion_derivatives`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from composedyn.dynamics.joint_types import PRISMATIC
from composedyn.dynamics.reference.spatial import rotation_about

if TYPE_CHECKING:
    from composedyn.dynamics.model import Model


def joint_pose(model: Model, i: int, qi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Body i's frame in its parent body frame at coordinates qi (...,) (rad or m):
    R (..., 3, 3), p (..., 3) with x_parent = R x_body + p."""
    batch = np.shape(qi)
    if model.jtype[i] == PRISMATIC:
        R = np.broadcast_to(model.tree_R[i], batch + (3, 3))
        return R, model.tree_p[i] + np.asarray(qi)[..., None] * (model.tree_R[i] @ model.axis[i])
    p = model.tree_p[i]  # read-only, as the model's arrays are
    return model.tree_R[i] @ rotation_about(model.axis[i], qi), np.broadcast_to(p, batch + (3,)) if batch else p


def motion_subspaces(model: Model, a: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Motion subspaces S (..., n, 6), angular first, in world axes about a point O, from the
    world joint axes a (..., n, 3) (unit) and the joint origins r (..., n, 3) measured from O (m):
    (a, r x a) revolute, (0, a) prismatic.  A Jacobian column about O is S (rad/s and m/s per
    unit rate)."""
    a, r = np.broadcast_arrays(a, r)
    S = np.zeros(a.shape[:-1] + (6,))
    rev = model.jtype != PRISMATIC
    S[..., rev, :3] = a[..., rev, :]
    S[..., rev, 3:] = np.cross(r[..., rev, :], a[..., rev, :])
    S[..., ~rev, 3:] = a[..., ~rev, :]
    return S
