"""No import cycles between the modules of composedyn.

Every ``import`` of a composedyn module counts, at module level or inside a function
(a function-level import that closes a cycle is still a cycle a reader has to untangle);
imports under ``if TYPE_CHECKING:`` do not, since they never run.  A submodule importing
its own package (``from composedyn import ModelError``) is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, Path]:
    """Top-level package names -> source folders, as pyproject.toml maps them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {name: ROOT / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in package_dirs().items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            if any(part in package_dirs() for part in [".".join([package, *rel[:k]]) for k in range(1, len(rel))]):
                continue  # a folder mapped as a package of its own is listed under that package
            found[".".join([package, *rel])] = path
    return found


def imported(name: str, path: Path, known: dict) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(node) for top in ast.walk(tree) if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test)
            for part in top.body for node in ast.walk(part)}
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


def test_the_module_list_is_complete():
    found = modules()
    assert "composedyn.robot" in found and "composedyn.dynamics.model" in found and len(found) > 150


def test_no_import_cycles():
    found = modules()
    graph = nx.DiGraph()
    for name, path in found.items():
        graph.add_node(name)
        graph.add_edges_from((name, target) for target in imported(name, path, found))
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"
