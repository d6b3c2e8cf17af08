"""Compiled (numba) dynamics kernels over the flat arrays of a ``Model``.

Layout:

* :mod:`.layout` -- packs a ``Model`` into two contiguous arrays, ``im``
  (parent, joint type) and ``fm`` (one row of numbers per body: tree
  transform, axis, inertia, friction, gravity), with NumPy only;
* :mod:`.jit` -- ``njit`` and ``prange`` for every kernel module: imports
  numba (``jit.MISSING``, one clear ``ImportError`` line, if it cannot) and
  keys the on-disk cache on the source of this whole package;
* :mod:`.joint` -- the joint model: pose, motion subspace S, S^T f and the
  velocity product of a joint, plus the shared 3-vector and spatial helpers.
  The only place that looks at the joint type; :mod:`.sincos` its sine and
  cosine of a joint angle (one reduction, no C-library call);
* one kernel per algorithm, ``<name>_into`` (one sample on caller-provided
  scratch): :mod:`.rnea` (inverse dynamics), :mod:`.crba` (mass matrix),
  :mod:`.coriolis` (Coriolis matrix), :mod:`.gravity` (gravity torques),
  :mod:`.aba` (forward dynamics), :mod:`.forward` (Cholesky solve of a
  given M), and next to each kernel the declaration of the quantities it
  computes for the ``Robot`` methods (:class:`.declare.Quantity`, with the
  NumPy reference);
* :mod:`.declare` -- from a declaration, the generated checked
  single-sample C function, its C caller (``_call.c``) and the serial and
  parallel batch loops (:mod:`.finite`: their finite-input check);
  :mod:`.quantities` finds the declarations;
  :mod:`.fast` -- ``robot.fast``, those callers with the batch loops as
  fallback; :mod:`.parallel` -- when a batch loop uses all cores.

Importing this package, :mod:`.layout` or :mod:`.parallel` does not import
numba; the kernel modules do (:mod:`composedyn.dynamics.dispatch` imports
them on the first dynamics call; without numba they still import, for their
NumPy references).

Formulation: RNEA, ABA and the gravity torques run in **body coordinates**
(Featherstone's ``ID`` and ``FDab`` with 3x3 rotations and 3-vectors; gravity
by subtree mass and first moment); the CRBA and the Coriolis matrix in
**world coordinates** (Pinocchio's CRBA; the algorithm of
:mod:`composedyn.dynamics.reference.coriolis`).  Spatial vectors are angular first
inside the kernels.  Every kernel equals the NumPy reference to ~1e-14
relative (``tests/test_compiled*.py``).

Joint model.  A joint of body i has one coordinate q_i, a tree transform
(parent frame -> joint frame at q = 0) and a unit axis a; revolute: pose
tree_R Rot(a, q_i), S = (a, 0); prismatic: translation q_i a, S = (0, a).
Kernels get all of it from :mod:`.joint`, so a new joint type is added there
(and in :mod:`composedyn.dynamics.model` and :mod:`.layout`), not in the
kernels.

Two things decide the speed of these kernels more than the flop count: keep
a body's quantities in local scalars (helpers taking and returning tuples,
inlined by LLVM), and avoid array slices and non-inlined calls that take
arrays, on which numba counts references with atomic operations.  Measured
figures are in ``docs/performance.md``.

Kernels are compiled with ``cache=True``: the machine code is compiled when
the package is built and shipped with it (``kernel_cache/``), or compiled on
the first call and kept in a per-user cache directory, and reloaded by later
processes while no ``.py`` file of this package changes (:mod:`.cache`).
"""
