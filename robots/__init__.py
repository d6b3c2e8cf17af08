"""Bundled reference robots, loadable by name with ``composedyn.load(name)``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _files() -> dict[str, Path]:
    root = resources.files(__name__)
    out = {}
    for entry in root.iterdir():
        name = entry.name
        if name.endswith(".urdf") or (name.endswith(".toml") and not name.endswith(".loops.toml")):
            out[name.rsplit(".", 1)[0]] = Path(str(entry))
    return out


def names() -> list[str]:
    """Names of the bundled robots, sorted."""
    return sorted(_files())


def bundled_path(name: str) -> Path | None:
    """Path of the bundled robot file called ``name`` (None if there is none)."""
    return _files().get(name)
