"""Where the kernels' machine code is kept: a read-only cache built at install, and a per-user one.

numba keeps the machine code of a ``cache=True`` function next to its source
file (``__pycache__``), keyed on that one file.  For this package that is
wrong three ways: a kernel inlines helpers from other files (an edit of a
helper would be served old machine code), an installed package may be
read-only (another user, a container, a service account without a home), and
files written into site-packages at run time are left behind by
``pip uninstall``.  :class:`PackageCache` replaces numba's cache for the
kernels of this package (``jit.njit(cache=True)``, ``jit.cfunc(cache=True)``):

* every entry is stamped with :data:`SOURCE_STAMP`, one hash of numba's version,
  all the ``.py`` sources of this package and the joint-type codes the kernels
  compile in (:data:`CONSTANTS`), so an edit of any of them compiles again;
* entries are looked up first in :data:`SHIPPED_DIR` (``kernel_cache/`` inside
  the package, written when the package is built, listed in the installed
  files, read only), then in the per-user directory :func:`cache_dirs` picks;
* new entries are written to that per-user directory only: ``NUMBA_CACHE_DIR``,
  else ``$XDG_CACHE_HOME/composedyn``, else ``~/.cache/composedyn``, else a
  private directory of this user in the system's temporary directory; when
  none is writable the kernels are compiled in memory, every process again.

A process that has to compile says so once on stderr, with an estimate
(``COMPOSEDYN_COMPILE_NOTICE=0`` silences it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
from typing import NamedTuple

import numba
from numba.core import caching

__all__ = ["BUILD_INFO", "PACKAGE_DIR", "SHIPPED_DIR", "SOURCE_STAMP", "CacheDirs", "PackageCache", "cache_dirs",
           "compiled_count", "in_package", "source_stamp"]

PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))
SHIPPED_DIR = os.path.join(PACKAGE_DIR, "kernel_cache")  # written at build time (setup.py), read only here
BUILD_INFO = "build.json"  # in SHIPPED_DIR: numba version, CPU and source stamp the cache was built with
NOTICE_ENV = "COMPOSEDYN_COMPILE_NOTICE"
BUILD_ENV = "COMPOSEDYN_KERNEL_CACHE_BUILD"  # set by the build: write the cache into this directory


CONSTANTS = ("joint_types.py",)  # modules beside this directory whose numbers the kernels compile in


def source_stamp(directory: str = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of numba's version, every ``.py`` file of ``directory`` and the :data:`CONSTANTS`
    files of its parent directory (names and bytes)."""
    h = hashlib.sha256(numba.__version__.encode())
    names = [name for name in sorted(os.listdir(directory)) if name.endswith(".py")]
    paths = [os.path.join(directory, name) for name in names]
    parent = os.path.dirname(directory)
    paths += [os.path.join(parent, name) for name in CONSTANTS if os.path.isfile(os.path.join(parent, name))]
    for path in paths:
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


SOURCE_STAMP = source_stamp()  # taken now: the sources this process compiles are the ones just imported


def in_package(py_func) -> bool:
    """True for a function defined in a file of this directory."""
    return os.path.dirname(os.path.realpath(py_func.__code__.co_filename)) == PACKAGE_DIR


class CacheDirs(NamedTuple):
    """The directories of this process: ``shipped`` (read only, or None when the package has
    no cache built at install) and ``writable`` (new entries, or None: no disk cache)."""

    shipped: str | None
    writable: str | None


