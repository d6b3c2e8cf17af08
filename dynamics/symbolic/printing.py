"""Text and LaTeX rendering of :class:`~composedyn.dynamics.symbolic.equations.Equations`."""

from __future__ import annotations

import sympy as sp


def _dot_names(eq) -> dict:
    """LaTeX names: q1 -> q_{1}, q1d -> \\dot{q}_{1}, q1dd -> \\ddot{q}_{1}."""
    out = {}
    for s, sd, sdd in zip(eq.q, eq.qd, eq.qdd):
        base = sp.latex(s)
        out[sd], out[sdd] = rf"\dot{{{base}}}", rf"\ddot{{{base}}}"
    return out


def to_latex(eq) -> str:
    """LaTeX of M, C, g, the non-zero brackets ``c_{a,b,g}`` = [ab, g] and the equations of motion
    (one ``align*``)."""
    names = _dot_names(eq)

    def L(e):
        return sp.latex(e, symbol_names=names)

    n = eq.n
    lines = [rf"M(q) &= {L(eq.M)}", rf"C(q, \dot q) &= {L(eq.C)}", rf"g(q) &= {L(eq.g)}"]
    for a in range(n):
        for b in range(a, n):
            for c in range(n):
                if eq.brackets[a, b, c] != 0:
                    lines.append(rf"c_{{{a + 1},{b + 1},{c + 1}}} &= {L(eq.brackets[a, b, c])}")
    for k, e in enumerate(eq.eom()):
        lines.append(rf"\text{{eq. {k + 1}:}}\quad {L(e.lhs)} &= {L(e.rhs)}")
    return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"


def to_text(eq) -> str:
    """Plain-text listing: M, C, g entries, non-zero Christoffel brackets ``c[a,b,g]`` = [ab, g]
    (1-based coordinate numbers, comma-separated), Q."""
    n = eq.n
    out = [f"# {eq.name}: {n} coordinates q = {list(eq.q)}, rates {list(eq.qd)}"]
    if eq.parameters:
        out.append("# parameters: " + ", ".join(f"{k} = {v:.6g}" for k, v in eq.parameters.items()))
    for a in range(n):
        for b in range(a, n):
            out.append(f"M[{a + 1},{b + 1}] = {sp.sstr(eq.M[a, b])}")
    for a in range(n):
        for b in range(a, n):
            for c in range(n):
                if eq.brackets[a, b, c] != 0:
                    out.append(f"c[{a + 1},{b + 1},{c + 1}] = {sp.sstr(eq.brackets[a, b, c])}")
    for a in range(n):
        out.append(f"g[{a + 1}] = {sp.sstr(eq.g[a])}")
    for a in range(n):
        if eq.Q[a] != -eq.g[a]:
            out.append(f"Q[{a + 1}] = {sp.sstr(eq.Q[a])}")
    out.append("# tau = M qdd + C qd + g with C[g,a] = sum_b c[a,b,g] qd_b; "
               "c[a,b,g] = (dM[g,a]/dq_b + dM[g,b]/dq_a - dM[a,b]/dq_g) / 2")
    return "\n".join(out)
