"""The kinematic graph: its schema, defaults and validation.

The graph is a ``networkx.DiGraph``; nodes are links, edges are joints
(parent link -> child link).  The schema (also in docs/architecture.md):

* graph: ``name``, ``root``, ``gravity`` (3,), optional ``source`` (file name
  used in error messages);
* node: ``mass`` (kg), ``com`` (3,) in the link frame, ``inertia`` (3, 3)
  about the centre of mass in link-frame axes; optional ``inertial`` (False
  when the description gave no inertial data, e.g. a URDF link without
  ``<inertial>``; only used to list such links in the ModelWarning);
* edge: ``name``, ``type`` in {revolute, continuous, prismatic, fixed},
  ``origin`` (4, 4) parent link frame -> joint frame at q = 0, ``axis`` (3,)
  unit vector in the joint frame, ``limits`` (lower, upper, velocity, effort)
  with None where absent, ``damping``, ``friction``, ``armature``, ``mimic``
  (None or (joint, multiplier, offset)).

The child link frame coincides with the joint frame (as in URDF).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError, ModelWarning
from composedyn.dynamics.joint_types import KIND_CODES

JOINT_TYPES = (*KIND_CODES, "fixed")  # the moving kinds, then fixed (merged into the parent body)
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
NEG_INERTIA_ATOL = 1e-6  # kg m^2: more negative principal moments are errors, not rounding
# The largest magnitude of any number in a description (SI units).  The dynamics multiply up to three
# description numbers (m L^2, a mimic multiplier squared times an inertia, the squared norm of an axis),
# so larger ones can overflow a double (1.8e308) and turn into inf, or into 0 after a normalisation.
LARGEST = 1e100


def new_graph(name: str, gravity=DEFAULT_GRAVITY, source: str | None = None) -> nx.DiGraph:
    """An empty kinematic graph with the graph-level attributes set."""
    g = nx.DiGraph(name=name, gravity=np.asarray(gravity, dtype=float))
    if source is not None:
        g.graph["source"] = source
    return g


def add_link(g: nx.DiGraph, name: str, mass: float = 0.0, com=(0.0, 0.0, 0.0), inertia=None) -> None:
    """Add a link node with schema attributes (zero mass and inertia by default)."""
    if name in g:
        raise ModelError(f"{source_of(g)}: duplicate link name {name!r}")
    g.add_node(
        name,
        mass=float(mass),
        com=np.asarray(com, dtype=float),
        inertia=np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float),
    )


def add_joint(
    g: nx.DiGraph,
    name: str,
    parent: str,
    child: str,
    type: str = "revolute",
    origin=None,
    axis=(0.0, 0.0, 1.0),
    limits=(None, None, None, None),
    damping: float = 0.0,
    friction: float = 0.0,
    armature: float = 0.0,
    mimic=None,
    **own,
) -> None:
    """Add a joint edge parent -> child with schema attributes and defaults; ``own``: ``axis2`` (a
    universal joint's second axis) and ``pitch`` (a helical joint's m/rad)."""
    g.add_edge(
        parent,
        child,
        name=name,
        type=type,
        origin=np.eye(4) if origin is None else np.asarray(origin, dtype=float),
        axis=np.asarray(axis, dtype=float),
        limits=tuple(limits),
        damping=float(damping),
        friction=float(friction),
        armature=float(armature),
        mimic=mimic,
        **own,
    )


def source_of(g: nx.DiGraph) -> str:
    """The name used for this graph in error messages (file name or robot name)."""
    return str(g.graph.get("source") or f"<graph {g.graph.get('name', '?')}>")


def _finite(src: str, what: str, value: Any, shape: tuple[int, ...], allow_inf: bool = False) -> np.ndarray:
    """``value`` as a float array of ``shape``: no NaN, no inf (unless ``allow_inf``), no magnitude
    beyond :data:`LARGEST`; ModelError naming ``what`` (the link or joint and its element) otherwise."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{src}: {what} is not numeric: {value!r}") from None
    if arr.shape != shape:
        raise ModelError(f"{src}: {what} has shape {arr.shape}, expected {shape}")
    if np.any(np.isnan(arr)) or (not allow_inf and not np.all(np.isfinite(arr))):
        raise ModelError(f"{src}: {what} contains NaN" + ("" if allow_inf else " or infinite values"))
    big = np.abs(arr[np.isfinite(arr)])
    if big.size and big.max() > LARGEST:
        raise ModelError(f"{src}: {what} has a number of magnitude {big.max():.3g}, beyond {LARGEST:g}: "
                         "it would overflow the dynamics")
    return arr


def is_base_joint(g: nx.DiGraph, parent: str, child: str) -> bool:
    """True when the joint ``parent`` -> ``child`` is a floating base: a ``floating`` or ``planar`` joint
    from the root link, that link's only child, the root massless (a world link).  Any other floating
    or planar joint is a free-flyer or planar joint inside the tree (Pinocchio's reading of such a URDF)."""
    return (g.edges[parent, child].get("type") in ("floating", "planar") and g.in_degree(parent) == 0
            and g.out_degree(parent) == 1 and not g.nodes[parent].get("mass", 0.0) > 0.0)


