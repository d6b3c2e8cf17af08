"""The structure of an SDFormat description: models, nested models, includes, names and frames.

:class:`Reader` walks the chosen ``<model>`` (a model file's, or the one model of a ``<world>``)
with its nested models and ``<include>`` s, and records every link, joint and ``<frame>`` under its
scoped name (``inner::link`` for a link of nested model ``inner``; the top model's own elements
keep their names) and every frame's pose in :class:`~composedyn.importers.sdf_pose.Frames`, with
the defaults of the SDFormat version of the file the element comes from:

* 1.7 and later: a link's pose is relative to its model frame, a joint's to its child frame, a
  ``<frame>`` 's to the frame it is attached to (default: the model frame), a nested model's to
  the enclosing model frame; ``<pose relative_to>`` names another frame of the same scope
  (from 1.8 also of nested scopes, ``inner::frame``); a model frame is attached to the model's
  canonical link (``canonical_link``, else its first link, else its first nested model's);
* 1.4 to 1.6: links (and nested models) relative to their model frame, joints to their child
  link, no ``relative_to`` (a ``<pose frame>`` attribute has no defined meaning: refused).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from composedyn.dynamics.errors import ModelError
from composedyn.importers.sdf_include import resolve_uri
from composedyn.importers.sdf_pose import WORLD, Frames, FrameSpec, parse_pose
from composedyn.importers.sdf_xml import at, child, flag, parse_sdf, text, values
from composedyn.importers.urdf_xml import XmlElement

NOT_YET = {"revolute2": "two rotations about independent axes", "gearbox": "a gear coupling of two joints"}
WORLD_SCOPE = "::world::"


@dataclass
class Scope:
    """A model's naming scope: ``prefix`` of its elements' keys, its file and SDFormat version."""

    prefix: str
    key: str
    src: str
    version: tuple[int, int]
    base: Path | None

    @property
    def legacy(self) -> bool:
        """SDFormat 1.4-1.6 pose semantics."""
        return self.version < (1, 7)

    def ref(self, name: str) -> str:
        """The key of a frame named ``name`` inside this scope."""
        if name == WORLD:
            return WORLD
        if name == "__model__":
            return self.key
        return self.prefix + name


@dataclass
class Element:
    """A link, joint or ``<frame>``: its scoped ``name``, XML element and scope."""

    name: str
    el: XmlElement
    scope: Scope
    key: str = ""
    ends: dict = field(default_factory=dict)  # joints: "parent", "child" -> frame keys

    @property
    def where(self) -> str:
        return f"{self.scope.src}: {at(self.el)}"


@dataclass
class Description:
    """Everything read from the files: elements in document order, the frame table, the model."""

    name: str
    src: str
    frames: Frames = field(default_factory=Frames)
    links: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    frame_elements: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)  # frame key -> (kind, key of the frame it rides on)
    canonical: str = ""
    static: bool = False
    gravity: tuple | None = None

    def link_of(self, key: str, where: str) -> str:
        """The link (or ``world``) a frame rides on: joints on their child, frames on what they are
        attached to, model frames on their canonical link."""
        key, seen = self.frames.key(key), []
        while key != WORLD:
            if key not in self.kinds:
                what = f"frame {seen[-1]!r} is attached to {key!r}" if seen else f"names {key!r}"
                raise ModelError(f"{where}: {what}, which is no frame in its scope")
            kind, target = self.kinds[key]
            if kind == "link":
                return key
            if key in seen:
                raise ModelError(f"{where}: attached_to cycle {' -> '.join(seen + [key])}")
            seen.append(key)
            key = self.frames.key(target)
        return WORLD


def default_physics(world):
    """The world's default ``<physics>`` profile: the one with ``default="true"``, else the first (as
    libsdformat chooses); None without one."""
    profiles = world.findall("physics")
    marked = [p for p in profiles if (p.get("default") or "").strip().lower() in ("true", "1")]
    return (marked or profiles or [None])[0]


class Reader:
    """Reads one SDFormat source into a :class:`Description` (see the module docstring)."""

    def __init__(self, package_dirs=()) -> None:
        if isinstance(package_dirs, (str, os.PathLike)):
            package_dirs = [package_dirs]  # one folder, not its characters
        self.package_dirs = tuple(package_dirs or ())

    def read(self, text_bytes: bytes, src: str, path: Path | None, model: str | None = None) -> Description:
        root, version = parse_sdf(text_bytes, src)
        base = None if path is None else path.parent
        world_scope = Scope(WORLD_SCOPE, WORLD, src, version, base)
        chain = [path] if path is not None else []
        el, scope_src, scope_version, scope_base, name, pose, extra = self._top(root, world_scope, model, chain)
        d = Description(name=name, src=src)
        self.d = d
        if root.find("world") is not None:
            self._world(root.find("world"), world_scope)
        self._model(el, world_scope, scope_src, scope_version, scope_base, name, pose, extra, chain)
        d.canonical = d.link_of("__model__", f"{src}: model {name!r}")
        for key in list(d.frames.specs):  # every pose resolves: dangling names and cycles found here
            d.frames.world(key)
        return d

    # ---- choosing the model --------------------------------------------------------------
    def _top(self, root, world_scope: Scope, model: str | None, chain):
        """The top model: (element, file, version, folder, name, pose override, include extras)."""
        worlds, models = root.findall("world"), root.findall("model")
        src = world_scope.src
        if len(worlds) + len(models) != 1:
            found = [at(e) for e in worlds + models]
            raise ModelError(f"{src}: expected one <model> or one <world> in <sdf>, found {found or 'none'}")
        if models:
            el = models[0]
            if model is not None and el.get("name") != model:
                raise ModelError(f"{src}: the file's model is {el.get('name')!r}, not {model!r}")
            return el, src, world_scope.version, world_scope.base, el.get("name"), None, {}
        world = worlds[0]
        if world.findall("joint"):
            raise ModelError(f"{src}: {at(world.find('joint'))}: joints between the models of a world "
                             "are not supported; load one model")
        cands = [(e.get("name") if e.tag == "model" else text(e, "name", src), e)
                 for e in world if e.tag in ("model", "include")]
        if not cands:
            raise ModelError(f"{src}: {at(world)} has no <model> or <include>")
        for _, e in cands:
            if e.tag == "include" and (e.get("merge") or "").strip().lower() in ("true", "1"):
                raise ModelError(f"{src}: {at(e)}: merge='true' merges a model into a model, not into a world")
        if model is None and len(cands) > 1:  # unnamed includes are not resolved just to list them
            labels = [n if n is not None else f"<include {text(e, 'uri', src)}>" for n, e in cands]
            raise ModelError(f"{src}: the world has {len(cands)} models {labels}; "
                             "choose one with model=NAME (command line: --model NAME; composedyn describes one robot)")
        picked = [(n, e) for n, e in cands if model is None or n == model]
        if not picked:  # an include without <name> is named by its model
            named, unresolved = [], []
            for n, e in cands:
                if n is None:
                    try:
                        n = self._include_target(e, world_scope, chain)[0].get("name")
                    except ModelError as error:  # another model of the world (Gazebo's sun, ground plane...)
                        unresolved.append(error)
                named.append((n, e))
            picked = [(n, e) for n, e in named if n == model]
            if not picked and unresolved:
                found = [n for n, _ in named if n is not None]
                raise ModelError(f"{src}: no model {model!r} among the world's models that were found ({found}); "
                                 f"it may be one that was not: {unresolved[0]}")
            if not picked:
                raise ModelError(f"{src}: the world has no model {model!r} (models: {[n for n, _ in named]})")
        if picked[0][0] is None:
            picked = [(self._include_target(picked[0][1], world_scope, chain)[0].get("name"), picked[0][1])]
        name, e = picked[0]
        if e.tag == "model":
            return e, src, world_scope.version, world_scope.base, name, None, {}
        el, isrc, iversion, ibase, ichain = self._include_target(e, world_scope, chain)
        extras = self._include_extras(e, src, ichain)
        return el, isrc, iversion, ibase, name, child(e, "pose", src), extras

    def _world(self, world, scope: Scope) -> None:
        """World-level frames (a model's pose may be relative to them) and gravity (SDFormat 1.4: the
        default ``<physics>`` profile's)."""
        src = scope.src
        g = child(world, "gravity", src)
        physics = default_physics(world)
        if g is None and physics is not None:
            g = child(physics, "gravity", src)  # SDFormat 1.4
        if g is not None:
            self.d.gravity = tuple(values(g, src, 3))
        if scope.legacy:
            return
        for f in world.findall("frame"):
            self._frame(f, scope)

    def _include_target(self, inc, parent: Scope, chain):
        """(model element, file, version, folder, include chain) of an ``<include>``."""
        src = parent.src
        where = f"{src}: {at(inc)}"
        uri = text(inc, "uri", src)
        if uri is None:
            raise ModelError(f"{where} has no <uri>")
        path = resolve_uri(uri, parent.base, self.package_dirs, where)
        if path in chain:
            names = " -> ".join(str(p) for p in chain[chain.index(path):] + [path])
            raise ModelError(f"{where}: include cycle {names}")
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ModelError(f"{where}: cannot read {path}: {e.strerror}") from None
        root, version = parse_sdf(data, str(path))
        models = root.findall("model")
        if len(models) != 1:
            raise ModelError(f"{path}: an included file must hold one <model>, found {len(models)}")
        return models[0], str(path), version, path.parent, chain + [path]

    def _include_extras(self, inc, src: str, chain) -> dict:
        extras = {"chain": chain, "merge": (inc.get("merge") or "").strip().lower() in ("true", "1")}
        if child(inc, "static", src) is not None:
            extras["static"] = flag(inc, "static", src)
        if child(inc, "placement_frame", src) is not None:
            extras["placement"] = text(inc, "placement_frame", src)
        return extras

    # ---- a model and its elements --------------------------------------------------------
    def _model(self, el, parent: Scope, src, version, base, name, pose_el, extra, chain) -> str | None:
        """Read model ``el`` (a nested one in scope ``parent``) and return its first link's key.

        ``extra``: from an ``<include>`` (its ``static``, ``placement``, include ``chain``, and
        ``merge``: the model's elements join the parent's scope and its model frame becomes the
        frame ``_merged__<name>__model__``, as SDFormat 1.9 specifies)."""
        d = self.d
        if not name:
            raise ModelError(f"{src}: {at(el)} has no 'name'")
        top = parent.key == WORLD
        merge = extra.get("merge", False)
        prefix = "" if top else parent.prefix if merge else parent.prefix + name + "::"
        key = parent.prefix + f"_merged__{name}__model__" if merge else prefix + "__model__"
        scope = Scope(prefix, key, src, version, base)
        chain = extra.get("chain", chain)
        static = extra.get("static", flag(el, "static", src))
        if top:
            d.static = static
        elif static:
            raise ModelError(f"{src}: {at(el)}: a static nested model is not supported")
        if pose_el is None:
            pose_el, pose_src, pose_scope = child(el, "pose", src), src, parent
        else:  # an <include>'s <pose>: its relative_to is in the including scope
            pose_src, pose_scope = parent.src, parent
        placement = extra.get("placement", el.get("placement_frame") if version >= (1, 8) else None)
        self._add_pose(scope.key, pose_el, pose_src, pose_scope, parent.key, f"{src}: {at(el)}",
                       placement=scope.ref(placement) if placement else None)
        if not top and not parent.legacy and not merge:  # from 1.7 a nested model's name is its model frame
            d.frames.alias[parent.prefix + name] = scope.key
        names: dict[str, str] = extra.get("names", {})
        first_link, first_nested = None, None
        for sub in el:
            tag = sub.tag if isinstance(sub.tag, str) else ""
            if tag not in ("link", "joint", "frame", "model", "include"):
                continue
            if tag == "frame" and scope.legacy:
                continue  # SDFormat 1.5/1.6 <frame> elements had no defined meaning
            if tag == "include":
                mel, isrc, iversion, ibase, ichain = self._include_target(sub, scope, chain)
                sub_name = text(sub, "name", src) or mel.get("name")
                extras = self._include_extras(sub, src, ichain)
                if extras["merge"]:
                    extras["names"] = names
                else:
                    self._check_name(sub_name, sub, scope, names, "model")
                first = self._model(mel, scope, isrc, iversion, ibase, sub_name, child(sub, "pose", src), extras,
                                    ichain)
                if extras["merge"]:
                    first_link = first_link or first
                else:
                    first_nested = first_nested or scope.prefix + sub_name + "::__model__"
                continue
            sub_name = sub.get("name")
            self._check_name(sub_name, sub, scope, names, tag)
            if tag == "model":
                self._model(sub, scope, src, version, base, sub_name, None, {}, chain)
                first_nested = first_nested or scope.prefix + sub_name + "::__model__"
            elif tag == "link":
                self._link(sub, scope)
                first_link = first_link or scope.prefix + sub_name
            elif tag == "joint":
                self._joint(sub, scope)
            else:
                self._frame(sub, scope)
        canonical = el.get("canonical_link") if not scope.legacy else None
        canonical = scope.ref(canonical) if canonical else (first_link or first_nested)
        if canonical is None:
            raise ModelError(f"{src}: {at(el)} has no <link> (nor a nested model with one)")
        d.kinds[scope.key] = ("model", canonical)
        return first_link

    def _check_name(self, name, el, scope: Scope, names: dict, kind: str) -> None:
        src = scope.src
        if not name:
            raise ModelError(f"{src}: {at(el)} has no 'name'")
        if name == WORLD or (not scope.legacy and name.startswith("__") and name.endswith("__")):
            raise ModelError(f"{src}: {at(el)}: the name {name!r} is reserved in SDFormat")
        if scope.version >= (1, 8) and "::" in name:
            raise ModelError(f"{src}: {at(el)}: '::' is the scope delimiter and cannot be part of a name")
        space = "any" if not scope.legacy else kind
        if (space, name) in names:
            raise ModelError(f"{src}: {at(el)}: the name {name!r} is already used in model scope "
                             f"{scope.prefix[:-2] or 'top'} (line {names[(space, name)]})")
        names[(space, name)] = el.sourceline

    def _add_pose(self, key, pose_el, src, scope: Scope, default: str, where: str, placement=None,
                  default_ref: str = "the model frame") -> None:
        """Add frame ``key``: its ``<pose>``, relative to ``relative_to`` or to ``default`` (described as
        ``default_ref`` in messages)."""
        rel = "" if pose_el is None else (pose_el.get("relative_to") or "").strip()
        if pose_el is not None and scope.legacy and (pose_el.get("frame") or "").strip():
            raise ModelError(f"{src}: {at(pose_el)}: <pose frame=...> has no defined meaning before SDFormat 1.7; "
                             "use version 1.7 and relative_to")
        if pose_el is not None and scope.legacy and rel:
            raise ModelError(f"{src}: {at(pose_el)}: relative_to needs SDFormat 1.7 or later")
        ref = f"pose relative_to {rel!r}" if rel else default_ref
        self.d.frames.add(key, FrameSpec(scope.ref(rel) if rel else default, parse_pose(pose_el, src), where,
                                         ref, placement))

    def _link(self, el, scope: Scope) -> None:
        e = Element(scope.prefix + el.get("name"), el, scope)
        e.key = e.name
        self.d.links[e.name] = e
        self.d.kinds[e.key] = ("link", e.key)
        self._add_pose(e.key, child(el, "pose", scope.src), scope.src, scope, scope.key, e.where)

    def _joint(self, el, scope: Scope) -> None:
        src = scope.src
        e = Element(scope.prefix + el.get("name"), el, scope)
        e.key = e.name if not scope.legacy else "::joint::" + e.name
        jtype = (el.get("type") or "").strip()
        if jtype in NOT_YET:
            raise ModelError(f"{e.where}: {jtype} joints ({NOT_YET[jtype]}) are not supported yet; "
                             "supported: revolute, continuous, prismatic, fixed, ball, universal, screw")
        ends = {}
        for tag in ("parent", "child"):
            name = text(el, tag, src)
            if not name:
                raise ModelError(f"{e.where} has no <{tag}>")
            ends[tag] = scope.ref(name)
        if ends["child"] == WORLD:
            raise ModelError(f"{e.where}: the child of a joint cannot be the world")
        e.ends = ends
        self.d.joints[e.name] = e
        self.d.kinds[e.key] = ("joint", ends["child"])
        self._add_pose(e.key, child(el, "pose", src), src, scope, ends["child"], e.where,
                       default_ref=f"<child> {text(el, 'child', src)!r}")

    def _frame(self, el, scope: Scope) -> None:
        e = Element(scope.prefix + el.get("name"), el, scope)
        e.key = e.name
        attached = (el.get("attached_to") or "").strip()
        target = scope.ref(attached) if attached else scope.key
        if scope.key != WORLD:
            self.d.frame_elements[e.name] = e
        self.d.kinds[e.key] = ("frame", target)
        self._add_pose(e.key, child(el, "pose", scope.src), scope.src, scope, target, e.where,
                       default_ref=f"attached_to {attached!r}" if attached else "the model frame")
