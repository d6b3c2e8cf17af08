"""Actuators, equality constraints and unmapped features of a compiled MuJoCo model.

* Actuators with a joint transmission give the joint's effort limit, ``|gear| F`` summed over
  the joint's actuators, where ``F`` is the largest actuator force: ``max |forcerange|`` when
  force-limited, ``|gain| max |ctrlrange|`` for a motor (fixed gain, no bias, no activation
  dynamics) with limited controls, the smaller of the two when both apply; the joint's own
  ``actuatorfrcrange`` caps the sum.  An actuator's ``armature`` and ``damping`` reflect onto
  its joint as ``gear² armature`` and ``gear² damping`` (as MuJoCo does).
* ``<equality joint>`` with a linear polynomial ``y - y0 = a0 + a1 (x - x0)`` (``y0``, ``x0``
  the joints' ``ref``) makes ``joint1`` a mimic joint of ``joint2``:
  ``y = a1 x + (a0 + y0 - a1 x0)``.
* ``<equality connect>``/``<equality weld>`` (loop closures) are refused; tendons, sensors,
  contact pairs and exclusions, other or inactive equalities, actuators on other
  transmissions, joint springs, gravity compensation and flexes are listed in one ModelWarning.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.schema import report_suspicious
from composedyn.importers.mjcf_graph import name_of

JOINT_TRN = (0, 1)  # mjTRN_JOINT, mjTRN_JOINTINPARENT
EQ_CONNECT, EQ_WELD, EQ_JOINT = 0, 1, 2  # mjtEq
OBJ_SITE = 6  # mjtObj.mjOBJ_SITE
_EQ_KIND = ("connect", "weld", "joint", "tendon", "flex", "flexvert", "flexstrain", "distance")


def field(model, name: str, i: int) -> np.ndarray:
    """Row ``i`` of the model array ``name``, zeros when this MuJoCo version has no such array
    (actuator armature and damping, polynomial stiffness and damping came in later releases)."""
    arr = getattr(model, name, None)
    return np.zeros(1) if arr is None else np.atleast_1d(arr[i])


def _edges(g: nx.DiGraph) -> dict:
    """Joint name -> (parent, child) of every moving joint of the graph."""
    return {d["name"]: (u, v) for u, v, d in g.edges(data=True) if d["type"] not in ("fixed", "floating")}


def _force_bound(model, a: int) -> float:
    """Largest force (N or N m, before the gear) actuator ``a`` can produce; inf when unbounded."""
    from composedyn.importers.mujoco_module import import_mujoco

    mujoco = import_mujoco()
    bounds = []
    if model.actuator_forcelimited[a]:
        bounds.append(float(np.abs(model.actuator_forcerange[a]).max()))
    motor = (int(model.actuator_gaintype[a]) == int(mujoco.mjtGain.mjGAIN_FIXED)
             and int(model.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_NONE)
             and int(model.actuator_dyntype[a]) == int(mujoco.mjtDyn.mjDYN_NONE))
    clamped = not int(model.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL)
    if motor and clamped and model.actuator_ctrllimited[a]:
        bounds.append(abs(float(model.actuator_gainprm[a, 0])) * float(np.abs(model.actuator_ctrlrange[a]).max()))
    return min(bounds) if bounds else math.inf


def apply_actuators(model, g: nx.DiGraph) -> None:
    """Effort limits, reflected armature and damping of the joints driven by actuators."""
    edges = _edges(g)
    effort: dict[str, float] = {}
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) not in JOINT_TRN:
            continue
        joint = name_of(model, "joint", int(model.actuator_trnid[a, 0]))
        if joint not in edges:
            continue
        gear = float(model.actuator_gear[a, 0])
        effort[joint] = effort.get(joint, 0.0) + abs(gear) * _force_bound(model, a)
        d = g.edges[edges[joint]]
        d["armature"] += gear * gear * float(field(model, "actuator_armature", a)[0])
        d["damping"] += gear * gear * float(field(model, "actuator_damping", a)[0])
    for j in range(model.njnt):
        joint = name_of(model, "joint", j)
        if joint in edges and model.jnt_actfrclimited[j]:
            effort[joint] = min(effort.get(joint, math.inf), float(np.abs(model.jnt_actfrcrange[j]).max()))
    for joint, value in effort.items():
        if math.isfinite(value):
            d = g.edges[edges[joint]]
            d["limits"] = tuple(d["limits"][:3]) + (value,)


def _body_pair(model, e: int) -> str:
    objtype = getattr(model, "eq_objtype", None)
    kind = "site" if objtype is not None and int(objtype[e]) == OBJ_SITE else "body"
    a, b = (name_of(model, kind, int(i)) for i in (model.eq_obj1id[e], model.eq_obj2id[e]))
    return f"{'sites' if kind == 'site' else 'bodies'} {a!r} and {b!r}"


def _bodies_joined(model, e: int) -> set[int]:
    """Ids of the bodies a connect or weld equality joins (the bodies of its sites, for site ends)."""
    ids = (int(model.eq_obj1id[e]), int(model.eq_obj2id[e]))
    objtype = getattr(model, "eq_objtype", None)
    if objtype is not None and int(objtype[e]) == OBJ_SITE:
        return {int(model.site_bodyid[i]) for i in ids}
    return set(ids)


def apply_equalities(model, g: nx.DiGraph, src: str, bodies, loops: list | None = None) -> list[str]:
    """Mimic joints from active ``<equality joint>`` elements within the robot; ModelError for
    non-linear couplings, and for loop closures unless ``loops`` is a list to collect their
    equality ids in.  Returns the equalities left out (for the warning)."""
    edges, inside, ignored = _edges(g), set(bodies), []
    for e in range(model.neq):
        kind, name = int(model.eq_type[e]), name_of(model, "equality", e)
        label = f"<equality {_EQ_KIND[kind] if kind < len(_EQ_KIND) else kind}> {name!r}"
        if not model.eq_active0[e]:
            ignored.append(f"{label} (inactive)")
        elif kind in (EQ_CONNECT, EQ_WELD):
            ends = _bodies_joined(model, e) - {0}
            mocap = [b for b in ends if model.body_mocapid[b] >= 0]
            if mocap or not ends & inside:  # driven by a mocap body, or between bodies of the scene
                what = f"to mocap body {name_of(model, 'body', mocap[0])!r}" if mocap else "outside the robot"
                ignored.append(f"{label} ({what})")
            elif loops is not None:
                loops.append(e)
            else:
                raise ModelError(f"{src}: {label} between {_body_pair(model, e)} closes a kinematic loop; "
                                 "load it with composedyn.load_closed_chain")
        elif kind == EQ_JOINT:
            _mimic(model, g, src, e, label, edges)
        else:
            ignored.append(label)
    return ignored


def _mimic(model, g: nx.DiGraph, src: str, e: int, label: str, edges: dict) -> None:
    """``joint1 = a1 joint2 + (a0 + ref1 - a1 ref2)`` on joint1's edge."""
    j1, j2 = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
    y = name_of(model, "joint", j1)
    if y not in edges:
        return
    coef = np.array(model.eq_data[e, :5], dtype=float)
    if np.any(coef[2:] != 0.0):
        raise ModelError(f"{src}: {label} couples joint {y!r} by a polynomial of degree > 1 "
                         f"(polycoef {' '.join(f'{c:g}' for c in coef)}); only linear couplings map to mimic joints")
    if j2 < 0:
        raise ModelError(f"{src}: {label} locks joint {y!r} at a constant (no joint2); remove the joint "
                         "or make it part of the body instead")
    x = name_of(model, "joint", j2)
    if x not in edges:
        raise ModelError(f"{src}: {label} couples joint {y!r} to {x!r}, which is not part of the robot")
    d = g.edges[edges[y]]
    if d["mimic"] is not None:
        raise ModelError(f"{src}: {label}: joint {y!r} is already coupled to {d['mimic'][0]!r}")
    ref_y = float(model.qpos0[model.jnt_qposadr[j1]])
    ref_x = float(model.qpos0[model.jnt_qposadr[j2]])
    d["mimic"] = (x, float(coef[1]), float(coef[0] + ref_y - coef[1] * ref_x))


