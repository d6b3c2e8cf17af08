"""numba for the kernels: ``njit``, ``prange`` and an on-disk cache keyed on the kernels' source.

Every kernel module of this package imports ``njit`` and ``prange`` from here,
so that importing a kernel fails with one clear line when numba is missing or
broken, and so that the cache locator below is installed before any kernel is
defined.

numba writes the machine code of a ``cache=True`` function next to its source
file (``__pycache__``) and reuses it while that one file is unchanged.  A
kernel here inlines helpers from other files of the package (the joint model
of :mod:`.joint`, the column constants of :mod:`.layout`), so an edit of a
helper would be served the old machine code.  The locator below stamps every
cache entry of a function defined in this package with one hash of all the
package's ``.py`` sources and numba's version, taken when this module is
imported: any edit of any source here invalidates every entry, and the next
call compiles again.
"""

from __future__ import annotations

import hashlib
import os

try:
    import numba
    from numba import njit, prange
    from numba.core import caching
except ImportError as exc:  # numba is a dependency; the NumPy reference is an explicit choice only
    raise ImportError(f"composedyn's compiled dynamics need numba, which failed to import ({exc}): "
                      "install it (pip install numba), or set COMPOSEDYN_BACKEND=numpy to run the "
                      "NumPy reference instead") from None

__all__ = ["PACKAGE_DIR", "SOURCE_STAMP", "njit", "prange", "source_stamp"]

PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))


def source_stamp(directory: str = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of numba's version and every ``.py`` file of ``directory`` (names and bytes)."""
    h = hashlib.sha256(numba.__version__.encode())
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


SOURCE_STAMP = source_stamp()  # taken now: the sources this process compiles are the ones just imported


def _package_locator(base: type) -> type:
    """``base`` (a numba cache locator) restricted to this package, stamped with SOURCE_STAMP."""

    class PackageLocator(base):
        composedyn_package = True

        def get_source_stamp(self):
            return SOURCE_STAMP

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.realpath(py_file)) != PACKAGE_DIR:
                return None
            return super().from_function(py_func, py_file)

    PackageLocator.__name__ = PackageLocator.__qualname__ = "Package" + base.__name__.lstrip("_")
    return PackageLocator


def _install() -> None:
    """Put the package locators first in numba's list (once per process)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    classes = impl._locator_classes
    if any(getattr(c, "composedyn_package", False) for c in classes):
        return
    bases = [getattr(caching, name, None) or getattr(caching, "_" + name)
             for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    classes[:0] = [_package_locator(b) for b in bases]


_install()
