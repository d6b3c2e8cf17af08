"""Keeping symbolic expressions compact.

The derivation already returns every entry in a canonical normal form (a
polynomial in sin q_i, cos q_i with sin**2 rewritten as 1 - cos**2, see
:mod:`.ring`).  On request each entry is further trigonometrically simplified
(``sympy.trigsimp``: products of sines and cosines become sines and cosines of
sums of angles), which gives the textbook forms for small robots; for large
robots (PUMA 560) the normal form is kept and common subexpression
elimination does the rest at code-generation time.
"""

from __future__ import annotations

import sympy as sp

AUTO_TRIG_MAX_DOF = 3


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
    if mode == "trig" and e.has(sp.sin, sp.cos):
        return sp.factor_terms(sp.trigsimp(e))
    return e
