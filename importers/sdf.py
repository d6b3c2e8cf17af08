"""SDFormat 1.4-1.11 -> kinematic graph, with lxml alone (no Gazebo, no libsdformat).

The files are read by :mod:`composedyn.importers.sdf_model` (models, nested models, includes,
names, the frame table of :mod:`composedyn.importers.sdf_pose`) and their numbers by
:mod:`composedyn.importers.sdf_joint`; this module assembles the graph of
:mod:`composedyn.dynamics.schema`:

* a ``world`` link is the root of a fixed robot: a model attached to the world by joints whose
  parent is ``world``, a ``<static>`` model (its links welded where they are; a moving joint in it
  is refused, as libsdformat refuses it), or a model loaded
  with ``floating=False`` (its canonical link welded where it is, by joint ``world_joint``, and
  the root link of every other separate tree of the model by ``world_joint_2``, ...);
* any other model is free (as in Gazebo and Drake): the root link of its joint tree gets a
  ``floating`` joint ``root_joint`` from ``world``; the base pose in the world is part of the
  configuration, the model's ``<pose>`` is an initial state, not part of the robot.
  ``floating=True`` also frees a model attached to the world by one fixed joint.  (A joint of the
  file named ``root_joint`` or ``world_joint`` keeps its name; the added one gets a ``_`` prefix.)
* a joint whose frame is not its child link's frame (SDFormat allows any joint pose) becomes a
  moving joint to a massless frame named after the joint, then a fixed joint ``<joint>::fixed`` to
  the child link, so every link keeps its own frame; a joint met from its child side while walking
  the tree from the root (e.g. when the welded canonical link is not the tree's root) is reversed:
  axis negated, the same coordinate;
* ``<frame>`` elements become massless links welded to the link they are attached to, so
  ``robot.frame_pose(q, "frame")`` works.
"""

from __future__ import annotations

import os

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, new_graph, report_suspicious
from composedyn.importers.sdf_joint import Joint, inertial, joint
from composedyn.importers.sdf_model import WORLD, Description, Reader
from composedyn.importers.sdf_pose import inverse
from composedyn.importers.sdf_xml import read_source


def looks_like_sdf(source) -> bool:
    """True for XML (a string or a file) whose root is ``<sdf>``, and for a ``.sdf``/``.world`` path
    whose content is not another description (root ``<robot>`` or ``<mujoco>``)."""
    from composedyn.importers.mjcf import xml_root_tag

    tag = xml_root_tag(source)
    if tag == "sdf":
        return True
    s = str(source)
    return (tag not in ("robot", "mujoco") and not s.lstrip("\ufeff \t\r\n").startswith("<")
            and os.path.splitext(s)[1].lower() in (".sdf", ".world"))


def load_sdf(path_or_xml, package_dirs=(), floating=None, model: str | None = None) -> nx.DiGraph:
    """Read an SDFormat file path or XML string into a kinematic graph.

    Parameters
    ----------
    path_or_xml : a ``.sdf`` (or world) file, or the XML itself.
    package_dirs : folders searched for ``<include>`` URIs ``model://name`` before the environment
        variables GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH and SDF_PATH.
    floating : None -- free unless attached to the world (a joint with parent ``world``, or
        ``<static>``); True -- free, also a model attached by one fixed joint to the world (that
        joint is removed); False -- fixed: the canonical link of a free model is welded at its pose
        (and the root link of each other separate tree of the model at its own).
    model : for a ``<world>`` with several models, the one to load.

    Returns
    -------
    networkx.DiGraph (schema of :mod:`composedyn.dynamics.schema`): link frames as in the file,
    gravity from ``<world><gravity>`` (else (0, 0, -9.81)) in world axes, a ``world`` root link for
    a fixed robot or a ``floating`` root joint for a free one (see the module docstring).

    Raises
    ------
    ModelError naming the file, element and what is wrong (malformed XML, DTDs/entities, unknown or
    multi-DOF joint types, missing mass or inertia, negative mass, dangling names, pose cycles,
    include cycles, unresolved URIs, kinematic loops, links joined to nothing).
    """
    text, src, path = read_source(path_or_xml)
    d = Reader(package_dirs).read(text, src, path, model)
    joints = [joint(d, e) for e in d.joints.values()]
    inertials = {name: inertial(e) for name, e in d.links.items()}
    return _assemble(d, joints, inertials, floating)


