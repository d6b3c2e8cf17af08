"""``<equality connect>`` and ``<equality weld>`` of a compiled MuJoCo model as loop closures.

MuJoCo's compiled ``eq_data`` holds, for ``connect``, the anchor in body1's frame (0:3) and the
same point in body2's frame at the reference configuration ``qpos0`` (3:6); for ``weld``, the
anchor in body2's frame (0:3), the relative pose of body2 in body1's frame (position 3:6,
quaternion w, x, y, z 6:10) and a torque scale (10).  The constraints MuJoCo enforces are
``x1 + R1 a1 = x2 + R2 a2`` (connect: a ``position`` loop) and, for weld, the same between the
point ``relpos`` of body1 and the anchor of body2 with ``R1 Rrel = R2`` (a ``pose`` loop whose
frame on body1 is rotated by ``Rrel``).  Between two sites (``site1``/``site2``) the site frames
coincide: their origins (connect), and their axes too (weld).  The spanning tree's actuated joints (actuators with a
joint transmission) are the independent coordinates, and MuJoCo's ``qpos0`` (where the compiler
closed the loops) is the assembly guess.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from composedyn.dynamics.constraints.loops import LoopClosure
from composedyn.dynamics.errors import ModelError
from composedyn.importers.mjcf_extras import JOINT_TRN, OBJ_SITE
from composedyn.importers.mjcf_graph import name_of, pose
from composedyn.importers.urdf_export import rpy_from_matrix

EQ_CONNECT, EQ_WELD = 0, 1  # mjtEq


def closure(model, e: int, src: str, links) -> LoopClosure:
    """The loop closure of equality ``e`` (connect or weld between two bodies of the graph)."""
    name = name_of(model, "equality", e)
    objtype = getattr(model, "eq_objtype", None)  # newer MuJoCo: connect and weld may join sites
    kind = "site" if objtype is not None and int(objtype[e]) == OBJ_SITE else "body"
    a, b = (name_of(model, kind, int(i)) for i in (model.eq_obj1id[e], model.eq_obj2id[e]))
    for end in (a, b):
        if end not in links:
            raise ModelError(f"{src}: <equality> {name!r} joins {kind} {end!r}, which is not part of the robot")
    connect = int(model.eq_type[e]) == EQ_CONNECT
    if kind == "site":  # the two site frames coincide (weld: also in orientation)
        return LoopClosure(link_a=a, link_b=b, kind="position" if connect else "pose", name=name)
    data = np.array(model.eq_data[e], dtype=float)
    if connect:
        return LoopClosure(link_a=a, point_a=tuple(data[:3]), link_b=b, point_b=tuple(data[3:6]), kind="position",
                           name=name)
    rel = pose(np.zeros(3), data[6:10])[:3, :3]
    return LoopClosure(link_a=a, point_a=tuple(data[3:6]), rpy_a=rpy_from_matrix(rel), link_b=b,
                       point_b=tuple(data[:3]), kind="pose", name=name)


def actuated_joints(model, graph: nx.DiGraph | None) -> list[str]:
    """Names of the joints (of ``graph``, or all) driven by an actuator with a joint transmission,
    in MuJoCo's joint order."""
    driven = {int(model.actuator_trnid[a, 0]) for a in range(model.nu) if int(model.actuator_trntype[a]) in JOINT_TRN}
    names = [name_of(model, "joint", j) for j in sorted(driven)]
    if graph is None:
        return names
    joints = {d["name"] for _, _, d in graph.edges(data=True)}
    return [n for n in names if n in joints]


def reference_guess(model, graph: nx.DiGraph) -> dict[str, float]:
    """{joint: MuJoCo's qpos0} for the graph's hinge and slide joints (``jnt_type`` 3 and 2; a ball joint's
    qpos0 is the identity, its neutral configuration): the configuration where the compiler placed the
    loop anchors, so the loops close there."""
    joints = {d["name"] for _, _, d in graph.edges(data=True) if d["type"] not in ("fixed", "floating")}
    return {name_of(model, "joint", j): float(model.qpos0[model.jnt_qposadr[j]])
            for j in range(model.njnt) if name_of(model, "joint", j) in joints and int(model.jnt_type[j]) in (2, 3)}


def planar_loops(model, loops, q0: np.ndarray) -> list[LoopClosure]:
    """``loops`` with every loop whose constraint vanishes identically along one world axis (a
    planar linkage: MuJoCo's three ``connect`` equations are then one too many) turned into its
    planar kind in the other two axes (``planar`` for ``position``, ``planar_pose`` for ``pose``).

    ``model``: the spanning tree's compiled Model; ``q0`` (n,): a configuration where the loops
    close.  A row counts as vanishing when it is zero (1e-12) at ``q0`` and at a perturbed
    configuration (the joints' axes stay normal to the plane at every configuration)."""
    from dataclasses import replace

    from composedyn.dynamics.constraints.loops import loop_jacobian

    qs = np.stack([q0, q0 + np.random.default_rng(0).uniform(-0.5, 0.5, q0.shape)])
    out = []
    for lp in loops:
        _, J, _ = loop_jacobian(model, [replace(lp, kind="pose")], qs)
        zero = np.all(np.abs(J).max(axis=-1) < 1e-12, axis=0)  # (6,): position x y z, rotation x y z
        normal = [k for k in range(3) if zero[k]]
        if len(normal) == 1:
            plane = "".join("xyz"[k] for k in range(3) if k != normal[0])
            in_plane_rotations = [3 + k for k in range(3) if k != normal[0]]
            if lp.kind == "position":
                lp = replace(lp, kind="planar", plane=plane)
            elif all(zero[r] for r in in_plane_rotations):
                lp = replace(lp, kind="planar_pose", plane=plane)
        out.append(lp)
    return out
