"""A floating base: what it is (:class:`Base`), where it comes from (:func:`split_base`), and the
tree a floating robot computes on (:func:`tree_graph`).

A floating robot is a tree whose root joint is the base's joint: a free flyer (Pinocchio's
``JointModelFreeFlyer``: q = (x, y, z, qx, qy, qz, qw), v the body twist, linear first, in base
axes) or a planar joint (``JointModelPlanar``: q = (x, y, cos θ, sin θ), v = (vx, vy, ω) in the
base axes), placed at the base joint's origin (:mod:`composedyn.dynamics.array_api.joints`).

Reference: J. Carpentier et al., "The Pinocchio C++ library", SII 2019 (the free-flyer
configuration and tangent conventions used here).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.floating.lie import quaternion_matrix, unit_and_norm
from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, check_planar_axis, find_root, source_of

KINDS = ("free", "planar")
_E = np.eye(3)


@dataclass(frozen=True, eq=False)
class Base:
    """A floating base: ``kind`` "free" (6 dof) or "planar" (3 dof, the xy plane of the base frame).

    joint: the base joint's name (the URDF's floating/planar joint, else "root_joint").
    link: the base link.  origin (4, 4): the base joint frame in the world at the
    neutral configuration.  gravity (3,): in world axes, m/s².
    """

    kind: str
    joint: str
    link: str
    origin: np.ndarray
    gravity: np.ndarray

    @property
    def nq(self) -> int:
        """Configuration size of the base: 7 (x, y, z, qx, qy, qz, qw) or 4 (x, y, cos θ, sin θ)."""
        return 7 if self.kind == "free" else 4

    @property
    def nv(self) -> int:
        """Tangent size of the base: 6 (body twist, linear first) or 3 (vx, vy, w)."""
        return 6 if self.kind == "free" else 3

    @property
    def coordinates(self) -> tuple:
        """Names of the base's velocity coordinates, for messages."""
        return _COORDINATES[self.kind]


_COORDINATES = {"free": ("x", "y", "z", "rx", "ry", "rz"), "planar": ("x", "y", "rz")}


def split_base(graph: nx.DiGraph, floating) -> tuple[nx.DiGraph, Base | None]:
    """The fixed-structure graph and the floating base asked for.

    ``floating``: None -- floating if the graph's root joint is ``floating`` or
    ``planar`` (URDF), else fixed; True or "free" -- a free flyer at the root
    link (the URDF's floating root joint if there is one); "planar"; False --
    a fixed base (a floating or planar root joint is then welded).  The root
    joint is removed from the returned graph (the world link with it).
    """
    if floating not in (None, True, False) + KINDS:
        raise ValueError(f"floating must be None, True, False, 'free' or 'planar', got {floating!r}")
    src = source_of(graph)
    loose = [(u, v, d) for u, v, d in graph.edges(data=True) if d.get("type") in KINDS + ("floating",)]
    root = find_root(graph) if graph.number_of_nodes() else None
    for u, v, d in loose:
        if u != root:
            raise ModelError(f"{src}: joint {d['name']!r} is {d['type']}; only the root joint (from {root!r}) "
                             "may be floating or planar")
    gravity = np.asarray(graph.graph.get("gravity", DEFAULT_GRAVITY), dtype=float)
    if loose:
        u, v, d = loose[0]
        kind = "planar" if d["type"] == "planar" else "free"
        if floating is False:
            g = graph.copy()
            g.edges[u, v]["type"] = "fixed"
            return g, None
        if floating == "planar" and kind == "free":
            kind = "planar"
        if graph.out_degree(u) > 1 or graph.nodes[u].get("mass", 0.0) > 0.0:
            raise ModelError(f"{src}: the world link {u!r} of floating joint {d['name']!r} carries other links "
                             "or a mass; a floating base must be the only child of a massless world link")
        g = graph.copy()
        g.remove_node(u)
        g.graph["root"] = v
        return g, _base(src, kind, d["name"], v, np.asarray(d["origin"], float), np.asarray(d["axis"], float),
                        gravity)
    if floating in (None, False):
        return graph, None
    kind = "planar" if floating == "planar" else "free"
    return graph, _base(src, kind, "root_joint", root, np.eye(4), _E[2], gravity)