def _usable(path: str, private: bool = False) -> bool:
    """True when ``path`` exists or can be made, and a file can be written in it; ``private``:
    also owned by this user and not writable by others (a directory in a shared place)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        if private:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                return False
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _writable_dir() -> str | None:
    """The first usable per-user cache directory (module docstring), with a sub-directory
    per installed copy of the package; None when there is none."""
    sub = "kernels-" + hashlib.sha1(PACKAGE_DIR.encode()).hexdigest()[:16]
    build = os.environ.get(BUILD_ENV)
    if build:
        return build if _usable(build) else None
    roots = [os.path.join(numba.config.CACHE_DIR, "composedyn")] if numba.config.CACHE_DIR else []
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        roots.append(os.path.join(xdg, "composedyn"))
    home = os.path.expanduser("~")
    if os.path.isabs(home):
        roots.append(os.path.join(home, ".cache", "composedyn"))
    for root in roots:
        if _usable(os.path.join(root, sub)):
            return os.path.join(root, sub)
    if hasattr(os, "getuid"):
        private = os.path.join(tempfile.gettempdir(), f"composedyn-{os.getuid()}")
        if _usable(private, private=True) and _usable(os.path.join(private, sub)):
            return os.path.join(private, sub)
    return None


@functools.cache
def cache_dirs() -> CacheDirs:
    """The cache directories of this process (chosen once)."""
    shipped = SHIPPED_DIR if os.path.isdir(SHIPPED_DIR) and not os.environ.get(BUILD_ENV) else None
    return CacheDirs(shipped, _writable_dir())


@functools.cache
def build_info() -> dict:
    """What the shipped cache was built with (``numba``, ``cpu``, ``stamp``), or {} without one."""
    try:
        with open(os.path.join(SHIPPED_DIR, BUILD_INFO), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def host_cpu() -> str:
    """This machine's CPU as numba compiles for it (the name LLVM gives)."""
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()[1]


_noticed: list = []
_compiled = [0]  # kernels compiled (not found in a cache) by this process


def compiled_count() -> int:
    """How many kernel compilations this process has done (cache misses)."""
    return _compiled[0]


def compile_notice() -> None:
    """Say once per process, on stderr, that kernels are being compiled, why, for how long
    and where they are kept (``COMPOSEDYN_COMPILE_NOTICE=0``: say nothing)."""
    if _noticed or os.environ.get(NOTICE_ENV, "1") == "0" or os.environ.get(BUILD_ENV):
        return
    _noticed.append(True)
    info, dirs = build_info(), cache_dirs()
    if not info:
        why = "this install has no compiled kernels"
    elif info.get("numba") != numba.__version__:
        why = f"this install's were compiled with numba {info.get('numba')}, this is numba {numba.__version__}"
    elif info.get("stamp") != SOURCE_STAMP:
        why = "the package's sources changed since it was installed"
    else:
        why = "not among the kernels compiled at install" if info.get("cpu") == host_cpu() else \
            f"this install's were compiled for another CPU ({info.get('cpu')})"
    where = f"kept in {dirs.writable}" if dirs.writable else \
        "not kept: no writable cache directory, set NUMBA_CACHE_DIR"
    sys.stderr.write(f"composedyn: compiling dynamics kernels ({why}): about 5-20 s per quantity on first use, "
                     f"a few minutes for all (`composedyn warm-up`); {where}\n")
    sys.stderr.flush()


class _Locator(caching._CacheLocator):
    """numba's view of where a package function's entries are written: the writable directory."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self):
        dirs = cache_dirs()
        return dirs.writable or dirs.shipped or PACKAGE_DIR  # the last two are never written

    def ensure_cache_path(self):
        os.makedirs(self.get_cache_path(), mode=0o700, exist_ok=True)

    def get_source_stamp(self):
        return SOURCE_STAMP

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        return cls(py_func, py_file) if in_package(py_func) else None


_IMPL = getattr(caching, "CompileResultCacheImpl", None) or caching._CompileResultCacheImpl


class _Impl(_IMPL):
    _locator_classes = [_Locator]


class PackageCache(caching.FunctionCache):
    """numba's function cache for a kernel of this package: loads from the shipped cache, then
    the writable one; saves to the writable one only (module docstring)."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        dirs = cache_dirs()
        self._writable = dirs.writable is not None
        self._sources = [caching.IndexDataCacheFile(cache_path=d, filename_base=self._impl.filename_base,
                                                    source_stamp=SOURCE_STAMP)
                         for d in (dirs.shipped, dirs.writable) if d is not None]

    def load_overload(self, sig, target_context):
        target_context.refresh()
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        for source in self._sources:
            try:
                data = source.load(key)
            except Exception:  # an unreadable or truncated entry is a miss, compiled again
                data = None
            if data is not None:
                return self._impl.rebuild(target_context, data)
        _compiled[0] += 1
        compile_notice()
        return None

    def save_overload(self, sig, data):
        if not self._writable:
            return
        try:
            super().save_overload(sig, data)
        except OSError:  # full or removed meanwhile: this process keeps the compiled code in memory
            pass
