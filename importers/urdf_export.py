"""Kinematic graph -> URDF file, so any robot (e.g. from a DH table) can go to URDF tools.

Every link gets an ``<inertial>`` with its origin at the centre of mass
(rpy 0, the inertia tensor in link axes; zeros for massless frames); every
joint an ``<origin xyz rpy>``, ``<axis>``, ``<limit>``, ``<dynamics damping
friction>`` and ``<mimic>``.
The rotor inertia goes to a non-standard ``armature`` attribute of
``<dynamics>`` (read back by :func:`composedyn.importers.urdf.load_urdf`,
ignored by other URDF parsers).

URDF cannot say "no limit": a revolute joint without position limits is
written as ``continuous``; other absent limits (velocity, effort, one-sided
position limits, prismatic travel) are written as +-:data:`UNLIMITED`.

A floating base (``base``, see :mod:`composedyn.dynamics.floating.base`) is
written as a massless ``world`` link and a ``floating`` (or ``planar``) root
joint to the base link, placed at the base joint's origin: composedyn's
URDF reader loads it back as the same floating robot, Pinocchio's as a
free-flyer (or planar) joint.  Gravity is not part of URDF: it is written as
a comment (load the file with ``gravity=...`` when it is not (0, 0, -9.81)).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import networkx as nx
import numpy as np
from lxml import etree

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import DEFAULT_GRAVITY, is_base_joint, source_of, validate
from composedyn.importers.urdf_xml import XmlElement

UNLIMITED = 1e30


def rpy_from_matrix(R: np.ndarray) -> tuple[float, float, float]:
    """URDF (roll, pitch, yaw) with R = Rz(yaw) Ry(pitch) Rx(roll), robust near pitch = +-pi/2.

    Yaw is taken from the first column; roll and pitch then come from
    M = Rz(-yaw) R = Ry(pitch) Rx(roll), whose entries stay well conditioned
    at gimbal lock (where yaw = 0 and roll absorbs the whole rotation about x).
    """
    R = np.asarray(R, dtype=float)
    yaw = math.atan2(R[1, 0], R[0, 0]) if math.hypot(R[0, 0], R[1, 0]) > 1e-12 else 0.0
    cy, sy = math.cos(yaw), math.sin(yaw)
    M = np.array([[cy, sy, 0.0], [-sy, cy, 0.0], [0.0, 0.0, 1.0]]) @ R
    pitch = math.atan2(-M[2, 0], M[0, 0])
    roll = math.atan2(-M[1, 2], M[1, 1])
    return roll, pitch, yaw


def _fmt(values) -> str:
    return " ".join(repr(float(v) + 0.0) for v in np.atleast_1d(values))  # + 0.0: no "-0.0"


def _origin(parent: XmlElement, T: np.ndarray) -> None:
    etree.SubElement(parent, "origin", xyz=_fmt(T[:3, 3]), rpy=_fmt(rpy_from_matrix(T[:3, :3])))


def _link(root: XmlElement, name: str, d: dict) -> None:
    el = etree.SubElement(root, "link", name=name)
    I = np.asarray(d["inertia"], dtype=float)
    inertial = etree.SubElement(el, "inertial")
    etree.SubElement(inertial, "origin", xyz=_fmt(d["com"]), rpy="0.0 0.0 0.0")
    etree.SubElement(inertial, "mass", value=repr(float(d["mass"])))
    etree.SubElement(inertial, "inertia", **{f"i{a}{b}": repr(float(I[i, j])) for a, b, i, j in
                                             (("x", "x", 0, 0), ("x", "y", 0, 1), ("x", "z", 0, 2),
                                              ("y", "y", 1, 1), ("y", "z", 1, 2), ("z", "z", 2, 2))})


def _limit_attrs(jtype: str, limits) -> dict | None:
    lo, hi, vel, eff = tuple(limits or (None,) * 4)
    attrs = {"effort": repr(float(UNLIMITED if eff is None else eff)),
             "velocity": repr(float(UNLIMITED if vel is None else vel))}
    if jtype in ("revolute", "prismatic"):
        attrs["lower"] = repr(float(-UNLIMITED if lo is None else lo))
        attrs["upper"] = repr(float(UNLIMITED if hi is None else hi))
    elif jtype == "continuous" and vel is None and eff is None:
        return None
    return attrs


def _joint(root: XmlElement, parent: str, child: str, d: dict) -> None:
    jtype = d["type"]
    lo, hi = tuple(d.get("limits") or (None,) * 4)[:2]
    if jtype == "revolute" and lo is None and hi is None:
        jtype = "continuous"
    el = etree.SubElement(root, "joint", name=str(d["name"]), type=jtype)
    _origin(el, np.asarray(d["origin"], dtype=float))
    etree.SubElement(el, "parent", link=parent)
    etree.SubElement(el, "child", link=child)
    if jtype == "fixed":
        return
    etree.SubElement(el, "axis", xyz=_fmt(d["axis"]))
    attrs = _limit_attrs(jtype, d.get("limits"))
    if attrs is not None:
        etree.SubElement(el, "limit", **attrs)
    dyn = {k: repr(float(d.get(k, 0.0))) for k in ("damping", "friction")}
    if float(d.get("armature", 0.0)) != 0.0:
        dyn["armature"] = repr(float(d["armature"]))
    etree.SubElement(el, "dynamics", **dyn)
    if d.get("mimic") is not None:
        target, mult, off = d["mimic"]
        etree.SubElement(el, "mimic", joint=str(target), multiplier=repr(float(mult)), offset=repr(float(off)))


URDF_TYPES = ("revolute", "continuous", "prismatic", "fixed")
"""The graph's joint types that URDF holds (with a floating or planar joint at the root)."""


