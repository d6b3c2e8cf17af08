"""The layout of the package ``composedyn`` as docs/architecture.md describes it.

- The command line is the outermost layer: no module outside ``composedyn.cli`` imports it.
- A sub-package's ``__init__.py`` holds only its docstring (and, for ``cli``, ``main``):
  public names are imported from ``composedyn`` itself, never through a sub-package.
- Every public name of ``composedyn.__all__`` is importable from ``composedyn``.
- The layout section of docs/architecture.md names every module at the top of ``plugin/`` and in its groups.
"""

from __future__ import annotations

import ast

import pytest

import composedyn
from test_import_cycles import ROOT, imported, modules

GROUPS = ("control", "torque_check", "simulation", "identification", "floating", "cli", "kernels")


def test_nothing_outside_the_command_line_imports_it():
    found = modules()
    inside = [name for name in found if name == "composedyn.cli" or name.startswith("composedyn.cli.")]
    assert "composedyn.cli.program" in inside and "composedyn.cli.commands.info" in inside
    offenders = sorted((name, target) for name, path in found.items() if name not in inside
                       for target in imported(name, path, found) if target in inside)
    assert not offenders, f"modules outside composedyn.cli import it: {offenders}"


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_is_a_folder_whose_init_holds_only_its_docstring(group):
    init = ROOT / "plugin" / group / "__init__.py"
    body = ast.parse(init.read_text(encoding="utf-8")).body
    assert body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), f"{init}: no docstring"
    rest = body[1:]
    if group == "cli":  # the console script composedyn = "composedyn.cli:main"
        assert [ast.unparse(n) for n in rest] == ["from composedyn.cli.program import main", "__all__ = ['main']"]
    else:
        assert not rest, f"{init}: a group's __init__ re-exports nothing (public names come from composedyn)"


def test_every_public_name_is_importable_from_the_package():
    missing = [name for name in composedyn.__all__ if not hasattr(composedyn, name)]
    assert not missing and len(composedyn.__all__) > 30


def test_the_layout_section_of_the_architecture_page_names_every_module_of_the_groups():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Layout"):text.index("\n## ", text.index("## Layout") + 1)]
    plugin = ROOT / "plugin"
    files = [p for p in plugin.glob("*.py")] + [p for g in GROUPS for p in (plugin / g).glob("*.py")]
    unnamed = sorted(str(p.relative_to(plugin)) for p in files
                     if p.stem not in ("__init__", "__main__") and f"{p.name}" not in section)
    missing_groups = [g for g in GROUPS if f"{g}/" not in section]
    assert not unnamed and not missing_groups, f"not in docs/architecture.md's layout: {unnamed + missing_groups}"
