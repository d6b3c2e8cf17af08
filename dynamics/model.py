"""Compile a kinematic graph into a frozen, flat ``Model``.

Bodies are the links moved by a non-fixed joint; links hanging from a fixed
joint are merged into the body they are welded to (mass, centre of mass and
inertia combined).  Links welded to the root link belong to the fixed base
(body index -1) and do not enter the dynamics.  Bodies are numbered in
depth-first order from the root, children visited in the order their joints
were added to the graph (file order for URDF), so ``parent[i] < i``.

Body ``i``'s frame is the frame of its joint (as in URDF, the child link frame
coincides with the joint frame).  Its pose relative to the parent body frame is
``T_tree[i] @ T_joint(q_i)`` where ``T_joint`` rotates about (revolute) or
translates along (prismatic) ``axis[i]`` expressed in the joint frame.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.joint_types import KIND_CODES
from composedyn.dynamics.reference.spatial import spatial_inertia
from composedyn.dynamics.schema import DEFAULT_GRAVITY, find_root, source_of, validate


@dataclass(frozen=True, eq=False)
class Model:
    """Flat arrays describing a fixed-base kinematic tree (n = number of bodies).

    Attributes (shapes):
      name, source: robot name and the file or graph it came from.
      joint_names (n,), body_names (n,): the joint and child link of each body.
      jtype (n,) int: 0 revolute (incl. continuous), 1 prismatic.
      continuous (n,) bool: revolute joint without position limits.
      parent (n,) int: parent body index, -1 for the fixed base; parent[i] < i.
      tree_R (n, 3, 3), tree_p (n, 3): parent body frame -> joint frame at q = 0.
      axis (n, 3): unit joint axis in the joint (= body) frame.
      mass (n,), com (n, 3), inertia_com (n, 3, 3): merged body inertial data
        in the body frame (inertia about the centre of mass).
      I_body (n, 6, 6): spatial inertia about the body frame origin, angular first.
      gravity (3,): gravity acceleration in the base frame.
      lower, upper, velocity, effort (n,): limits, +-inf where absent.
      damping, friction, armature (n,): viscous, Coulomb, rotor inertia.
      mimic_source (n,) int (-1 when independent), mimic_multiplier, mimic_offset (n,).
      link_names (L,), link_body (L,) int, link_T (L, 4, 4): every link of the
        graph, the body it belongs to (-1 = base) and its frame in that body frame.
      link_mass (L,), link_com (L, 3): per-link mass and centre of mass (link frame).
      total_mass: sum of all link masses (base included).
    """

    name: str
    source: str
    joint_names: tuple
    body_names: tuple
    jtype: np.ndarray
    continuous: np.ndarray
    parent: np.ndarray
    tree_R: np.ndarray
    tree_p: np.ndarray
    axis: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia_com: np.ndarray
    I_body: np.ndarray
    gravity: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    armature: np.ndarray
    mimic_source: np.ndarray
    mimic_multiplier: np.ndarray
    mimic_offset: np.ndarray
    link_names: tuple
    link_body: np.ndarray
    link_T: np.ndarray
    link_mass: np.ndarray
    link_com: np.ndarray
    total_mass: float

    def __reduce__(self):  # unpickled through __init__, so its arrays are read-only again
        return (Model, tuple(getattr(self, f.name) for f in fields(self)))

    def __post_init__(self):
        for key, value in vars(self).items():  # immutable in fact: no caller can change a model under a result
            if isinstance(value, np.ndarray):
                object.__setattr__(self, key, frozen_array(value))

    @property
    def n(self) -> int:
        """Number of bodies (= joint coordinates)."""
        return len(self.joint_names)

    def ancestors(self, i: int) -> list[int]:
        """Body i and its ancestors, from i up to the root's child."""
        return ancestors(self.parent, i)


def frozen_array(a) -> np.ndarray:
    """A C-contiguous copy of ``a`` that is read-only in fact: a view of an immutable ``bytes``
    object, so NumPy refuses ``flags.writeable = True`` on it, on its base and on every view."""
    a = np.ascontiguousarray(a)
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def ancestors(parent, i: int) -> list[int]:
    """Body i and its ancestors (from i up to the root's child) in a parent array (-1 = base)."""
    out = []
    while i >= 0:
        out.append(i)
        i = int(parent[i])
    return out


def _lim(v, default: float) -> float:
    return default if v is None else float(v)


def _combine(parts: list[tuple[float, np.ndarray, np.ndarray]]):
    """Merge (mass, com, inertia about com) triples given in one frame."""
    m = sum(p[0] for p in parts)
    if m <= 0.0:  # massless parts may still carry rotational inertia (e.g. PUMA link 1)
        return 0.0, np.zeros(3), sum((p[2] for p in parts), np.zeros((3, 3)))
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = ci - c
        I += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, I


def compile_graph(g: nx.DiGraph, strict: bool = False) -> Model:
    """Validate ``g`` and flatten it into a frozen :class:`Model` (see the module doc);
    ModelError when its numbers overflow the dynamics (:func:`check_numbers`)."""
    validate(g, strict=strict)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused by check_numbers
        model = _flatten(g)
    check_numbers(model, strict=strict)
    return model


