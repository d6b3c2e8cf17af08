"""Numbers of SDFormat links and joints: inertials, joint frames, axes, limits, dynamics, mimic.

Every pose comes from the frame table (:mod:`composedyn.importers.sdf_pose`), so the results are
independent of the SDFormat version's defaults, which :mod:`composedyn.importers.sdf_model`
applied when it read the elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.importers.sdf_model import WORLD, Description, Element
from composedyn.importers.sdf_pose import inverse, parse_pose
from composedyn.importers.sdf_xml import at, child, flag, value, values

TYPES = ("revolute", "continuous", "prismatic", "fixed", "ball", "universal", "screw")
KINDS = {"ball": "spherical", "screw": "helical"}  # SDFormat type -> the graph's, where they differ
NO_LIMIT = 1e16  # SDFormat's default position limits, +-1e16: no limit
DRAKE = "{http://drake.mit.edu}"
LIMIT_NAMES = ("lower", "upper", "velocity", "effort")  # the order of Joint.limits


@dataclass
class Joint:
    """One joint between links ``parent`` (or ``world``) and ``child``.

    X_PJ (4, 4): joint frame in the parent link frame at q = 0; axis (3,): unit, joint-frame axes;
    X_JC (4, 4): child link frame in the joint frame; limits (lower, upper, velocity, effort) with
    None for no limit; damping (N m s/rad or N s/m), friction (Coulomb, N m or N), armature
    (kg m^2 or kg); mimic None or (leader joint, multiplier, offset)."""

    name: str
    type: str
    parent: str
    child: str
    X_PJ: np.ndarray
    axis: np.ndarray
    X_JC: np.ndarray
    limits: tuple
    damping: float
    friction: float
    armature: float
    mimic: tuple | None
    spring: bool
    where: str
    axis2: np.ndarray | None = None  # a universal joint's second axis (joint-frame axes)
    pitch: float = 0.0  # a screw joint's translation per radian along its axis (m/rad)


def inertial(link: Element) -> dict | None:
    """Mass (kg), centre of mass (3,) and inertia (3, 3) about it in link axes; None without <inertial>."""
    src, el = link.scope.src, link.el
    inert = child(el, "inertial", src)
    if inert is None:
        return None
    where = f"{src}: link {link.name!r} {at(inert)}"
    if (inert.get("auto") or "").strip().lower() in ("true", "1"):
        raise ModelError(f"{where}: auto='true' (inertia computed from collision geometry) is not supported; "
                         "give <mass> and <inertia>")
    mass_el, inertia_el = child(inert, "mass", src), child(inert, "inertia", src)
    if mass_el is None:
        raise ModelError(f"{where} has no <mass> (SDFormat's default of 1 kg is not assumed)")
    m = values(mass_el, src, 1, what=f"link {link.name!r} {at(mass_el)}")
    if m < 0:
        raise ModelError(f"{where}: negative mass {m}")
    if inertia_el is None:
        raise ModelError(f"{where} has no <inertia> (SDFormat's default, 1 kg m^2 about each axis, is not assumed)")
    v = {}
    for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
        v[k] = value(inertia_el, k, src, 0.0 if k in ("ixy", "ixz", "iyz") else None)
        if v[k] is None:
            raise ModelError(f"{where}: <inertia> has no <{k}>")
    inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                        [v["ixz"], v["iyz"], v["izz"]]])
    pose_el = child(inert, "pose", src)
    if pose_el is not None and (pose_el.get("relative_to") or "").strip():
        raise ModelError(f"{src}: {at(pose_el)}: an <inertial> pose is relative to its link; relative_to is "
                         "not allowed there")
    X = parse_pose(pose_el, src)
    R = X[:3, :3]
    return {"mass": m, "com": X[:3, 3].copy(), "inertia": R @ inertia @ R.T}


def joint(d: Description, e: Element) -> Joint:
    """The :class:`Joint` of element ``e`` (its type checked, axis normalised)."""
    src, el, where = e.scope.src, e.el, e.where
    jtype = (el.get("type") or "").strip()
    if jtype not in TYPES:
        raise ModelError(f"{where}: unknown joint type {jtype!r} (supported: {', '.join(TYPES)})")
    parent, child_link = (d.link_of(e.ends[k], f"{where} <{k}>") for k in ("parent", "child"))
    if parent == child_link:
        raise ModelError(f"{where} connects link {parent!r} to itself")
    if child_link == WORLD:
        raise ModelError(f"{where}: its child frame is attached to the world")
    X_WJ = d.frames.world(e.key)
    X_WP = np.eye(4) if parent == WORLD else d.frames.world(parent)
    X_PJ, X_JC = inverse(X_WP) @ X_WJ, inverse(X_WJ) @ d.frames.world(child_link)
    axis, limits, coeffs, mimic, spring = np.array([0.0, 0.0, 1.0]), (None,) * 4, (0.0, 0.0), None, False
    axis2, pitch = None, 0.0
    if jtype not in ("fixed", "ball"):
        ax = child(el, "axis", src)
        if ax is None:
            raise ModelError(f"{where}: a {jtype} joint needs an <axis>")
        axis = _axis(d, e, ax, X_WJ)
        limits = _limits(ax, src, where, jtype)
        coeffs, spring = _dynamics(ax, src, where)
        mimic = _mimic(d, e, ax)
        if jtype == "universal":
            ax2 = child(el, "axis2", src)
            if ax2 is None:
                raise ModelError(f"{where}: a universal joint needs an <axis2>")
            axis2 = _axis(d, e, ax2, X_WJ)
            coeffs2, spring2 = _dynamics(ax2, src, where)
            _universal_terms(where, (limits, _limits(ax2, src, where, jtype)), (coeffs, coeffs2))
            limits, spring = (None,) * 4, spring or spring2
        if jtype == "screw":
            pitch = _pitch(el, src, where)
    return Joint(e.name, KINDS.get(jtype, jtype), parent, child_link, X_PJ, axis, X_JC, limits, *coeffs,
                 _armature(el, src, where), mimic, spring, where, axis2, pitch)


def _pitch(el, src: str, where: str) -> float:
    """A screw joint's translation per radian (m/rad): ``<screw_thread_pitch>`` (m per revolution,
    SDFormat 1.10) over 2 pi, or the legacy ``<thread_pitch>`` (radians per metre, opposite sign)
    as -1 / thread_pitch; SDFormat's default is one metre per revolution."""
    new, old = child(el, "screw_thread_pitch", src), child(el, "thread_pitch", src)
    if new is not None:
        return values(new, src, 1, what=f"{where} <screw_thread_pitch>") / (2.0 * math.pi)
    if old is not None:
        x = values(old, src, 1, what=f"{where} <thread_pitch>")
        if x == 0.0:
            raise ModelError(f"{where}: <thread_pitch> is zero (an infinite advance per turn)")
        return -1.0 / x
    return 1.0 / (2.0 * math.pi)


