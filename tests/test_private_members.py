"""No module of composedyn uses another's private members.

A module of ``plugin/`` (the package ``composedyn``), ``importers/`` or
``dynamics/`` may read ``x._name`` only when ``x`` is ``self`` or ``cls`` or
``_name`` is defined in that same module (a module-level name, a class
member, or an attribute the module's classes set on ``self``); it never
imports a ``_name`` from another module, nor reaches one through
``getattr``/``setattr``/``hasattr`` with a literal name.  Dunder names are
public.

``ALLOWED`` lists the uses that remain, as (file, expression); the test fails
when an entry is no longer needed, so the list can only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("plugin", "importers", "dynamics")

ALLOWED: set[tuple[str, str]] = {
    # third-party names that have no public counterpart
    ("importers/urdf_xml.py", "etree._Element"),  # lxml's element type (XmlElement)
    ("dynamics/compiled/cache.py", "caching._CacheLocator"),  # numba: the package's own cache
    ("dynamics/compiled/cache.py", "caching._CompileResultCacheImpl"),
    ("dynamics/compiled/jit.py", "compiled._cache"),
    ("dynamics/schema.py", "sys._getframe"),  # the stacklevel of warnings
    # torch: whether a torch.func transform is active, and whether a cotangent is a batch of the
    # vectorised backward pass (the backward passes then differentiate the recursion)
    ("plugin/tensors/torch.py", "torch._C"),
    ("plugin/tensors/torch.py", "getattr(torch._C, '_are_functorch_transforms_active', None)"),
    ("plugin/tensors/torch.py", "torch._C._functorch"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(tree: ast.Module) -> set[str]:
    """The private names a module defines: module-level and class-level names, and ``self._x`` / ``cls._x``
    assignment targets."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.alias):
            own.add(node.asname or node.name.split(".")[0])
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
    return {name for name in own if _private(name)}


def uses(path: Path) -> list[tuple[int, str]]:
    """(line, expression) of every use of another module's private member in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if node.attr in own:
                continue
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if any(_private(part) for part in a.name.split("."))]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _private(node.args[1].value) and ast.unparse(node.args[0]) not in ("self", "cls")
              and node.args[1].value not in own):
            found.append((node.lineno, ast.unparse(node)))
    return found


def all_uses() -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, expr in uses(path):
                out.setdefault((path.relative_to(ROOT).as_posix(), expr), []).append(line)
    return out


def test_the_scan_finds_a_use_of_a_private_member(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from a import _b\nimport c._d\n\n\nclass K:\n    def __init__(self):\n        self._own = 1\n\n"
                      "    def f(self, other):\n        return other._own + other._foreign + getattr(other, '_x')\n")
    assert sorted(expr for _, expr in uses(source)) == [
        "from a import _b", "getattr(other, '_x')", "import c._d", "other._foreign"]


def test_no_module_uses_another_modules_private_members():
    found = all_uses()
    new = sorted(f"{path}:{min(lines)}: {expr}" for (path, expr), lines in found.items() if (path, expr) not in ALLOWED)
    assert not new, "private members of another module used (give the owner a public name):\n" + "\n".join(new)


def test_the_allow_list_only_shrinks():
    stale = sorted(ALLOWED - set(all_uses()))
    assert not stale, f"no longer used, remove from ALLOWED: {stale}"
