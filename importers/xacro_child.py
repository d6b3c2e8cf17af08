"""Expand one xacro file in a child process with bounded resources (stdlib and ``xacro`` only).

Run as a script by :func:`composedyn.importers.xacro.expand_xacro`: the request
(path, arguments, package folders, limits) comes as JSON on stdin; the URDF
text goes to stdout (exit 0), or one line saying what is wrong goes to stderr
(exit 3).  The process limits its own address space (``RLIMIT_AS``) and CPU
time (``RLIMIT_CPU``) first, so a description that recurses, doubles its
properties or includes itself ends here -- with a one-line error or, at
worst, a killed child -- and never grows the caller's memory or stack.
Nothing here imports composedyn, so the child starts in a fraction of a second.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


class PackageNotFound(Exception):
    """A ``$(find pkg)`` or ``package://pkg`` that no searched folder holds (message: one line)."""


def find_package(name: str, package_dirs=(), source: str = "<xacro>") -> Path:
    """The folder of package ``name``: a folder named ``name`` among ``package_dirs``, or found
    directly inside one of them, of ``ROS_PACKAGE_PATH``, or of ``<prefix>/share`` for each
    prefix in ``AMENT_PREFIX_PATH``.  PackageNotFound naming it and the folders searched."""
    roots = [Path(d) for d in package_dirs]
    roots += [Path(d) for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    roots += [Path(d) / "share" for d in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if d]
    for root in roots:
        if root.name == name and root.is_dir():
            return root.resolve()
        if (root / name).is_dir():
            return (root / name).resolve()
    searched = ", ".join(map(str, roots)) or "none: give package_dirs (--package-dir) or set ROS_PACKAGE_PATH"
    raise PackageNotFound(f"{source}: package {name!r} not found (searched: {searched})")


def _limit(memory: int, seconds: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform: the caller's timeout still applies
        return
    for kind, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, seconds)):
        soft, hard = resource.getrlimit(kind)
        if hard == resource.RLIM_INFINITY or value < hard:
            resource.setrlimit(kind, (value, value if hard == resource.RLIM_INFINITY else hard))


def _one_line(e: BaseException) -> str:
    text = (str(e) or type(e).__name__).splitlines()[0]
    if "substitution argument" in text:
        text += " (give it in xacro_args)"
    return text


def _package_index(share_directory) -> None:
    """Resolve xacro's ``$(find pkg)`` with ``share_directory(pkg) -> str``: xacro asks the ROS 2 package
    index, ``ament_index_python.packages.get_package_share_directory``, which this process (and only it)
    gets as a module of its own."""
    import types

    packages = types.ModuleType("ament_index_python.packages")
    packages.get_package_share_directory = share_directory
    index = types.ModuleType("ament_index_python")
    index.packages = packages
    sys.modules["ament_index_python"], sys.modules["ament_index_python.packages"] = index, packages


def expand(request: dict) -> str:
    """The URDF text of ``request["path"]`` (see the module doc); raises on any failure."""
    source, dirs = request["source"], tuple(request["package_dirs"])
    _package_index(lambda pkg: str(find_package(pkg, dirs, source)))
    import xacro

    sys.setrecursionlimit(int(request["recursion"]))
    doc = xacro.process_file(request["path"], mappings=request["mappings"])
    text = doc.toxml()
    if len(text) > request["output"]:
        raise OverflowError(f"the expanded URDF exceeds the size limit of {request['output'] // 2**20} MB")
    return text


def _cause(e: BaseException) -> BaseException:
    """The innermost exception xacro wrapped ``e`` around, if it is a resource error; else ``e``."""
    inner, seen = e, 0
    while getattr(inner, "exc", None) is not None and seen < 100:
        inner, seen = inner.exc, seen + 1
    return inner if isinstance(inner, (MemoryError, RecursionError, PackageNotFound)) else e


def _say(line: str) -> None:
    sys.stderr.buffer.write(b"\n" + line.encode("utf-8", "replace"))


def main() -> int:
    request = json.loads(sys.stdin.read())
    _limit(int(request["memory"]), int(request["seconds"]))
    source = request["source"]
    try:
        try:
            text = expand(request)
        except Exception as e:  # xacro wraps what went wrong (XacroException.exc): raise that
            raise _cause(e) from None
    except PackageNotFound as e:
        _say(str(e))
        return 3
    except RecursionError:
        _say(f"{source}: xacro: recursion deeper than {request['recursion']} levels "
                         "(a macro that calls itself or a file that includes itself)")
        return 3
    except MemoryError:
        _say(f"{source}: xacro: expansion exceeds the memory limit of "
                         f"{int(request['memory']) // 2**20} MB (properties that grow without bound?)")
        return 3
    except Exception as e:  # xacro raises many kinds (its own, NameError, KeyError, ...): all one line
        _say(f"{source}: xacro: {_one_line(e)}")
        return 3
    sys.stdout.buffer.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    here = Path(__file__).resolve().parent  # run as a script: its folder holds composedyn's xacro.py, not xacro's
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.exit(main())
