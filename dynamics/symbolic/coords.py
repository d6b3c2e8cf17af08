"""Equations in user-chosen generalised coordinates, through the composed vectors.

Given joint coordinates as functions of the user's coordinates, q = f(θ), with
Jacobian J = ∂f/∂θ and Hessians H^α = ∂²f_α/∂θ∂θ, the paper's composed vectors
transform as (from q̇ = J θ̇, q̈ = J θ̈ + θ̇ᵀ H θ̇ substituted in eq. 2.10)

    vω_a = Σ_α vω_α J_αa,   PL_a = Σ_α PL_α J_αa,
    XY_ab = Σ_αβ XY_αβ J_αa J_βb + Σ_α PL_α H^α_ab,

and a, the brackets and Q are again their scalar products (eqs. 2.19-2.23).
"""

from __future__ import annotations

import sympy as sp
from sympy.polys.polyerrors import BasePolynomialError

from composedyn.dynamics.symbolic.composed import Derivation, world_vectors
from composedyn.dynamics.symbolic.inputs import link_index
from composedyn.dynamics.symbolic.ring import TrigRing


def jacobian(f: sp.Matrix, theta, point=None) -> sp.Matrix:
    """∂f/∂θ (n x k); ValueError if it is singular everywhere or at ``point`` (square
    maps), or rank-deficient (k < n, checked symbolically)."""
    J = f.jacobian(sp.Matrix(theta))
    if J.shape[0] != J.shape[1]:  # fewer coordinates than joints (e.g. mimic joints)
        if J.rank(simplify=True) < J.shape[1]:
            raise ValueError(f"coordinate map {list(f)} has a rank-deficient Jacobian")
        return J
    det = sp.simplify(J.det())
    if det == 0:
        raise ValueError(f"coordinate map {list(f)} has a singular Jacobian (det = 0 everywhere)")
    if point is not None:
        missing = set(theta) - set(point)
        if missing:
            raise ValueError(f"point lacks values for {sorted(s.name for s in missing)}")
        val = complex(sp.N(det.xreplace({k: sp.sympify(v) for k, v in point.items()})))
        if abs(val) < 1e-12:
            raise ValueError(f"coordinate map {list(f)} has a singular Jacobian at {dict(point)} "
                             f"(det = {val.real:.3g})")
    return J


def _normaliser(d: Derivation, theta):
    """Canonical form in the new coordinates (trig ring over the angles that appear in sin/cos)."""
    chain = d.chain
    data = [*chain.gravity, *chain.mass, *chain.armature]
    for seq in (chain.com, chain.inertia):
        for m in seq:
            data += list(m)

    def normal(e):
        e = sp.expand(sp.expand_trig(e))
        angles = {a.args[0] for a in e.atoms(sp.sin, sp.cos)}
        extra = sp.Add(*(e.free_symbols - set(theta)))
        try:
            return TrigRing(theta, [t in angles for t in theta], data + [extra]).normal(e)
        except (ValueError, TypeError, BasePolynomialError):  # not polynomial in sin/cos: keep it expanded
            return e

    return normal


def transform(d: Derivation, coordinates, theta, point=None, wrenches=None):
    """M, brackets, gravity Q, applied Q and f in the coordinates ``theta``.

    ``theta`` (k,) with k <= n; k < n describes joints tied by holonomic
    constraints (mimic joints).  Returns (M (k x k), B nested [a][b][c] (k, k, k),
    G (k x 1), Qw (k x 1), f (n,), vectors dict).
    """
    n, k = d.chain.n, len(theta)
    f = sp.Matrix([sp.sympify(x) for x in coordinates])
    if f.shape != (n, 1):
        raise ValueError(f"coordinate map must give {n} joint coordinates, got {len(f)}")
    stray = f.free_symbols - set(theta) - d.chain.free_symbols()
    if stray:
        raise ValueError(f"coordinate map uses unknown symbols {sorted(s.name for s in stray)}")
    J = jacobian(f, theta, point)
    H = [sp.hessian(f[al], theta) for al in range(n)]
    sub = dict(zip(d.q, f))
    vw0, PL0, XY0 = world_vectors(d)
    vw0 = [v.xreplace(sub) for v in vw0]
    PL0 = [v.xreplace(sub) for v in PL0]
    XY0 = [[v.xreplace(sub) for v in row] for row in XY0]
    Z = sp.zeros(6 * n, 1)
    vw = [sum((vw0[al] * J[al, a] for al in range(n)), Z) for a in range(k)]
    PL = [sum((PL0[al] * J[al, a] for al in range(n)), Z) for a in range(k)]
    XY = [[sum((XY0[al][be] * (J[al, a] * J[be, b]) for al in range(n) for be in range(n)), Z)
           + sum((PL0[al] * H[al][a, b] for al in range(n)), Z) for b in range(k)] for a in range(k)]
    arm = [sp.sympify(x) for x in d.chain.armature]
    normal = _normaliser(d, theta)
    vw, PL = [v.applyfunc(normal) for v in vw], [v.applyfunc(normal) for v in PL]
    XY = [[v.applyfunc(normal) for v in row] for row in XY]
    M = sp.Matrix(k, k, lambda c, a: normal((PL[a].T * vw[c])[0, 0]
                                            + sum(arm[j] * J[j, c] * J[j, a] for j in range(n))))
    B = [[[normal(((XY[a][b] + XY[b][a]).T * vw[c])[0, 0] / 2 + sum(arm[j] * J[j, c] * H[j][a, b] for j in range(n)))
           for c in range(k)] for b in range(k)] for a in range(k)]
    grav = sp.Matrix([x for i in range(n) for x in (*(d.chain.mass[i] * d.chain.gravity), 0, 0, 0)])
    G = sp.Matrix([normal((grav.T * vw[c])[0, 0]) for c in range(k)])
    Qw = sp.zeros(k, 1)
    for key, (F, N) in (wrenches or {}).items():
        i = link_index(d.chain, key)
        FN = sp.Matrix([*sp.Matrix(F), *sp.Matrix(N)])
        for c in range(k):
            Qw[c] += normal((FN.T * vw[c][6 * i:6 * i + 6, :])[0, 0])
    vectors = {"vw": vw, "PL": PL, "XY": XY}
    return M, B, G, Qw, tuple(f), vectors
