"""Loop closures on a kinematic tree: constraint phi(q) = 0, Jacobian, acceleration bias.

A loop closure ties a frame on ``link_a`` to a frame on ``link_b``: the point
``point_a`` (link-a frame) and the point ``point_b`` (link-b frame) must
coincide, and for the ``pose`` kinds the orientation frames ``rot_a``/``rot_b``
too.  Kinds and their equations (world coordinates):

* ``position`` (3): x_a - x_b;
* ``planar`` (2): P (x_a - x_b), P the two world axes of ``plane`` ("xy", "xz", "yz");
* ``pose`` (6): position (3) and rotvec(R_a R_b^T) (3);
* ``planar_pose`` (3): planar (2) and the rotation about the plane normal (1).

The Jacobian J = d phi / d q (exact on phi = 0; for the orientation rows it is
the relative angular velocity omega_a - omega_b) gives the velocity closure
J qd = 0 and the acceleration closure J qdd = gamma with gamma = -(dJ/dt) qd.
A world point x on body i moves with column j = v_j + omega_j x x for every
ancestor joint j, (omega_j, v_j) = S_j its world motion vector.  The closure
force ``lambda`` (multiplier of J^T lambda) is the force (and torque) that
link b exerts on link a at the closure point, in the rows' components.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from composedyn.dynamics.kinematics import body_poses, body_velocities, motion_derivatives, motion_subspaces
from composedyn.dynamics.model import Model
from composedyn.errors import ModelError

KINDS = {"position": 3, "planar": 2, "pose": 6, "planar_pose": 3}
PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}


@dataclass(frozen=True)
class LoopClosure:
    """One loop closure between a frame on ``link_a`` and a frame on ``link_b``.

    ``point_a``/``point_b`` (3,) m in the link frames; ``rpy_a``/``rpy_b`` (3,)
    rad: orientation of the closure frames in the link frames (URDF roll-pitch-
    yaw), used by the ``pose`` kinds; ``kind`` see the module doc; ``plane``:
    the world plane of the planar kinds.  ``name`` labels errors and forces.
    """

    link_a: str
    link_b: str
    point_a: tuple = (0.0, 0.0, 0.0)
    point_b: tuple = (0.0, 0.0, 0.0)
    kind: str = "planar"
    plane: str = "xz"
    rpy_a: tuple = (0.0, 0.0, 0.0)
    rpy_b: tuple = (0.0, 0.0, 0.0)
    name: str = field(default="")

    def __post_init__(self):
        label = self.name or f"{self.link_a}-{self.link_b}"
        object.__setattr__(self, "name", label)
        if self.kind not in KINDS:
            raise ModelError(f"loop {label!r}: kind {self.kind!r} is not one of {sorted(KINDS)}")
        if self.kind.startswith("planar") and self.plane not in PLANES:
            raise ModelError(f"loop {label!r}: plane {self.plane!r} is not one of {sorted(PLANES)}")
        for key in ("point_a", "point_b", "rpy_a", "rpy_b"):
            v = np.asarray(getattr(self, key), dtype=float)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ModelError(f"loop {label!r}: {key} must be 3 finite numbers, got {getattr(self, key)!r}")
            object.__setattr__(self, key, tuple(float(x) for x in v))

    @property
    def n_eq(self) -> int:
        """Number of scalar equations."""
        return KINDS[self.kind]


def _rpy(rpy) -> np.ndarray:
    return Rotation.from_euler("xyz", rpy).as_matrix()


def check_loops(model: Model, loops) -> None:
    """Raise ModelError naming the loop and link when a loop names a link the model lacks."""
    for lp in loops:
        for link in (lp.link_a, lp.link_b):
            if link not in model.link_names:
                raise ModelError(f"{model.source}: loop {lp.name!r} names link {link!r}, which does not exist "
                                 f"(links: {', '.join(model.link_names)})")
        if lp.link_a == lp.link_b:
            raise ModelError(f"{model.source}: loop {lp.name!r} closes link {lp.link_a!r} on itself")


def _endpoint(model: Model, link: str, point, rpy):
    """(body index, point (3,) and rotation (3, 3) in that body's frame)."""
    k = model.link_names.index(link)
    T = model.link_T[k]
    return int(model.link_body[k]), T[:3, 3] + T[:3, :3] @ np.asarray(point), T[:3, :3] @ _rpy(rpy)


def _frame_terms(model, body, c, Rc, R, p, S, v, Sd, qd):
    """World point x, rotation, point/angular Jacobians (.., 3, n) and accel. biases (.., 3)."""
    batch = p.shape[:-2]
    n = model.n
    Jx, Jw = np.zeros(batch + (3, n)), np.zeros(batch + (3, n))
    ax, aw = np.zeros(batch + (3,)), np.zeros(batch + (3,))
    if body < 0:
        return np.broadcast_to(c, batch + (3,)), np.broadcast_to(Rc, batch + (3, 3)), Jx, Jw, ax, aw
    x = p[..., body, :] + np.einsum("...ij,j->...i", R[..., body, :, :], c)
    anc = model.ancestors(body)
    Jw[..., :, anc] = np.swapaxes(S[..., anc, :3], -1, -2)
    Jx[..., :, anc] = np.swapaxes(S[..., anc, 3:] + np.cross(S[..., anc, :3], x[..., None, :]), -1, -2)
    if qd is not None:
        a = np.einsum("...jk,...j->...k", Sd[..., anc, :], qd[..., anc])  # spatial bias acceleration
        w = v[..., body, :3]
        vx = v[..., body, 3:] + np.cross(w, x)
        ax = a[..., 3:] + np.cross(a[..., :3], x) + np.cross(w, vx)
        aw = a[..., :3]
    return x, R[..., body, :, :] @ Rc, Jx, Jw, ax, aw


def loop_terms(model: Model, loops, q, qd=None):
    """Constraint phi (..., m), Jacobian J (..., m, n) and, with qd, gamma (..., m) = -(dJ/dt) qd.

    q, qd (..., n) in model (all-joint) order; rows stacked loop by loop.
    """
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    v = Sd = None
    if qd is not None:
        qd = np.broadcast_to(np.asarray(qd, dtype=float), q.shape)
        v = body_velocities(model, S, qd)
        Sd = motion_derivatives(S, v[..., :, :])
    phis, Js, gams = [], [], []
    for lp in loops:
        ends = [_frame_terms(model, *_endpoint(model, link, pt, rpy), R, p, S, v, Sd, qd)
                for link, pt, rpy in ((lp.link_a, lp.point_a, lp.rpy_a), (lp.link_b, lp.point_b, lp.rpy_b))]
        (xa, Ra, Jxa, Jwa, axa, awa), (xb, Rb, Jxb, Jwb, axb, awb) = ends
        phi, J, gam = [xa - xb], [Jxa - Jxb], [axb - axa]
        if lp.kind in ("pose", "planar_pose"):
            Rrel = Ra @ np.swapaxes(Rb, -1, -2)
            rv = Rotation.from_matrix(Rrel.reshape(-1, 3, 3)).as_rotvec().reshape(Rrel.shape[:-1])
            phi.append(rv), J.append(Jwa - Jwb), gam.append(awb - awa)
        rows = _rows(lp)
        phis.append(np.concatenate(phi, axis=-1)[..., rows])
        Js.append(np.concatenate(J, axis=-2)[..., rows, :])
        gams.append(np.concatenate(gam, axis=-1)[..., rows])
    phi, J = np.concatenate(phis, axis=-1), np.concatenate(Js, axis=-2)
    return (phi, J, np.concatenate(gams, axis=-1)) if qd is not None else (phi, J)


def _rows(lp: LoopClosure) -> list[int]:
    """Rows of the stacked (position, rotation) 6-vector that the loop's kind keeps."""
    if lp.kind == "position":
        return [0, 1, 2]
    if lp.kind == "pose":
        return [0, 1, 2, 3, 4, 5]
    i, j = PLANES[lp.plane]
    rows = [i, j]
    if lp.kind == "planar_pose":
        rows.append(3 + ({0, 1, 2} - {i, j}).pop())  # rotation about the plane normal
    return rows


def row_labels(loops) -> list[str]:
    """A label per constraint row, e.g. ``"pin_C.x"``, ``"weld.rz"``."""
    out = []
    for lp in loops:
        out += [f"{lp.name}.{('x', 'y', 'z', 'rx', 'ry', 'rz')[r]}" for r in _rows(lp)]
    return out
