"""DH tables in TOML files -> kinematic graph.

Schema (all lengths in metres; see docs/guide/formats.md, "DH tables in TOML")::

    name = "puma560"                 # robot name (default: file stem)
    convention = "standard"          # or "modified"             (required)
    angles = "radians"               # or "degrees" (alpha, theta, rpy, revolute limits)
    gravity = [0.0, 0.0, -9.81]      # m/s^2 in the base frame    (optional)
    base = {xyz = [0, 0, 0.672], rpy = [0, 0, 0]}   # or a 4x4 array (optional)
    tool = {xyz = [0, 0, 0.107]}                    # or a 4x4 array (optional)
    tool_name = "flange"             # name of the tool link (default "tool")
    base_link = "link0"              # name of DH frame 0 (default "link0")

    [[links]]                        # one table per joint, base to tip
    a = 0.0
    alpha = 1.5707963267948966
    d = 0.0
    theta = 0.0
    joint = "revolute"               # or "prismatic"
    mass = 17.4
    com = [-0.3638, 0.006, 0.2275]   # in DH frame i
    inertia = [0.13, 0.524, 0.539]   # diagonal, or [[...], [...], [...]] about the COM, DH frame i axes
    limits = {lower = -0.785, upper = 3.93, velocity = 8.0, effort = 97.6}
    damping = 0.0                    # viscous N m s/rad, at the joint
    friction = 0.0                   # Coulomb N m, at the joint
    armature = 0.0                   # reflected rotor inertia kg m^2
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import DEFAULT_GRAVITY
from composedyn.importers.dh import ANGLE_UNITS, CONVENTIONS, dh_graph, pose, to_radians
from composedyn.importers.dh_rows import array, check_rows
from composedyn.importers.toml_file import read_toml

TOP_KEYS = ("name", "convention", "angles", "gravity", "base", "tool", "tool_name", "base_link", "links",
            "closure", "loops")  # closure/loops: closed chains, read by composedyn.importers.loops


def read_dh_toml(path: str | os.PathLike) -> dict:
    """The table of a DH TOML file, checked and in radians.

    Returns a dict with ``rows`` (checked row dicts, see
    :func:`composedyn.importers.dh_rows.check_rows`, angles in radians),
    ``convention``, ``name``, ``gravity``, ``base`` and ``tool`` (4x4 or None),
    ``tool_name``, ``base_link`` and ``source`` (the file name): the keyword
    arguments of :func:`composedyn.importers.dh.dh_graph`.  Symbolic code can
    use ``rows`` directly.  ModelError names the file, row and key.
    """
    src = str(Path(path))
    doc = read_toml(path, "no such DH table file")
    bad = [k for k in doc if k not in TOP_KEYS]
    if bad:
        raise ModelError(f"{src}: unknown top-level key {bad[0]!r} (allowed: {', '.join(TOP_KEYS)})")
    for key in ("convention", "links"):
        if key not in doc:
            raise ModelError(f"{src}: missing top-level key {key!r}")
    for key in ("name", "convention", "angles", "tool_name", "base_link"):
        if key in doc and not isinstance(doc[key], str):
            raise ModelError(f"{src}: top-level key {key!r} must be a string, got {doc[key]!r}")
    if not isinstance(doc["links"], list):
        raise ModelError(f"{src}: 'links' must be an array of tables ([[links]])")
    if doc["convention"] not in CONVENTIONS:
        raise ModelError(f"{src}: unknown convention {doc['convention']!r}; expected 'standard' or 'modified'")
    angles = doc.get("angles", "radians")
    if angles not in ANGLE_UNITS:
        raise ModelError(f"{src}: unknown angle unit {angles!r}; expected 'radians' or 'degrees'")
    scale = ANGLE_UNITS[angles]
    return dict(
        rows=[to_radians(r, scale) for r in check_rows(doc["links"], src)],
        convention=doc["convention"],
        name=doc.get("name", Path(path).stem),
        gravity=array(src, "gravity", doc.get("gravity", DEFAULT_GRAVITY), ((3,),)),
        base=None if "base" not in doc else pose(doc["base"], src, "base", scale),
        tool=None if "tool" not in doc else pose(doc["tool"], src, "tool", scale),
        tool_name=doc.get("tool_name", "tool"),
        base_link=doc.get("base_link", "link0"),
        source=src,
    )


def load_dh_toml(path: str | os.PathLike) -> nx.DiGraph:
    """Kinematic graph of the DH table in a TOML file; ModelError names the file, row and key."""
    table = read_dh_toml(path)
    return dh_graph(table.pop("rows"), **table)