def _assemble(d: Description, joints: list[Joint], inertials: dict, floating) -> nx.DiGraph:
    src = d.src
    free = floating in (True, "free", "planar")
    attached = [j for j in joints if j.parent == WORLD]
    if d.static and free:
        raise ModelError(f"{src}: model {d.name!r} is <static>; it cannot be loaded floating")
    moving = [j for j in joints if j.type != "fixed"] if d.static else []
    if moving:
        raise ModelError(f"{moving[0].where}: a {moving[0].type} joint in static model {d.name!r} (moving joints: "
                         f"{[j.name for j in moving]}); a static model's links are welded where they are: only "
                         "fixed joints are permitted (as libsdformat)")
    if attached and free:
        if len(attached) != 1 or attached[0].type != "fixed":
            raise ModelError(f"{src}: model {d.name!r} is attached to the world by joint(s) "
                             f"{[j.name for j in attached]}; floating=True frees only a model welded by one fixed "
                             "joint")
        joints = [j for j in joints if j is not attached[0]]
        attached = []
    g = new_graph(d.name, gravity=DEFAULT_GRAVITY if d.gravity is None else d.gravity, source=src)
    add_link(g, WORLD)
    for name, data in inertials.items():
        if data is None:
            add_link(g, name)
            g.nodes[name]["inertial"] = False
        else:
            add_link(g, name, **data)
    adjacency: dict[str, list] = {n: [] for n in g.nodes}
    _connect(src, joints, adjacency)
    moving_base = False
    if attached:
        starts = [WORLD]
    elif d.static:
        starts = _welds(d, g, joints, adjacency)
    elif floating is False:
        starts = _welds(d, g, joints, adjacency, roots=True)
    else:
        root = _tree_root(d, joints, adjacency)
        add_joint(g, _unused("root_joint", joints), WORLD, root, type="floating")
        starts, moving_base = [root], True
    _walk(g, starts, adjacency)
    missing = [n for n in inertials if g.in_degree(n) == 0]
    if missing:
        reach = "the world" if not moving_base else f"the base link {starts[0]!r}"
        hint = "; floating=False welds each part where the file puts it" if moving_base else ""
        raise ModelError(f"{src}: links {missing} of model {d.name!r} are not joined to {reach}; composedyn loads "
                         f"one tree (free bodies and separate parts are not supported){hint}")
    _frames(d, g)
    _check_inertials(d, g, moving_base)
    springs = [j.name for j in joints if j.spring]
    if springs:
        report_suspicious(f"{src}: joint springs (<spring_stiffness>) are ignored on joints {springs}", False)
    g.graph["root"] = WORLD
    return g


def _unused(name: str, joints: list[Joint]) -> str:
    """``name``, or ``name`` with underscores in front while a joint of the file has it."""
    taken = {j.name for j in joints}
    while name in taken:
        name = "_" + name
    return name


def _connect(src: str, joints: list[Joint], adjacency: dict) -> None:
    """Undirected adjacency (in document order); a joint closing a loop is refused."""
    group = {n: n for n in adjacency}

    def find(n):
        while group[n] != n:
            group[n] = group[group[n]]
            n = group[n]
        return n

    for j in joints:
        a, b = find(j.parent), find(j.child)
        if a == b:
            raise ModelError(f"{j.where}: closes a kinematic loop between {j.parent!r} and {j.child!r} "
                             "(loop closures in SDFormat are not supported)")
        group[a] = b
        adjacency[j.parent].append((j, True))
        adjacency[j.child].append((j, False))


def _tree_root(d: Description, joints: list[Joint], adjacency: dict) -> str:
    """The link without a parent joint in the canonical link's tree (the canonical link if several)."""
    tree, stack = [], [d.canonical]
    while stack:
        n = stack.pop()
        if n not in tree:
            tree.append(n)
            stack += [j.child if fwd else j.parent for j, fwd in adjacency[n]]
    children = {j.child for j in joints}
    roots = [n for n in d.links if n in tree and n not in children]
    return d.canonical if d.canonical in roots or not roots else roots[0]


