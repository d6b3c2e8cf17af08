"""Pinocchio models as array-API models, and random trees mixing every joint kind (needs the test extra).

``pin_joint`` builds the Pinocchio joint model of a :class:`~composedyn.dynamics.array_api.joints.Joint`;
``array_model`` converts a Pinocchio model (joints of the kinds Pinocchio and the array-API joint model share)
into an :class:`~composedyn.dynamics.array_api.model.ArrayModel` with the same coordinates; ``random_tree``
builds a random Pinocchio tree whose joints are drawn from the given kinds (multi-DOF joints anywhere in the
tree, not only at the root).  ``random_joint_graph`` builds a random kinematic graph (the schema's edges, every
joint kind, fixed joints included) and ``graph_pinocchio`` the Pinocchio model of such a graph, edge by edge with
Pinocchio's own joint models: the oracle of :class:`composedyn.tree_robot.TreeRobot`.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np
import pinocchio as pin

from composedyn.dynamics.array_api.joints import KINDS, Joint, make_joint
from composedyn.dynamics.array_api.model import ArrayModel
from composedyn.dynamics.schema import add_joint, add_link

_ALIGNED = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_ALIGNED_KINDS = {"R": "revolute", "P": "prismatic", "H": "helical"}
_OWN_AXES = {
    "RevoluteUnaligned": "revolute",
    "PrismaticUnaligned": "prismatic",
    "HelicalUnaligned": "helical",
    "Universal": "universal",
    "Spherical": "spherical",
    "Planar": "planar",
    "FreeFlyer": "free_flyer",
}


def pin_joint(joint: Joint):
    """The Pinocchio joint model with ``joint``'s kind, axes and pitch (continuous: a revolute joint, nq = 1)."""
    axis, axis2 = np.array(joint.axis), np.array(joint.axis2)
    makers = {
        "revolute": lambda: pin.JointModelRevoluteUnaligned(axis),
        "continuous": lambda: pin.JointModelRevoluteUnaligned(axis),
        "prismatic": lambda: pin.JointModelPrismaticUnaligned(axis),
        "helical": lambda: pin.JointModelHelicalUnaligned(axis, joint.pitch),
        "universal": lambda: pin.JointModelUniversal(axis, axis2),
        "spherical": pin.JointModelSpherical,
        "planar": pin.JointModelPlanar,
        "free_flyer": pin.JointModelFreeFlyer,
    }
    return makers[joint.kind]()


def one_joint_model(joint: Joint) -> pin.Model:
    """A Pinocchio model made of ``joint`` alone, attached to the world at the identity placement."""
    model = pin.Model()
    model.addJoint(0, pin_joint(joint), pin.SE3.Identity(), joint.name)
    return model


def _joint_of(jm, name: str) -> Joint:
    jm = jm.extract() if hasattr(jm, "extract") else jm
    short = jm.shortname().removeprefix("JointModel")
    idx = (jm.idx_q, jm.idx_v)
    if short in _OWN_AXES:
        kind = _OWN_AXES[short]
        axes = {"axis": jm.axis1, "axis2": jm.axis2} if kind == "universal" else {}
        if hasattr(jm, "axis"):
            axes["axis"] = jm.axis
        return make_joint(name, kind, *idx, pitch=float(getattr(jm, "pitch", 0.0)), **axes)
    if len(short) == 2 and short[0] in _ALIGNED_KINDS and short[1] in _ALIGNED:
        kind = _ALIGNED_KINDS[short[0]]
        return make_joint(name, kind, *idx, axis=_ALIGNED[short[1]], pitch=float(getattr(jm, "pitch", 0.0)))
    raise ValueError(f"joint '{name}': Pinocchio joint {jm.shortname()} has no array-API kind")


