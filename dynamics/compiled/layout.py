"""Pack a ``Model`` into the two contiguous arrays every compiled kernel reads.

``im`` (n, IM_COLUMNS) int64, one row per body: ``parent``, ``jtype`` (a code of
:mod:`composedyn.dynamics.joint_types`), and the joint's coordinates: offset ``IQ`` in q,
offset ``IV`` in v, sizes ``NQ`` and ``NV`` (one-coordinate joints: body i's coordinate is
q[i], v[i]), and in every row ``FORM``: the form of the kernels that takes the tree
(:func:`composedyn.dynamics.joint_types.tree_form`: every joint revolute or prismatic, a free flyer
at the root and such joints after it, or any joints).
``fm`` (nv, NCOL) float64, columns given by the constants below.  Body i's row (i < n): the
tree transform (rotation row-major, translation), the unit joint axis in the body frame (and,
for the joint rotation tree_R Rot(a, q) = cos q tree_R + sin q tree_R K(a) + (1 - cos q)
(tree_R a) a^T, the last three terms' factors), a universal joint's second axis ``AX2`` and a
helical joint's ``PITCH`` (m/rad), the inertia as (mass, first moment h = m c, rotational
inertia about the body origin, row-major), and the gravity vector (the same in every row).
Velocity coordinate k's row (k < nv): its armature, damping and Coulomb friction, and ``PIVOT``, the
smallest pivot of M at k that forward dynamics accepts (:func:`composedyn.dynamics.pivots.pivot_floors`).  With
one-coordinate joints the two numberings coincide (nv = n).  Two arrays instead of thirteen
keep the numba call overhead low (~50 ns per array argument).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from composedyn.dynamics.joint_types import TREE_CODES, tree_form
from composedyn.dynamics.model import Model, frozen_array
from composedyn.dynamics.pivots import pivot_floors

TR, TP, AX, MASS, H, IO, ARM, DAMP, FRIC, GRAV = 0, 9, 12, 15, 16, 19, 28, 29, 30, 31
TK, TA, RA = 34, 43, 52  # tree_R K(axis), (tree_R axis) axis^T, tree_R axis (joint transform terms)
AX2, PITCH = 55, 58
PIVOT = 59  # velocity coordinate k's row: the smallest pivot D_k a factorisation of M accepts
NCOL = 60
PARENT, JTYPE, IQ, IV, NQ, NV, FORM = range(7)  # columns of im
IM_COLUMNS = 7
BLOCKS = 64  # a batch loop cuts its samples into this many blocks (scratch reuse, thread balance)

# "No external wrenches" for the kernels' fw (0, 6) argument.  Read-only, so that a call from
# Python and a call from compiled code (where a global array is a read-only constant) use one
# compiled specialisation of the kernel instead of two.
NO_FW = np.empty((0, 6))
NO_FW.flags.writeable = False


def pack(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(im, fm)`` for ``model`` (read-only in fact, see ``model.frozen_array``); see the module
    docstring for the layout."""
    one = np.ones(model.n, dtype=np.int64)
    return pack_bodies(model.parent, model.jtype, one, one, model.tree_R, model.tree_p, model.axis,
                       model.mass, model.mass[:, None] * model.com, model.I_body[:, :3, :3],
                       model.gravity, model.armature, model.damping, model.friction)


def model_dims(im: np.ndarray) -> tuple[int, int, int]:
    """(nq, nv, n) of the model packed in ``im``: its coordinates (body after body) and its body count."""
    if im.shape[0] == 0:
        return 0, 0, 0
    return int(im[-1, IQ] + im[-1, NQ]), int(im[-1, IV] + im[-1, NV]), int(im.shape[0])


