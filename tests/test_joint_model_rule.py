"""Only the joint models know joint types (spatial_v2's jcalc rule).

A *kernel* here is every module of ``composedyn.dynamics`` (compiled kernels, the
NumPy reference, the symbolic derivation, constraints, the floating base, any
engine added beside them) and of the ``composedyn`` package (``plugin/``): code
that computes with a frozen model or a symbolic chain.  None of them may

* compare anything with a joint-type code (a name imported from
  :mod:`composedyn.dynamics.joint_types`, such as ``REVOLUTE``), with a model's
  joint-type column (``jtype``, ``model.jtype[i]``) or with a joint-kind string
  (``"revolute"``, ``"prismatic"``, ``"hinge"``, ...);
* index the joint-type column: ``model.jtype[i]``, or column 1 of the packed
  integer model ``im`` (``im[i, 1]``);
* import a joint-type code.

They ask a joint model instead: :mod:`composedyn.dynamics.compiled.joint`,
:mod:`composedyn.dynamics.reference.joint`, :mod:`composedyn.dynamics.symbolic.joint`,
:mod:`composedyn.dynamics.joint_types` (the codes, the one table from a graph edge's kind to a
code, and whether a coordinate is an angle) and the array-API engine's ``joints`` module.

Left out, because they read or write description files rather than compute: ``importers/``
(each maps its file's kinds, through :data:`~composedyn.dynamics.joint_types.KIND_CODES` when
freezing), the graph layer that validates and freezes a description (``dynamics/schema.py``,
``dynamics/model.py``, ``dynamics/frozen_graph.py``, and ``dynamics/array_api/graph_model.py``, which maps a
graph edge's type to a joint kind of the array-API engine), the URDF writer of random test robots
(``plugin/testing/random_robots.py``) and the converter of Pinocchio's test trees, which maps
Pinocchio's joint models to kinds as an importer does (``plugin/testing/pinocchio_trees.py``).
``"fixed"``, ``"floating"`` and ``"planar"`` are not
joint kinds of a model (fixed joints are merged into bodies; the other two name a floating base,
or a loop constraint's plane) and may be compared anywhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from composedyn.dynamics import joint_types

SOURCE = Path(__file__).resolve().parents[1]  # the source folders (an installed composedyn nests dynamics/ inside)
ROOTS = {"dynamics": SOURCE / "dynamics", "plugin": SOURCE / "plugin"}
JOINT_MODELS = {"dynamics/joint_types.py", "dynamics/compiled/joint.py", "dynamics/reference/joint.py",
                "dynamics/symbolic/joint.py", "dynamics/array_api/joints.py"}
DESCRIPTIONS = {"dynamics/schema.py", "dynamics/model.py", "dynamics/frozen_graph.py",
                "dynamics/array_api/graph_model.py",
                "plugin/testing/random_robots.py", "plugin/testing/pinocchio_trees.py"}
CODES = {name for name, value in vars(joint_types).items() if name.isupper() and isinstance(value, int)}
KINDS = set(joint_types.KIND_CODES) | {"hinge", "slide", "ball", "spherical", "universal", "revolute2", "screw",
                                       "helical", "gearbox", "cylindrical"}
PACKED_TYPE_COLUMN = 1  # im[:, 1] (compiled/layout.py)


def _modules() -> list[tuple[str, Path]]:
    out = []
    for label, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            rel = f"{label}/{path.relative_to(root).as_posix()}"
            if rel not in JOINT_MODELS and rel not in DESCRIPTIONS:
                out.append((rel, path))
    return out


def _is_jtype(node: ast.AST) -> bool:
    """``jtype``, ``x.jtype``, ``self._jtype`` and subscripts of them."""
    if isinstance(node, ast.Subscript):
        node = node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lstrip("_") == "jtype"


def _has_code(node: ast.AST) -> bool:
    """A joint-type code's name anywhere in ``node`` (``REVOLUTE``, ``joint_types.PRISMATIC``, a tuple of them)."""
    return any((n.id if isinstance(n, ast.Name) else n.attr) in CODES
               for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)))