def _axis(d: Description, e: Element, ax, X_WJ: np.ndarray) -> np.ndarray:
    """The axis in joint-frame axes, from the frame it is expressed in."""
    src, scope = e.scope.src, e.scope
    xyz = child(ax, "xyz", src)
    a = np.array([0.0, 0.0, 1.0]) if xyz is None else np.array(values(xyz, src, 3, what=f"{e.where} <axis><xyz>"))
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ModelError(f"{e.where}: <axis><xyz> {a.tolist()} is zero")
    if scope.version < (1, 5):
        frame = scope.key  # SDFormat 1.4: the axis is in the model frame
    elif scope.legacy:
        frame = scope.key if flag(ax, "use_parent_model_frame", src) else e.key
    else:
        name = "" if xyz is None else (xyz.get("expressed_in") or "").strip()
        frame = scope.ref(name) if name else e.key
        if not d.frames.has(frame):
            raise ModelError(f"{e.where}: <xyz expressed_in={name!r}> names no frame in its scope")
    R = (inverse(X_WJ) @ d.frames.world(frame))[:3, :3]
    return R @ (a / n)


def _limits(ax, src: str, where: str, jtype: str) -> tuple:
    lim = child(ax, "limit", src)
    if lim is None:
        return (None,) * 4
    lo, hi, eff, vel = (value(lim, k, src, dflt, allow_inf=True) for k, dflt in
                        (("lower", -NO_LIMIT), ("upper", NO_LIMIT), ("effort", -1.0), ("velocity", -1.0)))
    lo = None if lo <= -NO_LIMIT or jtype == "continuous" else lo
    hi = None if hi >= NO_LIMIT or jtype == "continuous" else hi
    if lo is not None and hi is not None and lo > hi:
        raise ModelError(f"{where}: <limit> lower {lo} > upper {hi}")
    return lo, hi, (None if vel < 0 or math.isinf(vel) else vel), (None if eff < 0 or math.isinf(eff) else eff)


