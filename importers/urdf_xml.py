"""Safe parsing and element-level checks of URDF XML, before the graph is built.

The parser never loads a DTD, never expands entities and never touches the
network; any ``<!DOCTYPE>`` is refused, so an external entity cannot read the
file it names and exponentially nested entities cannot exhaust memory.  Every
element that composedyn uses is then checked here, so that bad input gives one
:class:`~composedyn.ModelError` naming the file, the element and its line
instead of a bare ``KeyError``/``ValueError``, and so that duplicate names are
caught before a name map silently keeps only the last one.  Elements that
dynamics never reads (geometry, materials, calibration, safety controllers,
transmissions, Gazebo tags) are not looked at, so their oddities cannot reject
a robot.
"""

from __future__ import annotations

import math
import re

from lxml import etree

from composedyn.dynamics.errors import ModelError

XmlElement = etree._Element  # the type of lxml's elements, which lxml names only privately
SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")  # the last two: root joint only


def parse_xml(text: bytes, src: str, fmt: str = "URDF") -> XmlElement:
    """Parse XML bytes into the root element with the hardened parser (no DTD loaded, no entities,
    no network, comments and processing instructions dropped); ``fmt`` names the format in messages.

    The parser reads a document type declaration without loading or expanding anything; the
    parsed document is then refused if it has one (so ``<!DOCTYPE`` inside a comment or a string
    is harmless text, as XML says).  An XML declaration after a leading comment is dropped."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(text, parser=parser)
    except etree.XMLSyntaxError as e:
        late = late_declaration_removed(text) if "XML declaration allowed only at the start" in str(e) else None
        if late is not None:
            return parse_xml(late, src, fmt)
        msg = re.sub(r" \(<string>, line \d+\)$", "", str(e))
        raise ModelError(f"{src}: malformed XML: {msg}") from None
    info = root.getroottree().docinfo
    if info.doctype or info.internalDTD is not None or any(True for _ in root.iter(etree.Entity)):
        raise ModelError(f"{src}: <!DOCTYPE> and entity references are not allowed in {fmt}")
    return root


def late_declaration_removed(text: bytes) -> bytes | None:
    """``text`` without an ``<?xml ...?>`` declaration that follows a comment (a licence header
    above it, which the reference parsers of URDF and SDFormat read), None when there is none."""
    out, n = re.subn(rb"\A((?:\s|<!--.*?-->)*?<!--.*?-->\s*)<\?xml[^>]*\?>", rb"\1", text, count=1, flags=re.S)
    return out if n else None


def parse_robot_xml(text: bytes, src: str) -> XmlElement:
    """Parse URDF bytes into the ``<robot>`` element, refusing DTDs and entities."""
    root = parse_xml(text, src, "URDF")
    if root.tag != "robot":
        raise ModelError(f"{src}: root element is <{root.tag}>, expected <robot>")
    if not root.get("name"):
        raise ModelError(f"{src}: <robot> element (line {root.sourceline}) has no 'name' attribute")
    return root


def at(el) -> str:
    """``<tag> (line N)`` for messages; just ``(line N)`` for a named link or joint."""
    if el.tag in ("link", "joint") and el.get("name"):
        return f"(line {el.sourceline})"
    return f"<{el.tag}> (line {el.sourceline})"


def numbers(el, key: str, src: str, where: str, n: int = 1, default=None, allow_inf: bool = False):
    """Attribute ``key`` of ``el`` as ``n`` floats (a float when n == 1).

    ``default`` is returned when the attribute is absent; with ``default=None``
    the attribute is required.  NaN is always an error; infinities unless
    ``allow_inf``.
    """
    raw = el.get(key)
    if raw is None:
        if default is None:
            raise ModelError(f"{src}: {where} {at(el)} lacks attribute {key!r}")
        return default
    try:
        vals = [float(s) for s in raw.split()]
    except ValueError:
        raise ModelError(f"{src}: {where} {at(el)} {key}={raw!r} is not numeric") from None
    if len(vals) != n:
        raise ModelError(f"{src}: {where} {at(el)} {key}={raw!r} has {len(vals)} numbers, expected {n}")
    if any(math.isnan(v) or (math.isinf(v) and not allow_inf) for v in vals):
        raise ModelError(f"{src}: {where} {at(el)} {key}={raw!r} is not finite")
    return vals[0] if n == 1 else tuple(vals)


def _named(root, tag: str, src: str) -> dict:
    """name -> element for every ``<tag>`` child of root; missing or duplicate names raise."""
    out = {}
    for el in root.findall(tag):
        name = el.get("name")
        if not name:
            raise ModelError(f"{src}: a {at(el)} element has no 'name' attribute")
        if name in out:
            raise ModelError(f"{src}: duplicate {tag} name {name!r} (lines {out[name].sourceline} and {el.sourceline})")
        out[name] = el
    return out


def check_robot(root, src: str) -> None:
    """Check names, references, joint types and every number composedyn uses."""
    links, joints = _named(root, "link", src), _named(root, "joint", src)
    if not links:
        raise ModelError(f"{src}: robot {root.get('name')!r} has no <link>")
    for name, el in links.items():
        _check_link(el, f"link {name!r}", src)
    child_of = {}
    for name, el in joints.items():
        where = f"joint {name!r}"
        _check_joint_type(el, where, src)
        ends = []
        for tag in ("parent", "child"):
            sub = el.find(tag)
            if sub is None or not sub.get("link"):
                raise ModelError(f"{src}: {where} {at(el)} has no <{tag} link=...>")
            if sub.get("link") not in links:
                raise ModelError(f"{src}: {where} names missing link {sub.get('link')!r}")
            ends.append(sub.get("link"))
        if ends[0] == ends[1]:
            raise ModelError(f"{src}: {where} connects link {ends[0]!r} to itself")
        if ends[1] in child_of:
            raise ModelError(f"{src}: link {ends[1]!r} is the child of two joints, {child_of[ends[1]]!r} and {name!r}")
        child_of[ends[1]] = name
        _check_joint_numbers(el, where, src, joints)


def _origin(parent, src: str, where: str) -> None:
    o = parent.find("origin")
    if o is not None:
        numbers(o, "xyz", src, where, 3, default=(0.0,) * 3)
        numbers(o, "rpy", src, where, 3, default=(0.0,) * 3)


def _check_link(el, where: str, src: str) -> None:
    inertial = el.find("inertial")
    if inertial is None:
        return
    _origin(inertial, src, where)
    mass, inertia = inertial.find("mass"), inertial.find("inertia")
    if mass is None or inertia is None:
        raise ModelError(f"{src}: {where} {at(inertial)} needs both <mass> and <inertia>")
    m = numbers(mass, "value", src, where)
    if m < 0:
        raise ModelError(f"{src}: {where} has negative mass {m}")
    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        numbers(inertia, key, src, where)


def _check_joint_type(el, where: str, src: str) -> None:
    jtype = el.get("type")
    if jtype not in SUPPORTED:
        raise ModelError(f"{src}: {where} {at(el)} has unknown type {jtype!r} (supported: {', '.join(SUPPORTED)})")


def _check_joint_numbers(el, where: str, src: str, joints: dict) -> None:
    _origin(el, src, where)
    axis = el.find("axis")
    if axis is not None:
        xyz = numbers(axis, "xyz", src, where, 3, default=(1.0, 0.0, 0.0))
        if el.get("type") != "fixed" and math.hypot(*xyz) < 1e-9:
            raise ModelError(f"{src}: {where} {at(axis)} has a zero axis {axis.get('xyz')!r}")
    lim = el.find("limit")
    if lim is not None:
        lo, hi, vel, eff = (numbers(lim, k, src, where, default=d, allow_inf=True)
                            for k, d in (("lower", -math.inf), ("upper", math.inf),
                                         ("velocity", math.inf), ("effort", math.inf)))
        if el.get("type") != "continuous" and lo > hi:
            raise ModelError(f"{src}: {where} {at(lim)} has lower {lo} > upper {hi}")
        if vel < 0 or eff < 0:
            raise ModelError(f"{src}: {where} {at(lim)} has a negative velocity or effort limit")
    dyn = el.find("dynamics")
    if dyn is not None:
        for key in ("damping", "friction", "armature"):
            if numbers(dyn, key, src, where, default=0.0) < 0:
                raise ModelError(f"{src}: {where} {at(dyn)} has negative {key}")
    mimic = el.find("mimic")
    if mimic is not None:
        target = mimic.get("joint")
        if target not in joints or target == el.get("name"):
            what = "itself" if target == el.get("name") else f"unknown joint {target!r}"
            raise ModelError(f"{src}: {where} {at(mimic)} mimics {what}")
        numbers(mimic, "multiplier", src, where, default=1.0)
        numbers(mimic, "offset", src, where, default=0.0)
