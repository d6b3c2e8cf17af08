"""External wrenches on links -> world spatial forces on bodies."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import link_poses


def body_forces(model: Model, R: np.ndarray, p: np.ndarray, f_ext: Mapping[str, np.ndarray]) -> np.ndarray:
    """Spatial forces (..., n, 6) on the bodies from wrenches applied at link centres of mass.

    ``f_ext``: link name -> (..., 6) wrench (fx, fy, fz, tx, ty, tz) in world
    axes, force applied at the link's centre of mass.  R, p: body poses from
    :func:`composedyn.dynamics.reference.kinematics.body_poses`.  Wrenches on base links
    (welded to the root) are ignored: the base absorbs them.  Raises
    ValueError when a wrench's leading axes do not broadcast to R's batch shape.
    """
    Rl, pl = link_poses(model, R, p)
    batch = R.shape[:-3]
    out = np.zeros(batch + (model.n, 6))
    index = {name: k for k, name in enumerate(model.link_names)}
    for name, w in f_ext.items():
        w = np.asarray(w, dtype=float)
        try:
            ok = np.broadcast_shapes(w.shape[:-1], batch) == batch
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"f_ext[{name!r}] has shape {w.shape}, expected (..., 6) with leading axes "
                             f"broadcasting to the joint arrays' batch shape {batch}")
        k = index[name]
        b = model.link_body[k]
        if b < 0:
            continue
        c = pl[..., k, :] + np.einsum("...ij,j->...i", Rl[..., k, :, :], model.link_com[k])
        force, torque = w[..., :3], w[..., 3:]
        out[..., b, :3] += torque + np.cross(c, force)
        out[..., b, 3:] += force
    return out
