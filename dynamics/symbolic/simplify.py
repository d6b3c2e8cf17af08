"""Keeping symbolic expressions compact.

The derivation already returns every entry in a canonical normal form (a
polynomial in sin q_i, cos q_i with sin**2 rewritten as 1 - cos**2, see
:mod:`.ring`).  On request each entry is further trigonometrically simplified
(``sympy.trigsimp``: products of sines and cosines become sines and cosines of
sums of angles), which gives the textbook forms for small robots; entries with more
than ``TRIGSIMP_MAX_OPS`` operations only get the fast sum-of-angles pass
(``fu.TR10i``: c2 c3 - s2 s3 -> cos(q2 + q3)).  By default ("auto") robots
with more than three coordinates keep the normal form, and common
subexpression elimination does the rest at code-generation time.
"""

from __future__ import annotations

import sympy as sp

AUTO_TRIG_MAX_DOF = 3
TRIGSIMP_MAX_OPS = 150  # larger entries get the fast sum-of-angles pass only


def resolve(mode, n: int) -> str:
    """Normalise the ``simplify`` argument: "trig" or "none" ("auto"/True: trig up to 3 dof)."""
    if mode in (False, None, "none", "expand"):
        return "none"
    if mode == "trig":
        return "trig"
    if mode in (True, "auto"):
        return "trig" if n <= AUTO_TRIG_MAX_DOF else "none"
    raise ValueError(f"simplify must be True, False, 'auto', 'trig' or 'none', got {mode!r}")


def compact(e: sp.Expr, mode: str) -> sp.Expr:
    """One entry, simplified according to ``mode`` ("trig" or "none")."""
    e = sp.sympify(e)
    if mode != "trig" or not e.has(sp.sin, sp.cos):
        return e
    if sp.count_ops(e) <= TRIGSIMP_MAX_OPS:
        return sp.factor_terms(sp.trigsimp(e))
    from sympy.simplify.fu import TR10i

    return TR10i(e)
