"""Composed vectors of Giacaglia & Lamas for a floating robot, in free-flyer coordinates.

The chart (:mod:`composedyn.dynamics.floating.base`) is a fixed-base model whose
velocity coordinates at the instant are the floating robot's ``v`` (base twist
in base axes, then joint rates), so its composed vectors vω_α, PL_α and
XY_βγ are the floating robot's, expressed in the base axes: each linear and
angular 3-vector is rotated into the world by the base orientation R₀, and the
centres of mass become R₀ c + p₀.  The base's massless virtual bodies are
dropped (they add nothing to any product), so N counts the base and the
joints' bodies.

The mass matrix a_γα = PL_α ∘ vω_γ (eq. 2.19) is invariant.  The velocity
terms are not the chart's: ``v`` is a quasi-velocity (the body twist is not
the derivative of a coordinate), and the Coriolis matrix of the free-flyer
coordinates is the chart's plus a term linear in ``v``
(:func:`~composedyn.dynamics.floating.base.coriolis_correction`).  ``brackets``
holds the chart's Christoffel symbols plus that term's coefficients, so
``coriolis_matrix(v)`` and ``velocity_terms(v)`` are the floating robot's and
the equations of motion (2.24) hold in free-flyer coordinates; the brackets'
base entries are then no longer symmetric in (α, β).  ``XY`` stays the
chart's: derivatives along the chart's coordinates at the instant.

Reference: G. E. O. Giacaglia and W. Q. Lamas, "On Euler-Lagrange's
equations: a new approach", eqs. (2.1)-(2.24).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.floating.base import Base, coriolis_correction
from composedyn.dynamics.reference.composed import ComposedVectors, composed_vectors


def _world(R0: np.ndarray, X: np.ndarray, skip: int, axes: int) -> np.ndarray:
    """Composed vectors X (..., [axes of coordinates], 6N) in chart axes -> world axes, without
    the first ``skip`` bodies; R0 (..., 3, 3)."""
    lead = X.shape[:-1]
    X = X.reshape(lead + (-1, 2, 3))[..., skip:, :, :]
    R = R0.reshape(R0.shape[:-2] + (1,) * (axes + 2) + (3, 3))
    X = np.einsum("...ij,...j->...i", R, X)
    return X.reshape(lead + (-1,))


def floating_composed_vectors(base: Base, model, R0: np.ndarray, p0: np.ndarray, x: np.ndarray) -> ComposedVectors:
    """vω, PL, XY, a and brackets (..., nv ...) of a floating robot at its chart coordinates x
    (..., nv) and base pose (R0 (..., 3, 3), p0 (..., 3)); ``model``: the chart's (no
    dependent mimic joints)."""
    cv = composed_vectors(model, x)
    skip = base.nv - 1  # the massless virtual bodies before the base body
    nv = model.n
    unit = np.broadcast_to(np.eye(nv), x.shape[:-1] + (nv, nv))  # v = e_β, one per row
    M = np.broadcast_to(cv.mass_matrix[..., None, :, :], x.shape[:-1] + (nv, nv, nv))
    corr = coriolis_correction(base, M, unit)  # (..., β, γ, α)
    return ComposedVectors(
        body_names=cv.body_names[skip:],
        com=np.einsum("...ij,...nj->...ni", R0, cv.com[..., skip:, :]) + p0[..., None, :],
        vw=_world(R0, cv.vw, skip, 1),
        PL=_world(R0, cv.PL, skip, 1),
        XY=_world(R0, cv.XY, skip, 2),
        mass_matrix=cv.mass_matrix,
        brackets=cv.brackets + np.moveaxis(corr, -3, -1),
    )