def _base(src, kind, joint, link, origin, axis, gravity) -> Base:
    if kind == "planar":
        check_planar_axis(src, joint, axis)
    return Base(kind, joint, link, origin.copy(), gravity.copy())


def tree_graph(graph: nx.DiGraph, base: Base) -> nx.DiGraph:
    """``graph`` with a massless world link ``"<joint>::world"`` and the base's joint from it to the base
    link: a ``floating`` (free-flyer) or ``planar`` joint at the base joint's origin."""
    g = nx.DiGraph()
    g.graph.update(graph.graph)
    world = f"{base.joint}::world"
    add_link(g, world)
    g.add_nodes_from(graph.nodes(data=True))
    add_joint(g, base.joint, world, base.link, type="floating" if base.kind == "free" else "planar",
              origin=base.origin, axis=_E[2])
    g.add_edges_from(graph.edges(data=True))
    g.graph["root"] = world
    return g


def check_base_inertia(base: Base, robot, strict: bool = False) -> None:
    """Report (``ModelWarning``; ModelError when ``strict``) a floating robot whose mass matrix
    is singular at two configurations (neutral, and the joints at a fixed random one) -- some base
    or joint motion moves no inertia (e.g. point masses on one line, a massless base link whose
    first joint turns only itself) -- naming the coordinates of that motion: forward dynamics
    and simulation would refuse every state.  The mass matrix is the array-API engine's on NumPy."""
    from composedyn.dynamics.schema import report_suspicious

    q = np.stack([robot.neutral(), robot.neutral()])
    q[1, base.nq:] = np.random.default_rng(0).uniform(-1.0, 1.0, robot.nq - base.nq)
    w, V = np.linalg.eigh(np.asarray(robot.numpy.mass_matrix(q)))
    if np.all(w[:, 0] > 1e-12 * np.maximum(w[:, -1], 1e-300)):
        return
    v = np.abs(V[0, :, 0])
    names = [f"base {c}" for c in base.coordinates] + list(robot.joint_names)
    report_suspicious(f"{robot.array_model.source}: with a floating base the mass matrix is singular: the motion "
                      f"along {[names[i] for i in np.flatnonzero(v > 0.1 * v.max())]} moves no inertia (base link "
                      f"{base.link!r}); forward dynamics and simulation will refuse every state", strict)


def base_pose(base: Base, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World pose (R₀ (..., 3, 3), p₀ (..., 3)) of the base frame at configurations q (..., nq).

    ValueError when a quaternion (or planar (cos θ, sin θ)) has zero norm; other
    norms are divided out."""
    if base.kind == "free":
        unit, norm = unit_and_norm(q[..., 3:7])
        if not np.all(norm >= 1e-12):
            raise ValueError(f"base quaternion q[3:7] (qx, qy, qz, qw) of joint {base.joint!r} has zero norm")
        R, p = quaternion_matrix(unit), q[..., :3]
    else:
        unit, norm = unit_and_norm(q[..., 2:4])
        if not np.all(norm >= 1e-12):
            raise ValueError(f"planar base (cos θ, sin θ) q[2:4] of joint {base.joint!r} has zero norm")
        c, s = unit[..., 0], unit[..., 1]
        z, o = np.zeros_like(c), np.ones_like(c)
        R = np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)
        p = np.concatenate([q[..., :2], np.zeros(q.shape[:-1] + (1,))], -1)
    Ro, po = base.origin[:3, :3], base.origin[:3, 3]
    return Ro @ R, po + np.einsum("ij,...j->...i", Ro, p)
