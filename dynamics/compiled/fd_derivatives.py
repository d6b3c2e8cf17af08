"""Compiled forward-dynamics derivatives.

Forward dynamics qdd = FD(q, qd, tau) satisfies ID(q, qd, FD(q, qd, tau)) = tau,
so d qdd / d x = -M^-1 d tau / d x at qdd = FD (Carpentier & Mansard,
"Analytical derivatives of rigid body dynamics algorithms", RSS 2018, Sec. V).
:func:`fd_derivatives_into` runs the passes of :mod:`.derivatives` once at
qdd = 0, reads the mass matrix off their composite inertias (M[i, j] =
S_j . IC_i S_i for j = i or an ancestor of i, plus the armature on the diagonal)
and the bias h_i = S_i . F_i, solves qdd = M^-1 (tau - h - friction) with the
tree-sparse factorisation M = L^T L of :mod:`.ltl`, corrects the passes' terms
that depend on qdd (no articulated-body or CRBA pass), then the pairs of
:mod:`.derivatives` give d tau / d x at that qdd and the same factor
-M^-1 d tau / d x and M^-1.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.derivatives import (
    ALPHA,
    PHI,
    PSI,
    RI,
    F,
    S,
    _add,
    _bmul,
    _dot,
    _fcross,
    _get,
    _inertia,
    _mcross,
    _put,
    _scale,
    derivative_pairs,
    derivative_passes,
    derivatives_into,
    derivatives_root,
)
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import free_root, joint_friction, quaternion_readable, scalar_joints
from composedyn.dynamics.compiled.layout import ARM, NO_FW
from composedyn.dynamics.compiled.ltl import ltl_factor, ltl_inverse, ltl_solve_columns
from composedyn.dynamics.reference import derivatives

SCRATCH = 12  # columns of the scratch wa: per body the change of its acceleration and a subtree sum

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True)
def fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wa, wd, L):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into ``aq``, ``aqd``, ``minv`` (qdd into ``qdd``).

    fric: 1 includes friction (tanh Coulomb model when smooth > 0).  Scratch:
    wa (n, SCRATCH), wd (n, derivatives SCRATCH), L (n, n).  Returns 0, or 1 when
    M(q) is not positive definite.

    One pass of the derivative kernel at qdd = 0 gives the bias h_i = S_i . F_i, the
    composite inertias (M) and every term that does not depend on qdd; with
    qdd = M^-1 (tau - h - friction) from the L^T L factor, the terms that do are
    corrected in place: da_i = da_parent + S_i qdd_i, alpha_i += da_parent x S_i and
    F_i += IC_i da_i + sum over the proper subtree of i of IC_c S_c qdd_c (since
    a_c - a_parent(c) changes by S_c qdd_c), then Phi_i from the new F_i and alpha_i.
    """
    n = q.shape[0]
    for i in range(n):
        qdd[i] = 0.0
    derivative_passes(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, wd)
    for i in range(n):  # the lower triangle of M (ltl_factor reads no other entry), tau - h
        ri = _get(wd, i, RI)
        j = i
        while j >= 0:
            L[i, j] = _dot(ri, _get(wd, j, S))
            j = im[j, 0]
        L[i, i] += fm[i, ARM]
        qdd[i] = tau[i] - _dot(_get(wd, i, S), _get(wd, i, F))
        if fric:
            qdd[i] -= joint_friction(fm, i, qd[i], smooth)
    if ltl_factor(im, L):
        return 1
    ltl_solve_columns(im, L, qdd.reshape((n, 1)), 1.0)
    for i in range(n):  # wa[i, 0:6] = da_i, wa[i, 6:12] = sum over the subtree of IC_c S_c qdd_c
        s = _get(wd, i, S)
        k = im[i, 0]
        da = _scale(s, qdd[i])
        if k >= 0:
            dap = _get(wa, k, 0)
            _put(wd, i, ALPHA, _add(_get(wd, i, ALPHA), _mcross(dap, s)))
            da = _add(da, dap)
        _put(wa, i, 0, da)
        _put(wa, i, 6, _scale(_get(wd, i, RI), qdd[i]))
    for jj in range(n):
        i = n - 1 - jj
        y = _get(wa, i, 6)
        k = im[i, 0]
        if k >= 0:
            _put(wa, k, 6, _add(_get(wa, k, 6), y))
        df = _add(_inertia(wd, i, _get(wa, i, 0)), _add(y, _scale(_get(wd, i, RI), -qdd[i])))
        f = _add(_get(wd, i, F), df)
        _put(wd, i, F, f)
        s = _get(wd, i, S)
        _put(wd, i, PHI, _add(_add(_fcross(s, f), _inertia(wd, i, _get(wd, i, ALPHA))),
                              _bmul(wd, i, _get(wd, i, PSI), False)))
    derivative_pairs(im, fm, qd, fric, smooth, aq, aqd, wd)
    ltl_solve_columns(im, L, aq, -1.0)
    ltl_solve_columns(im, L, aqd, -1.0)
    ltl_inverse(im, L, minv)
    return 0


