"""Safe reading of SDFormat XML: the hardened parser, the version, and checked element values.

SDFormat stores values as element text (``<mass>2.5</mass>``) where URDF uses attributes; every
value composedyn reads goes through :func:`values` or :func:`flag`, so bad input is one
:class:`~composedyn.ModelError` naming the file, the element, its line and what is wrong.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from composedyn.dynamics.errors import ModelError
from composedyn.importers.urdf_xml import XmlElement, parse_xml

VERSIONS = ("1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11")


def read_source(path_or_xml, what: str = "SDFormat") -> tuple[bytes, str, Path | None]:
    """(XML bytes, name used in messages, the file's path or None) from a path or an XML string."""
    if isinstance(path_or_xml, (bytes, bytearray)):
        return bytes(path_or_xml), "<sdf string>", None
    if isinstance(path_or_xml, str) and path_or_xml.lstrip("\ufeff \t\r\n").startswith("<"):
        return path_or_xml.lstrip("\ufeff \t\r\n").encode("utf-8"), "<sdf string>", None
    if not isinstance(path_or_xml, (str, os.PathLike)):
        raise ModelError(f"from_sdf expects a path or an XML string, got {type(path_or_xml).__name__}")
    p = Path(path_or_xml)
    if p.is_dir():
        raise ModelError(f"{p}: is a directory, not an {what} file")
    if not p.is_file():
        raise ModelError(f"{p}: no such {what} file")
    try:
        return p.read_bytes(), str(p), p.resolve()
    except OSError as e:
        raise ModelError(f"{p}: cannot read {what} file: {e.strerror}") from None


KNOWN_NAMESPACES = {b"drake": b"http://drake.mit.edu"}


def parse_sdf(text: bytes, src: str) -> tuple[XmlElement, tuple[int, int]]:
    """The ``<sdf>`` root element and its version as (major, minor); DTDs and entities refused.

    Element prefixes that the file uses without declaring them (``<drake:rotor_inertia>``,
    ``<gz:...>``: libsdformat does not check namespaces) are declared on ``<sdf>`` first."""
    for _ in range(32):
        try:
            root = parse_xml(text, src, "SDFormat")
            break
        except ModelError as e:
            m = re.search(r"Namespace prefix ([A-Za-z_][\w.-]*) on \S+ is not defined", str(e))
            declared = None if m is None else _declare(text, m.group(1).encode())
            if declared is None:
                raise
            text = declared
    if root.tag != "sdf":
        raise ModelError(f"{src}: root element is <{root.tag}>, expected <sdf>")
    raw = (root.get("version") or "").strip()
    if raw not in VERSIONS:
        what = "has no 'version' attribute" if not raw else f"has version {raw!r}"
        raise ModelError(f"{src}: <sdf> (line {root.sourceline}) {what}; supported: {', '.join(VERSIONS)}")
    major, minor = raw.split(".")
    return root, (int(major), int(minor))


def _declare(text: bytes, prefix: bytes) -> bytes | None:
    """``text`` with ``xmlns:prefix`` declared on its ``<sdf>`` element (None without one)."""
    uri = KNOWN_NAMESPACES.get(prefix, b"urn:undeclared:" + prefix)
    out, n = re.subn(rb"<sdf(?=[\s>/])", b'<sdf xmlns:' + prefix + b'="' + uri + b'"', text, count=1)
    return out if n else None


def at(el) -> str:
    """``<tag name='x'> (line N)`` for messages."""
    name = el.get("name")
    return f"<{el.tag}{'' if name is None else f' name={name!r}'}> (line {el.sourceline})"


def child(el, tag: str, src: str):
    """The single ``<tag>`` child of ``el`` or None; ModelError when there are several."""
    found = el.findall(tag)
    if len(found) > 1:
        raise ModelError(f"{src}: {at(el)} has {len(found)} <{tag}> elements, expected one")
    return found[0] if found else None


def text(el, tag: str, src: str, default: str | None = None) -> str | None:
    """Stripped text of the ``<tag>`` child of ``el``, ``default`` when absent."""
    sub = child(el, tag, src)
    if sub is None:
        return default
    return (sub.text or "").strip()


def values(el, src: str, n: int | None = 1, allow_inf: bool = False, what: str | None = None):
    """The text of element ``el`` as ``n`` floats (a float when n == 1; any count when n is None).

    NaN is always an error, infinities unless ``allow_inf``."""
    raw = (el.text or "").strip()
    try:
        vals = [float(s) for s in raw.split()]
    except ValueError:
        raise ModelError(f"{src}: {what or at(el)}: {raw!r} is not numeric") from None
    if n is not None and len(vals) != n:
        raise ModelError(f"{src}: {what or at(el)}: {raw!r} has {len(vals)} numbers, expected {n}")
    if any(math.isnan(v) or (math.isinf(v) and not allow_inf) for v in vals):
        raise ModelError(f"{src}: {what or at(el)}: {raw!r} is not finite")
    return vals[0] if n == 1 else vals


def value(el, tag: str, src: str, default: float | None, allow_inf: bool = False) -> float | None:
    """The number in the ``<tag>`` child of ``el``; ``default`` when absent."""
    sub = child(el, tag, src)
    return default if sub is None else values(sub, src, 1, allow_inf)


def flag(el, tag: str, src: str, default: bool = False) -> bool:
    """A boolean child element (``true``/``false``/``1``/``0``)."""
    raw = text(el, tag, src)
    if raw is None:
        return default
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise ModelError(f"{src}: {at(child(el, tag, src))}: {raw!r} is not a boolean (true/false/1/0)")