def _kind_strings(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in KINDS for n in ast.walk(node))


def _type_column(node: ast.Subscript) -> bool:
    """``im[..., 1]`` read (not written: compiled/layout.py packs the column)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == "im" and isinstance(node.ctx, ast.Load)):
        return False
    index = node.slice
    last = index.elts[-1] if isinstance(index, ast.Tuple) and index.elts else None
    return isinstance(last, ast.Constant) and last.value == PACKED_TYPE_COLUMN


def violations(source: str, rel: str) -> list[str]:
    """Every place in ``source`` where the code asks a joint's type (``rel``: its name in messages)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(_is_jtype(p) or _has_code(p) for p in parts):
                out.append(f"{where}: compares a joint-type code or column")
            elif any(_kind_strings(p) for p in parts):
                out.append(f"{where}: compares a joint-kind string")
        elif isinstance(node, ast.Subscript):
            if _is_jtype(node.value):
                out.append(f"{where}: indexes the joint-type column")
            elif _type_column(node):
                out.append(f"{where}: reads the packed joint-type column im[i, 1]")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("composedyn"):
            codes = sorted(a.name for a in node.names if a.name in CODES)
            if codes:
                out.append(f"{where}: imports joint-type codes {codes}")
    return out


def test_only_the_joint_models_ask_a_joint_type():
    found = [v for rel, path in _modules() for v in violations(path.read_text(encoding="utf-8"), rel)]
    assert not found, "ask the joint model instead:\n" + "\n".join(found)


def test_the_scan_covers_the_kernels_and_the_joint_models_exist():
    scanned = {rel for rel, _ in _modules()}
    for kernel in ("dynamics/compiled/frames.py", "dynamics/compiled/com.py", "dynamics/compiled/closed.py",
                   "dynamics/compiled/derivatives.py", "dynamics/compiled/rnea.py", "dynamics/reference/kinematics.py",
                   "dynamics/reference/frames.py", "dynamics/symbolic/composed.py", "dynamics/symbolic/ring.py"):
        assert kernel in scanned
    assert sum(rel.startswith("plugin/") for rel in scanned) > 20  # the package's modules, in any sub-package
    for model in JOINT_MODELS - {"dynamics/array_api/joints.py"}:
        label, rest = model.split("/", 1)
        assert (ROOTS[label] / rest).is_file(), model
    assert CODES >= {"REVOLUTE", "PRISMATIC"}


@pytest.mark.parametrize("line", [
    "if im[i, 1] == 0:\n    pass",
    "if im[i, 1] == REVOLUTE:\n    pass",
    "x = jt[im[j, 1]]",
    "rev = model.jtype != PRISMATIC",
    "pri = m.jtype[i] == 1",
    "units = UNITS[int(m.jtype[i])]",
    "if self._jtype[i] == 'prismatic':\n    pass",
    "kind = 'slide' if d['type'] == 'prismatic' else 'hinge'",
    "ok = row['joint'] in ('revolute', 'prismatic')",
    "from composedyn.dynamics.joint_types import PRISMATIC",
    "from composedyn.dynamics.compiled.joint import REVOLUTE, cross",
    "from composedyn.dynamics.model import REVOLUTE",
    "if jt not in (REVOLUTE, PRISMATIC):\n    pass",
    "if kind[j] == joint_types.REVOLUTE:\n    pass",
])
def test_the_rule_sees_a_kernel_branching_on_a_joint_type(line):
    assert violations(line, "kernel.py")


@pytest.mark.parametrize("line", [
    "im[:, 0], im[:, 1] = model.parent, model.jtype",  # packing the column
    "k = im[i, 0]",
    "s = joint_motion_at(im, i, a0, a1, a2, r0, r1, r2)",
    "if edge['type'] != 'fixed':\n    pass",
    "if floating == 'planar':\n    pass",
    "angle = angular(model.jtype)",
])
def test_the_rule_lets_kernels_ask_the_joint_model(line):
    assert not violations(line, "kernel.py")