def check_planar_axis(src: str, joint: str, axis) -> None:
    """ModelError naming ``src`` and the planar ``joint`` unless its ``axis`` is z: a planar joint moves in
    the xy plane of its frame (Pinocchio's JointModelPlanar), a floating base's as any other."""
    axis = np.asarray(axis, dtype=float)
    if not np.allclose(axis / np.linalg.norm(axis), (0.0, 0.0, 1.0), rtol=0.0, atol=1e-12):
        raise ModelError(f"{src}: planar joint {joint!r} has axis {axis.tolist()}; a planar joint moves in the xy "
                         "plane of its frame (axis 0 0 1, Pinocchio's JointModelPlanar): turn the joint's origin "
                         "so that its axis is z")


def find_root(g: nx.DiGraph) -> str:
    """The unique link without a parent joint; ModelError otherwise."""
    src = source_of(g)
    if g.number_of_nodes() == 0:
        raise ModelError(f"{src}: the robot has no links")
    roots = [n for n in g.nodes if g.in_degree(n) == 0]
    if len(roots) != 1:
        if not roots:
            raise ModelError(f"{src}: kinematic cycle through links {_cycle(g)}; no root link")
        raise ModelError(f"{src}: several root links {roots}; a robot must have exactly one")
    declared = g.graph.get("root")
    if declared is not None and declared != roots[0]:
        raise ModelError(f"{src}: graph declares root {declared!r} but the tree's root is {roots[0]!r}")
    return roots[0]


def _cycle(g: nx.DiGraph) -> list:
    return [e[0] for e in nx.find_cycle(g)]


def check_structure(g: nx.DiGraph) -> str:
    """Check that ``g`` is a tree (one root, one parent per link, no cycle); return the root."""
    src = source_of(g)
    for n in g.nodes:
        if g.in_degree(n) > 1:
            joints = [d.get("name") for _, _, d in g.in_edges(n, data=True)]
            raise ModelError(f"{src}: link {n!r} is the child of several joints {joints}")
    root = find_root(g)
    if not nx.is_directed_acyclic_graph(g):
        raise ModelError(f"{src}: kinematic cycle through links {_cycle(g)}")
    return root


def welded_to_root(g: nx.DiGraph, root: str) -> set:
    """The root link and every link joined to it through fixed joints only (the fixed base)."""
    out, stack = {root}, [root]
    while stack:
        link = stack.pop()
        for child in g.successors(link):
            if g.edges[link, child].get("type") == "fixed":
                out.add(child)
                stack.append(child)
    return out


def validate(g: nx.DiGraph, strict: bool = False) -> str:
    """Check the graph against the schema; return the root link name.

    Raises ModelError naming the source and the link or joint at fault.
    Descriptions that are implausible but common in vendor files give one
    ``ModelWarning`` listing the links (a ModelError when ``strict``):
    inertias violating the triangle inequality or with slightly negative
    principal moments (see ``_check_link`` for the tolerance), links marked
    ``inertial=False`` (URDF links without ``<inertial>``, given zero mass) that
    move, i.e. are neither the root nor welded to it, and links carrying
    rotational inertia on a moving body (links welded together) of zero mass.
    """
    src = source_of(g)
    root = check_structure(g)
    _finite(src, "gravity", g.graph.get("gravity", DEFAULT_GRAVITY), (3,))
    suspicious = []
    for n, d in g.nodes(data=True):
        _check_link(src, n, d, suspicious)
    names = set()
    for u, v, d in g.edges(data=True):
        _check_joint(src, u, v, d)
        if d["name"] in names:
            raise ModelError(f"{src}: duplicate joint name {d['name']!r}")
        names.add(d["name"])
    _check_mimic(src, g, names)
    base = welded_to_root(g, root)
    no_inertial = [n for n, d in g.nodes(data=True) if d.get("inertial", True) is False and n not in base]
    _report_implausible(src, suspicious, no_inertial, _massless_with_inertia(g, base), strict)
    return root


def _massless_with_inertia(g: nx.DiGraph, base: set) -> list:
    """Links with rotational inertia on a moving body of zero mass (the body: links welded by fixed joints)."""
    bodies: dict[str, list] = {}
    for link in g.nodes:
        if link in base:
            continue
        head = link
        while g.edges[next(iter(g.predecessors(head))), head].get("type") == "fixed":
            head = next(iter(g.predecessors(head)))
        bodies.setdefault(head, []).append(link)
    out = []
    for links in bodies.values():
        if sum(float(g.nodes[n]["mass"]) for n in links) == 0.0:
            out += [n for n in links if np.abs(np.asarray(g.nodes[n]["inertia"], dtype=float)).max() > 0.0]
    return out


