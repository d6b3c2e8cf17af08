"""MJCF (MuJoCo XML) -> kinematic graph, through MuJoCo's own compiler.

MuJoCo resolves what only it resolves exactly -- ``<include>``, ``<default>``
classes and ``childclass``, ``<compiler angle eulerseq autolimits
inertiafromgeom>``, ``fromto``, inertias computed from geoms and meshes -- so
the file is compiled by the ``mujoco`` package (the ``[mjcf]`` extra) and the
graph is read from the compiled ``MjModel`` (:mod:`composedyn.importers.mjcf_graph`
for bodies, joints and sites; :mod:`composedyn.importers.mjcf_extras` for
actuators, equalities and the features that are not mapped;
:mod:`composedyn.importers.mjcf_loops` for loop closures).  Any failure is
a :class:`~composedyn.ModelError` naming the file (or ``<mjcf string>``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import networkx as nx

from composedyn.dynamics.errors import ModelError
from composedyn.importers.mujoco_module import import_mujoco

STRING_SOURCE = "<mjcf string>"
_PROLOG = re.compile(rb"\A(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<([A-Za-z_][\w.:-]*)", re.S)


def xml_root_tag(path_or_xml: str | bytes | os.PathLike) -> str | None:
    """The root element's tag of an XML string or file (its first 64 kB), None when there is none
    (not XML, not a file, unreadable)."""
    if isinstance(path_or_xml, (bytes, bytearray)):
        head = bytes(path_or_xml[:65536])
    elif isinstance(path_or_xml, str) and path_or_xml.lstrip("\ufeff \t\r\n").startswith("<"):
        head = path_or_xml[:65536].encode("utf-8", "replace")
    else:
        try:
            with open(path_or_xml, "rb") as f:
                head = f.read(65536)
        except (OSError, TypeError, ValueError):
            return None
    match = _PROLOG.match(head.lstrip(b"\xef\xbb\xbf"))
    return match.group(1).decode("ascii", "replace") if match else None


def is_mjcf(path_or_xml) -> bool:
    """True for an MJCF string or file (root element ``<mujoco>``), and for a ``.xml`` path that is
    not an existing file (so that loading it reports the missing MJCF file)."""
    if xml_root_tag(path_or_xml) == "mujoco":
        return True
    text = str(path_or_xml)
    return not text.lstrip().startswith("<") and text.lower().endswith(".xml") and not Path(text).is_file()


def compile_mjcf(path_or_xml: str | bytes | os.PathLike):
    """(``mujoco.MjModel``, source name for messages) of an MJCF file path or XML string.

    MuJoCo's parse and compile errors become one ModelError line with the file and MuJoCo's
    message (which names the element and its line); its compiler's warnings (deprecated
    attributes, ...) one ModelWarning.  An XML string resolves ``<include>`` and
    asset files relative to the working directory, a file relative to its own folder."""
    mujoco = import_mujoco()
    if isinstance(path_or_xml, (bytes, bytearray)):
        path_or_xml = bytes(path_or_xml).decode("utf-8", "replace")
    if isinstance(path_or_xml, str) and path_or_xml.lstrip("\ufeff \t\r\n").startswith("<"):
        src, text = STRING_SOURCE, path_or_xml.lstrip("\ufeff \t\r\n")
    elif isinstance(path_or_xml, (str, os.PathLike)):
        p = Path(path_or_xml)
        if p.is_dir():
            raise ModelError(f"{p}: is a directory, not an MJCF file")
        if not p.is_file():
            raise ModelError(f"{p}: no such MJCF file")
        src, text = str(p), None
    else:
        raise ModelError(f"from_mjcf expects a path or an XML string, got {type(path_or_xml).__name__}")
    warned: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(warned.append)  # instead of MuJoCo's print and MUJOCO_LOG.TXT in the cwd
    try:
        model = mujoco.MjModel.from_xml_string(text) if text is not None else mujoco.MjModel.from_xml_path(src)
    except (ValueError, RuntimeError, getattr(mujoco, "FatalError", RuntimeError)) as e:
        raise ModelError(f"{src}: MuJoCo cannot compile it: {_one_line(str(e))}") from None
    finally:
        mujoco.set_mju_user_warning(previous)
    if warned:
        from composedyn.dynamics.schema import report_suspicious

        report_suspicious(f"{src}: MuJoCo's compiler warns: {'; '.join(_one_line(w) for w in warned)}", False)
    return model, src


def _one_line(message: str) -> str:
    """MuJoCo's multi-line message joined into one line."""
    parts = [s.strip().rstrip(":") for s in message.splitlines() if s.strip()]
    return "; ".join(parts) or "unknown error"


