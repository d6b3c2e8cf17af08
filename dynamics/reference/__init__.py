"""NumPy reference algorithms: the dynamics in plain, batched NumPy.

Every function takes a :class:`composedyn.dynamics.model.Model` and joint
arrays with leading batch axes.  These are the definitions the compiled
kernels (:mod:`composedyn.dynamics.compiled`) are tested against, and the
route chosen with ``COMPOSEDYN_BACKEND=numpy``.  Spatial vectors are angular
first (Featherstone), in world coordinates unless a docstring says otherwise.
"""
