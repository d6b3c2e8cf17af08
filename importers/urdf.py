"""URDF -> kinematic graph, through yourdfpy (meshes and scene graph off).

The XML is parsed here first with a hardened lxml parser (no DTD loading, no
entity expansion, no network), so external and exponentially nested entities
can neither read files nor exhaust memory; the checked element tree is then
handed to yourdfpy's parser.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np
from lxml import etree

from composedyn.dynamics.schema import add_joint, add_link, new_graph
from composedyn.errors import ModelError

UNSUPPORTED = {"floating": "floating", "planar": "planar"}


def _parse_xml(text: bytes, src: str):
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_blank_text=True
    )
    try:
        root = etree.fromstring(text, parser=parser)
    except etree.XMLSyntaxError as e:
        raise ModelError(f"{src}: malformed XML: {e}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.externalDTD is not None or docinfo.doctype:
        raise ModelError(f"{src}: <!DOCTYPE> and entity declarations are not allowed in URDF")
    if root.iter(etree.Entity) is not None and any(True for _ in root.iter(etree.Entity)):
        raise ModelError(f"{src}: XML entity references are not allowed in URDF")
    etree.strip_tags(root, etree.Comment)
    if root.tag != "robot":
        raise ModelError(f"{src}: root element is <{root.tag}>, expected <robot>")
    if not root.get("name"):
        raise ModelError(f"{src}: <robot> element has no 'name' attribute")
    return root


def _read(path_or_xml: str | os.PathLike) -> tuple[bytes, str]:
    """Return (XML bytes, source name) from a path or an XML string."""
    if isinstance(path_or_xml, (bytes, bytearray)):
        return bytes(path_or_xml), "<urdf string>"
    s = str(path_or_xml)
    if s.lstrip().startswith("<"):
        return s.encode(), "<urdf string>"
    p = Path(s)
    if not p.is_file():
        raise ModelError(f"{s}: no such URDF file")
    return p.read_bytes(), str(p)


def _raw_joint(root, name: str):
    for j in root.findall("joint"):
        if j.get("name") == name:
            return j
    return None


def _float_attr(el, key: str, src: str, where: str, default: float = 0.0) -> float:
    if el is None or el.get(key) is None:
        return default
    try:
        return float(el.get(key))
    except ValueError:
        raise ModelError(f"{src}: {where} has non-numeric {key}={el.get(key)!r}") from None


def load_urdf(path_or_xml: str | os.PathLike, gravity=(0.0, 0.0, -9.81)) -> nx.DiGraph:
    """Read a URDF file path or XML string into a kinematic graph.

    Links without ``<inertial>`` get zero mass.  ``<dynamics damping friction>``
    become the joint's viscous and Coulomb friction; a non-standard
    ``armature`` attribute on ``<dynamics>`` is honoured.  ``<mimic>`` is kept
    on the edge.  Floating and planar joints raise ModelError.
    """
    text, src = _read(path_or_xml)
    root = _parse_xml(text, src)
    from yourdfpy import URDF  # local import: yourdfpy pulls in trimesh

    for tag in ("link", "joint"):
        for el in root.findall(tag):
            if not el.get("name"):
                raise ModelError(f"{src}: a <{tag}> element has no 'name' attribute")
    for el in root.findall("joint"):
        for sub in ("parent", "child"):
            if el.find(sub) is None or not el.find(sub).get("link"):
                raise ModelError(f"{src}: joint {el.get('name')!r} has no <{sub} link=...>")
    try:
        robot = URDF(robot=URDF._parse_robot(root), build_scene_graph=False, load_meshes=False).robot
    except ModelError:
        raise
    except Exception as e:  # yourdfpy raises bare ValueError/KeyError/TypeError
        raise ModelError(f"{src}: cannot parse URDF: {type(e).__name__}: {e}") from None
    g = new_graph(robot.name, gravity=gravity, source=src)
    for link in robot.links:
        _add_urdf_link(g, link, src)
    for joint in robot.joints:
        _add_urdf_joint(g, joint, _raw_joint(root, joint.name), src)
    return g


def _add_urdf_link(g: nx.DiGraph, link, src: str) -> None:
    inertial = link.inertial
    if inertial is None:
        add_link(g, link.name)
        return
    T = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
    I = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, float)
    m = 0.0 if inertial.mass is None else float(inertial.mass)
    R = T[:3, :3]
    add_link(g, link.name, mass=m, com=T[:3, 3], inertia=R @ I @ R.T)


def _add_urdf_joint(g: nx.DiGraph, joint, raw, src: str) -> None:
    where = f"joint {joint.name!r}"
    if joint.type in UNSUPPORTED:
        raise ModelError(f"{src}: {where} is {joint.type}; floating and planar joints are not supported yet")
    for end in (joint.parent, joint.child):
        if end not in g:
            raise ModelError(f"{src}: {where} names missing link {end!r}")
    if g.has_edge(joint.parent, joint.child) or g.in_degree(joint.child) > 0:
        raise ModelError(f"{src}: {where}: link {joint.child!r} already has a parent joint")
    lim = joint.limit
    limits = (None, None, None, None)
    if lim is not None:
        limits = (lim.lower, lim.upper, lim.velocity, lim.effort)
        if joint.type == "continuous":
            limits = (None, None, lim.velocity, lim.effort)
    dyn = raw.find("dynamics") if raw is not None else None
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
        axis=np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), float),
        limits=limits,
        damping=_float_attr(dyn, "damping", src, where),
        friction=_float_attr(dyn, "friction", src, where),
        armature=_float_attr(dyn, "armature", src, where),
        mimic=mimic,
    )
