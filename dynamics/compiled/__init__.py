"""Compiled (numba) dynamics kernels over the flat ``Model`` arrays.

Importing this package does **not** import numba: :mod:`.layout` packs a
``Model`` into two contiguous arrays with NumPy only, and the kernel modules
(:mod:`.rnea`, :mod:`.crba`, :mod:`.coriolis`, :mod:`.gravity`,
:mod:`.aba`, :mod:`.forward`, :mod:`.entry`) are imported lazily by
:mod:`composedyn.dynamics.dispatch` on the first dynamics call.

Formulation: RNEA, ABA and the gravity torques run in **body coordinates**
(Featherstone's ``ID`` and ``FDab`` with 3x3 rotations and 3-vectors,
spatial vectors angular first; gravity by subtree mass and first moment);
the CRBA and the Coriolis matrix in **world coordinates** (Pinocchio's CRBA;
the algorithm of :mod:`composedyn.dynamics.reference.coriolis`).  :mod:`.entry` holds
the checked single-sample entries the ``Robot`` methods call.  Every kernel
equals the NumPy reference to ~1e-14 relative (``tests/test_compiled*.py``).

Two things decide the speed of these kernels more than the flop count: keep
a body's quantities in local scalars (helpers returning tuples, inlined by
LLVM), and avoid array slices and non-inlined calls that take arrays, on
which numba counts references with atomic operations.

Kernels are compiled with ``njit(cache=True)``: the machine code is written to
``__pycache__`` next to these files on the first call and reloaded by later
processes.  numba keys each cache entry on the time stamp of the file that
defines the kernel only, so after editing a kernel module that others call
(:mod:`.rnea`, :mod:`.crba`, ... are compiled into :mod:`.entry`) delete
``dynamics/compiled/__pycache__`` (an installed wheel is never affected).
"""
