"""Symbolic equations of motion (SymPy) through the composed vectors.

    from composedyn.dynamics.symbolic import equations
    eq = equations(robot, parameters=True)      # eq.M, eq.C, eq.g, eq.tau, eq.brackets
    f = eq.functions()                           # batched NumPy M(q), C(q, qd), g(q), tau(...)
    src = eq.c_code()                            # C source with common subexpressions

Modules: :mod:`.chain` (symbolic kinematic trees), :mod:`.dh` (DH rows with
symbols), :mod:`.ring` (fast polynomial arithmetic), :mod:`.composed` (the
composed vectors and their scalar products), :mod:`.coords` (user
coordinates), :mod:`.equations`, :mod:`.codegen`, :mod:`.printing`.
"""

from composedyn.dynamics.extras import require

require("sympy", "symbolic equations")  # MissingExtra naming [symbolic], before the modules that import SymPy

from composedyn.dynamics.symbolic.chain import PARAMETER_KINDS, Chain, chain_from_model  # noqa: E402
from composedyn.dynamics.symbolic.dh import chain_from_dh  # noqa: E402
from composedyn.dynamics.symbolic.equations import Equations, equations  # noqa: E402

__all__ = ["PARAMETER_KINDS", "Chain", "Equations", "chain_from_dh", "chain_from_model", "equations"]
