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
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import networkx as nx
import numpy as np
from lxml import etree

from composedyn.dynamics.schema import validate

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


def _origin(parent: etree._Element, T: np.ndarray) -> None:
    etree.SubElement(parent, "origin", xyz=_fmt(T[:3, 3]), rpy=_fmt(rpy_from_matrix(T[:3, :3])))


def _link(root: etree._Element, name: str, d: dict) -> None:
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


def _joint(root: etree._Element, parent: str, child: str, d: dict) -> None:
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


def urdf_string(g: nx.DiGraph) -> str:
    """The URDF XML text of kinematic graph ``g`` (validated first)."""
    validate(g)
    root = etree.Element("robot", name=str(g.graph.get("name", "robot")))
    src = Path(str(g.graph.get("source", "a kinematic graph"))).name.replace("--", "- -")
    root.append(etree.Comment(f" written by composedyn from {src} "))
    gravity = np.asarray(g.graph.get("gravity", (0.0, 0.0, -9.81)), dtype=float)
    root.append(etree.Comment(f" gravity (not part of URDF): {_fmt(gravity)} m/s^2 in the root link frame "))
    for name, d in g.nodes(data=True):
        _link(root, str(name), d)
    for u, v, d in g.edges(data=True):
        _joint(root, str(u), str(v), d)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="utf-8").decode()


def to_urdf(g: nx.DiGraph, path: str | os.PathLike) -> Path:
    """Write kinematic graph ``g`` as a URDF file at ``path``; return the path.

    Gravity is not part of URDF and is not written.
    """
    p = Path(path)
    text = urdf_string(g)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise OSError(e.errno, f"to_urdf: cannot write {p}: {e.strerror}") from None
    return p
