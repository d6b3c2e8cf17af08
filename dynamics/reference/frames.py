"""Task-space kinematics in NumPy: frame poses, Jacobians, velocities, classical
accelerations, centre of mass and its Jacobian (the reference implementation).

A *frame* is a link of the graph (``model.link_names``), fixed links included:
it rides on body ``b = model.link_body[k]`` (-1: welded to the base) at the
constant pose ``T_bf = model.link_T[k]`` in that body's frame.  World poses
come from :func:`composedyn.dynamics.reference.kinematics.body_poses`.

Conventions (linear rows first, as Pinocchio):

* ``local=False`` (``reference="world"``): the velocity of the frame origin o
  and the angular velocity, both in world axes (Pinocchio
  ``LOCAL_WORLD_ALIGNED``).  Column j of the Jacobian for a joint on the
  chain of body b, world axis a_j through the joint origin p_j::

      revolute   (a_j x (o - p_j), a_j)        prismatic   (a_j, 0)

* ``local=True`` (``reference="local"``): the same vectors in the frame's axes
  (Pinocchio ``LOCAL``): both halves multiplied by R^T.

Accelerations are *classical*: the second time derivative of the origin's
position (and the angular acceleration), i.e. J qdd + Jdot qd.  With body b's
world spatial velocity (w, v0) and acceleration (wd, a0) (angular first,
about the world origin), the origin's velocity is v_o = v0 + w x o and its
classical acceleration a_o = a0 + wd x o + w x v_o.

The centre of mass is that of the moving bodies (links merged into them
included); links welded to the fixed base are left out, as in
``pinocchio.centerOfMass`` and :meth:`Robot.potential_energy`.  Its Jacobian is
the mass-weighted sum of the bodies' COM Jacobians over their total mass.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 2.12
(classical vs spatial acceleration) and eq. (5.14) (body acceleration recursion).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

import numpy as np

from composedyn.dynamics.reference.joint import motion_subspaces as subspaces_about
from composedyn.dynamics.reference.kinematics import body_poses, body_velocities, motion_derivatives, motion_subspaces

if TYPE_CHECKING:
    from composedyn.dynamics.model import Model


def frame_index(model: Model, frame: str) -> int:
    """Index of ``frame`` in ``model.link_names``; ValueError listing close names otherwise."""
    try:
        return model.link_names.index(frame)
    except ValueError:
        raise unknown_frame(model.name, frame, model.link_names) from None


def unknown_frame(robot: str, frame, names: tuple) -> ValueError:
    """The error for a frame name not in ``names``, listing close names (difflib)."""
    close = difflib.get_close_matches(str(frame), names, n=5, cutoff=0.5)
    hint = f"; close names: {', '.join(close)}" if close else f"; frames: {', '.join(names[:12])}"
    return ValueError(f"{robot}: unknown frame {frame!r}{hint}")


def _frame_world(model: Model, R, p, k: int):
    """World rotation (..., 3, 3) and origin (..., 3) of frame k from body poses R, p."""
    b, T = int(model.link_body[k]), model.link_T[k]
    if b < 0:
        return np.broadcast_to(T[:3, :3], R.shape[:-3] + (3, 3)), np.broadcast_to(T[:3, 3], p.shape[:-2] + (3,))
    Rb, pb = R[..., b, :, :], p[..., b, :]
    return Rb @ T[:3, :3], pb + Rb @ T[:3, 3]


def frame_pose(model: Model, q: np.ndarray, k: int) -> np.ndarray:
    """World <- frame k homogeneous transform (..., 4, 4) at joint positions q (..., n)."""
    q = np.asarray(q, dtype=float)
    Rf, o = _frame_world(model, *body_poses(model, q), k)
    T = np.zeros(q.shape[:-1] + (4, 4))
    T[..., :3, :3], T[..., :3, 3], T[..., 3, 3] = Rf, o, 1.0
    return T


def _to_local(x: np.ndarray, Rf: np.ndarray) -> np.ndarray:
    """Rotate the linear and angular halves of (..., 6, m) into frame axes: R^T."""
    Rt = np.swapaxes(Rf, -1, -2)
    return np.concatenate([Rt @ x[..., :3, :], Rt @ x[..., 3:, :]], axis=-2)


def jacobian(model: Model, q: np.ndarray, k: int, local: bool = False) -> np.ndarray:
    """Frame Jacobian (..., 6, n), linear rows first; see the module doc for the columns."""
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    Rf, o = _frame_world(model, R, p, k)
    J = np.zeros(q.shape[:-1] + (6, model.n))
    b = int(model.link_body[k])
    if b >= 0:
        a = np.einsum("...nij,nj->...ni", R, model.axis)  # world joint axes
        S = subspaces_about(model, a, p - o[..., None, :])  # about the frame origin, angular first
        chain = model.ancestors(b)
        J[..., :3, chain] = np.swapaxes(S[..., chain, 3:], -1, -2)
        J[..., 3:, chain] = np.swapaxes(S[..., chain, :3], -1, -2)
    return _to_local(J, Rf) if local else J


def frame_velocity(model: Model, q: np.ndarray, qd: np.ndarray, k: int, local: bool = False) -> np.ndarray:
    """Frame twist (..., 6) = J(q) qd: origin velocity then angular velocity."""
    return np.einsum("...ij,...j->...i", jacobian(model, q, k, local), np.asarray(qd, dtype=float))


def frame_acceleration(model: Model, q, qd, qdd, k: int, local: bool = False) -> np.ndarray:
    """Classical acceleration (..., 6) of frame k: (d^2 o / dt^2, dw/dt) = J qdd + Jdot qd."""
    q, qd, qdd = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q, qd, qdd)))
    R, p = body_poses(model, q)
    Rf, o = _frame_world(model, R, p, k)
    out = np.zeros(q.shape[:-1] + (6,))
    b = int(model.link_body[k])
    if b >= 0:
        S = motion_subspaces(model, R, p)
        v = body_velocities(model, S, qd)
        acc = motion_derivatives(S, v) * qd[..., :, None] + S * qdd[..., :, None]  # Sdot qd + S qdd
        chain = model.ancestors(b)
        a = acc[..., chain, :].sum(axis=-2)
        w, v0, wd, a0 = v[..., b, :3], v[..., b, 3:], a[..., :3], a[..., 3:]
        vo = v0 + np.cross(w, o)
        out[..., :3] = a0 + np.cross(wd, o) + np.cross(w, vo)
        out[..., 3:] = wd
    return _to_local(out[..., None], Rf)[..., 0] if local else out


def moving_mass(model: Model) -> float:
    """Mass of the moving bodies (kg); ModelError-free: ValueError when it is zero."""
    m = float(model.mass.sum())
    if not m > 0.0:
        raise ValueError(f"{model.name}: the moving bodies have no mass; the centre of mass is undefined")
    return m


def center_of_mass(model: Model, q: np.ndarray) -> np.ndarray:
    """Centre of mass (..., 3) of the moving bodies, world coordinates."""
    R, p = body_poses(model, np.asarray(q, dtype=float))
    c = p + np.einsum("...nij,nj->...ni", R, model.com)
    return (model.mass[:, None] * c).sum(axis=-2) / moving_mass(model)


def com_jacobian(model: Model, q: np.ndarray) -> np.ndarray:
    """d com / dq (..., 3, n): column j = (m_j v_j + w_j x h_j) / m, with (w_j, v_j) joint j's
    motion subspace about the world origin (a_j x (h_j - m_j p_j) / m revolute, m_j a_j / m
    prismatic), m_j, h_j the mass and world first moment of the subtree of joint j and m the
    moving mass."""
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    m = model.mass.copy()
    h = model.mass[:, None] * (p + np.einsum("...nij,nj->...ni", R, model.com))
    for i in range(model.n - 1, -1, -1):  # subtree sums, children before parents
        k = model.parent[i]
        if k >= 0:
            m[k] += m[i]
            h[..., k, :] += h[..., i, :]
    S = motion_subspaces(model, R, p)  # about the world origin: the subtree's first moment moves at m v + w x h
    cols = m[:, None] * S[..., 3:] + np.cross(S[..., :3], h)
    return np.swapaxes(cols, -1, -2) / moving_mass(model)
