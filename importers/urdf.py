"""URDF -> kinematic graph, with lxml alone (no mesh or scene-graph library).

The XML is parsed and checked first by :mod:`composedyn.importers.urdf_xml`
(hardened parser, names, references, joint types, every number); the checked
element tree is then read into the graph schema of
:mod:`composedyn.dynamics.schema`.  Any failure is a
:class:`~composedyn.ModelError` naming the file and the element.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, check_structure, new_graph
from composedyn.importers.dh import rpy_matrix
from composedyn.importers.urdf_export import UNLIMITED
from composedyn.importers.urdf_xml import check_robot, numbers, parse_robot_xml


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

    The XML is parsed and checked by :mod:`composedyn.importers.urdf_xml`;
    the graph is then built from the checked element tree.  Only the elements
    dynamics needs are read (``<inertial>``, joint ``<origin>``, ``<axis>``,
    ``<limit>``, ``<dynamics>``, ``<mimic>``); geometry, materials,
    transmissions and Gazebo tags are ignored.

    Parameters
    ----------
    path_or_xml : path to a ``.urdf`` file, or the XML itself (str or bytes).
    gravity : (3,) gravity acceleration in the root link frame, m/s^2.

    Returns
    -------
    networkx.DiGraph following :mod:`composedyn.dynamics.schema`, links and
    joints in document order.  ``<origin xyz rpy>`` is the transform
    ``T = [Rz(yaw) Ry(pitch) Rx(roll), xyz]`` (URDF convention); the
    ``<inertial>`` inertia is rotated into link axes, ``R I R^T``.  An absent
    ``<axis>`` is (1, 0, 0), (0, 0, 1) on a planar joint (the xy plane, as Pinocchio reads it);
    absent limit attributes, and limits of magnitude
    1e30 or more (how :mod:`composedyn.importers.urdf_export` writes "no limit"),
    are None (a continuous joint keeps only velocity and effort).  Links without ``<inertial>`` get
    zero mass and the node attribute ``inertial=False`` (listed by the
    schema's ModelWarning when they move).  ``<dynamics damping friction>``
    become viscous and Coulomb friction; a non-standard ``armature``
    attribute on ``<dynamics>`` is honoured.  ``<mimic>`` is kept on the edge
    as (joint, multiplier, offset), defaults 1 and 0.

    Raises
    ------
    ModelError
        naming the file and element: malformed XML, DOCTYPE/entities, missing
        or duplicate names, unknown joint types, missing
        links, two parents, several roots, cycles, non-finite numbers, zero
        axes, negative mass.
    """
    text, src = _read(path_or_xml)
    root = parse_robot_xml(text, src)
    check_robot(root, src)
    g = new_graph(root.get("name"), gravity=gravity, source=src)
    for el in root.findall("link"):
        _add_urdf_link(g, el, src)
    for el in root.findall("joint"):
        _add_urdf_joint(g, el, src)
    g.graph["root"] = check_structure(g)
    return g


def _origin(el, src: str, where: str) -> np.ndarray:
    """(4, 4) transform of the ``<origin>`` child of ``el`` (identity when absent)."""
    T = np.eye(4)
    o = el.find("origin")
    if o is not None:
        T[:3, 3] = numbers(o, "xyz", src, where, 3, default=(0.0, 0.0, 0.0))
        T[:3, :3] = rpy_matrix(numbers(o, "rpy", src, where, 3, default=(0.0, 0.0, 0.0)))
    return T


def _add_urdf_link(g: nx.DiGraph, el, src: str) -> None:
    """One node; the inertia is rotated from the <inertial> frame into link axes."""
    name, inertial = el.get("name"), el.find("inertial")
    if inertial is None:
        add_link(g, name)
        g.nodes[name]["inertial"] = False
        return
    where = f"link {name!r}"
    T = _origin(inertial, src, where)
    v = {k: numbers(inertial.find("inertia"), k, src, where) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    R = T[:3, :3]
    add_link(g, name, mass=numbers(inertial.find("mass"), "value", src, where), com=T[:3, 3], inertia=R @ inertia @ R.T)


def _add_urdf_joint(g: nx.DiGraph, el, src: str) -> None:
    """One edge parent -> child; the numbers were checked by ``check_robot``."""
    name, jtype = el.get("name"), el.get("type")
    where = f"joint {name!r}"
    limits = (None, None, None, None)
    lim = el.find("limit")
    if lim is not None:
        limits = tuple(numbers(lim, k, src, where, allow_inf=True) if lim.get(k) is not None else None
                       for k in ("lower", "upper", "velocity", "effort"))
        limits = tuple(None if x is not None and abs(x) >= UNLIMITED else x for x in limits)
        if jtype == "continuous":
            limits = (None, None) + limits[2:]
    axis = el.find("axis")
    default_axis = (0.0, 0.0, 1.0) if jtype == "planar" else (1.0, 0.0, 0.0)  # a planar joint: Pinocchio's xy plane
    dyn = el.find("dynamics")
    coeff = {k: 0.0 if dyn is None else numbers(dyn, k, src, where, default=0.0)
             for k in ("damping", "friction", "armature")}
    mimic = el.find("mimic")
    if mimic is not None:
        mimic = (mimic.get("joint"), numbers(mimic, "multiplier", src, where, default=1.0),
                 numbers(mimic, "offset", src, where, default=0.0))
    add_joint(
        g,
        name,
        el.find("parent").get("link"),
        el.find("child").get("link"),
        type=jtype,
        origin=_origin(el, src, where),
        axis=default_axis if axis is None else numbers(axis, "xyz", src, where, 3, default=default_axis),
        limits=limits,
        mimic=mimic,
        **coeff,
    )
