"""numba for the kernels: ``njit``, ``cfunc``, ``prange``, with the package's own disk cache.

Every kernel module of this package imports ``njit`` (and ``cfunc``, ``prange``)
from here.  When numba is missing or broken the modules still import (their
declarations hold the NumPy references the NumPy backend runs), ``njit`` leaves
functions as they are and :data:`MISSING` is the one-line ``ImportError`` that
:func:`composedyn.dynamics.dispatch.backend` raises when the compiled backend is
asked for.  ``cache=True`` keeps the machine code with
:class:`composedyn.dynamics.compiled.cache.PackageCache` (keyed on all the
package's sources; loaded from the cache built at install, else from a per-user
directory; never written next to the installed package) instead of numba's
``__pycache__`` next to the source file.

Fast-math flags.  A function that names no ``fastmath`` gets the flags of the
function that calls it (numba's flag inheritance), and numba keeps one
compiled version of a function per argument types: the first caller to
compile a shared helper would decide, for every later caller and every later
process reading the disk cache, whether its arithmetic may fuse or reorder,
and results would change in the last bits with the order the kernels were
first compiled in.  So :func:`njit` gives every function compiled on its own
its own flags: ``fastmath=False`` unless it names some.  An
``inline="always"`` function is the exception: numba copies it into each
caller, where the caller's flags apply (that is how a kernel's private
helpers get the kernel's flags).
"""

from __future__ import annotations

import inspect

try:
    import numba
    from numba import prange
    from numba.core import sigutils

    from composedyn.dynamics.compiled.cache import PACKAGE_DIR, SOURCE_STAMP, PackageCache, in_package, source_stamp

    MISSING = None
except ImportError as exc:  # numba is a dependency; the NumPy reference is an explicit choice only
    MISSING = ImportError(f"composedyn's compiled dynamics need numba, which failed to import ({exc}): "
                          "install it (pip install numba), or set COMPOSEDYN_BACKEND=numpy to run the "
                          "NumPy reference instead")
    prange = range

__all__ = ["PACKAGE_DIR", "SOURCE_STAMP", "cfunc", "njit", "prange", "readonly", "source_stamp"]


def _use_package_cache(compiled, py_func) -> None:
    """Give the numba dispatcher or C callback ``compiled`` the package's cache (numba's own
    cache for a function defined outside this package)."""
    if in_package(py_func):
        compiled._cache = PackageCache(py_func)  # numba's cache slot, as its enable_caching sets it
    else:
        compiled.enable_caching()


def njit(*args, cache: bool = False, **options):
    """``numba.njit`` (same arguments: a function, or signatures and options); ``cache=True``
    caches the machine code with the package's cache; ``fastmath`` is False unless given or
    ``inline="always"`` (module docstring)."""
    if args and inspect.isfunction(args[0]):
        return njit(cache=cache, **options)(args[0])
    if MISSING is not None:  # the kernel modules still import (their declarations name the NumPy
        return lambda func: func  # references); dispatch.backend() raises MISSING before a kernel runs
    sigs = args[0] if args else None
    if options.get("inline") != "always":  # never the flags of whichever caller compiles it first
        options.setdefault("fastmath", False)

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        if cache:
            _use_package_cache(dispatcher, func)
        if sigs is not None:  # compiled now, as numba.njit does with signatures
            for sig in (sigs if isinstance(sigs, list) else [sigs]):
                dispatcher.compile(sig)
            dispatcher.disable_compile()
        return dispatcher

    return decorate


def cfunc(sig, cache: bool = False, **options):
    """``numba.cfunc`` (compiled now); ``cache=True`` caches the machine code with the package's cache."""
    if MISSING is not None:
        raise MISSING
    from numba.core.ccallback import CFunc

    def decorate(func):
        callback = CFunc(func, sigutils.normalize_signature(sig), locals={}, options=options)
        if cache:
            _use_package_cache(callback, func)
        callback.compile()
        return callback

    return decorate



if MISSING is None:
    from numba.core import types as _types
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic

    @intrinsic
    def readonly(typingctx, a):
        """``a`` typed as a read-only array in compiled code (the same array: no copy, no code).

        numba compiles a function once per argument types, and a read-only array is another
        type than a writeable one.  The generated entries and batch loops (:mod:`.declare`) pass
        the model arrays and the extras through this, so that every caller of a kernel that is
        not inlined (``aba_into``, the derivative passes) gives it the same types and it is
        compiled once, not once per kind of caller (C entries make writeable arrays of
        pointers; the loops get the read-only packed arrays)."""
        if not isinstance(a, _types.Array):
            return None

        def codegen(context, builder, sig, args):
            return impl_ret_borrowed(context, builder, sig.return_type, args[0])

        return a.copy(readonly=True)(a), codegen
else:
    def readonly(a):
        """``a`` (numba missing: nothing is compiled)."""
        return a