def array_model(model: pin.Model, name: str = "pinocchio tree") -> ArrayModel:
    """The :class:`ArrayModel` of a Pinocchio model: same bodies (joint i is body i - 1), placements,
    inertias (regressor layout, about the joint frame), gravity, coordinates (q and v in Pinocchio's order)
    and frames (every Pinocchio frame, on the body of its parent joint; -1 for the world).
    """
    joints = tuple(_joint_of(model.joints[i], model.names[i]) for i in range(1, model.njoints))
    places = [model.jointPlacements[i] for i in range(1, model.njoints)]
    frames = list(model.frames)
    n = len(joints)
    return ArrayModel(
        name=name,
        source="<pinocchio>",
        joints=joints,
        parent=tuple(int(model.parents[i]) - 1 for i in range(1, model.njoints)),
        placement_R=np.array([m.rotation for m in places], dtype=float).reshape(n, 3, 3),
        placement_p=np.array([m.translation for m in places], dtype=float).reshape(n, 3),
        inertia=np.array([model.inertias[i].toDynamicParameters() for i in range(1, model.njoints)]).reshape(n, 10),
        gravity=np.array(model.gravity.linear, dtype=float),
        damping=np.zeros(model.nv),
        coulomb=np.zeros(model.nv),
        armature=np.zeros(model.nv),
        term_joints=(),
        Gq=None,
        bq=None,
        Gv=None,
        frame_names=tuple(f.name for f in frames),
        frame_body=tuple(int(f.parentJoint) - 1 for f in frames),
        frame_R=np.array([f.placement.rotation for f in frames], dtype=float).reshape(-1, 3, 3),
        frame_p=np.array([f.placement.translation for f in frames], dtype=float).reshape(-1, 3),
        nq=model.nq,
        nv=model.nv,
        nq_full=model.nq,
        nv_full=model.nv,
        coordinate_joints=joints,
    )


def _unit(rng: np.random.Generator) -> np.ndarray:
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def random_tree(
    rng: np.random.Generator, n_bodies: int, kinds: Sequence[str] = KINDS, root: str | None = None
) -> pin.Model:
    """A random Pinocchio tree of ``n_bodies`` bodies whose joints cycle through ``kinds`` in a random order
    (``root``: the first joint's kind, e.g. ``"free_flyer"``), in depth-first order, with random parents,
    placements, axes, pitches and positive-definite inertias; one frame per body ("body{i}") off the joint origin.
    """
    order = list(rng.permutation(list(kinds)))
    model = pin.Model()
    for i in range(n_bodies):
        kind = root if (i == 0 and root is not None) else order[i % len(order)]
        # depth-first order (Pinocchio's subtree algorithms need it): the parent is the last joint or one of
        # its ancestors, most often the last (deep trees with branches)
        path = [i]
        while path[-1] > 0:
            path.append(int(model.parents[path[-1]]))
        parent = path[min(int(rng.geometric(0.55)) - 1, len(path) - 1)]
        a1 = _unit(rng)
        a2 = np.cross(a1, _unit(rng))
        joint = make_joint(f"j{i}", kind, 0, 0, axis=a1, axis2=a2, pitch=float(rng.uniform(-0.2, 0.2)))
        placement = pin.SE3(pin.exp3(rng.normal(size=3)), rng.uniform(-0.5, 0.5, size=3))
        jid = model.addJoint(parent, pin_joint(joint), placement, joint.name)
        inertia = pin.Inertia(
            float(rng.uniform(0.5, 2.0)), rng.uniform(-0.2, 0.2, size=3), _random_rotational_inertia(rng)
        )
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        frame_place = pin.SE3(pin.exp3(rng.normal(size=3)), rng.uniform(-0.3, 0.3, size=3))
        model.addFrame(pin.Frame(f"body{i}", jid, frame_place, pin.FrameType.OP_FRAME))
    return model


def _random_rotational_inertia(rng: np.random.Generator) -> np.ndarray:
    """A rotational inertia about the centre of mass that satisfies the triangle inequalities."""
    principal = rng.uniform(0.05, 0.3, size=3)
    principal = np.sort(principal)
    principal[2] = min(principal[2], principal[0] + principal[1] - 1e-3)
    rot = pin.exp3(rng.normal(size=3))
    return rot @ np.diag(principal) @ rot.T


def seeded_tree(
    name: str, seed: int, bodies: int, root: str | None
) -> tuple[np.random.Generator, pin.Model, ArrayModel]:
    """(the generator after drawing, the Pinocchio tree, its array-API model named ``name``) of
    :func:`random_tree` over every kind with ``root``, drawn from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, bodies, kinds=KINDS, root=root)
    return rng, model, array_model(model, name=name)


def random_configuration(am: ArrayModel, rng: np.random.Generator) -> np.ndarray:
    """A random q (nq,) of the array-API model ``am``: each joint's random configuration."""
    from composedyn.dynamics.array_api.joints import random_configuration as joint_configuration

    return np.concatenate([joint_configuration(j, rng) for j in am.joints])


FLOATING_URDFS = {"solo12": "solo_description/robots/solo12.urdf",
                  "anymal_b": "anymal_b_simple_description/robots/anymal.urdf"}
