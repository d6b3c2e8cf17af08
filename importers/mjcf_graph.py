"""Bodies, joints and sites of a compiled MuJoCo model as a kinematic graph.

MuJoCo places a body at ``(pos, quat)`` in its parent's frame and then moves it by its joints
in their order, each in the body's own axes (``mj_kinematics``): a hinge turns it by
``q - ref`` about ``axis`` through the point ``pos`` of the joint, a slide shifts it by
``(q - ref) axis``.  The graph reproduces this with one edge per joint: the joint frame sits
at the joint's anchor with the ``ref`` offset in its origin, so the graph's joint coordinate
is MuJoCo's ``qpos`` itself; several joints in one body become a chain of massless links
``"<body>::<joint>"`` at the body's frame (only where a hinge's anchor is off the body
origin does such a link remain after the last joint).  Each body is a link carrying
``body_mass``, ``body_ipos`` and the inertia ``R(body_iquat) diag(body_inertia) Rᵀ``; each
site is a link fixed to its body.  A free joint on the robot's root body becomes the root
joint of type ``floating`` from the link ``"world"`` (origin identity: the configuration is
the body's world pose, as MuJoCo's ``qpos``).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.floating.lie import quaternion_matrix
from composedyn.dynamics.schema import add_joint, add_link, check_structure, new_graph, report_suspicious

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3  # mjtJoint
_KIND = {FREE: "free", BALL: "ball", SLIDE: "slide", HINGE: "hinge"}


def name_of(model, kind: str, i: int) -> str:
    """The element's name in the file; an unnamed one is ``<kind><id>`` (MuJoCo's id among the elements
    of that kind, e.g. ``body3``, ``joint0``), with ``_`` appended as long as that is the name of
    some element of the file (so it never takes a name the file gives)."""
    name = getattr(model, kind)(i).name
    if name:
        return name
    taken = set(bytes(model.names).decode("utf-8", "replace").split("\0"))
    name = f"{kind}{i}"
    while name in taken:
        name += "_"
    return name


def pose(pos, quat_wxyz) -> np.ndarray:
    """(4, 4) transform of a MuJoCo position and (w, x, y, z) quaternion."""
    T = np.eye(4)
    q = np.asarray(quat_wxyz, dtype=float)
    T[:3, :3] = quaternion_matrix(np.r_[q[1:], q[0]] / np.linalg.norm(q))
    T[:3, 3] = pos
    return T


def _translation(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _rotation(axis, angle: float) -> np.ndarray:
    """(4, 4) rotation by ``angle`` (rad) about the unit ``axis``."""
    T = np.eye(4)
    half = 0.5 * angle
    T[:3, :3] = quaternion_matrix(np.r_[np.sin(half) * np.asarray(axis, float), np.cos(half)])
    return T


def body_joints(model, b: int) -> range:
    """Joint ids of body ``b`` in MuJoCo order."""
    start = int(model.body_jntadr[b])
    return range(start, start + int(model.body_jntnum[b])) if start >= 0 else range(0)


def _subtree(model, b: int) -> list[int]:
    """Body ``b`` and its descendants, in body order (depth first, as in the file)."""
    inside = {b}
    for i in range(b + 1, model.nbody):
        if int(model.body_parentid[i]) in inside:
            inside.add(i)
    return sorted(inside)


def _has_free(model, b: int) -> bool:
    return any(int(model.jnt_type[j]) == FREE for j in body_joints(model, b))


def _moves(model, b: int) -> bool:
    return any(model.body_jntnum[i] > 0 for i in _subtree(model, b))


def _select(model, src: str, root: str | None, floating) -> tuple[list[int], int | None, str]:
    """(bodies of the robot, id of its top body or None for all of the world, base kind).

    Base kind: "free" (a free joint on the top body), "fixed" (welded to the world link),
    "body" (the top body is the graph's root: ``floating=True`` asks for a free flyer there)."""
    tops = [b for b in range(1, model.nbody) if int(model.body_parentid[b]) == 0]
    if root is not None:
        names = {name_of(model, "body", b): b for b in range(model.nbody)}
        if root not in names or names[root] == 0:
            raise ModelError(f"{src}: root={root!r} is not a body of the model (bodies: "
                             f"{', '.join(list(names)[1:]) or 'none'})")
        top = names[root]
        for a in _ancestors(model, top):
            if model.body_jntnum[a]:
                raise ModelError(f"{src}: root body {root!r} is moved by the joints of its ancestor body "
                                 f"{name_of(model, 'body', a)!r}; choose that body (or one above it) as root")
        chosen = [top]
    else:
        free = [b for b in tops if _has_free(model, b)]
        moving = [b for b in tops if _moves(model, b)]
        if free and floating is not False:
            if len(moving) > 1:
                names = [name_of(model, "body", b) for b in moving]
                raise ModelError(f"{src}: several moving bodies under <worldbody> ({', '.join(names)}), "
                                 f"free body {name_of(model, 'body', free[0])!r} among them; pass "
                                 "root=<body> (command line: --root BODY) to choose the robot")
            chosen = free
        elif floating not in (None, False):
            if len(tops) != 1:
                raise ModelError(f"{src}: floating={floating!r} needs one body under <worldbody>, found "
                                 f"{len(tops)}; pass root=<body> (command line: --root BODY)")
            chosen = tops
        else:
            return [b for t in tops for b in _subtree(model, t)], None, "fixed"
    top = chosen[0]
    bodies = _subtree(model, top)
    if _has_free(model, top) and floating is not False:
        return bodies, top, "free"
    if floating in (None, False):
        return bodies, top, "fixed"
    if model.body_jntnum[top]:
        joints = [name_of(model, "joint", j) for j in body_joints(model, top)]
        raise ModelError(f"{src}: floating={floating!r}: root body {name_of(model, 'body', top)!r} has joints "
                         f"{joints}; a free-flyer base needs a root body without joints (or a <freejoint>)")
    return bodies, top, "body"


def _ancestors(model, b: int) -> list[int]:
    out = []
    b = int(model.body_parentid[b])
    while b > 0:
        out.append(b)
        b = int(model.body_parentid[b])
    return out


def build_graph(model, src: str, root: str | None = None, floating=None) -> tuple[nx.DiGraph, list[int], list[str]]:
    """(graph, ids of the robot's bodies, names of world-welded bodies left out) of a compiled model.

    See the module docstring for the mapping; ``root`` and ``floating`` as in
    :func:`composedyn.importers.mjcf.load_mjcf`."""
    bodies, top, kind = _select(model, src, root, floating)
    name = bytes(model.names).split(b"\0", 1)[0].decode("utf-8", "replace")
    g = new_graph(name or "mjcf", gravity=_gravity(model), source=src)
    world = name_of(model, "body", 0)
    chosen = set(bodies)
    dropped = [name_of(model, "body", b) for b in range(1, model.nbody)
               if b not in chosen and int(model.body_parentid[b]) == 0]
    if kind != "body":
        add_link(g, world)
    for b in bodies:
        _add_body(model, g, b, src)
    names = set(g.nodes)
    for b in bodies:
        up = int(model.body_parentid[b])
        parent = world if (b == top or up == 0) else name_of(model, "body", up)
        if b == top and kind == "body":
            continue
        if b == top and kind == "free":
            add_joint(g, name_of(model, "joint", int(model.body_jntadr[b])), world, name_of(model, "body", b),
                      type="floating")
            continue
        X = pose(model.body_pos[b], model.body_quat[b])
        if b == top:
            for a in _ancestors(model, b):
                X = pose(model.body_pos[a], model.body_quat[a]) @ X
        _add_joint_chain(model, g, b, parent, X, src, names, weld_free=floating is False)
    for s in range(model.nsite):
        b = int(model.site_bodyid[s])
        if b in chosen or (b == 0 and kind == "fixed" and top is None):
            _add_site(model, g, s, src)
    g.graph["root"] = check_structure(g)
    return g, bodies, dropped


def _gravity(model) -> np.ndarray:
    from composedyn.importers.mujoco_module import import_mujoco

    if int(model.opt.disableflags) & int(import_mujoco().mjtDisableBit.mjDSBL_GRAVITY):
        return np.zeros(3)
    return np.array(model.opt.gravity, dtype=float)


def _add_body(model, g: nx.DiGraph, b: int, src: str) -> None:
    """The body's link: its mass, centre of mass and inertia (about the centre, body axes)."""
    R = pose(np.zeros(3), model.body_iquat[b])[:3, :3]
    name = name_of(model, "body", b)
    if name in g:
        raise ModelError(f"{src}: body name {name!r} is used twice (bodies and sites share the frame names)")
    add_link(g, name, mass=float(model.body_mass[b]), com=np.array(model.body_ipos[b]),
             inertia=R @ np.diag(model.body_inertia[b]) @ R.T)


def _add_joint_chain(model, g: nx.DiGraph, b: int, parent: str, X: np.ndarray, src: str, names: set,
                     weld_free: bool = False) -> None:
    """Edges from ``parent`` to body ``b``: a fixed one at ``X`` (parent -> body frame) when the
    body has no joints (or only a free joint and ``weld_free``), else one per joint through
    massless links (see the module docstring)."""
    body = name_of(model, "body", b)
    joints = list(body_joints(model, b))
    if weld_free and [int(model.jnt_type[j]) for j in joints] == [FREE]:
        joints = []
    if not joints:
        add_joint(g, f"{body}::weld", parent, body, type="fixed", origin=X)
        return
    origin, anchor, node = X, np.zeros(3), parent
    for k, j in enumerate(joints):
        jname, jtype = name_of(model, "joint", j), int(model.jnt_type[j])
        if jtype not in (HINGE, SLIDE, BALL):
            raise ModelError(f"{src}: body {body!r} joint {jname!r} is {_KIND[jtype]}: a free joint is only "
                             "accepted on the robot's root body")
        axis = np.array(model.jnt_axis[j], dtype=float)
        ref = float(model.qpos0[model.jnt_qposadr[j]])
        here = np.array(model.jnt_pos[j], dtype=float) if jtype != SLIDE else np.zeros(3)
        origin = origin @ _translation(here - anchor)
        if jtype != BALL:  # a ball joint's reference is the body's pose (MuJoCo's qpos0 is the identity)
            origin = origin @ (_rotation(axis, -ref) if jtype == HINGE else _translation(-ref * axis))
        last = k == len(joints) - 1
        child = body if last and not here.any() else f"{body}::{jname}"
        if child != body:
            if child in names:
                raise ModelError(f"{src}: body {body!r} joint {jname!r}: the link name {child!r} is taken")
            add_link(g, child)
            names.add(child)
        _add_moving_joint(model, g, j, jname, node, child, origin, axis)
        origin, anchor, node = np.eye(4), here, child
    if node != body:
        add_joint(g, f"{body}::anchor", node, body, type="fixed", origin=_translation(-anchor))


def _add_moving_joint(model, g: nx.DiGraph, j: int, name: str, parent: str, child: str, origin, axis) -> None:
    """A hinge (revolute, continuous when unlimited), slide (prismatic) or ball (spherical) edge with
    its limits, damping, Coulomb friction (``frictionloss``) and armature (a ball joint's: those of
    its first degree of freedom, on each of its three)."""
    limited = bool(model.jnt_limited[j])
    lo, hi = (float(x) for x in model.jnt_range[j]) if limited else (None, None)
    hinge, dof = int(model.jnt_type[j]) == HINGE, int(model.jnt_dofadr[j])
    kind = ("revolute" if limited else "continuous") if hinge else "prismatic"
    if int(model.jnt_type[j]) == BALL:  # q: a unit quaternion, v: the angular velocity in the child frame
        if limited:
            report_suspicious(f"{name_of(model, 'body', int(model.jnt_bodyid[j]))}: ball joint {name!r} has a "
                              f"cone limit of {hi:g} rad, which is not modelled", False)
        kind, lo, hi = "spherical", None, None
    add_joint(g, name, parent, child, type=kind,
              origin=origin, axis=axis, limits=(lo, hi, None, None), damping=float(model.dof_damping[dof]),
              friction=float(model.dof_frictionloss[dof]), armature=float(model.dof_armature[dof]))


def _add_site(model, g: nx.DiGraph, s: int, src: str) -> None:
    """A site as a massless link fixed to its body; a site with the name of a body of the robot (MuJoCo
    keeps the two apart, composedyn's frames share one namespace) is the frame ``<name>::site``."""
    name, body = name_of(model, "site", s), name_of(model, "body", int(model.site_bodyid[s]))
    if name in g:
        renamed = f"{name}::site"
        if renamed in g:
            raise ModelError(f"{src}: site {name!r} has the name of a body, and {renamed!r} is taken too "
                             "(frame names must be unique)")
        report_suspicious(f"{src}: site {name!r} has the name of a body: its frame is {renamed!r}", False)
        name = renamed
    add_link(g, name)
    add_joint(g, f"{name}::site", body, name, type="fixed", origin=pose(model.site_pos[s], model.site_quat[s]))
