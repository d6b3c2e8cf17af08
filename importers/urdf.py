"""URDF -> kinematic graph, through yourdfpy (meshes and scene graph off).

The XML is parsed and checked first by :mod:`composedyn.importers.urdf_xml`
(hardened parser, names, references, joint types, every number); the checked
element tree is then handed to yourdfpy's parser, whose objects are turned
into the graph schema of :mod:`composedyn.dynamics.schema`.  Any failure is a
:class:`~composedyn.ModelError` naming the file and the element.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np

from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, check_structure, new_graph
from composedyn.dynamics.errors import ModelError
from composedyn.importers.urdf_xml import check_robot, parse_robot_xml, strip_unused


def _read(path_or_xml: str | bytes | os.PathLike) -> tuple[bytes, str]:
    """Return (XML bytes, source name used in messages) from a path or an XML string."""
    if isinstance(path_or_xml, (bytes, bytearray)):
        return bytes(path_or_xml), "<urdf string>"
    if isinstance(path_or_xml, str) and path_or_xml.lstrip("\ufeff \t\r\n").startswith("<"):
        return path_or_xml.lstrip("\ufeff \t\r\n").encode("utf-8"), "<urdf string>"
    if not isinstance(path_or_xml, (str, os.PathLike)):
        raise ModelError(f"load_urdf expects a path or an XML string, got {type(path_or_xml).__name__}")
    p = Path(path_or_xml)
    if p.is_dir():
        raise ModelError(f"{p}: is a directory, not a URDF file")
    if not p.is_file():
        raise ModelError(f"{p}: no such URDF file")
    try:
        return p.read_bytes(), str(p)
    except OSError as e:
        raise ModelError(f"{p}: cannot read URDF file: {e.strerror}") from None


def load_urdf(path_or_xml: str | bytes | os.PathLike, gravity=DEFAULT_GRAVITY) -> nx.DiGraph:
    """Read a URDF file path or XML string into a kinematic graph.

    Parameters
    ----------
    path_or_xml : path to a ``.urdf`` file, or the XML itself (str or bytes).
    gravity : (3,) gravity acceleration in the root link frame, m/s^2.

    Returns
    -------
    networkx.DiGraph following :mod:`composedyn.dynamics.schema`.  Links
    without ``<inertial>`` get zero mass and the node attribute
    ``inertial=False`` (listed by the schema's ModelWarning when they move).
    ``<dynamics damping friction>`` become viscous and Coulomb friction; a
    non-standard ``armature`` attribute on ``<dynamics>`` is honoured.
    ``<mimic>`` is kept on the edge as (joint, multiplier, offset).

    Raises
    ------
    ModelError
        naming the file and element: malformed XML, DOCTYPE/entities, missing
        or duplicate names, unknown, floating or planar joint types, missing
        links, two parents, several roots, cycles, non-finite numbers, zero
        axes, negative mass.
    """
    text, src = _read(path_or_xml)
    root = parse_robot_xml(text, src)
    check_robot(root, src)
    strip_unused(root)
    from yourdfpy import URDF  # local import: yourdfpy pulls in trimesh

    try:
        robot = URDF(robot=URDF._parse_robot(root), build_scene_graph=False, load_meshes=False).robot
    except Exception as e:  # yourdfpy raises bare ValueError/KeyError/TypeError
        raise ModelError(f"{src}: yourdfpy cannot parse the URDF: {type(e).__name__}: {e}") from None
    g = new_graph(robot.name, gravity=gravity, source=src)
    for link in robot.links:
        _add_urdf_link(g, link)
    raw = {el.get("name"): el for el in root.findall("joint")}
    for joint in robot.joints:
        _add_urdf_joint(g, joint, raw[joint.name])
    g.graph["root"] = check_structure(g)
    return g


def _add_urdf_link(g: nx.DiGraph, link) -> None:
    """One node; the inertia is rotated from the <inertial> frame into link axes."""
    inertial = link.inertial
    if inertial is None:
        add_link(g, link.name)
        g.nodes[link.name]["inertial"] = False
        return
    T = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
    R = T[:3, :3]
    add_link(g, link.name, mass=float(inertial.mass), com=T[:3, 3], inertia=R @ np.asarray(inertial.inertia, float) @ R.T)


def _add_urdf_joint(g: nx.DiGraph, joint, raw) -> None:
    """One edge parent -> child; numbers were checked by ``check_robot``."""
    lim = joint.limit
    limits = (None, None, None, None)
    if lim is not None:
        limits = (lim.lower, lim.upper, lim.velocity, lim.effort)
        if joint.type == "continuous":
            limits = (None, None, lim.velocity, lim.effort)
    dyn = raw.find("dynamics")
    coeff = {k: 0.0 if dyn is None else float(dyn.get(k, 0.0)) for k in ("damping", "friction", "armature")}
    mimic = None
    if joint.mimic is not None:
        mimic = (joint.mimic.joint, float(joint.mimic.multiplier), float(joint.mimic.offset))
    add_joint(
        g,
        joint.name,
        joint.parent,
        joint.child,
        type=joint.type,
        origin=np.eye(4) if joint.origin is None else np.asarray(joint.origin, float),
        axis=np.asarray(joint.axis, float),
        limits=limits,
        mimic=mimic,
        **coeff,
    )
