"""Fast polynomial arithmetic for the symbolic derivation.

Everything the derivation multiplies is a polynomial in ``s_i = sin q_i``,
``c_i = cos q_i`` (revolute joints), ``q_i`` (prismatic joints) and the free
parameters, so it is done in a sparse polynomial ring over the rationals
(``sympy.polys.rings``), orders of magnitude faster than ``Expr`` arithmetic.
Non-polynomial parameter expressions (``sin(alpha)``, ``1/L``) become extra
generators.  :meth:`TrigRing.reduce` rewrites ``s_i**2 -> 1 - c_i**2``, the
normal form modulo ``s_i**2 + c_i**2 = 1``: zero-testing is exact and
expressions stay compact.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.orderings import lex
from sympy.polys.rings import ring

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.symbolic.chain import exact


def _nonpoly_atoms(e: sp.Expr) -> set:
    """Subexpressions of ``e`` that are not polynomial in its symbols."""
    out = set()
    for a in sp.preorder_traversal(e):
        if isinstance(a, sp.Function) or (isinstance(a, sp.Pow) and not (a.exp.is_Integer and a.exp > 0)):
            out.add(a)
    return out


class TrigRing:
    """Polynomial ring for one derivation: joint trig generators + parameters.

    ``q`` (n,) are the joint-coordinate symbols; ``angle`` (n,) whether each enters through its
    sine and cosine (:func:`.joint.angles`) or as itself; ``exprs`` every chain entry
    (to discover parameters and non-polynomial atoms).
    """

    def __init__(self, q: Sequence[sp.Symbol], angle: Sequence[bool], exprs: Iterable[sp.Expr]):
        self.back = {}  # ring generator -> Expr
        self._angle = tuple(bool(x) for x in angle)
        self.atom_map = {}  # non-polynomial atom -> number or generator
        gens, pairs = [], []
        self._joint_gen = []
        for i, (qi, is_angle) in enumerate(zip(q, self._angle)):
            if not is_angle:
                self._joint_gen.append(len(gens))
                gens.append(qi)
                continue
            s, c = sp.Dummy(f"s{i + 1}"), sp.Dummy(f"c{i + 1}")
            self.back[s], self.back[c] = sp.sin(qi), sp.cos(qi)
            self._joint_gen.append(len(gens))
            pairs.append((len(gens), len(gens) + 1))
            gens += [s, c]
        exprs = [sp.sympify(e) for e in exprs]
        atoms = sorted(set().union(set(), *[_nonpoly_atoms(e) for e in exprs]), key=sp.default_sort_key)
        symbolic = []
        for a in atoms:
            if a.free_symbols & set(q):
                raise ModelError(f"symbolic path: parameter expression {a} uses a joint coordinate symbol")
            if a.free_symbols:
                symbolic.append(a)
            else:
                self.atom_map[a] = exact(float(sp.N(a, 30)))
        for a in symbolic:  # sin(x) and cos(x) both present: a reducible pair
            if isinstance(a, sp.sin) and sp.cos(a.args[0]) in symbolic:
                s, c = sp.Dummy(str(a)), sp.Dummy(str(sp.cos(a.args[0])))
                pairs.append((len(gens), len(gens) + 1))
                gens += [s, c]
                self.atom_map[a], self.atom_map[sp.cos(a.args[0])] = s, c
        for a in symbolic:
            if a not in self.atom_map:
                d = sp.Dummy(str(a))
                self.atom_map[a] = d
                gens.append(d)
        self.back.update({d: a for a, d in self.atom_map.items() if isinstance(d, sp.Dummy)})
        params = set().union(set(), *[e.free_symbols for e in exprs]) - set(q)
        gens += sorted(params, key=sp.default_sort_key)
        self.R, *self.gens = ring(gens, QQ, lex)
        self.pairs = pairs
        self._sub = {s: self.R.one - self.gens[c] ** 2 for s, c in pairs}

    def joint(self, i: int):
        """(s_i, c_i) ring generators of coordinate i when it is an angle, else q_i."""
        k = self._joint_gen[i]
        if not self._angle[i]:
            return self.gens[k]
        return self.gens[k], self.gens[k + 1]

    def __call__(self, e) -> "sp.polys.rings.PolyElement":
        """Convert a chain entry (number or parameter expression) into the ring."""
        e = sp.sympify(e).xreplace(self.atom_map)
        try:
            return self.R.from_expr(e)
        except (ValueError, sp.PolynomialError, TypeError) as err:
            raise ModelError(f"symbolic path: cannot use {e} as a polynomial parameter ({err})") from None

    def reduce(self, p):
        """Normal form of ``p`` modulo s_i**2 + c_i**2 - 1 (s_i**2 -> 1 - c_i**2)."""
        if not self.pairs:
            return p
        groups: dict = {}  # (k_1, k_2, ...) -> {monomial with s-exponents mod 2: coeff}
        for m, c in p.items():
            ks = tuple(m[s] // 2 for s, _ in self.pairs)
            if any(ks):
                mm = list(m)
                for s, _ in self.pairs:
                    mm[s] %= 2
                m = tuple(mm)
            grp = groups.setdefault(ks, {})
            grp[m] = grp.get(m, 0) + c
        out = self.R.zero
        for ks, terms in groups.items():
            part = self.R.from_dict({m: c for m, c in terms.items() if c})
            for (s, _), k in zip(self.pairs, ks):
                if k:
                    part = part * self._sub[s] ** k
            out += part
        return out

    def normal(self, e: sp.Expr) -> sp.Expr:
        """Canonical form of an expression polynomial in sin q_i, cos q_i (after expand_trig)."""
        fwd = {v: k for k, v in self.back.items()}
        p = self.R.from_expr(sp.sympify(e).xreplace(fwd).xreplace(self.atom_map))
        return self.to_expr(self.reduce(p))

    def to_expr(self, p) -> sp.Expr:
        """Back to a SymPy expression in sin(q_i), cos(q_i), q_i and the parameters."""
        return p.as_expr().xreplace(self.back)


# ---- 3-vectors and 3x3 matrices of ring elements (tuples) --------------------
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def scale(k, a):
    return (k * a[0], k * a[1], k * a[2])


def matvec(M, v):
    return tuple(M[r][0] * v[0] + M[r][1] * v[1] + M[r][2] * v[2] for r in range(3))


def tmatvec(M, v):
    """M^T v."""
    return tuple(M[0][r] * v[0] + M[1][r] * v[1] + M[2][r] * v[2] for r in range(3))


def matmul(A, B):
    return tuple(tuple(A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c] for c in range(3)) for r in range(3))


def is_zero(v) -> bool:
    return all(not x for x in v)