"""Legged robots of example-robot-data (paths under its robots directory) whose free-flyer trees the
compiled kernels are checked on."""


def floating_robot(name: str):
    """The :class:`composedyn.FloatingRobot` of :data:`FLOATING_URDFS` ``name``."""
    import composedyn as cd
    from composedyn.testing.pinocchio_oracle import erd_robots_dir

    return cd.load(str(erd_robots_dir() / FLOATING_URDFS[name]), floating=True)


# ---- kinematic graphs with joints of several coordinates, and their Pinocchio models

GRAPH_KINDS = ("revolute", "spherical", "universal", "helical", "prismatic", "floating", "planar", "continuous",
               "fixed")


def _rotation(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_joint_graph(seed: int, bodies: int = 9) -> nx.DiGraph:
    """A random kinematic graph over every joint kind (each at least once, fixed joints included), with random
    placements, masses, centres of mass and inertias, damping, Coulomb friction and armature."""
    rng = np.random.default_rng(seed)
    g = nx.DiGraph(name=f"tree{seed}", gravity=np.array([0.3, -0.2, -9.81]))
    add_link(g, "base")
    links = ["base"]
    kinds = list(GRAPH_KINDS) + [str(k) for k in rng.choice(GRAPH_KINDS[:5], max(0, bodies - len(GRAPH_KINDS)))]
    rng.shuffle(kinds)
    for k, kind in enumerate(kinds):
        x, y, z = rng.uniform(0.01, 0.1, 3)  # second moments of a mass distribution: a physical inertia
        R = _rotation(rng)
        I = R @ np.diag([y + z, x + z, x + y]) @ R.T
        name = f"l{k}"
        add_link(g, name, mass=rng.uniform(0.3, 2.0), com=0.1 * rng.normal(size=3), inertia=I)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = _rotation(rng), 0.3 * rng.normal(size=3)
        parent = links[rng.integers(len(links))]
        own = {}
        if kind == "universal":
            own["axis2"] = rng.normal(size=3)
        if kind == "helical":
            own["pitch"] = rng.uniform(-0.1, 0.1)
        moving = kind not in ("fixed", "floating", "planar")
        add_joint(g, f"j{k}", parent, name, type=kind, origin=T,
                  axis=(0.0, 0.0, 1.0) if kind == "planar" else rng.normal(size=3),
                  damping=rng.uniform(0, 0.5) if moving else 0.0, friction=rng.uniform(0, 0.3) if moving else 0.0,
                  armature=rng.uniform(0, 0.1) if moving else 0.0, **own)
        links.append(name)
    return g


def _pin_joint(d: dict):
    kind = d["type"]
    axis = np.asarray(d["axis"], float) / np.linalg.norm(d["axis"])
    if kind in ("revolute", "continuous"):
        return pin.JointModelRevoluteUnaligned(axis)
    if kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(axis)
    if kind == "helical":
        return pin.JointModelHelicalUnaligned(axis, float(d["pitch"]))
    if kind == "universal":
        return pin.JointModelUniversal(axis, np.asarray(d["axis2"], float) / np.linalg.norm(d["axis2"]))
    return {"spherical": pin.JointModelSpherical, "floating": pin.JointModelFreeFlyer,
            "planar": pin.JointModelPlanar}[kind]()


def graph_pinocchio(g: nx.DiGraph):
    """(Pinocchio model, {link: (joint id, placement of the link in the joint frame)}) of graph ``g``,
    built edge by edge from the root."""
    model = pin.Model()
    model.gravity.linear = np.asarray(g.graph["gravity"], float)
    root = next(n for n in g if g.in_degree(n) == 0)
    where = {root: (0, pin.SE3.Identity())}
    for parent, child in nx.dfs_edges(g, root):
        d = g.edges[parent, child]
        jid, X = where[parent]
        origin = X * pin.SE3(d["origin"][:3, :3], d["origin"][:3, 3])
        node = g.nodes[child]
        inertia = pin.Inertia(node["mass"], np.asarray(node["com"], float), np.asarray(node["inertia"], float))
        if d["type"] == "fixed":
            where[child] = (jid, origin)
            model.appendBodyToJoint(jid, origin.act(inertia), pin.SE3.Identity())
            continue
        new = model.addJoint(jid, _pin_joint(d), origin, d["name"])
        model.appendBodyToJoint(new, inertia, pin.SE3.Identity())
        where[child] = (new, pin.SE3.Identity())
    return model, where
