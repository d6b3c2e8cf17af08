"""Entry points that build a Robot from a description."""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx

from composedyn.errors import ModelError
from composedyn.robot import Robot


def from_graph(graph: nx.DiGraph, strict: bool = False) -> Robot:
    """A Robot from a kinematic graph that follows the schema (ARCHITECTURE.md)."""
    if not isinstance(graph, nx.DiGraph):
        raise ModelError(f"from_graph expects a networkx.DiGraph, got {type(graph).__name__}")
    return Robot(graph, strict=strict)


def from_urdf(path_or_xml: str | os.PathLike, strict: bool = False, **kwargs) -> Robot:
    """A Robot from a URDF file path or an XML string."""
    from composedyn.importers.urdf import load_urdf

    return Robot(load_urdf(path_or_xml, **kwargs), strict=strict)


def load(name_or_path: str | os.PathLike, strict: bool = False, **kwargs) -> Robot:
    """A Robot from a ``.urdf`` file, a ``.toml`` DH table, or a bundled robot name."""
    s = str(name_or_path)
    suffix = Path(s).suffix.lower()
    if suffix == ".urdf" or s.lstrip().startswith("<"):
        return from_urdf(s, strict=strict, **kwargs)
    if suffix == ".toml":
        from composedyn.importers.dh import load_dh_toml

        return Robot(load_dh_toml(s), strict=strict)
    from composedyn.robots import bundled_path

    path = bundled_path(s)
    if path is None:
        raise ModelError(f"{s}: not a .urdf or .toml file, nor a bundled robot (see `composedyn robots`)")
    return load(path, strict=strict, **kwargs)
