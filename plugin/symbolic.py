"""``composedyn.symbolic``: closed-form equations of motion with SymPy.

    import composedyn as cd
    eq = cd.symbolic.equations(cd.load("two_link"), parameters=True)
    eq.M, eq.C, eq.g, eq.tau, eq.brackets, eq.Q      # sympy matrices / array
    print(eq.latex())                                  # or eq.pretty()
    f = eq.functions(); f["M"](q_batch)                # batched NumPy
    src = eq.c_code()                                  # C source with CSE

Everything is derived through the composed vectors of Giacaglia & Lamas; see
:mod:`composedyn.dynamics.symbolic`.  Importing this module imports SymPy;
``import composedyn`` alone does not.
"""

from composedyn.dynamics.symbolic import PARAMETER_KINDS, Chain, Equations, chain_from_dh, chain_from_model, equations
from composedyn.dynamics.symbolic.codegen import c_source, numpy_functions

__all__ = ["PARAMETER_KINDS", "Chain", "Equations", "c_source", "chain_from_dh", "chain_from_model", "equations",
           "numpy_functions"]
