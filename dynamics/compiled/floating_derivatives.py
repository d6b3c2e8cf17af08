"""Compiled floating-base dynamics derivatives: the chart's kernels plus the closed-form base terms.

The algorithm of :mod:`composedyn.floating_derivatives` (read its docstring for
the derivation) for one sample: the chart state of :mod:`.floating`, the
fixed-base derivative kernels at the chart coordinates
(:func:`.derivatives.derivatives_into`, :func:`.fd_derivatives.fd_derivatives_into`),
then, with g = R₀ᵀ g_world in base axes and the body twist (u, w):

* G = d(g_b, 0)/d dq_base: free flyer [g]× in rows 0:3, columns 3:6; planar (g_y, -g_x) in rows 0:2, column 2;
* Bv = db/dv_base: free flyer rows 0:3 (-[w]×, [u]×), rows 3:6 columns 3:6
  [[0, wz, wy], [-wz, 0, -wx], [wy, wx, 0]]; planar rows (0, w, u_y), (-w, 0, -u_x);
* inverse: dtau/dq[:, base] = -M[:, base] G, dtau/dv[:, base] -= M[:, base] Bv, the base
  columns of M read off the derivative kernel's composite inertias (no CRBA, see :func:`inverse_into`);
* forward: da/dq[:, base] = G (zero off the base rows), da/dv[base, base] += Bv.

``bf`` packs the base as in :mod:`.floating`.  Statuses: 0 done, 1 wrong
length, 2 NaN/inf, 3 M not positive definite, 4 zero-norm base orientation.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.derivatives import RI, S, _dot, _get, derivatives_into
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH
from composedyn.dynamics.compiled.fd_derivatives import SCRATCH as FD_SCRATCH
from composedyn.dynamics.compiled.fd_derivatives import fd_derivatives_into
from composedyn.dynamics.compiled.floating import _gravity, chart_state
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import NO_FW
from composedyn.dynamics.compiled.loops import all_finite

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


@njit(cache=True, inline="always")
def _base_terms(bf, q, v, G, Bv):
    """G and Bv (nb, nb) into the top-left of the (6, 6) arrays; returns nb (6 or 3)."""
    g0, g1, g2, _ = _gravity(bf, q)
    for r in range(6):
        for c in range(6):
            G[r, c] = 0.0
            Bv[r, c] = 0.0
    if bf[0] != 0.0:
        G[0, 2], G[1, 2] = g1, -g0
        Bv[0, 1], Bv[0, 2], Bv[1, 0], Bv[1, 2] = v[2], v[1], -v[2], -v[0]
        return 3
    u0, u1, u2, w0, w1, w2 = v[0], v[1], v[2], v[3], v[4], v[5]
    G[0, 4], G[0, 5], G[1, 3], G[1, 5], G[2, 3], G[2, 4] = -g2, g1, g2, -g0, -g1, g0
    Bv[0, 1], Bv[0, 2], Bv[1, 0], Bv[1, 2], Bv[2, 0], Bv[2, 1] = w2, -w1, -w2, w0, w1, -w0
    Bv[0, 4], Bv[0, 5], Bv[1, 3], Bv[1, 5], Bv[2, 3], Bv[2, 4] = -u2, u1, u2, -u0, -u1, u0
    Bv[3, 4], Bv[3, 5], Bv[4, 3], Bv[4, 5], Bv[5, 3], Bv[5, 4] = w2, w1, -w2, -w0, w1, w0
    return 6


@njit(cache=True)
def inverse_into(im, fm, bf, q, v, a, fric, smooth, dq, dv, x, xdd, Mb, G, Bv, wd):
    """dtau/dq, dtau/dv (n, n) of one sample; scratch x, xdd (n,), Mb (n, 6), G, Bv (6, 6),
    wd (n, derivatives SCRATCH).  Returns 0, or 4 (zero quaternion).

    The base columns of M come from the derivative kernel's scratch: M[i, k] = (ICᵢ Sᵢ) · Sₖ
    for k <= i (every body i >= k hangs below virtual joint k; no armature off the diagonal
    or on the virtual joints), M[i, k] = M[k, i] for i < k."""
    if chart_state(bf, q, v, a, x, xdd):
        return 4
    derivatives_into(im, fm, x, v, xdd, NO_FW, _NO_P, 1, fric, smooth, dq, dv, wd)
    nb = _base_terms(bf, q, v, G, Bv)
    for i in range(x.shape[0]):
        for k in range(nb):
            r, c = (i, k) if k <= i else (k, i)
            Mb[i, k] = _dot(_get(wd, r, RI), _get(wd, c, S))
    for i in range(x.shape[0]):
        for c in range(nb):
            sg, sb = 0.0, 0.0
            for r in range(nb):
                sg += Mb[i, r] * G[r, c]
                sb += Mb[i, r] * Bv[r, c]
            dq[i, c] = -sg
            dv[i, c] -= sb
    return 0


@njit(cache=True)
def forward_into(im, fm, bf, q, v, tau, fric, smooth, aq, av, minv, x, xdd, G, Bv, wa, wd, L):
    """da/dq, da/dv, M⁻¹ (n, n) of one sample; scratch as :func:`inverse_into` plus wa
    (n, fd_derivatives SCRATCH) and L (n, n).  Returns 0, 3 (M not positive definite) or 4."""
    if chart_state(bf, q, v, v, x, xdd):
        return 4
    if fd_derivatives_into(im, fm, x, v, tau, fric, smooth, aq, av, minv, xdd, wa, wd, L):
        return 3
    nb = _base_terms(bf, q, v, G, Bv)
    for i in range(x.shape[0]):
        for c in range(nb):
            aq[i, c] = G[i, c] if i < nb else 0.0
    for r in range(nb):
        for c in range(nb):
            av[r, c] += Bv[r, c]
    return 0


@njit(cache=True, inline="always")
def _checked(fm, q, v, x, out):
    """Status 1 (sizes) or 2 (non-finite) of a sample, else 0."""
    n = fm.shape[0]
    if q.shape[0] != n + 1 or v.shape[0] != n or x.shape[0] != n:
        return 1
    for o in out:
        if o.shape[0] != n or o.shape[1] != n:
            return 1
    if not (all_finite(q) and all_finite(v) and all_finite(x)):
        return 2
    return 0


@njit(cache=True, inline="always")
def floating_inverse_dynamics_derivatives(im, fm, bf, q, v, a, fric, smooth, dq, dv):
    """Checked entry: dtau/dq, dtau/dv (nv, nv) into dq, dv; status as in the module docstring."""
    status = _checked(fm, q, v, a, (dq, dv))
    if status:
        return status
    n = fm.shape[0]
    return inverse_into(im, fm, bf, q, v, a, fric, smooth, dq, dv, np.empty(n), np.empty(n), np.empty((n, 6)),
                        np.empty((6, 6)), np.empty((6, 6)), np.empty((n, DER_SCRATCH)))


@njit(cache=True, inline="always")
def floating_forward_dynamics_derivatives(im, fm, bf, q, v, tau, fric, smooth, aq, av, minv):
    """Checked entry: da/dq, da/dv, M⁻¹ (nv, nv); status as in the module docstring."""
    status = _checked(fm, q, v, tau, (aq, av, minv))
    if status:
        return status
    n = fm.shape[0]
    return forward_into(im, fm, bf, q, v, tau, fric, smooth, aq, av, minv, np.empty(n), np.empty(n),
                        np.empty((6, 6)), np.empty((6, 6)), np.empty((n, FD_SCRATCH)),
                        np.empty((n, DER_SCRATCH)), np.empty((n, n)))


# ---- declarations (composedyn.dynamics.compiled.declare) ----
_QVX = (("q", "nq"), ("v", "nv"), ("x", "nv"))
INVERSE_DYNAMICS_DERIVATIVES = Quantity(
    "inverse_dynamics_derivatives", floating_inverse_dynamics_derivatives, inputs=_QVX, results=(("nv", "nv"),) * 2,
    options=(("friction", 1),), number="smooth_friction", floating=True)
FORWARD_DYNAMICS_DERIVATIVES = Quantity(
    "forward_dynamics_derivatives", floating_forward_dynamics_derivatives, inputs=_QVX,
    results=(("nv", "nv"),) * 3, options=(("friction", 1),), number="smooth_friction", floating=True)