def _welds(d: Description, g: nx.DiGraph, joints: list[Joint], adjacency: dict, roots: bool = False) -> list:
    """Every separate tree of the model welded to the world where it is (joints ``world_joint``,
    ``world_joint_2``, ...): the canonical link's tree at the canonical link, every other tree at its
    first link in the file (a static model) or, with ``roots``, at its root link, the one that is
    no joint's child (``floating=False``); returns the welded links."""
    children = {j.child for j in joints}
    seen, starts = set(), []
    for n in [d.canonical] + list(d.links):
        if n in seen:
            continue
        part, stack = [], [n]
        while stack:
            m = stack.pop()
            if m not in seen:
                seen.add(m)
                part.append(m)
                stack += [j.child if fwd else j.parent for j, fwd in adjacency[m]]
        if roots and starts:
            n = next((m for m in d.links if m in part and m not in children), n)
        starts.append(n)
        name = _unused("world_joint" if len(starts) == 1 else f"world_joint_{len(starts)}", joints)
        add_joint(g, name, WORLD, n, type="fixed", origin=d.frames.world(n))
    return starts


def _walk(g: nx.DiGraph, starts: list, adjacency: dict) -> None:
    """Add every joint reached from ``starts``, reversed when met from its child side."""
    done, stack = set(), list(reversed(starts))
    while stack:
        n = stack.pop()
        todo = []
        for j, forward in adjacency[n]:
            if j.name in done:
                continue
            done.add(j.name)
            other = j.child if forward else j.parent
            _edge(g, n, other, j, forward)
            todo.append(other)
        stack += reversed(todo)


def _edge(g: nx.DiGraph, parent: str, child: str, j: Joint, forward: bool) -> None:
    if j.type == "fixed":
        X = j.X_PJ @ j.X_JC
        add_joint(g, j.name, parent, child, type="fixed", origin=X if forward else inverse(X))
        return
    if not forward and j.type in ("spherical", "universal", "helical"):
        raise ModelError(f"{j.where}: its child link {j.child!r} is nearer the root than its parent "
                         f"{j.parent!r}; a {j.type} joint is taken only from parent to child")
    origin, axis, post = (j.X_PJ, j.axis, j.X_JC) if forward else (inverse(j.X_JC), -j.axis, inverse(j.X_PJ))
    kw = dict(type=j.type, axis=axis, limits=j.limits, damping=j.damping, friction=j.friction,
              armature=j.armature, mimic=j.mimic)
    if j.type == "universal":
        kw["axis2"] = j.axis2
    if j.type == "helical":
        kw["pitch"] = j.pitch
    if np.abs(post - np.eye(4)).max() <= 1e-12:
        add_joint(g, j.name, parent, child, origin=origin, **kw)
        return
    mid = j.name if forward else f"{j.name}::reversed"
    if mid in g:
        mid = f"{j.name}::joint_frame"
    add_link(g, mid)
    add_joint(g, j.name, parent, mid, origin=origin, **kw)
    add_joint(g, f"{j.name}::fixed", mid, child, type="fixed", origin=post)


def _frames(d: Description, g: nx.DiGraph) -> None:
    """``<frame>`` elements as massless links welded to the link they ride on."""
    for name, e in d.frame_elements.items():
        link = d.link_of(e.key, e.where)
        if link == WORLD or name in g:
            continue
        add_link(g, name)
        add_joint(g, name, link, name, type="fixed", origin=d.frames.relative(e.key, link))


def _check_inertials(d: Description, g: nx.DiGraph, free: bool) -> None:
    """A moving link without ``<inertial>`` is refused (SDFormat would give it 1 kg, 1 kg m^2)."""
    still = set() if free else _welded(g)
    moving = [n for n, a in g.nodes(data=True) if a.get("inertial") is False and n not in still]
    if moving:
        base = next(iter(g.successors(WORLD))) if free else None
        hint = "; it is the free base: floating=False welds it" if moving[0] == base else ""
        raise ModelError(f"{d.links[moving[0]].where}: link {moving[0]!r} has no <inertial> but moves "
                         f"(links without <inertial>: {moving}); SDFormat's defaults (1 kg, 1 kg m^2) are not "
                         f"assumed: give <mass> and <inertia>{hint}")


def _welded(g: nx.DiGraph) -> set:
    from composedyn.dynamics.schema import welded_to_root

    return welded_to_root(g, WORLD)