def _universal_terms(where: str, limits: tuple, coeffs: tuple) -> None:
    """A ModelWarning for what a universal joint's two coordinates cannot carry: position, velocity
    and effort limits (``robot.limits`` has none for a joint of several coordinates), and an
    ``<axis2>`` damping or friction other than ``<axis>``'s (one damping and one friction per joint,
    ``<axis>``'s on both coordinates, as Drake does)."""
    from composedyn.dynamics.schema import report_suspicious

    given = [f"<{tag}><limit> {', '.join(f'{k} {x:g}' for k, x in zip(LIMIT_NAMES, lim) if x is not None)}"
             for tag, lim in zip(("axis", "axis2"), limits) if any(x is not None for x in lim)]
    if given:
        report_suspicious(f"{where}: universal joint limits are ignored ({'; '.join(given)}): composedyn "
                          "holds no limits for a joint of several coordinates", False)
    differ = [f"{k} {a:g} (<axis>) and {b:g} (<axis2>)" for k, a, b in zip(("damping", "friction"), *coeffs) if a != b]
    if differ:
        report_suspicious(f"{where}: universal joint with {', '.join(differ)}: composedyn holds one value per joint "
                          "and applies <axis>'s to both coordinates (as Drake); <axis2>'s is ignored", False)


def _dynamics(ax, src: str, where: str) -> tuple[tuple[float, float], bool]:
    dyn = child(ax, "dynamics", src)
    if dyn is None:
        return (0.0, 0.0), False
    out = []
    for k in ("damping", "friction"):
        x = value(dyn, k, src, 0.0)
        if x < 0:
            raise ModelError(f"{where}: <dynamics><{k}> is negative ({x})")
        out.append(x)
    return tuple(out), value(dyn, "spring_stiffness", src, 0.0) != 0.0


def _armature(el, src: str, where: str) -> float:
    """Reflected rotor inertia from Drake's ``<drake:rotor_inertia>`` x ``<drake:gear_ratio>``^2."""
    rotor, gear = el.find(DRAKE + "rotor_inertia"), el.find(DRAKE + "gear_ratio")
    j = 0.0 if rotor is None else values(rotor, src, 1, what=f"{where} <drake:rotor_inertia>")
    r = 1.0 if gear is None else values(gear, src, 1, what=f"{where} <drake:gear_ratio>")
    if j < 0:
        raise ModelError(f"{where}: <drake:rotor_inertia> is negative ({j})")
    return j * r * r


def _mimic(d: Description, e: Element, ax) -> tuple | None:
    """SDFormat 1.11 ``<mimic>``: follower = multiplier (leader - reference) + offset."""
    src = e.scope.src
    m = child(ax, "mimic", src)
    if m is None:
        return None
    leader = e.scope.prefix + (m.get("joint") or "").strip()
    if leader not in d.joints or leader == e.name:
        raise ModelError(f"{e.where}: <mimic joint={m.get('joint')!r}> names "
                         + ("the joint itself" if leader == e.name else "no joint of its model"))
    if (m.get("axis") or "axis").strip() != "axis":
        raise ModelError(f"{e.where}: <mimic axis={m.get('axis')!r}>: only single-axis leaders are supported")
    mult, off, ref = (value(m, k, src, dflt) for k, dflt in (("multiplier", 1.0), ("offset", 0.0), ("reference", 0.0)))
    return leader, mult, off - mult * ref
