"""Pack a ``Model`` into the two contiguous arrays every compiled kernel reads.

``im`` (n, 2) int64: ``parent``, ``jtype`` (0 revolute, 1 prismatic).
``fm`` (n, NCOL) float64, one row per body, columns given by the constants
below: the tree transform (rotation row-major, translation), the unit joint
axis in the body frame (and, for the joint rotation
tree_R Rot(a, q) = cos q tree_R + sin q tree_R K(a) + (1 - cos q) (tree_R a) a^T,
the last three terms' factors), the inertia as (mass, first moment h = m c, rotational
inertia about the body origin, row-major), armature, damping, Coulomb
friction, and the gravity vector (the same in every row).  Two arrays instead
of thirteen keep the numba call overhead low (~50 ns per array argument).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from composedyn.dynamics.model import Model, frozen_array

TR, TP, AX, MASS, H, IO, ARM, DAMP, FRIC, GRAV = 0, 9, 12, 15, 16, 19, 28, 29, 30, 31
TK, TA, RA = 34, 43, 52  # tree_R K(axis), (tree_R axis) axis^T, tree_R axis (joint transform terms)
NCOL = 55
BLOCKS = 64  # a batch loop cuts its samples into this many blocks (scratch reuse, thread balance)

# "No external wrenches" for the kernels' fw (0, 6) argument.  Read-only, so that a call from
# Python and a call from compiled code (where a global array is a read-only constant) use one
# compiled specialisation of the kernel instead of two.
NO_FW = np.empty((0, 6))
NO_FW.flags.writeable = False


def pack(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(im, fm)`` for ``model`` (read-only in fact, see ``model.frozen_array``); see the module
    docstring for the layout."""
    n = model.n
    im = np.zeros((n, 2), dtype=np.int64)
    im[:, 0], im[:, 1] = model.parent, model.jtype
    fm = np.zeros((n, NCOL))
    fm[:, TR:TR + 9] = model.tree_R.reshape(n, 9)
    fm[:, TP:TP + 3] = model.tree_p
    fm[:, AX:AX + 3] = model.axis
    fm[:, MASS] = model.mass
    fm[:, H:H + 3] = model.mass[:, None] * model.com
    fm[:, IO:IO + 9] = model.I_body[:, :3, :3].reshape(n, 9)
    fm[:, ARM], fm[:, DAMP], fm[:, FRIC] = model.armature, model.damping, model.friction
    fm[:, GRAV:GRAV + 3] = model.gravity
    a = model.axis
    K = np.zeros((n, 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
    Ra = np.einsum("nij,nj->ni", model.tree_R, a)
    fm[:, TK:TK + 9] = (model.tree_R @ K).reshape(n, 9)
    fm[:, TA:TA + 9] = (Ra[:, :, None] * a[:, None, :]).reshape(n, 9)
    fm[:, RA:RA + 3] = Ra
    return frozen_array(im), frozen_array(fm)


# ---- frames ----
FBODY = 12  # frame rows of ``fx``: pose in the body frame (R row-major 0:9, p 9:12), body index 12


def pack_frames(model: Model, fm: np.ndarray) -> np.ndarray:
    """``fx`` (n + L, NCOL) for the frame kernels: the n body rows of ``fm``, then one row per
    frame k (``model.link_names[k]``): its pose in its body's frame, ``link_T[k]`` (rotation
    row-major in columns 0:9, origin in 9:12), and the body index ``link_body[k]`` (-1: the
    fixed base) in column :data:`FBODY`.  One array instead of three keeps the call cheap."""
    n, L = fm.shape[0], len(model.link_names)
    fx = np.zeros((n + L, NCOL))
    fx[:n] = fm
    T = np.asarray(model.link_T, float).reshape(L, 4, 4)
    fx[n:, 0:9] = T[:, :3, :3].reshape(L, 9)
    fx[n:, 9:12] = T[:, :3, 3]
    fx[n:, FBODY] = model.link_body
    return frozen_array(fx)


class Arrays(NamedTuple):
    """The packed model arrays of one robot (read only, made once per robot): ``bodies`` =
    ``(im, fm)``, ``frames`` = ``(im, fx)``, ``base`` a floating base's ``bf`` (16,) or None."""

    bodies: tuple
    frames: tuple
    base: np.ndarray | None = None

    def of(self, q) -> tuple:
        """The model arrays the declared quantity ``q`` (:class:`.declare.Quantity`) takes."""
        arrays = self.bodies if q.model == "bodies" else self.frames
        return (*arrays, self.base) if q.floating else arrays


def packed(model: Model) -> Arrays:
    """``model`` packed for the kernels (a robot makes it once and keeps it)."""
    im, fm = pack(model)
    return Arrays((im, fm), (im, pack_frames(model, fm)))
