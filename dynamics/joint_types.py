"""The joint-type vocabulary: the codes of ``Model.jtype`` and ``Chain.jtype``, and the one table
that maps a graph edge's joint kind to them.

A joint's type is asked only by the joint models, each of which offers what its algorithms need
(poses, motion subspaces, the velocity-product terms, whether the coordinate is an angle):
:mod:`composedyn.dynamics.compiled.joint` (compiled kernels), :mod:`composedyn.dynamics.reference.joint`
(the NumPy reference), :mod:`composedyn.dynamics.symbolic.joint` (the symbolic derivation) and this module
(:func:`angular`, for code that only needs the coordinate's dimension: units, wrapping of angles).
A new joint type is a code here, a row of :data:`KIND_CODES` and a case in each joint model.
"""

from __future__ import annotations

import enum

import numpy as np

REVOLUTE, PRISMATIC, HELICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE_FLYER = 0, 1, 2, 3, 4, 5, 6

KIND_CODES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
"""Moving joint kind of a graph edge (the URDF names; a continuous joint is REVOLUTE without
position limits, fixed joints are merged into their parent body) -> code."""

TREE_CODES = {**KIND_CODES, "helical": HELICAL, "universal": UNIVERSAL, "spherical": SPHERICAL,
              "planar": PLANAR, "free_flyer": FREE_FLYER}
"""Joint kind of :mod:`composedyn.dynamics.array_api.joints` -> code of the compiled joint model
(:mod:`composedyn.dynamics.compiled.joint`), which takes every kind; ``Model.jtype`` holds only the
one-coordinate codes of :data:`KIND_CODES`."""

SCALAR_CODES = frozenset({REVOLUTE, PRISMATIC})
"""Codes of the joints the compiled kernels' scalar joint model takes (one coordinate, body i's q[i])."""


def scalar_kinds(jtype) -> bool:
    """True when every code of ``jtype`` is in :data:`SCALAR_CODES`."""
    return bool(np.all(np.isin(np.asarray(jtype, dtype=int), list(SCALAR_CODES))))


class TreeForm(enum.IntEnum):
    """The forms the compiled kernels are compiled in (:func:`tree_form`): for any joints, for revolute
    and prismatic joints only, for a free flyer at the root followed by such joints."""

    GENERAL = 0
    SCALAR = 1
    FREE_ROOT = 2


def tree_form(jtype) -> TreeForm:
    """Which :class:`TreeForm` of the compiled kernels takes a tree whose joints (body order, body 0 the
    root's child) have the codes ``jtype``: ``SCALAR`` when every joint is in :data:`SCALAR_CODES`,
    ``FREE_ROOT`` when body 0's joint is a free flyer and every other one is in
    :data:`SCALAR_CODES` (a floating robot), ``GENERAL`` otherwise."""
    codes = np.asarray(jtype, dtype=int)
    if scalar_kinds(codes):
        return TreeForm.SCALAR
    if codes[0] == FREE_FLYER and scalar_kinds(codes[1:]):
        return TreeForm.FREE_ROOT
    return TreeForm.GENERAL


RIGID_ROOT_CODES = frozenset({FREE_FLYER, PLANAR, SPHERICAL})
"""Codes of the root joints the derivative kernels' rigid-root form takes (:func:`rigid_root`)."""


def rigid_root(jtype) -> bool:
    """True when body 0's joint has a code of :data:`RIGID_ROOT_CODES` and every other joint one of
    :data:`SCALAR_CODES` (the rule of :func:`composedyn.dynamics.compiled.joint.rigid_root`, which the
    derivative kernels ask): such a tree keeps the rigid-root derivative kernels although its
    :func:`tree_form` may be ``GENERAL`` (a planar or spherical root)."""
    codes = np.asarray(jtype, dtype=int)
    return codes.shape[0] > 0 and int(codes[0]) in RIGID_ROOT_CODES and scalar_kinds(codes[1:])


ANGULAR = frozenset({REVOLUTE})
"""Codes whose coordinate is an angle (rad); the others' is a length (m)."""


def angular(jtype) -> np.ndarray:
    """True where the joint's coordinate is an angle (rad, rad/s; a torque in N m), False where it
    is a length (m, m/s; a force in N).  ``jtype`` (n,) codes -> (n,) bool."""
    return np.isin(np.asarray(jtype, dtype=int), list(ANGULAR))


_MOTION_NORMS = {REVOLUTE: ((1.0, 0.0),), PRISMATIC: ((0.0, 1.0),), HELICAL: ((1.0, None),),
                 UNIVERSAL: ((1.0, 0.0),) * 2, SPHERICAL: ((1.0, 0.0),) * 3,
                 PLANAR: ((0.0, 1.0), (0.0, 1.0), (1.0, 0.0)), FREE_FLYER: ((0.0, 1.0),) * 3 + ((1.0, 0.0),) * 3}


def motion_norms(jtype, pitch=None) -> tuple[np.ndarray, np.ndarray]:
    """Per velocity coordinate (the joints' in order): the norms |w| (1/s per unit rate) and |v| (m/s per
    unit rate) of the angular and linear parts of its motion-subspace column at the origin of the joint's
    child frame (a helical joint's |v| is its ``pitch``, m/rad; ``pitch`` (n,) or None).  ``jtype`` (n,)
    codes -> two (nv,) arrays."""
    codes = np.asarray(jtype, dtype=int).reshape(-1)
    pitch = np.zeros(len(codes)) if pitch is None else np.asarray(pitch, dtype=float).reshape(-1)
    rows = [(w, abs(pitch[i]) if v is None else v) for i, t in enumerate(codes) for w, v in _MOTION_NORMS[int(t)]]
    out = np.array(rows, dtype=float).reshape(-1, 2)
    return out[:, 0], out[:, 1]
