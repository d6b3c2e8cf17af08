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
-M^-1 d tau / d x and M^-1.  :func:`fd_derivatives_root` is the same for a free
flyer, planar or spherical joint at the root, over velocity coordinates;
:func:`fd_derivatives_general` for joints of any kind anywhere (no in-place
correction: the general passes run again at qdd).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.derivatives import (
    ALPHA,
    CS,
    PHI,
    PSI,
    PW,
    RI,
    F,
    S,
    add6,
    bmul6,
    derivative_pairs,
    derivative_pairs_root,
    derivative_passes,
    derivative_passes_root,
    derivatives_general,
    derivatives_into,
    derivatives_root,
    dot6,
    fcross6,
    general_pairs,
    general_passes,
    inertia6,
    mcross6,
    row6,
    scale6,
    set_row6,
    world_twist,
)
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    joint_friction,
    joint_readable,
    rigid_root,
    rigid_root_rates,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import ARM, IV, NO_FW, NV
from composedyn.dynamics.compiled.ltl import ltl_derivative_solves, ltl_factor, ltl_solve, solves_scratch
from composedyn.dynamics.reference import derivatives

SCRATCH = 12  # columns of the scratch wa: per body the change of its acceleration and a subtree sum

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True)
def fd_derivatives_into(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wa, wd, LW):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into ``aq``, ``aqd``, ``minv`` (qdd into ``qdd``).

    fric: 1 includes friction (tanh Coulomb model when smooth > 0).  Scratch:
    wa (n, SCRATCH), wd (n, derivatives SCRATCH), LW (n, 4n) (the factor L and
    :func:`.ltl.ltl_derivative_solves`'s W, :func:`.ltl.solves_scratch`).
    Returns 0, or 1 when M(q) is not positive definite.

    One pass of the derivative kernel at qdd = 0 gives the bias h_i = S_i . F_i, the
    composite inertias (M) and every term that does not depend on qdd; with
    qdd = M^-1 (tau - h - friction) from the L^T L factor, the terms that do are
    corrected in place (:func:`_correct`).
    """
    L, W = solves_scratch(LW)
    n = q.shape[0]
    par = im[:, 0]
    for i in range(n):
        qdd[i] = 0.0
    derivative_passes(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, wd)
    for i in range(n):  # the lower triangle of M (ltl_factor reads no other entry), tau - h
        _mass_row(im, fm, qd, tau, fric, smooth, i, 0, -1, L, qdd, wd)
    if ltl_factor(par, L, fm):
        return 1
    ltl_solve(par, L, qdd)
    _correct(im, qdd, 0, 0, wa, wd)
    derivative_pairs(im, fm, qd, fric, smooth, aq, aqd, wd)
    ltl_derivative_solves(par, L, aq, aqd, minv, W)
    return 0


@njit(cache=True, inline="always")
def _mass_row(im, fm, qd, tau, fric, smooth, i, off, last, L, qdd, wd):
    """Row r = i + ``off`` of M's lower triangle for the one-coordinate joint of body i, from the
    derivative passes at qdd = 0: L[r, j + off] = IC_i S_i . S_j for i and its ancestors j down to
    (not including) body ``last``, the armature on the diagonal; and qdd[r] = tau - h - friction
    there.  Returns the body the walk stopped at."""
    r = i + off
    ri = row6(wd, i, RI)
    j = i
    while j > last:
        L[r, j + off] = dot6(ri, row6(wd, j, S))
        j = im[j, 0]
    L[r, r] += fm[r, ARM]
    qdd[r] = tau[r] - dot6(row6(wd, i, S), row6(wd, i, F))
    if fric:
        qdd[r] -= joint_friction(fm, r, qd[r], smooth)
    return j


@njit(cache=True, inline="always")
def _correct(im, qdd, off, first, wa, wd):
    """The terms of the derivative passes (run at qdd = 0) that depend on qdd, corrected in place for
    the accelerations ``qdd``: the one-coordinate joint of body i >= ``first`` has qdd[i + off]
    (bodies below ``first``, a free-flyer root, have their da in wa[i, 0:6] already and no own
    column term).  da_i = da_parent + S_i qdd_i, alpha_i += da_parent x S_i and
    F_i += IC_i da_i + sum over the proper subtree of i of IC_c S_c qdd_c (since a_c - a_parent(c)
    changes by S_c qdd_c), then Phi_i from the new F_i and alpha_i.  wa[i, 0:6] = da_i,
    wa[i, 6:12] = the subtree sum."""
    n = im.shape[0]
    for i in range(first, n):
        s = row6(wd, i, S)
        k = im[i, 0]
        da = scale6(s, qdd[i + off])
        if k >= 0:
            dap = row6(wa, k, 0)
            set_row6(wd, i, ALPHA, add6(row6(wd, i, ALPHA), mcross6(dap, s)))
            da = add6(da, dap)
        set_row6(wa, i, 0, da)
        set_row6(wa, i, 6, scale6(row6(wd, i, RI), qdd[i + off]))
    for jj in range(n):
        i = n - 1 - jj
        y = row6(wa, i, 6)
        k = im[i, 0]
        if k >= 0:
            set_row6(wa, k, 6, add6(row6(wa, k, 6), y))
        x = qdd[i + off] if i >= first else 0.0
        df = add6(inertia6(wd, i, row6(wa, i, 0)), add6(y, scale6(row6(wd, i, RI), -x)))
        f = add6(row6(wd, i, F), df)
        set_row6(wd, i, F, f)
        s = row6(wd, i, S)
        set_row6(wd, i, PHI, add6(add6(fcross6(s, f), inertia6(wd, i, row6(wd, i, ALPHA))),
                              bmul6(wd, i, row6(wd, i, PSI), False)))


@njit(cache=True)
def coordinate_parents(im, par):
    """par (nv,): the parent of each velocity coordinate for :mod:`.ltl`: the one before inside its
    joint, and for a joint's first the last coordinate of its parent body's joint (-1 under the world)."""
    for i in range(im.shape[0]):
        o, k = im[i, IV], im[i, 0]
        par[o] = im[k, IV] + im[k, NV] - 1 if k >= 0 else -1
        for c in range(1, im[i, NV]):
            par[o + c] = o + c - 1


@njit(cache=True)
def fd_derivatives_general(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wd, LW):
    """:func:`fd_derivatives_into` for joints of any kind (:func:`.derivatives.derivatives_general`): d a / d q
    (q perturbed on the right), d a / d v, M^-1 (nv, nv).  The general passes at qdd = 0 give M's lower
    triangle (IC_i S_r . S_d for column r of body i's joint and d one of i's up to r or an ancestor's, the
    armature on the diagonal) and h_r = S_r . F_i; qdd = M^-1 (tau - h - friction) by the tree-sparse factor
    over velocity coordinates (:func:`coordinate_parents`); the passes again at qdd, their pairs, and the
    factor's solves.  Returns 0, or 1 when M(q) is not positive definite."""
    L, W = solves_scratch(LW)
    n, nv = im.shape[0], qd.shape[0]
    par = np.empty(nv, np.int64)
    coordinate_parents(im, par)
    for r in range(nv):
        qdd[r] = 0.0
    general_passes(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, wd)
    for i in range(n):
        for r in range(im[i, IV], im[i, IV] + im[i, NV]):
            s = row6(wd, r, CS)
            ri = inertia6(wd, i, s)
            j = i
            while j >= 0:
                for d in range(im[j, IV], min(r + 1, im[j, IV] + im[j, NV])):
                    L[r, d] = dot6(ri, row6(wd, d, CS))
                j = im[j, 0]
            L[r, r] += fm[r, ARM]
            qdd[r] = tau[r] - dot6(s, row6(wd, i, F))
            if fric:
                qdd[r] -= joint_friction(fm, r, qd[r], smooth)
    if ltl_factor(par, L, fm):
        return 1
    ltl_solve(par, L, qdd)
    general_passes(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, wd)
    general_pairs(im, fm, qd, fric, smooth, False, aq, aqd, wd)
    ltl_derivative_solves(par, L, aq, aqd, minv, W)
    return 0


@njit(cache=True)
def fd_derivatives_root(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv, qdd, wa, wd, LW):
    """:func:`fd_derivatives_into` for a rigid root (:func:`.derivatives.derivatives_root`): d a / d q
    (q perturbed on the right, Pinocchio's convention), d a / d v, M^-1 (nv, nv).  The root's nv0
    columns of M are IC_0 S_0c (rows of its descendants: IC_i S_i . S_0c); the tree-sparse factor
    runs over velocity coordinates (:func:`coordinate_parents`).  Returns 0, or 1 when M(q) is not
    positive definite."""
    L, W = solves_scratch(LW)
    n, nv, nr = im.shape[0], qd.shape[0], im[0, NV]
    par = np.empty(nv, np.int64)
    coordinate_parents(im, par)
    for i in range(nv):
        qdd[i] = 0.0
    derivative_passes_root(im, fm, q, qd, qdd, NO_FW, _NO_P, 1, wd)
    for c in range(nr):  # the root's block of M and its tau - h
        sc = row6(wd, c, CS)
        rc = inertia6(wd, 0, sc)
        for d in range(c + 1):
            L[c, d] = dot6(rc, row6(wd, d, CS))
        L[c, c] += fm[c, ARM]  # a spherical or planar root's rotor inertias and friction (a free flyer has none)
        qdd[c] = tau[c] - dot6(sc, row6(wd, 0, F))
        if fric:
            qdd[c] -= joint_friction(fm, c, qd[c], smooth)
    for i in range(1, n):
        if _mass_row(im, fm, qd, tau, fric, smooth, i, nr - 1, 0, L, qdd, wd) == 0:  # hangs from the root
            ri = row6(wd, i, RI)
            for c in range(nr):
                L[i + nr - 1, c] = dot6(ri, row6(wd, c, CS))
    if ltl_factor(par, L, fm):
        return 1
    ltl_solve(par, L, qdd)
    R0 = (wd[0, 0], wd[0, 1], wd[0, 2], wd[0, 3], wd[0, 4], wd[0, 5], wd[0, 6], wd[0, 7], wd[0, 8])
    set_row6(wa, 0, 0, world_twist(R0, (wd[0, PW], wd[0, PW + 1], wd[0, PW + 2]), rigid_root_rates(im, qdd)))
    _correct(im, qdd, nr - 1, 1, wa, wd)
    derivative_pairs_root(im, fm, qd, 1, fric, smooth, False, aq, aqd, wd)
    ltl_derivative_solves(par, L, aq, aqd, minv, W)
    return 0


# ---- declarations (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def inverse_dynamics_derivatives(im, fm, q, v, a, f_world, P, friction, smooth, dq, dv, w):
    """d tau / d q, d tau / d v (n, n) of the Robot's inverse dynamics into dq, dv; joint friction
    when ``friction`` is not 0 (tanh Coulomb of width ``smooth`` > 0); external wrenches
    ``f_world`` (n, 6) with their lever-arm matrices ``P`` (n, 9) (both (0, .): none), see
    :func:`composedyn.dynamics.reference.derivatives.external_terms`; statuses 4 and 5 as
    :func:`forward_dynamics_derivatives`'s."""
    if rigid_root(im):  # a floating robot's tree
        if not joint_readable(im, 0, q):
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
def forward_dynamics_derivatives(im, fm, q, v, tau, friction, smooth, aq, av, minv, qdd, wa, wd, LW):
    """d a / d q, d a / d v, M^-1 (nv, nv) of the Robot's forward dynamics into aq, av, minv; status 3
    when M(q) is not positive definite, 4 for a root joint without orientation (zero quaternion or
    (cos, sin)), 5 for joints of several coordinates other than a rigid root
    (:func:`.joint.rigid_root`: such trees take :func:`forward_dynamics_derivatives_general`)."""
    if rigid_root(im):  # a floating robot's tree
        if not joint_readable(im, 0, q):
            return 4
        return 3 if fd_derivatives_root(im, fm, q, v, tau, 1 if friction else 0, smooth, aq, av, minv, qdd, wa,
                                        wd, LW) else 0
    if not scalar_joints(im):  # other joints with several coordinates are not taken
        return 5
    return 3 if fd_derivatives_into(im, fm, q, v, tau, 1 if friction else 0, smooth, aq, av, minv, qdd, wa, wd,
                                    LW) else 0


@njit(cache=True, inline="always")
def inverse_dynamics_derivatives_general(im, fm, q, v, a, f_world, P, friction, smooth, dq, dv, w):
    """:func:`inverse_dynamics_derivatives` of a tree of any joints (:func:`.derivatives.derivatives_general`:
    joints of several coordinates or helical and universal ones below the root); status 4 for a joint
    without orientation (a zero quaternion or (cos, sin))."""
    if not configuration_readable(im, q):
        return 4
    derivatives_general(im, fm, q, v, a, f_world, P, 1, 1 if friction else 0, smooth, dq, dv, w)
    return 0


@njit(cache=True, inline="always")
def forward_dynamics_derivatives_general(im, fm, q, v, tau, friction, smooth, aq, av, minv, qdd, wd, LW):
    """:func:`forward_dynamics_derivatives` of a tree of any joints (:func:`fd_derivatives_general`);
    statuses 3 and 4 as there."""
    if not configuration_readable(im, q):
        return 4
    return 3 if fd_derivatives_general(im, fm, q, v, tau, 1 if friction else 0, smooth, aq, av, minv, qdd, wd,
                                       LW) else 0


# Each quantity's kernel for trees of TreeForm.GENERAL is a declaration of its own (Quantity.general):
# compiled only for such trees, so that the rigid-root and one-coordinate kernels stay as small as they were.
_QVX = (("q", "nq"), ("v", "nv"), ("x", "nv"))
_ID = {"inputs": _QVX, "results": (("nv", "nv"),) * 2, "extras": (("f_world", 6), ("P", 9)),
       "options": (("friction", 1),), "number": "smooth_friction", "scratch": (("nv", DER_SCRATCH),),
       "reference": _inverse_reference}
_FD = {"inputs": _QVX, "results": (("nv", "nv"),) * 3, "options": (("friction", 1),), "number": "smooth_friction",
       "reference": _forward_reference}
INVERSE_DYNAMICS_DERIVATIVES = Quantity(
    "inverse_dynamics_derivatives", inverse_dynamics_derivatives, **_ID,
    general=Quantity("inverse_dynamics_derivatives_general", inverse_dynamics_derivatives_general, **_ID))
FORWARD_DYNAMICS_DERIVATIVES = Quantity(
    "forward_dynamics_derivatives", forward_dynamics_derivatives,
    scratch=(("nv",), ("nv", SCRATCH), ("nv", DER_SCRATCH), ("nv", "4nv")), **_FD,
    general=Quantity("forward_dynamics_derivatives_general", forward_dynamics_derivatives_general,
                     scratch=(("nv",), ("nv", DER_SCRATCH), ("nv", "4nv")), **_FD))