def _flatten(g: nx.DiGraph) -> Model:
    """The flat arrays of a validated graph."""
    src = source_of(g)
    root = find_root(g)
    order = _dfs_bodies(g, root)
    bodies = [dict(link=l, edge=g.edges[next(iter(g.predecessors(l))), l]) for l in order]
    body_index = {b["link"]: i for i, b in enumerate(bodies)}
    link_body, link_T = _link_frames(g, root, body_index)
    link_names = list(link_body)
    n = len(bodies)
    parent = np.array([_body_of(g, b["link"], body_index) for b in bodies], dtype=int)
    tree = np.array([_tree_transform(g, b["link"], body_index) for b in bodies]).reshape(n, 4, 4)
    axis = np.zeros((n, 3))
    for i, b in enumerate(bodies):
        a = np.asarray(b["edge"]["axis"], dtype=float)
        axis[i] = a / np.linalg.norm(a)
    # Merge inertial data of every link into its body frame.
    parts: dict[int, list] = {i: [] for i in range(-1, n)}
    for l in link_names:
        d = g.nodes[l]
        T = link_T[l]
        R, p = T[:3, :3], T[:3, 3]
        parts[link_body[l]].append((float(d["mass"]), p + R @ np.asarray(d["com"], float),
                                    R @ np.asarray(d["inertia"], float) @ R.T))
    mass, com, Ic = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for i in range(n):
        mass[i], com[i], Ic[i] = _combine(parts[i])
    edges = [b["edge"] for b in bodies]
    jnames = tuple(e["name"] for e in edges)
    lim = [tuple(e.get("limits") or (None,) * 4) for e in edges]
    mimic_src = np.full(n, -1)
    mimic_mult, mimic_off = np.ones(n), np.zeros(n)
    for i, e in enumerate(edges):
        if e.get("mimic") is not None:
            target, mult, off = e["mimic"]
            if target not in jnames:
                raise ModelError(f"{src}: joint {e['name']!r} mimics {target!r}, which is not a moving joint")
            mimic_src[i] = jnames.index(target)
            mimic_mult[i], mimic_off[i] = float(mult), float(off)
    jtype = np.array([KIND_CODES[e["type"]] for e in edges], dtype=int)
    return Model(
        name=str(g.graph.get("name", "robot")),
        source=src,
        joint_names=jnames,
        body_names=tuple(b["link"] for b in bodies),
        jtype=jtype,
        continuous=np.array([e["type"] == "continuous" for e in edges], dtype=bool),
        parent=parent,
        tree_R=tree[:, :3, :3].copy(),
        tree_p=tree[:, :3, 3].copy(),
        axis=axis,
        mass=mass,
        com=com,
        inertia_com=Ic,
        I_body=spatial_inertia(mass, com, Ic) if n else np.zeros((0, 6, 6)),
        gravity=np.asarray(g.graph.get("gravity", DEFAULT_GRAVITY), dtype=float),
        lower=np.array([_lim(l[0], -np.inf) for l in lim]),
        upper=np.array([_lim(l[1], np.inf) for l in lim]),
        velocity=np.array([_lim(l[2], np.inf) for l in lim]),
        effort=np.array([_lim(l[3], np.inf) for l in lim]),
        damping=np.array([float(e.get("damping", 0.0) or 0.0) for e in edges]),
        friction=np.array([float(e.get("friction", 0.0) or 0.0) for e in edges]),
        armature=np.array([float(e.get("armature", 0.0) or 0.0) for e in edges]),
        mimic_source=mimic_src,
        mimic_multiplier=mimic_mult,
        mimic_offset=mimic_off,
        link_names=tuple(link_names),
        link_body=np.array([link_body[l] for l in link_names], dtype=int),
        link_T=np.array([link_T[l] for l in link_names]).reshape(-1, 4, 4),
        link_mass=np.array([float(g.nodes[l]["mass"]) for l in link_names]),
        link_com=np.array([np.asarray(g.nodes[l]["com"], float) for l in link_names]).reshape(-1, 3),
        total_mass=float(sum(float(g.nodes[l]["mass"]) for l in g.nodes)),
    )


PLAUSIBLE_MASS = 1e5  # kg: a heavier body is reported (ModelWarning)
PLAUSIBLE_LENGTH = 1e3  # m: a body origin or centre of mass farther from the base is reported
REFERENCE_M_MAX_BODIES = 64  # the mass matrix at q = 0 is checked for models up to this size


