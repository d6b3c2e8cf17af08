"""``<include><uri>`` of SDFormat: from a URI to the model file it names.

``model://name[/file]`` (and ``package://name[/file]``) are looked up in ``package_dirs``, then in
the folders of the environment variables :data:`ENV_PATHS` (as Gazebo does); a plain or
``file://`` path is relative to the including file's folder.  A folder is a model folder: its
``model.config`` names the SDFormat file (the newest ``<sdf version>`` listed), else
``model.sdf``.  Network URIs (Gazebo Fuel) are refused: nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

from composedyn.dynamics.errors import ModelError
from composedyn.importers.sdf_xml import VERSIONS
from composedyn.importers.urdf_xml import parse_xml

ENV_PATHS = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH")


def search_dirs(package_dirs=()) -> list[Path]:
    """``package_dirs`` then the folders of :data:`ENV_PATHS`, in that order."""
    dirs = [Path(d) for d in package_dirs]
    for var in ENV_PATHS:
        dirs += [Path(d) for d in os.environ.get(var, "").split(os.pathsep) if d]
    return dirs


def resolve_uri(uri: str, base: Path | None, package_dirs, where: str) -> Path:
    """The SDFormat file an ``<include><uri>`` names; ModelError naming ``where`` when not found."""
    uri = uri.strip()
    if not uri:
        raise ModelError(f"{where}: empty <uri>")
    scheme, sep, rest = uri.partition("://")
    if not sep:
        scheme, rest = "", uri
    if scheme in ("model", "package"):
        dirs = search_dirs(package_dirs)
        for d in dirs:
            if (d / rest).exists():
                return model_file(d / rest, where)
        searched = ", ".join(str(d) for d in dirs) or (
            "none: give package_dirs or set " + " / ".join(ENV_PATHS))
        raise ModelError(f"{where}: {uri!r} not found (searched {searched})")
    if scheme not in ("", "file"):
        raise ModelError(f"{where}: {uri!r}: only model://, package:// and file paths are resolved "
                         "(nothing is downloaded); put the model in a folder given in package_dirs")
    p = Path(rest)
    if not p.is_absolute():
        p = (base or Path.cwd()) / p
    if not p.exists():
        raise ModelError(f"{where}: {uri!r} not found ({p})")
    return model_file(p, where)


def model_file(path: Path, where: str) -> Path:
    """``path`` itself for a file; for a model folder the file its ``model.config`` names, else model.sdf."""
    if path.is_file():
        return path.resolve()
    config = path / "model.config"
    if config.is_file():
        root = parse_xml(config.read_bytes(), str(config), "model.config")
        listed = [(e.get("version", ""), (e.text or "").strip()) for e in root.iter("sdf")]
        listed = [(VERSIONS.index(v) if v in VERSIONS else -1, f) for v, f in listed if f]
        if listed:
            target = path / max(listed, key=lambda t: t[0])[1]
            if not target.is_file():
                raise ModelError(f"{config}: names {target.name!r}, which does not exist")
            return target.resolve()
    if (path / "model.sdf").is_file():
        return (path / "model.sdf").resolve()
    raise ModelError(f"{where}: model folder {path} has neither a model.config naming an SDFormat file nor model.sdf")
