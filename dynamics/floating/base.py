"""A floating base as a local chart over the fixed-base engine.

Every fixed-base algorithm (RNEA, CRBA, ABA, Coriolis, frames, COM) serves a
floating robot unchanged.  The base's six (free flyer) or three (planar)
degrees of freedom enter as a chain of virtual joints -- prismatic along the
base's x, y (, z) axes, then revolute about its x, y, z (z only for a planar
base) -- inserted between a fixed world link and the base link, all with
identity placements.  At every evaluation the chain is put at zero and the
engine's fixed frame is taken to coincide with the base frame at that instant
(dynamics is the same in any inertial frame):

* The virtual joint rates at zero are exactly the body twist of the base,
  linear first (Pinocchio's free-flyer ``v``), so the Jacobians, the mass matrix
  and the kinetic energy are the engine's at chart coordinates
  ``x = (0, ..., 0, joints)``; the mass matrix depends on the joints only.
* Gravity is the base acceleration ``-R₀ᵀ g`` (base axes) rather than part of
  the model, so nothing per sample enters the compiled model: the chart's model
  has no gravity -- except for a planar base, whose chain cannot accelerate
  along the plane's normal: the normal component of ``R₀ᵀ g``, constant as the
  base turns in its plane, stays in the model (:func:`chart_gravity`).
* Pinocchio's ``a`` is the time derivative of the body twist, i.e. the base's
  spatial acceleration in base coordinates.  The chain adds the velocity
  product ``b(v) = Σₖ vₖ × Sₖ v̇ₖ`` (vₖ the velocity of virtual body k) to the
  virtual accelerations, so the engine is called with
  ``ẍ = a - b(v) - (R₀ᵀ g, 0)`` on the base coordinates (:func:`chart_acceleration`),
  and forward dynamics returns ``a = ẍ + b(v) + (R₀ᵀ g, 0)``.
* The Coriolis matrix in Christoffel form of the engine,
  ``C = Σᵢ Jᵢᵀ (Iᵢ J̇ᵢ + Bᵢ(vᵢ) Jᵢ)`` with ``J̇`` columns ``v × S``, sees
  ``vₖ × Sₖ`` for the virtual columns where the free body has ``v_b × Sₖ``; the
  difference is the same for every body, so
  ``C = C_chart + M[:, base] Dᵀ`` with ``Dₖ = (Σ_{j>k} Sⱼ vⱼ) × Sₖ``
  (:func:`coriolis_correction`); Ṁ - 2C stays skew-symmetric.
* World quantities are the chart's rotated by the base pose: frame poses
  ``T₀ T``, ``"world"`` Jacobian rows ``R₀ J``, centre of mass ``p₀ + R₀ c``.

Spatial vectors inside this module are angular first (the engine's); the
coordinates of a base motion are linear first (Pinocchio's order).

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 4.5
(floating bases), eq. (2.23)-(2.25) (spatial cross products).
J. Carpentier et al., "The Pinocchio C++ library", SII 2019 (the free-flyer
configuration and tangent conventions used here).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.floating.lie import quaternion_matrix, unit_and_norm
from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, find_root, source_of

KINDS = ("free", "planar")
_E = np.eye(3)


@dataclass(frozen=True, eq=False)
class Base:
    """A floating base: ``kind`` "free" (6 dof) or "planar" (3 dof, the xy plane of the base frame).

    joint: the base joint's name (the URDF's floating/planar joint, else "root_joint").
    link: the base link.  origin (4, 4): the base joint frame in the world at the
    neutral configuration.  gravity (3,): in world axes, m/s².
    axes (nvb, 6): the virtual joints' motion subspaces, angular first, base axes.
    """

    kind: str
    joint: str
    link: str
    origin: np.ndarray
    gravity: np.ndarray
    axes: np.ndarray

    @property
    def nq(self) -> int:
        """Configuration size of the base: 7 (x, y, z, qx, qy, qz, qw) or 4 (x, y, cos θ, sin θ)."""
        return 7 if self.kind == "free" else 4

    @property
    def nv(self) -> int:
        """Tangent size of the base: 6 (body twist, linear first) or 3 (vx, vy, w)."""
        return len(self.axes)

    @property
    def virtual(self) -> tuple:
        """Names of the virtual joints (and links) of the chart, in coordinate order."""
        return tuple(f"{self.joint}::{c}" for c in _CHAIN[self.kind])


_CHAIN = {"free": ("x", "y", "z", "rx", "ry", "rz"), "planar": ("x", "y", "rz")}


def _axes(kind: str) -> np.ndarray:
    """Motion subspaces (angular, linear) of the virtual joints, coordinate order."""
    lin = [np.r_[np.zeros(3), _E[k]] for k in range(3 if kind == "free" else 2)]
    ang = [np.r_[_E[k], np.zeros(3)] for k in (range(3) if kind == "free" else (2,))]
    return np.array(lin + ang)


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
    if kind == "planar" and np.abs(axis / np.linalg.norm(axis) - _E[2]).max() > 1e-12:
        raise ModelError(f"{src}: planar joint {joint!r} has axis {axis.tolist()}; a planar base moves in the "
                         "xy plane of its frame (axis 0 0 1)")
    return Base(kind, joint, link, origin.copy(), gravity.copy(), _axes(kind))


def virtual_graph(graph: nx.DiGraph, base: Base) -> nx.DiGraph:
    """``graph`` with the virtual chain from a fixed world link to the base link, and no gravity."""
    g = nx.DiGraph()
    g.graph.update(graph.graph)
    g.graph["gravity"] = chart_gravity(base)
    names = base.virtual
    world = f"{base.joint}::world"
    add_link(g, world)
    for name in names:
        add_link(g, name)
    g.remove_node(names[-1])  # the last virtual joint moves the base link itself
    g.add_nodes_from(graph.nodes(data=True))
    parent = world
    for k, name in enumerate(names):
        child = base.link if k == len(names) - 1 else name
        revolute = base.axes[k, :3].any()
        add_joint(g, name, parent, child, type="continuous" if revolute else "prismatic",
                  axis=base.axes[k, :3] if revolute else base.axes[k, 3:])
        parent = child
    g.add_edges_from(graph.edges(data=True))
    g.graph["root"] = world
    return g


def check_base_inertia(base: Base, model, strict: bool = False) -> None:
    """Report (``ModelWarning``; ModelError when ``strict``) a floating robot whose mass matrix
    is singular at two joint configurations (zero and a fixed random one) -- some base or
    joint motion moves no inertia (e.g. point masses on one line, a massless base link whose
    first joint turns only itself) -- naming the coordinates of that motion: forward dynamics
    and simulation would refuse every state.  ``model``: the chart's (all-joint) model."""
    from composedyn.dynamics.reference.crba import crba
    from composedyn.dynamics.schema import report_suspicious

    n, nb = model.n, base.nv
    x = np.zeros((2, n))
    x[1, nb:] = np.random.default_rng(0).uniform(-1.0, 1.0, n - nb)
    w, V = np.linalg.eigh(crba(model, x) + np.diag(model.armature))
    if np.all(w[:, 0] > 1e-12 * np.maximum(w[:, -1], 1e-300)):
        return
    v = np.abs(V[0, :, 0])
    names = [f"base {c}" for c in _CHAIN[base.kind]] + list(model.joint_names[nb:])
    report_suspicious(f"{model.source}: with a floating base the mass matrix is singular: the motion along "
                      f"{[names[i] for i in np.flatnonzero(v > 0.1 * v.max())]} moves no inertia (base link "
                      f"{base.link!r}); forward dynamics and simulation will refuse every state", strict)


