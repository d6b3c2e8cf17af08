"""The kinematic graph: its schema, defaults and validation.

The graph is a ``networkx.DiGraph``; nodes are links, edges are joints
(parent link -> child link).  See ARCHITECTURE.md for the full schema:

* graph: ``name``, ``root``, ``gravity`` (3,), optional ``source`` (file name
  used in error messages);
* node: ``mass`` (kg), ``com`` (3,) in the link frame, ``inertia`` (3, 3)
  about the centre of mass in link-frame axes;
* edge: ``name``, ``type`` in {revolute, continuous, prismatic, fixed},
  ``origin`` (4, 4) parent link frame -> joint frame at q = 0, ``axis`` (3,)
  unit vector in the joint frame, ``limits`` (lower, upper, velocity, effort)
  with None where absent, ``damping``, ``friction``, ``armature``, ``mimic``
  (None or (joint, multiplier, offset)).

The child link frame coincides with the joint frame (as in URDF).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import networkx as nx
import numpy as np

from composedyn.errors import ModelError, ModelWarning

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


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
) -> None:
    """Add a joint edge parent -> child with schema attributes and defaults."""
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
    )


def source_of(g: nx.DiGraph) -> str:
    """The name used for this graph in error messages (file name or robot name)."""
    return str(g.graph.get("source") or f"<graph {g.graph.get('name', '?')}>")


def _finite(src: str, what: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{src}: {what} is not numeric: {value!r}") from None
    if arr.shape != shape:
        raise ModelError(f"{src}: {what} has shape {arr.shape}, expected {shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{src}: {what} contains NaN or infinite values")
    return arr


def find_root(g: nx.DiGraph) -> str:
    """The unique link without a parent joint; ModelError otherwise."""
    src = source_of(g)
    if g.number_of_nodes() == 0:
        raise ModelError(f"{src}: the robot has no links")
    roots = [n for n in g.nodes if g.in_degree(n) == 0]
    if len(roots) != 1:
        if not roots:
            cyc = nx.find_cycle(g)
            raise ModelError(f"{src}: kinematic cycle through links {[e[0] for e in cyc]}; no root link")
        raise ModelError(f"{src}: several root links {roots}; a robot must have exactly one")
    declared = g.graph.get("root")
    if declared is not None and declared != roots[0]:
        raise ModelError(f"{src}: graph declares root {declared!r} but the tree's root is {roots[0]!r}")
    return roots[0]


def validate(g: nx.DiGraph, strict: bool = False) -> str:
    """Check the graph against the schema; return the root link name.

    Raises ModelError naming the source and the link or joint at fault.
    Inertias that are physically implausible but common in vendor files
    (triangle inequality violated, principal moments of about -1e-12) give one
    ``ModelWarning`` listing the links, or a ModelError when ``strict``.
    """
    src = source_of(g)
    root = find_root(g)
    for n in g.nodes:
        if g.in_degree(n) > 1:
            raise ModelError(f"{src}: link {n!r} is the child of several joints")
    if not nx.is_directed_acyclic_graph(g):
        raise ModelError(f"{src}: kinematic cycle through links {[e[0] for e in nx.find_cycle(g)]}")
    if not nx.is_weakly_connected(g):
        raise ModelError(f"{src}: links not connected to the root {root!r}")
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
    if suspicious:
        msg = f"{src}: implausible inertia (triangle inequality or tiny negative moment) on links {suspicious}"
        if strict:
            raise ModelError(msg)
        warnings.warn(msg, ModelWarning, stacklevel=3)
    return root


def _check_link(src: str, name: str, d: dict, suspicious: list) -> None:
    where = f"link {name!r}"
    for key in ("mass", "com", "inertia"):
        if key not in d:
            raise ModelError(f"{src}: {where} lacks attribute {key!r}")
    m = float(_finite(src, f"{where} mass", d["mass"], ()))
    if m < 0:
        raise ModelError(f"{src}: {where} has negative mass {m}")
    _finite(src, f"{where} centre of mass", d["com"], (3,))
    inertia = _finite(src, f"{where} inertia", d["inertia"], (3, 3))
    scale = max(1.0, float(np.abs(inertia).max()))
    if np.abs(inertia - inertia.T).max() > 1e-9 * scale:
        raise ModelError(f"{src}: {where} inertia is not symmetric")
    eig = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    tol = 1e-9 * scale
    if eig[0] < -1e-6 * scale:
        raise ModelError(f"{src}: {where} inertia has a negative principal moment {eig[0]:.3g}")
    if eig[0] < 0 or eig[2] > eig[0] + eig[1] + tol:
        suspicious.append(name)


def _check_joint(src: str, parent: str, child: str, d: dict) -> None:
    name = d.get("name", f"{parent}->{child}")
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
    limits = d.get("limits", (None,) * 4)
    if len(limits) != 4:
        raise ModelError(f"{src}: {where} limits must be (lower, upper, velocity, effort)")
    for lim in limits:
        if lim is not None and math.isnan(float(lim)):
            raise ModelError(f"{src}: {where} limit is NaN")
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