def pack_bodies(parent, jtype, nq, nv, tree_R, tree_p, axis, mass, h, Io, gravity, armature, damping,
                friction, axis2=None, pitch=None) -> tuple[np.ndarray, np.ndarray]:
    """``(im, fm)`` (read only) from per-body arrays (n bodies, ``parent[i] < i``): joint codes
    ``jtype``, coordinate counts ``nq``, ``nv`` (coordinates numbered body after body),
    placements ``tree_R`` (n, 3, 3), ``tree_p`` (n, 3), unit ``axis`` (n, 3), ``axis2`` (n, 3)
    and ``pitch`` (n,) (zeros if None), mass (n,), first moment ``h`` (n, 3), rotational inertia
    ``Io`` (n, 3, 3) about the body origin, ``gravity`` (3,), and per velocity coordinate
    ``armature``, ``damping``, ``friction`` (nv,)."""
    n = len(parent)
    nq, nv = np.asarray(nq, dtype=np.int64), np.asarray(nv, dtype=np.int64)
    im = np.zeros((n, IM_COLUMNS), dtype=np.int64)
    im[:, PARENT], im[:, JTYPE], im[:, NQ], im[:, NV] = parent, jtype, nq, nv
    im[:, IQ], im[:, IV] = np.cumsum(nq) - nq, np.cumsum(nv) - nv
    im[:, FORM] = tree_form(jtype) if n else 0
    fm = np.zeros((max(n, int(nv.sum())), NCOL))
    tree_R = np.asarray(tree_R, float).reshape(n, 3, 3)
    fm[:n, TR:TR + 9] = tree_R.reshape(n, 9)
    fm[:n, TP:TP + 3] = tree_p
    fm[:n, AX:AX + 3] = axis
    fm[:n, MASS] = mass
    fm[:n, H:H + 3] = h
    fm[:n, IO:IO + 9] = np.asarray(Io, float).reshape(n, 9)
    fm[:, GRAV:GRAV + 3] = gravity
    k = len(armature)
    fm[:k, ARM], fm[:k, DAMP], fm[:k, FRIC] = armature, damping, friction
    a = np.asarray(axis, float).reshape(n, 3)
    K = np.zeros((n, 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
    Ra = np.einsum("nij,nj->ni", tree_R, a)
    fm[:n, TK:TK + 9] = (tree_R @ K).reshape(n, 9)
    fm[:n, TA:TA + 9] = (Ra[:, :, None] * a[:, None, :]).reshape(n, 9)
    fm[:n, RA:RA + 3] = Ra
    if axis2 is not None:
        fm[:n, AX2:AX2 + 3] = axis2
    if pitch is not None:
        fm[:n, PITCH] = pitch
    fm[:k, PIVOT] = pivot_floors(parent, jtype, nv, tree_p, mass, h, Io, armature, pitch)
    return frozen_array(im), frozen_array(fm)


# ---- frames ----
FBODY = 12  # frame rows of ``fx``: pose in the body frame (R row-major 0:9, p 9:12), body index 12


def pack_frames(model: Model, fm: np.ndarray) -> np.ndarray:
    """``fx`` for the frame kernels of a ``Model`` (one row per frame k of ``model.link_names``, its
    pose ``link_T[k]`` in the frame of body ``link_body[k]``); see :func:`frame_rows`."""
    T = np.asarray(model.link_T, float).reshape(-1, 4, 4)
    return frame_rows(fm, model.link_body, T[:, :3, :3], T[:, :3, 3])


def pack_tree_frames(am, fm: np.ndarray) -> np.ndarray:
    """``fx`` for the frame kernels of a tree packed by :func:`pack_tree` (``am`` an
    :class:`composedyn.dynamics.array_api.model.ArrayModel`: its ``frame_body``, ``frame_R``,
    ``frame_p``); see :func:`frame_rows`."""
    return frame_rows(fm, am.frame_body, am.frame_R, am.frame_p)


def frame_rows(fm: np.ndarray, body, R, p) -> np.ndarray:
    """``fx`` (r + L, NCOL): the r = max(n, nv) rows of ``fm`` (as :func:`pack_bodies` makes them; the
    kernels find frame 0 at that row from ``im``), then one row per frame k: its pose in its body's
    frame, rotation ``R[k]`` (row-major in columns 0:9) and origin ``p[k]`` (9:12, m), and the body
    index ``body[k]`` (-1: the fixed base) in column :data:`FBODY`.  One array instead of three keeps
    the call cheap."""
    r, L = fm.shape[0], len(body)
    fx = np.zeros((r + L, NCOL))
    fx[:r] = fm
    fx[r:, 0:9] = np.asarray(R, float).reshape(L, 9)
    fx[r:, 9:12] = np.asarray(p, float).reshape(L, 3)
    fx[r:, FBODY] = body
    return frozen_array(fx)


class Arrays(NamedTuple):
    """The packed model arrays of one robot (read only, made once per robot): ``bodies`` =
    ``(im, fm)``, ``frames`` = ``(im, fx)`` (None: no frame kernels)."""

    bodies: tuple
    frames: tuple | None = None

    def of(self, q) -> tuple:
        """The model arrays the declared quantity ``q`` (:class:`.declare.Quantity`) takes."""
        return self.bodies if q.model == "bodies" else self.frames


def packed(model: Model) -> Arrays:
    """``model`` packed for the kernels (a robot makes it once and keeps it)."""
    im, fm = pack(model)
    return Arrays((im, fm), (im, pack_frames(model, fm)))


def packed_tree(am) -> Arrays:
    """A tree packed for the kernels (:func:`pack_tree`, :func:`pack_tree_frames`); ``am`` an
    :class:`composedyn.dynamics.array_api.model.ArrayModel`."""
    im, fm = pack_tree(am)
    return Arrays((im, fm), (im, pack_tree_frames(am, fm)))


def pack_tree(am) -> tuple[np.ndarray, np.ndarray]:
    """``(im, fm)`` of a tree whose joints may have several coordinates: ``am`` an
    :class:`composedyn.dynamics.array_api.model.ArrayModel` (its full coordinates: every joint's
    ``idx_q``/``idx_v`` must number the coordinates body after body, as the kernels do)."""
    joints = am.joints
    starts = np.cumsum([0] + [j.nq for j in joints])[:-1], np.cumsum([0] + [j.nv for j in joints])[:-1]
    if any(j.idx_q != a or j.idx_v != b for j, a, b in zip(joints, *starts)):
        raise ValueError(f"{am.name}: the joints' coordinates are not numbered body after body")
    p = np.asarray(am.inertia, float).reshape(-1, 10)
    xx, xy, yy, xz, yz, zz = p[:, 4:].T
    Io = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2)
    return pack_bodies(am.parent, [TREE_CODES[j.kind] for j in joints], [j.nq for j in joints],
                       [j.nv for j in joints], am.placement_R, am.placement_p, [j.axis for j in joints],
                       p[:, 0], p[:, 1:4], Io, am.gravity, am.armature, am.damping, am.coulomb,
                       axis2=[j.axis2 for j in joints], pitch=[j.pitch for j in joints])