def check_numbers(model: Model, strict: bool = False) -> None:
    """Refuse a model whose numbers overflow the dynamics; report implausible ones.

    ModelError (naming the source and the body): non-finite spatial inertia, or
    a mass-length scale m L^2 so large that the mass matrix or the gravity
    torques would overflow (L = distance of the farthest body origin or centre
    of mass from the base at q = 0).  ModelWarning (ModelError when ``strict``):
    a body heavier than ``PLAUSIBLE_MASS`` kg or farther than ``PLAUSIBLE_LENGTH``
    m, and a joint that moves no inertia at all (its column of M is zero:
    forward dynamics is then undefined).  A body of zero mass carrying
    rotational inertia is reported by the graph validation, naming its links.
    For models of up to ``REFERENCE_M_MAX_BODIES`` bodies the mass matrix at
    q = 0 is computed and must be finite.
    """
    src, n = model.source, model.n
    if n == 0:
        return
    bad = [model.body_names[i] for i in range(n) if not np.all(np.isfinite(model.I_body[i]))]
    if bad:
        raise ModelError(f"{src}: non-finite spatial inertia of bodies {bad} (mass or centre of mass overflows)")
    from composedyn.dynamics.reference.kinematics import body_poses

    R, p = body_poses(model, np.zeros(n))
    c = p + np.einsum("nij,nj->ni", R, model.com)
    with np.errstate(over="ignore", invalid="ignore"):
        reach = np.maximum(np.linalg.norm(p, axis=1), np.linalg.norm(c, axis=1))
        scale = np.sum(model.mass) * (2.0 * np.max(reach)) ** 2 + np.sum(np.trace(model.inertia_com, axis1=1, axis2=2))
        moment = np.sum(model.mass) * np.max(reach) * max(1.0, float(np.linalg.norm(model.gravity)))
    if not (np.all(np.isfinite(reach)) and np.isfinite(scale) and np.isfinite(moment)) or scale > 1e300:
        far = model.body_names[int(np.nanargmax(np.where(np.isfinite(reach), reach, np.inf)))]
        raise ModelError(f"{src}: masses and lengths overflow the dynamics (sum of masses {np.sum(model.mass):.3g} kg, "
                         f"body {far!r} at {np.max(reach):.3g} m from the base)")
    notes = []
    heavy = [model.body_names[i] for i in range(n) if model.mass[i] > PLAUSIBLE_MASS]
    if heavy:
        notes.append(f"bodies heavier than {PLAUSIBLE_MASS:g} kg: {heavy}")
    far = [model.body_names[i] for i in range(n) if reach[i] > PLAUSIBLE_LENGTH]
    if far:
        notes.append(f"bodies farther than {PLAUSIBLE_LENGTH:g} m from the base at q = 0: {far}")
    moved = np.array([model.mass[i] + np.trace(model.inertia_com[i]) for i in range(n)], dtype=float)
    for i in range(n - 1, -1, -1):  # subtree sums (parent[i] < i)
        if model.parent[i] >= 0:
            moved[model.parent[i]] += moved[i]
    idle = [model.joint_names[i] for i in range(n) if moved[i] <= 0.0 and model.armature[i] <= 0.0]
    if idle:
        notes.append(f"joints that move no inertia (singular mass matrix): {idle}")
    if n <= REFERENCE_M_MAX_BODIES:
        from composedyn.dynamics.reference.crba import crba

        if not np.all(np.isfinite(crba(model, np.zeros(n)))):
            raise ModelError(f"{src}: the mass matrix at q = 0 is not finite (masses or lengths overflow)")
    if notes:
        from composedyn.dynamics.schema import report_suspicious

        report_suspicious(f"{src}: " + "; ".join(notes), strict)


def _dfs_bodies(g: nx.DiGraph, root: str) -> list[str]:
    """Child links of moving joints in depth-first preorder, children in insertion order."""
    out, stack = [], [root]
    while stack:
        link = stack.pop()
        if link != root and g.edges[next(iter(g.predecessors(link))), link]["type"] != "fixed":
            out.append(link)
        stack.extend(reversed(list(g.successors(link))))
    return out


def _link_frames(g: nx.DiGraph, root: str, body_index: dict):
    """For every link (preorder): owning body index and link frame in the body frame."""
    body, T = {root: -1}, {root: np.eye(4)}
    stack = [root]
    order = []
    while stack:
        link = stack.pop()
        order.append(link)
        for child in g.successors(link):
            e = g.edges[link, child]
            if e["type"] == "fixed":
                body[child], T[child] = body[link], T[link] @ np.asarray(e["origin"], float)
            else:
                body[child], T[child] = body_index[child], np.eye(4)
        stack.extend(reversed(list(g.successors(link))))
    return {l: body[l] for l in order}, T


def _body_of(g: nx.DiGraph, link: str, body_index: dict) -> int:
    """Body index of the parent of the moving joint whose child is ``link``."""
    p = next(iter(g.predecessors(link)))
    while p in g and g.in_degree(p) == 1:
        if p in body_index:
            return body_index[p]
        p = next(iter(g.predecessors(p)))
    return body_index.get(p, -1)


def _tree_transform(g: nx.DiGraph, link: str, body_index: dict) -> np.ndarray:
    """Parent body frame -> joint frame of ``link`` at q = 0 (through fixed joints)."""
    p = next(iter(g.predecessors(link)))
    T = np.asarray(g.edges[p, link]["origin"], float)
    while p not in body_index and g.in_degree(p) == 1:
        pp = next(iter(g.predecessors(p)))
        T = np.asarray(g.edges[pp, p]["origin"], float) @ T
        p = pp
    return T
