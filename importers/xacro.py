"""xacro descriptions -> URDF XML, through the ``xacro`` package (no ROS install).

``$(find pkg)`` and ``package://pkg/...`` are resolved from ``package_dirs``,
then the ``ROS_PACKAGE_PATH`` and ``AMENT_PREFIX_PATH`` environment variables:
a package ``pkg`` is a folder named ``pkg`` given itself, or found directly
inside one of those folders (``<prefix>/share/pkg`` for ament prefixes).  A
``package://`` reference to a package that is not found (meshes, usually) is
left as it is, as in a plain URDF; a ``$(find pkg)`` that is not found is an
error.

Expansion runs in a child process (:mod:`.xacro_child`) with resource limits:
xacro is a macro language, so a description can recurse without end, include
itself or double a property at every level (gigabytes in seconds).  A child
process is the one place where such growth can be bounded robustly -- its
address space and CPU time are capped by the kernel (``resource.setrlimit``),
its stack by its own recursion limit, its output by a size check, its wall
time by a timeout -- and where a failure cannot leave xacro's module-level
state, or the caller's recursion limit, changed.  The cost is starting a
Python interpreter (a fraction of a second) per xacro file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from composedyn.dynamics.extras import require
from composedyn.errors import ModelError
from composedyn.importers.xacro_child import PackageNotFound
from composedyn.importers.xacro_child import find_package as _find

_PACKAGE_URI = re.compile(r"package://([^/\"'<>\s]+)")
# Limits of one expansion (see the module doc); the messages name them.
XACRO_MEMORY = 2**30  # bytes of address space of the expanding process
XACRO_SECONDS = 60  # CPU and wall-clock seconds
XACRO_OUTPUT = 64 * 2**20  # characters of expanded URDF
XACRO_RECURSION = 1000  # Python frames: macro and include nesting


def is_xacro(path_or_xml) -> bool:
    """True for a path (not an XML string) ending in ``.xacro``."""
    return isinstance(path_or_xml, (str, os.PathLike)) and not str(path_or_xml).lstrip().startswith("<") \
        and str(path_or_xml).lower().endswith(".xacro")


def find_package(name: str, package_dirs=(), source: str = "<xacro>") -> Path:
    """The folder of package ``name``; ModelError naming it and the folders searched."""
    try:
        return _find(name, package_dirs, source)
    except PackageNotFound as e:
        raise ModelError(str(e)) from None


def expand_xacro(path, xacro_args=None, package_dirs=()) -> str:
    """The URDF XML text of the xacro file ``path``.

    ``xacro_args``: mapping of ``<xacro:arg>`` names to values (as ``name:=value``
    on the xacro command line).  ModelError naming the file for a missing file,
    a missing package, an undefined argument, a xacro error, or an expansion
    beyond the limits (``XACRO_MEMORY`` bytes, ``XACRO_SECONDS`` s,
    ``XACRO_OUTPUT`` characters, ``XACRO_RECURSION`` levels), naming the limit.
    """
    require("xacro", f"{path}: expanding a xacro description")
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{p}: no such xacro file")
    source = str(p)
    dirs = [str(d) for d in (package_dirs or ())]
    request = {"path": str(p.resolve()), "source": source, "package_dirs": dirs,
               "mappings": {str(k): str(v) for k, v in (xacro_args or {}).items()},
               "memory": XACRO_MEMORY, "seconds": XACRO_SECONDS, "output": XACRO_OUTPUT,
               "recursion": XACRO_RECURSION}
    child = Path(__file__).with_name("xacro_child.py")
    try:
        run = subprocess.run([sys.executable, "-X", "utf8", str(child)], input=json.dumps(request).encode(),
                             capture_output=True, timeout=XACRO_SECONDS)
    except subprocess.TimeoutExpired:
        raise ModelError(f"{source}: xacro: expansion exceeds the time limit of {XACRO_SECONDS} s") from None
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        if run.returncode == 3 and lines:
            raise ModelError(lines[-1])
        why = f"signal {-run.returncode}" if run.returncode < 0 else f"status {run.returncode}"
        raise ModelError(f"{source}: xacro: expansion stopped ({why}; limits: {XACRO_MEMORY // 2**20} MB, "
                         f"{XACRO_SECONDS} s){': ' + lines[-1] if lines else ''}")
    text = run.stdout.decode("utf-8")
    return _PACKAGE_URI.sub(lambda m: _resolved(m, dirs, source), text)


def _resolved(m: re.Match, dirs: list, source: str) -> str:
    """``package://pkg`` as the file URI of the package folder, or unchanged if it is not found."""
    try:
        return _find(m.group(1), dirs, source).as_uri()
    except PackageNotFound:
        return m.group(0)


def load_xacro_urdf(path, xacro_args=None, package_dirs=(), **kwargs):
    """The kinematic graph of the xacro file ``path`` (``kwargs`` as for ``load_urdf``);
    errors in the expanded URDF name the xacro file."""
    from composedyn.importers.urdf import load_urdf

    if not is_xacro(path):
        raise ModelError(f"{path}: xacro_args and package_dirs apply to .xacro files only")
    text = expand_xacro(path, xacro_args, package_dirs)
    try:
        graph = load_urdf(text, **kwargs)
    except ModelError as e:
        raise ModelError(str(e).replace("<urdf string>", f"{path} (expanded)", 1)) from None
    graph.graph["source"] = f"{path} (expanded)"  # later checks and warnings name the xacro file
    return graph
