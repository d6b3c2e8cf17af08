"""Entry points that build a Robot from a description."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx

from composedyn.errors import ModelError
from composedyn.robot import Robot


def make_robot(graph: nx.DiGraph, strict: bool = False, mimic: str = "dependent", floating=None):
    """A ``Robot`` (fixed base) or a ``FloatingRobot`` from a kinematic graph; see :func:`load`."""
    from composedyn.dynamics.array_api.graph_model import own_space_joints
    from composedyn.dynamics.floating.base import split_base

    if own_space_joints(graph):
        return tree_robot(graph, strict, mimic, floating)
    graph, base = split_base(graph, floating)
    if base is None:
        return Robot(graph, strict=strict, mimic=mimic)
    from composedyn.floating_robot import FloatingRobot

    return FloatingRobot(graph, base, strict=strict, mimic=mimic)


def tree_robot(graph: nx.DiGraph, strict: bool, mimic: str, floating):
    """A :class:`~composedyn.tree_robot.TreeRobot` of a graph with joints of several coordinates:
    ``floating`` False welds a floating (planar) root joint, True / "free" / "planar" adds one at the
    root link when the graph has none (a ``world`` link, joint ``root_joint``)."""
    from composedyn.dynamics.floating.base import KINDS
    from composedyn.dynamics.schema import find_root, is_base_joint
    from composedyn.tree_robot import TreeRobot

    if floating not in (None, True, False) + KINDS:
        raise ValueError(f"floating must be None, True, False, 'free' or 'planar', got {floating!r}")
    root = find_root(graph)
    loose = [(u, v) for u, v in graph.edges if is_base_joint(graph, u, v)]  # a floating base's joint, or none
    graph = graph.copy()
    if floating is False:
        for u, v in loose:
            graph.edges[u, v]["type"] = "fixed"
    elif floating is not None:
        if loose:  # as split_base: the description's joint kept, a free one made planar by floating="planar"
            d = graph.edges[loose[0]]
            d["type"] = "planar" if floating == "planar" or d["type"] == "planar" else "floating"
        else:
            from composedyn.dynamics.schema import add_joint, add_link

            world = "world" if "world" not in graph else f"world::{root}"
            add_link(graph, world)
            add_joint(graph, "root_joint", world, root, type="planar" if floating == "planar" else "floating")
            graph.graph["root"] = world
    return TreeRobot(graph, strict=strict, mimic=mimic)


def from_graph(graph: nx.DiGraph, strict: bool = False, mimic: str = "dependent", floating=None) -> Robot:
    """A Robot from a kinematic graph that follows the schema (docs/architecture.md).

    ``mimic``: "dependent" (mimic joints are not coordinates) or "independent" (see :class:`Robot`).
    ``floating``: see :func:`load`."""
    if not isinstance(graph, nx.DiGraph):
        raise ModelError(f"from_graph expects a networkx.DiGraph, got {type(graph).__name__}")
    return make_robot(graph, strict=strict, mimic=mimic, floating=floating)


def from_urdf(path_or_xml: str | os.PathLike, strict: bool = False, mimic: str = "dependent",
              xacro_args=None, package_dirs=(), floating=None, **kwargs) -> Robot:
    """A Robot from a URDF file path or an XML string.

    ``mimic="dependent"``: ``<mimic>`` joints are dependent coordinates (``robot.joint_names``
    lists the independent joints); ``"independent"``: every joint is a coordinate.
    A ``.xacro`` path is expanded first with ``xacro_args`` and ``package_dirs``
    (see :mod:`composedyn.importers.xacro`).  ``floating``: see :func:`load`."""
    from composedyn.importers.urdf import load_urdf
    from composedyn.importers.xacro import load_xacro_urdf

    if xacro_args is not None or package_dirs or str(path_or_xml).lower().endswith(".xacro"):
        graph = load_xacro_urdf(path_or_xml, xacro_args, package_dirs, **kwargs)
    else:
        graph = load_urdf(path_or_xml, **kwargs)
    return make_robot(graph, strict=strict, mimic=mimic, floating=floating)


def from_mjcf(path_or_xml: str | os.PathLike, strict: bool = False, mimic: str = "dependent", floating=None,
              root: str | None = None) -> Robot:
    """A Robot from an MJCF (MuJoCo XML) file path or XML string, compiled by MuJoCo (``[mjcf]`` extra).

    Joint coordinates are MuJoCo's ``qpos`` of the hinge and slide joints; a free joint on the
    root body gives a :class:`~composedyn.floating_robot.FloatingRobot` (Pinocchio's free-flyer
    coordinates: :func:`composedyn.convert_floating` maps MuJoCo's).  ``root``: the body whose
    subtree is the robot (a scene with other free bodies).  ``floating``: see :func:`load`;
    False welds a free root body at its pose in the file.  ``mimic``: see :func:`from_urdf`
    (``<equality joint>`` couplings).  What is mapped: :mod:`composedyn.importers.mjcf`."""
    from composedyn.importers.mjcf import load_mjcf

    graph = load_mjcf(path_or_xml, root=root, floating=floating)
    return make_robot(graph, strict=strict, mimic=mimic, floating=floating)


def from_sdf(path_or_xml: str | os.PathLike, package_dirs=(), floating=None, strict: bool = False,
             mimic: str = "dependent", model: str | None = None) -> Robot:
    """A Robot (or FloatingRobot) from an SDFormat 1.4-1.11 file path or XML string.

    ``package_dirs``: folders where ``<include>`` URIs ``model://name`` are looked up (then
    GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH, SDF_PATH).  ``floating``: None (default) -- a
    model not attached to the world (no joint with parent ``world``, not ``<static>``) is free, as
    in Gazebo and Drake; True (or "free", "planar") -- free, also a model welded to the world by one
    fixed joint (that joint is dropped); False -- fixed: a free model's canonical link is welded
    where the file puts it.  ``model``: the model to load from a ``<world>`` with several.
    What is read and refused: :mod:`composedyn.importers.sdf` and docs/guide/sdformat.md."""
    from composedyn.importers.sdf import load_sdf

    if floating not in (None, True, False, "free", "planar"):
        raise ValueError(f"floating must be None, True, False, 'free' or 'planar', got {floating!r}")
    graph = load_sdf(path_or_xml, package_dirs=package_dirs, floating=floating, model=model)
    return make_robot(graph, strict=strict, mimic=mimic, floating="planar" if floating == "planar" else None)


def from_dh(rows, convention: str = "standard", name: str = "dh_robot", gravity=(0.0, 0.0, -9.81),
            strict: bool = False, mimic: str = "dependent", floating=None, *, base=None, tool=None,
            tool_name: str = "tool", base_link: str = "link0", angles: str = "radians", source=None) -> Robot:
    """A Robot from a Denavit-Hartenberg table (list of row dicts).

    ``convention``: "standard" (Denavit-Hartenberg / Corke DH) or "modified"
    (Craig / Corke MDH).  Row keys and the ``base``, ``tool``, ``tool_name``,
    ``base_link``, ``angles`` and ``source`` (the name errors give the table) keywords are
    described in :mod:`composedyn.importers.dh`.  ``mimic``, ``floating``: see :func:`load`.
    Bad rows raise ModelError naming the table ("<dh table>" by default), the row and the key.
    """
    from composedyn.importers.dh import dh_graph

    graph = dh_graph(rows, convention=convention, name=name, gravity=gravity, base=base, tool=tool,
                     tool_name=tool_name, base_link=base_link, angles=angles, source=source)
    return make_robot(graph, strict=strict, mimic=mimic, floating=floating)


def load(name_or_path: str | os.PathLike, strict: bool = False, mimic: str = "dependent", floating=None,
         **kwargs) -> Robot:
    """A Robot from a description file, an XML string, or a bundled robot name.

    A file (or string) is recognised by its root element: ``<robot>`` URDF (see :func:`from_urdf`),
    ``<mujoco>`` MJCF (see :func:`from_mjcf`), ``<sdf>`` SDFormat (see :func:`from_sdf`, whose
    ``package_dirs`` and ``model`` keywords it takes), whatever its name; when the content does not
    say (not XML, or another root element), by its suffix: ``.urdf``, ``.sdf``/``.world``, ``.toml``
    (a DH table), a registered format (:mod:`composedyn.third_party_formats`).  A ``.xacro`` file
    is expanded by xacro first (:func:`from_urdf`).  Anything else is a bundled robot name.

    ``mimic``: how mimic joints are treated, see :func:`from_urdf` (every format: a DH
    table has none).  ``kwargs`` (``gravity``) go to the URDF reader, ``root`` to the MJCF
    reader; for other formats they raise TypeError.

    ``floating``: None (default) -- a floating base when the URDF's root joint is
    ``floating`` or ``planar`` (MJCF: a free joint on the root body), else fixed; True (or
    "free") -- a free-flyer base at the root link
    (:class:`composedyn.floating_robot.FloatingRobot`, Pinocchio's free-flyer
    coordinates); "planar" -- a planar base; False -- a fixed base (a floating root
    joint is welded).

    Raises ModelError naming the file and what was found when it is none of these.
    """
    if mimic not in ("dependent", "independent"):
        raise ValueError(f"mimic must be one of ('dependent', 'independent'), got {mimic!r}")
    s = str(name_or_path)
    kind = description_format(name_or_path)
    if kind == "sdf":
        return from_sdf(name_or_path, floating=floating, strict=strict, mimic=mimic, **kwargs)
    if kind == "mjcf":
        return from_mjcf(s, strict=strict, mimic=mimic, floating=floating, **kwargs)
    if kind == "urdf":
        return from_urdf(s, strict=strict, mimic=mimic, floating=floating, **kwargs)
    if kind == "toml":
        from composedyn.importers.toml_dh import load_dh_toml

        _urdf_only(s, kwargs)
        return make_robot(load_dh_toml(s), strict=strict, mimic=mimic, floating=floating)
    suffix = Path(s).suffix.lower()
    if suffix:
        from composedyn.third_party_formats import find_importer

        importer = find_importer(suffix)  # third-party formats (entry-point group composedyn.importers)
        if importer is not None:
            _urdf_only(s, kwargs)
            return make_robot(importer(s), strict=strict, mimic=mimic, floating=floating)
    from composedyn.robots import bundled_path

    path = bundled_path(s) if kind is None else None
    if path is None:
        raise ModelError(_not_a_description(s, kind))
    return load(path, strict=strict, mimic=mimic, floating=floating, **kwargs)


ROOT_FORMATS = {"robot": "urdf", "mujoco": "mjcf", "sdf": "sdf"}
"""Root element -> the format it makes a description file (or string) of, whatever its name."""
SUFFIX_FORMATS = {".urdf": "urdf", ".xacro": "urdf", ".sdf": "sdf", ".world": "sdf", ".toml": "toml"}
"""Suffix -> format, for files whose content does not say."""
READS = ("URDF (<robot>), MJCF (<mujoco>) and SDFormat (<sdf>) by their root element, .xacro, .toml DH tables, "
         "registered formats by suffix, and bundled robot names (see `composedyn robots`)")


def description_format(source) -> str | None:
    """How :func:`load` reads ``source`` (a path or an XML string): "urdf", "mjcf", "sdf" or "toml"
    from the root element (``<robot>``, ``<mujoco>``, ``<sdf>``), else from the suffix (a ``.xacro``
    path is "urdf" whatever its root; a ``.xml`` path that is no file "mjcf", so that the missing
    MJCF file is reported); "<tag>" for XML of another root element, None when nothing says."""
    from composedyn.importers.mjcf import is_mjcf, xml_root_tag

    s = str(source)
    is_string = s.lstrip("\ufeff \t\r\n").startswith("<")
    suffix = "" if is_string else Path(s).suffix.lower()
    if suffix == ".xacro":
        return "urdf"
    tag = xml_root_tag(source)
    if tag in ROOT_FORMATS:
        return ROOT_FORMATS[tag]
    if suffix in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffix]
    if is_string and tag is None:
        return "urdf"  # XML without a readable root element: the URDF reader says what is wrong
    if tag is None and is_mjcf(s):
        return "mjcf"
    return None if tag is None else f"<{tag}>"


def _not_a_description(s: str, kind: str | None) -> str:
    """The message for ``s``, which :func:`load` cannot read: what was found there."""
    if kind is not None:
        found = f"root element {kind}"
        s = "<xml string>" if s.lstrip("\ufeff \t\r\n").startswith("<") else s
    elif not Path(s).exists():
        found = "no such file, nor a bundled robot"
    elif Path(s).is_dir():
        found = "a directory"
    elif Path(s).stat().st_size == 0:
        found = "an empty file"
    else:
        found = "a file that is not XML, with no known suffix"
    return f"{s}: {found}; composedyn reads {READS}"


def _urdf_only(source: str, kwargs: dict) -> None:
    """TypeError when keywords meant for the URDF reader are given for another format."""
    if kwargs:
        raise TypeError(f"load({source!r}): keyword(s) {', '.join(sorted(kwargs))} apply to URDF files only")