# ---- declarations (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def inverse_dynamics_derivatives(im, fm, q, v, a, f_world, P, friction, smooth, dq, dv, w):
    """d tau / d q, d tau / d v (n, n) of the Robot's inverse dynamics into dq, dv; joint friction
    when ``friction`` is not 0 (tanh Coulomb of width ``smooth`` > 0); external wrenches
    ``f_world`` (n, 6) with their lever-arm matrices ``P`` (n, 9) (both (0, .): none), see
    :func:`composedyn.dynamics.reference.derivatives.external_terms`."""
    if free_root(im):  # a floating robot's tree
        if not quaternion_readable(q[3], q[4], q[5], q[6]):
            return 4
        derivatives_root(im, fm, q, v, a, f_world, P, 1, 1 if friction else 0, smooth, dq, dv, w)
        return 0
    if not scalar_joints(im):  # other joints with several coordinates are not taken
        return 5
    derivatives_into(im, fm, q, v, a, f_world, P, 1, 1 if friction else 0, smooth, dq, dv, w)
    return 0


def _inverse_reference(model, q, v, a, f_world, P, friction, smooth=None):
    if P is not None:
        P = np.reshape(P, np.shape(P)[:-1] + (3, 3))
    dq, dv = derivatives.rnea_derivatives(model, q, v, a, f_world=f_world, P=P)
    if friction:
        d = derivatives.friction_derivative(model, np.broadcast_to(v, dq.shape[:-1]), smooth)
        dv[..., np.arange(model.n), np.arange(model.n)] += d
    return dq, dv


def _forward_reference(model, q, v, tau, friction, smooth=None):
    return derivatives.forward_dynamics_derivatives(model, q, v, tau, friction=bool(friction), smooth=smooth)


@njit(cache=True, inline="always")
def forward_dynamics_derivatives(im, fm, q, v, tau, friction, smooth, aq, av, minv, qdd, wa, wd, L):
    """d a / d q, d a / d v, M^-1 (n, n) of the Robot's forward dynamics into aq, av, minv; status 3
    when M(q) is not positive definite."""
    if not scalar_joints(im):  # joints with several coordinates are not taken (a floating robot's chart is)
        return 5
    return 3 if fd_derivatives_into(im, fm, q, v, tau, 1 if friction else 0, smooth, aq, av, minv, qdd, wa, wd,
                                    L) else 0


_QVX = (("q", "nq"), ("v", "nv"), ("x", "nv"))
INVERSE_DYNAMICS_DERIVATIVES = Quantity(
    "inverse_dynamics_derivatives", inverse_dynamics_derivatives, inputs=_QVX, results=(("nv", "nv"),) * 2,
    extras=(("f_world", 6), ("P", 9)), options=(("friction", 1),), number="smooth_friction",
    scratch=(("nv", DER_SCRATCH),), reference=_inverse_reference)
FORWARD_DYNAMICS_DERIVATIVES = Quantity(
    "forward_dynamics_derivatives", forward_dynamics_derivatives, inputs=_QVX, results=(("nv", "nv"),) * 3,
    options=(("friction", 1),), number="smooth_friction",
    scratch=(("nv",), ("nv", SCRATCH), ("nv", DER_SCRATCH), ("nv", "nv")), reference=_forward_reference)
