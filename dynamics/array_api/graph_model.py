"""The :class:`~composedyn.dynamics.array_api.model.ArrayModel` of a kinematic graph whose joints may have
several coordinates (spherical, universal, helical; free-flyer and planar joints anywhere).

A graph edge of type ``spherical``, ``universal`` or ``helical`` (or ``floating`` / ``planar`` below the
root) is such a joint: ``axis`` is a helical joint's axis and a universal joint's first axis, the edge's
``axis2`` a universal joint's second axis and ``pitch`` (m/rad) a helical joint's translation per radian;
the joint frame is the child frame at the neutral configuration, as for every joint.  Everything that
does not depend on the joint kind (fixed joints merged into their bodies, the depth-first body order,
merged inertias, placements, link frames, the numeric checks) is the fixed-base compile's
(:func:`composedyn.dynamics.model.compile_graph`) on the graph with each such joint standing as a
one-coordinate joint; the joint kinds, their coordinates and their per-coordinate terms are then put back.
Mimic joints (``mimic="dependent"``; one-coordinate joints mimicking one-coordinate joints) become the
model's mimic map (``Gq``, ``bq``, ``Gv``: Kolev's projection, :mod:`composedyn.dynamics.constraints.mimic`).
"""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import numpy as np

from composedyn.dynamics.array_api.joints import Joint, make_joint
from composedyn.dynamics.array_api.model import ArrayModel, array_model_of, one_coordinate_kind
from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.model import Model, compile_graph
from composedyn.dynamics.schema import check_planar_axis, is_base_joint, source_of

EDGE_KINDS = {"spherical": "spherical", "universal": "universal", "helical": "helical",
              "floating": "free_flyer", "planar": "planar"}
"""Graph edge type -> joint kind of the joints with a configuration space of their own."""


def own_space_joints(graph: nx.DiGraph) -> list[str]:
    """The joints of ``graph`` that only this model takes: spherical, universal and helical joints, and
    floating or planar joints other than a floating base (:func:`~composedyn.dynamics.schema.is_base_joint`)."""
    return [d.get("name") for u, v, d in graph.edges(data=True)
            if d.get("type") in ("spherical", "universal", "helical")
            or (d.get("type") in ("floating", "planar") and not is_base_joint(graph, u, v))]


def graph_model(graph: nx.DiGraph, strict: bool = False, mimic: str = "independent") -> tuple[ArrayModel, Model]:
    """(``ArrayModel``, the compiled ``Model`` of the one-coordinate stand-in graph) of ``graph``;
    ``mimic="dependent"``: its mimic joints are dependent coordinates (:func:`with_mimic_map`).

    ModelError naming the file and the joint: a bad ``axis2`` or ``pitch``, parallel universal axes, a
    dependent mimic relation from or to a joint of several coordinates; everything the fixed-base compile
    checks.
    """
    src = source_of(graph)
    stand_in = graph.copy()
    own: dict[str, Joint] = {}
    for u, v, d in graph.edges(data=True):
        kind = EDGE_KINDS.get(d.get("type"))
        if kind is None:
            continue
        name = d.get("name")
        if kind == "planar":
            check_planar_axis(src, name, d.get("axis", (0.0, 0.0, 1.0)))
        try:
            own[name] = make_joint(str(name), kind, 0, 0, axis=d.get("axis", (0.0, 0.0, 1.0)),
                                   axis2=d.get("axis2", (0.0, 1.0, 0.0)), pitch=d.get("pitch", 0.0) or 0.0)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{src}: {exc}") from None
        limits = d.get("limits") if own[name].nq == 1 else None  # a helical joint's
        stand_in.edges[u, v].update(type="revolute", axis=np.array([0.0, 0.0, 1.0]), limits=limits)
    for _, _, d in graph.edges(data=True):
        relation = d.get("mimic") if mimic == "dependent" else None  # "independent": the relations are ignored
        if relation is not None and (d.get("name") in own or relation[0] in own):
            raise ModelError(f"{src}: joint {d.get('name')!r} mimics {relation[0]!r}; mimic joints of several "
                             "coordinates (spherical, universal, helical, free-flyer, planar) are not supported")
    model = compile_graph(stand_in, strict=strict)
    joints, iq, iv = [], 0, 0
    for c, name in enumerate(model.joint_names):
        if name in own:
            joint = replace(own[name], idx_q=iq, idx_v=iv)
        else:
            kind = one_coordinate_kind(model, c)
            joint = make_joint(name, kind, iq, iv, axis=tuple(float(a) for a in model.axis[c]))
        joints.append(joint)
        iq, iv = iq + joint.nq, iv + joint.nv
    return with_mimic_map(array_model_of(model, joints), model, mimic), model


def with_mimic_map(am: ArrayModel, model: Model, mimic: str) -> ArrayModel:
    """``am`` (joint ``c`` on body ``c`` of ``model``, the one-coordinate stand-in) with the dependent mimic
    joints of ``model`` as its mimic map: q_full = Gq q + bq, v_full = Gv v, the coordinates those of the
    other joints (``coordinate_joints``, renumbered); ``am`` itself without dependent mimic joints."""
    from composedyn.dynamics.constraints.mimic import select_mimic

    mm = select_mimic(model, mimic)
    if mm is None:
        return am
    dependent = {int(c) for c in mm.dependent}
    kept, at = [], {}
    iq = iv = 0
    for c, j in enumerate(am.joints):
        if c not in dependent:
            kept.append(replace(j, idx_q=iq, idx_v=iv))
            at[c] = (iq, iv)
            iq, iv = iq + j.nq, iv + j.nv
    Gq, Gv, bq = np.zeros((am.nq_full, iq)), np.zeros((am.nv_full, iv)), np.zeros(am.nq_full)
    for c, j in enumerate(am.joints):
        if c in dependent:  # q_c = Σ_r G[c, r] q_r + b_c over independent one-coordinate joints r
            for k, r in enumerate(mm.independent):
                Gq[j.idx_q, at[int(r)][0]] = Gv[j.idx_v, at[int(r)][1]] = mm.G[c, k]
            bq[j.idx_q] = mm.b[c]
        else:
            rq, rv = at[c]
            Gq[j.idx_q:j.idx_q + j.nq, rq:rq + j.nq] = np.eye(j.nq)
            Gv[j.idx_v:j.idx_v + j.nv, rv:rv + j.nv] = np.eye(j.nv)
    return replace(am, Gq=Gq, bq=bq, Gv=Gv, nq=iq, nv=iv, coordinate_joints=tuple(kept))

