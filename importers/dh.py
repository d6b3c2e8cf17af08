"""Denavit-Hartenberg tables -> kinematic graph.

Two conventions, for row i with joint variable q_i (``theta`` is the joint
offset of a revolute joint, ``d`` the offset of a prismatic one):

* ``"standard"`` (Denavit & Hartenberg 1955; Paul 1981; Corke "DH"): link
  frame i sits at the *distal* end of link i and
  ``T_{i-1,i} = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; joint i moves about
  z_{i-1}.
* ``"modified"`` (Craig 1986; Corke "MDH"): link frame i sits on joint i and
  ``T_{i-1,i} = Rx(alpha_i) Tx(a_i) Rz(theta_i) Tz(d_i)``; joint i moves about z_i.

Graph representation (link ``name_i`` below is the row's ``name``, default
``link{i}``; joint ``jname_i`` its ``joint_name``, default ``joint{i}``):

* modified: joint ``jname_i`` (axis z) from ``name_{i-1}`` to ``name_i`` with
  origin ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``; link ``name_i`` *is* DH frame i.
* standard: joint ``jname_i`` (axis z) from ``name_{i-1}`` to a massless link
  ``name_i + "_proximal"`` with origin ``Rz(theta) Tz(d)`` (the frame of
  joint i turning with link i), then a fixed joint ``jname_i + "_dh"`` with
  origin ``Tx(a) Rx(alpha)`` to link ``name_i``, which *is* DH frame i.  The
  compiler merges the two links into one body.

In both conventions the row's mass, centre of mass and inertia (about the
centre of mass) are given in DH frame i, and are stored unchanged on link
``name_i``, whose frame is DH frame i.  Link ``base_link`` (default
``link0``) is DH frame 0; an optional ``base`` transform places it in a root
link ``world``; an optional ``tool`` transform adds a fixed link ``tool_name``
after the last frame.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import DEFAULT_GRAVITY, add_joint, add_link, new_graph
from composedyn.importers.dh_rows import array, check_rows

CONVENTIONS = ("standard", "modified")
ANGLE_UNITS = {"radians": 1.0, "degrees": math.pi / 180.0}


def rot_x(t: float) -> np.ndarray:
    """Homogeneous rotation about x by t radians (4, 4)."""
    c, s = math.cos(t), math.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def rot_z(t: float) -> np.ndarray:
    """Homogeneous rotation about z by t radians (4, 4)."""
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def trans(x: float = 0.0, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    """Homogeneous translation (4, 4)."""
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def dh_transform(a: float, alpha: float, d: float, theta: float, convention: str = "standard") -> np.ndarray:
    """T_{i-1,i} (4, 4) of one DH row; theta and d include the joint variable."""
    if convention == "standard":
        return rot_z(theta) @ trans(z=d) @ trans(x=a) @ rot_x(alpha)
    if convention == "modified":
        return rot_x(alpha) @ trans(x=a) @ rot_z(theta) @ trans(z=d)
    raise ModelError(f"<dh table>: unknown convention {convention!r}; expected 'standard' or 'modified'")


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF roll-pitch-yaw rotation Rz(yaw) Ry(pitch) Rx(roll) (3, 3)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def pose(value: Any, src: str, where: str, angle_scale: float = 1.0) -> np.ndarray:
    """A 4x4 transform from a 4x4 array or a table {xyz = [...], rpy = [...]}."""
    if isinstance(value, Mapping):
        bad = [k for k in value if k not in ("xyz", "rpy")]
        if bad:
            raise ModelError(f"{src}: {where}: unknown key {bad[0]!r} (allowed: xyz, rpy)")
        T = np.eye(4)
        T[:3, 3] = array(src, f"{where} xyz", value.get("xyz", (0.0, 0.0, 0.0)), ((3,),))
        T[:3, :3] = rpy_matrix(angle_scale * array(src, f"{where} rpy", value.get("rpy", (0.0, 0.0, 0.0)), ((3,),)))
        return T
    T = array(src, where, value, ((4, 4),))
    R = T[:3, :3]
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0 or np.abs(T[3] - (0, 0, 0, 1)).max() > 0:
        raise ModelError(f"{src}: {where} is not a rigid transform (proper rotation, last row 0 0 0 1)")
    return T


def dh_graph(
    rows: Sequence[Mapping],
    convention: str = "standard",
    name: str = "dh_robot",
    gravity=DEFAULT_GRAVITY,
    base=None,
    tool=None,
    tool_name: str = "tool",
    base_link: str = "link0",
    angles: str = "radians",
    source: str | os.PathLike | None = None,
) -> nx.DiGraph:
    """Kinematic graph of a DH table (see the module docstring for the layout).

    ``rows``: list of row dicts (:mod:`composedyn.importers.dh_rows`);
    ``convention``: "standard" or "modified"; ``base``/``tool``: 4x4 or
    {xyz, rpy}; ``angles``: "radians" or "degrees" for alpha, theta, rpy and
    revolute limits (lower, upper, velocity).  Lengths in metres.
    """
    src = str(source) if source is not None else "<dh table>"
    if convention not in CONVENTIONS:
        raise ModelError(f"{src}: unknown convention {convention!r}; expected 'standard' or 'modified'")
    if angles not in ANGLE_UNITS:
        raise ModelError(f"{src}: unknown angle unit {angles!r}; expected 'radians' or 'degrees'")
    for key, value in (("name", name), ("tool_name", tool_name), ("base_link", base_link)):
        if not isinstance(value, str) or not value.strip():
            raise ModelError(f"{src}: {key} must be a non-empty string, got {value!r}")
    scale = ANGLE_UNITS[angles]
    rows = [to_radians(r, scale) for r in check_rows(rows, src)]
    g = new_graph(str(name), gravity=array(src, "gravity", gravity, ((3,),)), source=src)
    add_link(g, base_link)
    if base is not None:
        add_link(g, "world")
        add_joint(g, "base_joint", "world", base_link, type="fixed", origin=pose(base, src, "base", scale))
    parent = base_link
    for i, row in enumerate(rows, start=1):
        parent = _add_row(g, src, i, row, parent, convention)
    if tool is not None:
        add_link(g, tool_name)
        add_joint(g, f"{tool_name}_joint", parent, tool_name, type="fixed", origin=pose(tool, src, "tool", scale))
    return g


def to_radians(row: dict, scale: float) -> dict:
    """A checked row (:func:`check_rows`) with alpha, theta and revolute limits times ``scale``."""
    if scale == 1.0:
        return row
    out = dict(row, alpha=row["alpha"] * scale, theta=row["theta"] * scale)
    if row["joint"] == "revolute":
        out["limits"] = tuple(None if v is None else v * scale for v in row["limits"][:3]) + row["limits"][3:]
    return out


def _add_row(g: nx.DiGraph, src: str, i: int, row: dict, parent: str, convention: str) -> str:
    """Add the joint(s) and link(s) of row i below ``parent``; return DH link i's name."""
    link = row["name"] or f"link{i}"
    jname = row["joint_name"] or f"joint{i}"
    if link in g:
        raise ModelError(f"{src}: row {i}: duplicate link name {link!r}")
    a, alpha, d, theta = row["a"], row["alpha"], row["d"], row["theta"]
    moving = dict(type=row["joint"], axis=(0.0, 0.0, 1.0), limits=row["limits"], damping=row["damping"],
                  friction=row["friction"], armature=row["armature"])
    if convention == "modified":
        add_link(g, link, mass=row["mass"], com=row["com"], inertia=row["inertia"])
        add_joint(g, jname, parent, link, origin=rot_x(alpha) @ trans(x=a) @ rot_z(theta) @ trans(z=d), **moving)
        return link
    prox = f"{link}_proximal"
    if prox in g:
        raise ModelError(f"{src}: row {i}: duplicate link name {prox!r}")
    add_link(g, prox)
    add_joint(g, jname, parent, prox, origin=rot_z(theta) @ trans(z=d), **moving)
    add_link(g, link, mass=row["mass"], com=row["com"], inertia=row["inertia"])
    add_joint(g, f"{jname}_dh", prox, link, type="fixed", origin=trans(x=a) @ rot_x(alpha))
    return link
