"""MkDocs hooks of the documentation site (``mkdocs.yml``).

The API reference is read from the source by mkdocstrings.  In a source
checkout the package ``composedyn`` is assembled from several top-level
folders (``[tool.setuptools] package-dir`` in ``pyproject.toml``), while the
source reader looks for a package in one folder.  ``on_config`` copies those
folders' sources into one package tree in a temporary folder and puts it first on the
search path; ``on_shutdown`` removes it.  An installed package is read alike.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

_STAGED: list[Path] = []


def package_tree(root: Path, into: Path) -> Path:
    """Copy the Python sources of the folders of ``root/pyproject.toml``'s package-dir map into one package
    tree under ``into`` (copies, not links: the reader follows a module's real path to find its subpackages)."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    for package, folder in mapping.items():
        for source in (root / folder).rglob("*.py"):
            if "__pycache__" not in source.parts:
                target = into.joinpath(*package.split("."), source.relative_to(root / folder))
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    shutil.copyfile(source, target)
    return into


@event_priority(100)  # before mkdocstrings reads its handler options
def on_config(config):
    root = Path(config.config_file_path).resolve().parent
    tree = package_tree(root, Path(tempfile.mkdtemp(prefix="composedyn-docs-")))
    _STAGED.append(tree)
    sys.path.insert(0, str(tree))
    handlers = config["plugins"]["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [str(tree)]
    return config


def on_shutdown():
    while _STAGED:
        tree = _STAGED.pop()
        if str(tree) in sys.path:
            sys.path.remove(str(tree))
        shutil.rmtree(tree, ignore_errors=True)