def load_mjcf(path_or_xml: str | bytes | os.PathLike, root: str | None = None, floating=None) -> nx.DiGraph:
    """Read an MJCF file path or XML string into a kinematic graph.

    Parameters
    ----------
    path_or_xml : path to an MJCF file (root element ``<mujoco>``), or the XML itself.
    root : name of the body whose subtree is the robot (default: everything under
        ``<worldbody>``; needed when a scene holds several free bodies).
    floating : as for :func:`composedyn.load`; ``False`` welds a free root body where
        the file places it (its ``pos``/``quat``), True with a root body that has no
        joints makes it a free-flyer base.

    Returns
    -------
    networkx.DiGraph following :mod:`composedyn.dynamics.schema` (bodies, joints, sites
    as links; see :func:`composedyn.importers.mjcf_graph.build_graph`), with mimic joints
    and effort limits from ``<equality joint>`` and ``<actuator>``.

    Raises
    ------
    ModelError
        naming the file and the element: MuJoCo's parse or compile errors, a free joint below the root,
        ``<equality connect/weld>`` within the robot (loop closures: :func:`load_mjcf_closed`),
        non-linear joint couplings, several moving bodies with a free one among them and
        no ``root``, an unknown ``root``.  Features without a counterpart
        (tendons, sensors, contact pairs, springs, ...) give one ModelWarning listing them.
    """
    return _load(path_or_xml, root, floating, None)[0]


def _load(path_or_xml, root, floating, loops: list | None):
    """(graph, compiled model, source name); loop-closing equality ids go to ``loops`` when it is a list."""
    from composedyn.importers import mjcf_extras as extras
    from composedyn.importers.mjcf_graph import build_graph

    model, src = compile_mjcf(path_or_xml)
    extras.check_reflected_inertia(model, src)
    graph, bodies, dropped = build_graph(model, src, root=root, floating=floating)
    extras.apply_actuators(model, graph)
    left_out = extras.apply_equalities(model, graph, src, bodies, loops)
    extras.warn_ignored(model, src, bodies, dropped, left_out)
    return graph, model, src


def closes_loops(path_or_xml) -> tuple[str, list[str]] | None:
    """(source name, actuated joints) when the MJCF has an active ``<equality connect>`` or
    ``<equality weld>`` (a closed chain, see :func:`load_mjcf_closed`), else None."""
    import warnings

    from composedyn.importers.mjcf_loops import EQ_CONNECT, EQ_WELD, actuated_joints

    model, src = compile_mjcf(path_or_xml)
    if not any(model.eq_active0[e] and int(model.eq_type[e]) in (EQ_CONNECT, EQ_WELD) for e in range(model.neq)):
        return None
    ids: list[int] = []  # the equalities that close loops within the robot (not those to mocap bodies or objects)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # loading the robot afterwards reports them
            _load(path_or_xml, None, None, ids)
    except ModelError:
        return None  # loading the robot reports what is wrong with it
    return (src, actuated_joints(model, None)) if ids else None


def load_mjcf_closed(path_or_xml: str | bytes | os.PathLike, root: str | None = None):
    """(spanning tree graph, loop closures, actuated joint names, assembly guess {joint: value}) of
    an MJCF mechanism closed by ``<equality connect>``/``<equality weld>``; see
    :mod:`composedyn.importers.mjcf_loops`.  ModelError when there is no such equality, or the
    robot has a floating base (closed chains are fixed-base)."""
    from composedyn.importers.mjcf_loops import actuated_joints, closure, reference_guess

    ids: list[int] = []
    graph, model, src = _load(path_or_xml, root, None, ids)
    free = [d["name"] for _, _, d in graph.edges(data=True) if d["type"] == "floating"]
    if free:
        raise ModelError(f"{src}: free joint {free[0]!r}: closed chains (<equality connect/weld>) with a floating "
                         "base are not supported")
    if not ids:
        raise ModelError(f"{src}: no active <equality connect> or <equality weld> between bodies of the robot: "
                         "not a closed chain (load it with composedyn.load)")
    loops = [closure(model, e, src, set(graph.nodes)) for e in ids]
    return graph, loops, actuated_joints(model, graph), reference_guess(model, graph)
