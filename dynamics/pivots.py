"""The smallest pivot a factorisation of the joint-space inertia matrix accepts, per velocity coordinate.

Forward dynamics divides by the pivots of M: the articulated inertias D_k = S_kᵀ I^A S_k (+ armature)
of the articulated-body algorithm, which are the pivots of M = Lᵀ L taken from the last coordinate to
the first (R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 6.5 and 7.3).  M is
positive definite iff every pivot is positive, but where M is singular (a joint that moves no mass, or
motions that cancel, such as a massless free base whose bodies all lie on one line) the computed pivot
is round-off of either sign, and a positive one turns into accelerations of 1e16.  A pivot is accepted
when it exceeds :data:`RELATIVE` times a bound of M_kk that holds in every configuration:

    B_k = sum over the bodies b the coordinate moves of  m_b (|v_k| + |w_k| R_b)^2 + |w_k|^2 tr(I_b)
          + armature_k,

with (w_k, v_k) the coordinate's motion-subspace column at its body's origin (:func:`.joint_types.motion_norms`),
R_b the length of the chain from that origin to body b's centre of mass (the sum of the placements
between, plus b's centre of mass offset: the distance in every configuration, prismatic travel aside)
and I_b body b's rotational inertia about its centre of mass (its trace bounds its largest moment).
The bound is of the units of the pivot and scales with the robot, so the test does not depend on the
units the robot is described in; round-off in a pivot is near n * 1e-16 * B_k, and a mass matrix
that is this ill-conditioned has no accurate inverse anyway.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.joint_types import motion_norms

RELATIVE = 1e-12
"""A pivot must exceed this fraction of the bound B_k (module docstring)."""


def pivot_floors(parent, jtype, nv, tree_p, mass, h, Io, armature, pitch=None) -> np.ndarray:
    """RELATIVE * B_k (nv,) (module docstring) for the tree of n bodies with parents ``parent`` (n,)
    (``parent[i] < i``, -1 at a root), joint codes ``jtype`` (n,) with ``nv`` (n,) velocity coordinates
    each (numbered body after body), placements' translations ``tree_p`` (n, 3) (m), masses (n,) (kg),
    first moments ``h`` = m c (n, 3) (kg m, body frame), rotational inertias ``Io`` (n, 3, 3) about the
    body origins (kg m^2), ``armature`` (nv,) and helical ``pitch`` (n,) (m/rad; None: zeros)."""
    parent = np.asarray(parent, dtype=int).reshape(-1)
    n = len(parent)
    mass = np.asarray(mass, dtype=float).reshape(n)
    h = np.asarray(h, dtype=float).reshape(n, 3)
    c = np.divide(h, mass[:, None], out=np.zeros((n, 3)), where=mass[:, None] > 0)
    trace = np.einsum("nii->n", np.asarray(Io, dtype=float).reshape(n, 3, 3)) - 2.0 * mass * np.einsum("ni,ni->n", c, c)
    trace = np.maximum(trace, 0.0)
    reach = np.zeros(n)  # chain length from the root's origin to each body's origin
    for i in range(n):
        reach[i] = (reach[parent[i]] if parent[i] >= 0 else 0.0) + float(np.linalg.norm(tree_p[i]))
    r = reach + np.linalg.norm(c, axis=1)  # ... to each body's centre of mass
    m0, m1, m2, tr = mass.copy(), mass * r, mass * r * r, trace.copy()  # subtree sums of m, m r, m r^2, tr I
    for i in range(n - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            m0[k] += m0[i]
            m1[k] += m1[i]
            m2[k] += m2[i]
            tr[k] += tr[i]
    # sum over the subtree of m (|v| + |w| (r - reach_i))^2 + |w|^2 tr
    d = reach
    lever = (m2 - 2.0 * d * m1 + d * d * m0, m1 - d * m0)  # sum m R^2, sum m R with R = r_b - reach_i
    body = np.repeat(np.arange(n), np.asarray(nv, dtype=int).reshape(n))
    w, v = motion_norms(jtype, pitch)
    bound = (v * v * m0[body] + 2.0 * v * w * lever[1][body] + w * w * (np.maximum(lever[0][body], 0.0) + tr[body])
             + np.asarray(armature, dtype=float).reshape(-1)[:len(body)])
    return RELATIVE * bound


def model_pivot_floors(model) -> np.ndarray:
    """:func:`pivot_floors` of a :class:`composedyn.dynamics.model.Model` (one coordinate per body)."""
    Io = np.asarray(model.I_body, dtype=float)[:, :3, :3]
    return pivot_floors(model.parent, model.jtype, np.ones(model.n, dtype=int), model.tree_p, model.mass,
                        model.mass[:, None] * model.com, Io, model.armature)


def singular_at(joints) -> str:
    """The words of an error for pivots below their floors at the named ``joints``."""
    return (f"the mass matrix is singular at joints {list(joints)}: the articulated inertia they drive is zero "
            "(they move no mass, or the joints after them can follow their motion without force); give the "
            "links they move mass and inertia, or add armature")


def low_pivots(M: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """Where (..., n) the pivots of symmetric M (..., n, n), eliminated from the last coordinate to
    the first, are not above ``floors`` (n,) (or not finite); a low pivot's row is left out of the
    elimination, so that every such coordinate is found in one pass."""
    A = np.array(M, dtype=float)
    n = A.shape[-1]
    low = np.zeros(A.shape[:-1], dtype=bool)
    for k in range(n - 1, -1, -1):
        d = A[..., k, k]
        low[..., k] = ~(d > floors[k]) | ~np.isfinite(d)
        scale = np.where(low[..., k], 0.0, 1.0 / np.where(low[..., k], 1.0, d))
        col = A[..., :k, k]
        A[..., :k, :k] -= col[..., :, None] * col[..., None, :] * scale[..., None, None]
    return low
