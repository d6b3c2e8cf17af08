"""xacro descriptions -> URDF XML, through the ``xacro`` package (no ROS install).

``$(find pkg)`` and ``package://pkg/...`` are resolved from ``package_dirs``,
then the ``ROS_PACKAGE_PATH`` and ``AMENT_PREFIX_PATH`` environment variables:
a package ``pkg`` is a folder named ``pkg`` given itself, or found directly
inside one of those folders (``<prefix>/share/pkg`` for ament prefixes).
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from composedyn.dynamics.extras import require
from composedyn.errors import ModelError

_LOCK = threading.Lock()  # xacro keeps its state in module globals
_PACKAGE_URI = re.compile(r"package://([^/\"'<>\s]+)")


def is_xacro(path_or_xml) -> bool:
    """True for a path (not an XML string) ending in ``.xacro``."""
    return isinstance(path_or_xml, (str, os.PathLike)) and not str(path_or_xml).lstrip().startswith("<") \
        and str(path_or_xml).lower().endswith(".xacro")


def find_package(name: str, package_dirs=(), source: str = "<xacro>") -> Path:
    """The folder of package ``name``; ModelError naming it and the folders searched."""
    roots = [Path(d) for d in package_dirs]
    roots += [Path(d) for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    roots += [Path(d) / "share" for d in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if d]
    for root in roots:
        if root.name == name and root.is_dir():
            return root.resolve()
        if (root / name).is_dir():
            return (root / name).resolve()
    searched = ", ".join(map(str, roots)) or "none: give package_dirs or set ROS_PACKAGE_PATH"
    raise ModelError(f"{source}: package {name!r} not found (searched: {searched})")


def expand_xacro(path, xacro_args=None, package_dirs=()) -> str:
    """The URDF XML text of the xacro file ``path``.

    ``xacro_args``: mapping of ``<xacro:arg>`` names to values (as ``name:=value``
    on the xacro command line).  ModelError naming the file for a missing file,
    a missing package, an undefined argument or a xacro error.
    """
    from xml.parsers.expat import ExpatError

    require("xacro", f"{path}: expanding a xacro description")
    import xacro
    from xacro import substitution_args

    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{p}: no such xacro file")
    source = str(p)
    dirs = tuple(package_dirs or ())
    mappings = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    with _LOCK:
        original = substitution_args._eval_find
        substitution_args._eval_find = lambda pkg: str(find_package(pkg, dirs, source))
        try:
            doc = xacro.process_file(str(p.resolve()), mappings=mappings)
        except ModelError:
            raise
        except (xacro.XacroException, substitution_args.ArgException, substitution_args.SubstitutionException,
                ExpatError, OSError, NameError, TypeError, ValueError, KeyError, ArithmeticError) as e:
            raise ModelError(f"{source}: xacro: {_one_line(e)}") from None
        finally:
            substitution_args._eval_find = original
    text = doc.toxml()
    return _PACKAGE_URI.sub(lambda m: find_package(m.group(1), dirs, source).as_uri(), text)


def _one_line(e: Exception) -> str:
    text = (str(e) or type(e).__name__).splitlines()[0]
    if "substitution argument" in text:
        text += " (give it in xacro_args)"
    return text


def load_xacro_urdf(path, xacro_args=None, package_dirs=(), **kwargs):
    """The kinematic graph of the xacro file ``path`` (``kwargs`` as for ``load_urdf``);
    errors in the expanded URDF name the xacro file."""
    from composedyn.importers.urdf import load_urdf

    if not is_xacro(path):
        raise ModelError(f"{path}: xacro_args and package_dirs apply to .xacro files only")
    text = expand_xacro(path, xacro_args, package_dirs)
    try:
        return load_urdf(text, **kwargs)
    except ModelError as e:
        raise ModelError(str(e).replace("<urdf string>", f"{path} (expanded)", 1)) from None