def _report_implausible(src: str, suspicious: list, no_inertial: list, massless: list, strict: bool) -> None:
    """One ModelWarning (ModelError when ``strict``) listing every kind of suspicious link."""
    parts = []
    if suspicious:
        parts.append("implausible inertia (triangle inequality or tiny negative principal moment) "
                     f"on links {suspicious}")
    if no_inertial:
        parts.append(f"no <inertial> (zero mass) on moving links {no_inertial}")
    if massless:
        parts.append(f"zero mass but non-zero rotational inertia on links {massless}")
    if not parts:
        return
    report_suspicious(f"{src}: " + "; ".join(parts), strict)


def report_suspicious(msg: str, strict: bool) -> None:
    """Warn (``ModelWarning``) about a description that loads but looks wrong; ModelError when ``strict``."""
    if strict:
        raise ModelError(msg + " (strict=True)")
    warnings.warn(msg, ModelWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """``stacklevel`` that attributes a warning to the first frame outside composedyn."""
    root = sys.modules["composedyn"]  # always loaded before its subpackages; not an import edge
    pkg = [str(Path(m.__file__).parent) + os.sep for m in (root, sys.modules[__name__])]
    pkg += [str(Path(pkg[1]).parent / sub) + os.sep for sub in ("importers", "robots")]
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(tuple(pkg)):
        frame, level = frame.f_back, level + 1
    return level


def _check_link(src: str, name: str, d: dict, suspicious: list) -> None:
    """Finite, non-negative mass and a symmetric, (almost) positive inertia.

    A principal moment below ``-NEG_INERTIA_ATOL * max(1, largest moment)``
    (kg m^2) is an error; a smaller negative one (vendor rounding, e.g.
    -1e-12) or a violated triangle inequality (I3 > I1 + I2 beyond 1e-6
    relative) puts the link on the ``suspicious`` list.
    """
    where = f"link {name!r}"
    for key in ("mass", "com", "inertia"):
        if key not in d:
            raise ModelError(f"{src}: {where} lacks attribute {key!r}")
    m = float(_finite(src, f"{where} mass", d["mass"], ()))
    if m < 0:
        raise ModelError(f"{src}: {where} has negative mass {m}")
    _finite(src, f"{where} centre of mass", d["com"], (3,))
    inertia = _finite(src, f"{where} inertia", d["inertia"], (3, 3))
    scale = float(np.abs(inertia).max())
    if np.abs(inertia - inertia.T).max() > 1e-9 * max(scale, 1e-300):
        raise ModelError(f"{src}: {where} inertia is not symmetric")
    eig = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if eig[0] < -NEG_INERTIA_ATOL * max(1.0, eig[2]):
        raise ModelError(f"{src}: {where} inertia has a negative principal moment {eig[0]:.3g} kg m^2")
    if eig[0] < 0 or eig[2] > (eig[0] + eig[1]) * (1 + 1e-6):
        suspicious.append(name)


def _check_joint(src: str, parent: str, child: str, d: dict) -> None:
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{src}: the joint {parent!r} -> {child!r} has no 'name'")
    where = f"joint {name!r}"
    jtype = d.get("type")
    if jtype not in JOINT_TYPES:
        raise ModelError(f"{src}: {where} has unsupported type {jtype!r} (supported: {', '.join(JOINT_TYPES)})")
    T = _finite(src, f"{where} origin", d.get("origin"), (4, 4))
    R = T[:3, :3]
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
        raise ModelError(f"{src}: {where} origin rotation is not a proper rotation")
    axis = _finite(src, f"{where} axis", d.get("axis"), (3,))
    if jtype != "fixed" and np.linalg.norm(axis) < 1e-9:
        raise ModelError(f"{src}: {where} has a zero axis")
    limits = d.get("limits") or (None,) * 4
    if not isinstance(limits, (tuple, list)) or len(limits) != 4:
        raise ModelError(f"{src}: {where} limits must be (lower, upper, velocity, effort)")
    for kind, lim in zip(("lower", "upper", "velocity", "effort"), limits):
        if lim is not None:
            _finite(src, f"{where} {kind} limit", lim, (), allow_inf=True)
    if limits[0] is not None and limits[1] is not None and float(limits[0]) > float(limits[1]):
        raise ModelError(f"{src}: {where} lower limit {limits[0]} > upper limit {limits[1]}")
    for key in ("damping", "friction", "armature"):
        val = float(_finite(src, f"{where} {key}", d.get(key, 0.0), ()))
        if val < 0:
            raise ModelError(f"{src}: {where} has negative {key} {val}")


def _check_mimic(src: str, g: nx.DiGraph, names: set) -> None:
    for _, _, d in g.edges(data=True):
        mimic = d.get("mimic")
        if mimic is None:
            continue
        target, mult, off = mimic
        if target not in names:
            raise ModelError(f"{src}: joint {d['name']!r} mimics unknown joint {target!r}")
        _finite(src, f"joint {d['name']!r} mimic multiplier", mult, ())
        _finite(src, f"joint {d['name']!r} mimic offset", off, ())
