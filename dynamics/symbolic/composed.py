"""Composed vectors of Giacaglia & Lamas, symbolically, and the scalar products
that give the equations of motion (paper eqs. 2.1-2.25).

For coordinate alpha and link i (only ancestors alpha of i contribute):

* ``vω_α = (v_α1, ω_α1, ..., v_αn, ω_αn)``: v_αi = ∂(COM velocity of i)/∂q̇_α,
  ω_αi = ∂ω_i/∂q̇_α (revolute: ω_αi = z_α, v_αi = z_α × (C_i − O_α);
  prismatic: ω_αi = 0, v_αi = z_α);
* ``PL_α = (m_i v_αi, I_i ω_αi)``;
* ``XY_βγ = (m_i ∂v_βi/∂q_γ, I_i ∂ω_βi/∂q_γ + ω_βi × I_i ω_γi)`` with the
  analytic derivatives ∂v_βi/∂q_γ = ω_γi × v_βi, ∂ω_βi/∂q_γ = ω_γi × ω_βi
  when γ is β or an ancestor of β, ∂v_βi/∂q_γ = ω_βi × v_γi, ∂ω_βi/∂q_γ = 0
  when γ lies between β and i;
* ``a_γα = PL_α ∘ vω_γ``, ``[αβ, γ] = ½ (XY_αβ + XY_βα) ∘ vω_γ`` (the
  Christoffel symbols of the first kind), gravity ``Q_γ = Σ m_i g ∘ v_γi``.

Scalar products are frame-invariant, so link i's components are computed in
link i's own axes (the joint axes and origins of its ancestors expressed in
that frame): expressions then depend only on the joints between α and i and
stay small.  :func:`world_vectors` gives the paper's world-axes vectors.
All arithmetic is in the polynomial ring of :mod:`.ring`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.polys.domains import QQ

from composedyn.dynamics.symbolic.chain import Chain
from composedyn.dynamics.symbolic.joint import angles, joint_motion, joint_subspace
from composedyn.dynamics.symbolic.ring import TrigRing, add, cross, dot, is_zero, matmul, matvec, scale, sub, tmatvec


@dataclass
class Derivation:
    """Ring-level results: ``M[γ][α]``, ``B[α][β][γ]`` = [αβ, γ], ``G[γ]`` = Q_γ of gravity.

    Per link i (body frame): ``anc[i]`` ancestors, ``w[i][α]``, ``v[i][α]``
    (ω_αi, v_αi), ``inertia[i]``, ``mass[i]``, ``Rw[i]`` world rotation.
    """

    chain: Chain
    q: tuple
    rg: TrigRing
    anc: list
    w: list
    v: list
    mass: list
    inertia: list
    Rw: list
    M: list
    B: list
    G: list


def link_frames(chain: Chain, rg: TrigRing):
    """Per link i: ancestors, and for each ancestor α the joint axis u_α and
    origin o_α expressed in link i's frame, gravity in link i's frame, world rotation."""
    zero = (rg.R.zero,) * 3
    ax, frames, grav, Rw, ancs = [], [], [], [], []
    g0 = tuple(rg(x) for x in chain.gravity)
    eye = tuple(tuple(rg.R.one if r == k else rg.R.zero for k in range(3)) for r in range(3))
    for i in range(chain.n):
        T = chain.tree[i]
        tR = tuple(tuple(rg(T[r, k]) for k in range(3)) for r in range(3))
        tp = tuple(rg(T[r, 3]) for r in range(3))
        a = tuple(rg(x) for x in chain.axis[i])
        ax.append(a)
        J, shift = joint_motion(rg, chain, i, a)
        k = chain.parent[i]

        def down(u, J=J, tR=tR):  # parent-frame direction -> frame i
            return tmatvec(J, tmatvec(tR, u))

        def down_point(x, J=J, tR=tR, tp=tp, shift=shift):
            return tmatvec(J, sub(tmatvec(tR, sub(x, tp)), shift))

        parent_frames = frames[k] if k >= 0 else {}
        frames.append({al: (down(u), down_point(o)) for al, (u, o) in parent_frames.items()})
        frames[i][i] = (a, zero)
        grav.append(down(grav[k] if k >= 0 else g0))
        Rw.append(matmul(matmul(Rw[k] if k >= 0 else eye, tR), J))
        ancs.append(chain.ancestors(i))
    return ancs, frames, grav, Rw


def derive(chain: Chain, q: tuple) -> Derivation:
    """Composed vectors and their scalar products for ``chain`` in joint coordinates ``q``."""
    data = [*chain.gravity, *chain.mass, *chain.armature]
    for seq in (chain.tree, chain.axis, chain.com, chain.inertia):
        for m in seq:
            data += list(m)
    rg = TrigRing(q, angles(chain), data)
    n = chain.n
    ancs, frames, grav, Rw = link_frames(chain, rg)
    W, V, masses, inertias = [], [], [], []
    for i in range(n):
        com = tuple(rg(x) for x in chain.com[i])
        w, v = {}, {}
        for al, (u, o) in frames[i].items():
            w[al], v[al] = joint_subspace(rg, chain, al, u, o, com)
        W.append(w), V.append(v)
        masses.append(rg(chain.mass[i]))
        inertias.append(tuple(tuple(rg(chain.inertia[i][r, k]) for k in range(3)) for r in range(3)))
    R0 = rg.R.zero
    M = [[R0] * n for _ in range(n)]
    B = [[[R0] * n for _ in range(n)] for _ in range(n)]
    G = [R0] * n
    for i in range(n):
        m, I, w, v, anc = masses[i], inertias[i], W[i], V[i], ancs[i]
        L = {al: matvec(I, w[al]) for al in anc}
        for ga in anc:
            G[ga] += m * dot(grav[i], v[ga])
            for al in anc:
                M[ga][al] += m * dot(v[al], v[ga]) + dot(L[al], w[ga])
        depth = {al: len(ancs[al]) for al in anc}
        for al in anc:
            for be in anc:
                X, Y = _xy(m, I, w, v, L, al, be, depth)
                if X is None:
                    continue
                for ga in anc:
                    B[al][be][ga] += dot(X, v[ga]) + dot(Y, w[ga])
    for al in range(n):
        M[al][al] += rg(chain.armature[al])
    M = [[rg.reduce(x) for x in row] for row in M]
    half = QQ(1, 2)
    B = [[[rg.reduce((B[al][be][ga] + B[be][al][ga]) * half) for ga in range(n)] for be in range(n)]
         for al in range(n)]
    G = [rg.reduce(x) for x in G]
    return Derivation(chain, q, rg, ancs, W, V, masses, inertias, Rw, M, B, G)


def _xy(m, I, w, v, L, be, ga, depth):
    """Link i's part of XY_βγ: (m ∂v_βi/∂q_γ, I ∂ω_βi/∂q_γ + ω_βi × I ω_γi), or (None, None) if zero.

    β and γ are both ancestors of link i, so one is an ancestor of the other;
    ``depth`` orders them along the path.
    """
    if depth[ga] <= depth[be]:  # γ is β or an ancestor of β
        dv, dw = cross(w[ga], v[be]), cross(w[ga], w[be])
    else:  # γ between β and link i
        dv, dw = cross(w[be], v[ga]), None
    Y = cross(w[be], L[ga])
    if dw is not None:
        Y = add(Y, matvec(I, dw))
    X = scale(m, dv)
    if is_zero(X) and is_zero(Y):
        return None, None
    return X, Y


def world_vectors(d: Derivation):
    """The paper's composed vectors in world axes, as SymPy matrices.

    Returns ``vw`` (n,) and ``PL`` (n,) lists of 6N x 1 matrices, and ``XY``
    (n x n) nested list of 6N x 1 matrices, link blocks ordered (v, ω) as in
    eq. (2.8).  Intended for small robots (display, coordinate changes).
    """
    n, rg = d.chain.n, d.rg
    zero = (rg.R.zero,) * 3
    depth = {al: len(d.anc[al]) for al in range(n)}

    def world(i, x):
        return [rg.to_expr(rg.reduce(c)) for c in matvec(d.Rw[i], x)]

    def stack(blocks):
        return sp.Matrix([e for pair in blocks for vec in pair for e in vec])

    vw, PL = [], []
    for al in range(n):
        bv, bp = [], []
        for i in range(n):
            w, v = d.w[i].get(al, zero), d.v[i].get(al, zero)
            bv.append((world(i, v), world(i, w)))
            bp.append((world(i, scale(d.mass[i], v)), world(i, matvec(d.inertia[i], w))))
        vw.append(stack(bv)), PL.append(stack(bp))
    XY = [[None] * n for _ in range(n)]
    for be in range(n):
        for ga in range(n):
            blocks = []
            for i in range(n):
                X = Y = None
                if be in d.w[i] and ga in d.w[i]:
                    L = {k: matvec(d.inertia[i], d.w[i][k]) for k in (be, ga)}
                    X, Y = _xy(d.mass[i], d.inertia[i], d.w[i], d.v[i], L, be, ga, depth)
                blocks.append((world(i, X or zero), world(i, Y or zero)))
            XY[be][ga] = stack(blocks)
    return vw, PL, XY