def chart_gravity(base: Base) -> np.ndarray:
    """Gravity (3,) of the chart's model, base axes: zero for a free flyer; for a planar base
    the component of R₀ᵀ g along the plane's normal (the base z axis), the same at every θ."""
    if base.kind == "free":
        return np.zeros(3)
    return np.array([0.0, 0.0, base.origin[:3, 2] @ base.gravity])


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


def chart_positions(base: Base, q: np.ndarray) -> np.ndarray:
    """Chart coordinates x (..., nv) = (0 for the base, joints) of configurations q (..., nq)."""
    return np.concatenate([np.zeros(q.shape[:-1] + (base.nv,)), q[..., base.nq:]], -1)


def coordinates(base: Base, m: np.ndarray) -> np.ndarray:
    """Base coordinates (..., nvb) (linear first) of spatial motions m (..., 6) (angular first)."""
    if base.kind == "free":
        return np.concatenate([m[..., 3:], m[..., :3]], -1)
    return np.stack([m[..., 3], m[..., 4], m[..., 2]], -1)


def _cross(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Spatial motion cross product m x s (angular first), batched over m."""
    w, u = m[..., :3], m[..., 3:]
    return np.concatenate([np.cross(w, s[:3]), np.cross(w, s[3:]) + np.cross(u, s[:3])], -1)


def velocity_bias(base: Base, v: np.ndarray) -> np.ndarray:
    """b(v) (..., nvb): the virtual chain's velocity-product acceleration of the base, coordinates."""
    vel = np.zeros(v.shape[:-1] + (6,))
    b = np.zeros(v.shape[:-1] + (6,))
    for k, S in enumerate(base.axes):
        vel = vel + v[..., k, None] * S
        b = b + v[..., k, None] * _cross(vel, S)
    return coordinates(base, b)


def gravity_coordinates(base: Base, R0: np.ndarray) -> np.ndarray:
    """(..., nvb): gravity as a base acceleration R₀ᵀ g in base coordinates (angular part zero)."""
    g = np.einsum("...ji,j->...i", R0, base.gravity)
    return coordinates(base, np.concatenate([np.zeros(g.shape), g], -1))


def chart_acceleration(base: Base, v: np.ndarray, a: np.ndarray, R0: np.ndarray) -> np.ndarray:
    """Engine accelerations ẍ (..., nv) for the base motion (v, a): a - b(v) - (R₀ᵀ g, 0) on the base."""
    nb = base.nv
    head = a[..., :nb] - velocity_bias(base, v) - gravity_coordinates(base, R0)
    return np.concatenate([head, a[..., nb:]], -1)


def base_acceleration(base: Base, v: np.ndarray, x_dd: np.ndarray, R0: np.ndarray) -> np.ndarray:
    """Inverse of :func:`chart_acceleration`: a (..., nv) from the engine's ẍ."""
    nb = base.nv
    head = x_dd[..., :nb] + velocity_bias(base, v) + gravity_coordinates(base, R0)
    return np.concatenate([head, x_dd[..., nb:]], -1)


def coriolis_correction(base: Base, M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The term added to the chart's Coriolis matrix (..., nv, nv): column k < nvb is
    M[:, :nvb] coords(Dₖ), Dₖ = (Σ_{j>k} Sⱼ vⱼ) × Sₖ; other columns zero."""
    nb = base.nv
    out = np.zeros(M.shape)
    after = np.zeros(v.shape[:-1] + (6,))
    for k in range(nb - 1, -1, -1):
        D = coordinates(base, _cross(after, base.axes[k]))
        out[..., :, k] = np.einsum("...ij,...j->...i", M[..., :, :nb], D)
        after = after + v[..., k, None] * base.axes[k]
    return out