def check_reflected_inertia(model, src: str) -> None:
    """ModelError when tendons or non-joint actuators add inertia to the mass matrix (no counterpart)."""
    for t in range(model.ntendon):
        armature = float(field(model, "tendon_armature", t)[0])
        if armature != 0.0:
            raise ModelError(f"{src}: tendon {name_of(model, 'tendon', t)!r} has armature "
                             f"{armature:g}; inertia through tendons is not supported")
    for a in range(model.nu):
        armature = float(field(model, "actuator_armature", a)[0])
        if int(model.actuator_trntype[a]) not in JOINT_TRN and armature != 0.0:
            raise ModelError(f"{src}: actuator {name_of(model, 'actuator', a)!r} has armature "
                             f"{armature:g} on a non-joint transmission; not supported")


def warn_ignored(model, src: str, bodies, dropped: list[str], equalities: list[str]) -> None:
    """One ModelWarning listing what has no counterpart in composedyn and was left out."""
    inside = set(bodies)
    joints = [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) in inside]

    def names(kind: str, ids) -> str:
        ids = list(ids)
        shown = [name_of(model, kind, i) for i in ids[:8]]
        return ", ".join(shown) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")

    parts = []
    for kind, count, what in (("tendon", model.ntendon, "tendons"), ("sensor", model.nsensor, "sensors"),
                              ("pair", model.npair, "contact pairs"), ("exclude", model.nexclude, "contact exclusions"),
                              ("flex", model.nflex, "flexes")):
        if count:
            parts.append(f"{what} ({names(kind, range(count))})")
    if equalities:
        parts.append(f"equalities ({', '.join(equalities)})")
    other = [a for a in range(model.nu) if int(model.actuator_trntype[a]) not in JOINT_TRN]
    if other:
        parts.append(f"actuators on tendons, sites or bodies ({names('actuator', other)})")
    springs = [j for j in joints if model.jnt_stiffness[j] != 0.0 or field(model, "jnt_stiffnesspoly", j).any()]
    if springs:
        parts.append(f"joint springs ({names('joint', springs)})")
    poly = [j for j in joints
            if int(model.jnt_type[j]) != 0 and field(model, "dof_dampingpoly", int(model.jnt_dofadr[j])).any()]
    if poly:
        parts.append(f"non-linear damping ({names('joint', poly)})")
    gravcomp = [b for b in bodies if model.body_gravcomp[b] != 0.0]
    if gravcomp:
        parts.append(f"gravity compensation ({names('body', gravcomp)})")
    if dropped:
        parts.append(f"bodies outside the robot ({', '.join(dropped[:8])}{' ...' if len(dropped) > 8 else ''})")
    if parts:
        report_suspicious(f"{src}: not mapped (no counterpart in composedyn), ignored: " + "; ".join(parts), False)
