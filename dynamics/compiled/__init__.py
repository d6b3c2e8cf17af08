"""Compiled (numba) dynamics kernels over the flat ``Model`` arrays.

Importing this package does **not** import numba: :mod:`.layout` packs a
``Model`` into two contiguous arrays with NumPy only, and the kernel modules
(:mod:`.joint`, :mod:`.rnea`, :mod:`.crba`, :mod:`.coriolis`,
:mod:`.forward`) are imported lazily by :mod:`composedyn.dynamics.dispatch`
on the first dynamics call.

Formulation: RNEA and CRBA run in **body coordinates** (Featherstone's ``ID``
and ``HandC`` with 3x3 rotations and 3-vectors, spatial vectors angular
first); the Coriolis matrix is the world-frame algorithm of
:mod:`composedyn.dynamics.coriolis` written as loops.  Every kernel equals the
NumPy reference to ~1e-14 relative (``tests/test_compiled.py``).

Kernels are compiled with ``njit(cache=True)``: the machine code is written to
``__pycache__`` next to these files on the first call and reloaded by later
processes.  numba keys each cache entry on the time stamp of the file that
defines the kernel only, so after editing a helper in :mod:`.joint` delete
``dynamics/compiled/__pycache__`` (an installed wheel is never affected).
"""
