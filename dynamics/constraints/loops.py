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
from functools import lru_cache

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.model import Model
from composedyn.dynamics.reference.kinematics import body_poses, body_velocities, motion_derivatives, motion_subspaces
from composedyn.dynamics.reference.spatial import cross

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


def rpy_matrix(rpy) -> np.ndarray:
    """The rotation (3, 3) of URDF roll-pitch-yaw angles (3,) rad: Rz(yaw) Ry(pitch) Rx(roll)."""
    from scipy.spatial.transform import Rotation  # lazy: scipy.spatial costs 0.25 s at import

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


@lru_cache(maxsize=256)
def _endpoint(model: Model, link: str, point: tuple, rpy: tuple):
    """(body index, point (3,) and rotation (3, 3) in that body's frame)."""
    k = model.link_names.index(link)
    T = model.link_T[k]
    return int(model.link_body[k]), T[:3, 3] + T[:3, :3] @ np.asarray(point), T[:3, :3] @ rpy_matrix(rpy)


def _frame(model: Model, body: int, c, Rc, R, p):
    """World point x (..., 3) and rotation (..., 3, 3) of a closure frame on ``body``."""
    batch = p.shape[:-2]
    if body < 0:
        return np.broadcast_to(c, batch + (3,)), np.broadcast_to(Rc, batch + (3, 3))
    x = p[..., body, :] + np.einsum("...ij,j->...i", R[..., body, :, :], c)
    return x, R[..., body, :, :] @ Rc


def _frame_jacobians(model: Model, body: int, x, S):
    """Point and angular Jacobians (..., 3, n) of a world point x fixed to ``body``."""
    batch = x.shape[:-1]
    Jx, Jw = np.zeros(batch + (3, model.n)), np.zeros(batch + (3, model.n))
    if body >= 0:
        anc = model.ancestors(body)
        Jw[..., :, anc] = np.swapaxes(S[..., anc, :3], -1, -2)
        Jx[..., :, anc] = np.swapaxes(S[..., anc, 3:] + cross(S[..., anc, :3], x[..., None, :]), -1, -2)
    return Jx, Jw


def loop_ends(model: Model, lp: LoopClosure):
    """((body, point (3,), rotation (3, 3)) of end a, the same of end b), in body frames; body -1 = base."""
    return (_endpoint(model, lp.link_a, lp.point_a, lp.rpy_a), _endpoint(model, lp.link_b, lp.point_b, lp.rpy_b))



def loop_residual(model: Model, loops, q, kin=None):
    """Constraint phi (..., m) at q (..., n) (model order), rows stacked loop by loop."""
    R, p = body_poses(model, np.asarray(q, dtype=float)) if kin is None else kin[:2]
    phis = []
    for lp in loops:
        (ba, ca, Rca), (bb, cb, Rcb) = loop_ends(model, lp)
        (xa, Ra), (xb, Rb) = _frame(model, ba, ca, Rca, R, p), _frame(model, bb, cb, Rcb, R, p)
        phi = [xa - xb]
        if lp.kind in ("pose", "planar_pose"):
            Rrel = Ra @ np.swapaxes(Rb, -1, -2)
            from scipy.spatial.transform import Rotation

            phi.append(Rotation.from_matrix(Rrel.reshape(-1, 3, 3)).as_rotvec().reshape(Rrel.shape[:-1]))
        phis.append(np.concatenate(phi, axis=-1)[..., loop_rows(lp)])
    return np.concatenate(phis, axis=-1)


def loop_jacobian(model: Model, loops, q):
    """(phi (..., m), J (..., m, n), kin): J = d phi / d q; ``kin`` feeds :func:`loop_bias`."""
    q = np.asarray(q, dtype=float)
    R, p = body_poses(model, q)
    S = motion_subspaces(model, R, p)
    kin = (R, p, S)
    Js = []
    for lp in loops:
        J = []
        for body, c, Rc in loop_ends(model, lp):
            x, _ = _frame(model, body, c, Rc, R, p)
            J.append(_frame_jacobians(model, body, x, S))
        (Jxa, Jwa), (Jxb, Jwb) = J
        Js.append(np.concatenate([Jxa - Jxb, Jwa - Jwb], axis=-2)[..., loop_rows(lp), :])
    return loop_residual(model, loops, q, kin), np.concatenate(Js, axis=-2), kin


def loop_bias(model: Model, loops, kin, qd):
    """gamma (..., m) = -(dJ/dt) qd at the configuration of ``kin`` (from :func:`loop_jacobian`)."""
    qd = np.broadcast_to(np.asarray(qd, dtype=float), kin[1].shape[:-1])
    return -np.einsum("...ij,...j->...i", loop_jacobian_rate(model, loops, kin, qd), qd)


def loop_jacobian_rate(model: Model, loops, kin, qd):
    """dJ/dt (..., m, n) at the configuration of ``kin`` (from :func:`loop_jacobian`) for velocities qd.

    Column j of a point row: d/dt (v_j + w_j x x) = dv_j + dw_j x x + w_j x xdot with
    (dw_j, dv_j) = V_j x S_j and xdot the point's velocity; orientation rows dw_a - dw_b.
    ``-(dJ/dt) qd`` is :func:`loop_bias`.
    """
    R, p, S = kin
    qd = np.broadcast_to(np.asarray(qd, dtype=float), p.shape[:-1])
    v = body_velocities(model, S, qd)
    Sd = motion_derivatives(S, v)
    Jds = []
    for lp in loops:
        parts = []
        for body, c, Rc in loop_ends(model, lp):
            x, _ = _frame(model, body, c, Rc, R, p)
            Jx, Jw = _frame_jacobians(model, body, x, Sd)  # dv_j + dw_j x x, dw_j
            if body >= 0:
                w = v[..., body, :3]
                xdot = v[..., body, 3:] + cross(w, x)
                anc = model.ancestors(body)
                Jx[..., :, anc] += np.swapaxes(cross(S[..., anc, :3], xdot[..., None, :]), -1, -2)
            parts.append((Jx, Jw))
        (Jxa, Jwa), (Jxb, Jwb) = parts
        Jds.append(np.concatenate([Jxa - Jxb, Jwa - Jwb], axis=-2)[..., loop_rows(lp), :])
    return np.concatenate(Jds, axis=-2)


def loop_rows(lp: LoopClosure) -> list[int]:
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
        out += [f"{lp.name}.{('x', 'y', 'z', 'rx', 'ry', 'rz')[r]}" for r in loop_rows(lp)]
    return out