def unwritable_joints(g: nx.DiGraph) -> list[tuple[str, str]]:
    """(name, type) of the joints of ``g`` that URDF has no type for: spherical, universal and helical
    joints, and floating or planar joints below the root."""
    return [(str(d.get("name")), str(d.get("type"))) for u, v, d in g.edges(data=True)
            if d.get("type") not in URDF_TYPES and not (d.get("type") in ("floating", "planar")
                                                        and is_base_joint(g, u, v))]


def check_writable(g: nx.DiGraph, source: str | None = None) -> None:
    """ModelError naming ``source`` (default: the graph's file) and every joint URDF cannot hold."""
    bad = unwritable_joints(g)
    if not bad:
        return
    joints = ", ".join(f"{name!r} ({kind})" for name, kind in bad)
    reasons = []
    if any(kind != "helical" for _, kind in bad):
        reasons.append("URDF has no spherical or universal joint, and this writer takes floating and planar joints "
                       "only as a floating base (the root link's one joint)")
    if any(kind == "helical" for _, kind in bad):
        reasons.append("URDF has no helical (screw) joint")
    s = "s" if len(bad) > 1 else ""
    raise ModelError(f"{source or source_of(g)}: cannot be written as URDF: joint{s} {joints}; {'; '.join(reasons)}")


def urdf_string(g: nx.DiGraph, base=None) -> str:
    """The URDF XML text of kinematic graph ``g`` (validated first); ``base``: the floating base
    of a floating robot (its root joint is written, see the module docstring), or None.
    ModelError naming the joints that URDF has no type for (:func:`check_writable`)."""
    check_writable(g)
    validate(g)
    root = etree.Element("robot", name=str(g.graph.get("name", "robot")))
    src = Path(str(g.graph.get("source", "a kinematic graph"))).name.replace("--", "- -")
    root.append(etree.Comment(f" written by composedyn from {src} "))
    gravity = np.asarray(base.gravity if base is not None else g.graph.get("gravity", DEFAULT_GRAVITY), dtype=float)
    frame = "the world" if base is not None else "the root link frame"
    root.append(etree.Comment(f" gravity (not part of URDF): {_fmt(gravity)} m/s^2 in {frame} "))
    if base is not None:
        _floating_root(root, g, base)
    for name, d in g.nodes(data=True):
        _link(root, str(name), d)
    for u, v, d in g.edges(data=True):
        _joint(root, str(u), str(v), d)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="utf-8").decode()


def _floating_root(root: XmlElement, g: nx.DiGraph, base) -> None:
    """A massless world link and the floating (or planar) joint to the base link."""
    world = "world"
    while world in g:
        world = "_" + world
    etree.SubElement(root, "link", name=world)
    el = etree.SubElement(root, "joint", name=str(base.joint), type="floating" if base.kind == "free" else "planar")
    _origin(el, np.asarray(base.origin, dtype=float))
    etree.SubElement(el, "parent", link=world)
    etree.SubElement(el, "child", link=str(base.link))
    if base.kind != "free":
        etree.SubElement(el, "axis", xyz="0.0 0.0 1.0")


def to_urdf(g: nx.DiGraph, path: str | os.PathLike, base=None) -> Path:
    """Write kinematic graph ``g`` (with its floating ``base``, if any) as a URDF file at ``path``;
    return the path.

    Gravity is not part of URDF: it is written as a comment only (see :func:`gravity_note`).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"to_urdf: path must be a file name (str or os.PathLike), got {type(path).__name__}")
    p = Path(path)
    text = urdf_string(g, base)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise OSError(e.errno, f"to_urdf: cannot write {p}: {e.strerror}") from None
    return p


def gravity_note(g: nx.DiGraph, base=None) -> str:
    """"" when URDF readers' gravity (0, 0, -9.81) is the robot's, else a sentence saying how to
    load the written file (``gravity=...``)."""
    gravity = np.asarray(base.gravity if base is not None else g.graph.get("gravity", DEFAULT_GRAVITY), dtype=float)
    if np.array_equal(gravity, np.asarray(DEFAULT_GRAVITY)):
        return ""
    return (f"gravity {[float(x) for x in gravity]} m/s^2 is not part of URDF (readers assume "
            f"{list(DEFAULT_GRAVITY)}): load it with gravity=...")
