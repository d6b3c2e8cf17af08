"""SDFormat poses and the frame graph: every frame's pose in the world.

A ``<pose>`` is ``x y z roll pitch yaw`` (rotation ``Rz(yaw) Ry(pitch) Rx(roll)``, as URDF's rpy),
or, from SDFormat 1.9, ``x y z qx qy qz qw`` with ``rotation_format="quat_xyzw"``, and angles in
degrees with ``degrees="true"``.

:class:`Frames` holds, for every frame (links, joints, ``<frame>`` elements, model frames), the
frame its pose is relative to and the pose itself; the reader fills in the defaults of the file's
SDFormat version before adding a frame, so the table only resolves: the pose of every frame in the
world, with dangling names and cycles refused.  A model frame may be placed through a placement
frame (``placement_frame``, SDFormat 1.8): the given pose is then the placement frame's, and the
model frame follows from the placement frame's pose inside the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.importers.dh import rpy_matrix
from composedyn.importers.sdf_xml import at, values

WORLD = "world"


def quaternion_xyzw_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """(3, 3) rotation of the unit quaternion (x, y, z, w) (normalised here; not zero)."""
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def parse_pose(el, src: str) -> np.ndarray:
    """(4, 4) transform of a ``<pose>`` element (identity for None or an empty element)."""
    T = np.eye(4)
    if el is None or not (el.text or "").strip():
        return T
    fmt = el.get("rotation_format", "euler_rpy")
    degrees = (el.get("degrees") or "false").strip().lower() in ("true", "1")
    if fmt == "euler_rpy":
        v = values(el, src, 6)
        rpy = [math.radians(a) for a in v[3:]] if degrees else v[3:]
        T[:3, :3] = rpy_matrix(rpy)
    elif fmt == "quat_xyzw":
        v = values(el, src, 7)
        if math.hypot(*v[3:]) < 1e-12:
            raise ModelError(f"{src}: {at(el)}: quaternion {v[3:]} has zero norm")
        T[:3, :3] = quaternion_xyzw_matrix(*v[3:])
    else:
        raise ModelError(f"{src}: {at(el)}: rotation_format={fmt!r}; supported: euler_rpy, quat_xyzw")
    T[:3, 3] = v[:3]
    return T


def inverse(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid transform (4, 4)."""
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out


@dataclass
class FrameSpec:
    """One frame: its pose ``X`` (4, 4) relative to frame ``relative_to``.

    where: the element, for messages (``src: <link name='a'> (line 3)``); ref: how the file names
    the frame the pose is relative to (``pose relative_to 'f'``, ``<child> 'b'``), for messages
    about dangling names; placement: for a model frame placed through
    a placement frame, that frame's key (``X`` is then the placement frame's pose)."""

    relative_to: str
    X: np.ndarray
    where: str
    ref: str
    placement: str | None = None


class Frames:
    """The frame graph of one description: keys are scoped names (``inner::link``)."""

    def __init__(self) -> None:
        self.specs: dict[str, FrameSpec] = {}
        self.alias: dict[str, str] = {}
        self._world: dict[str, np.ndarray] = {WORLD: np.eye(4)}

    def add(self, key: str, spec: FrameSpec) -> None:
        self.specs[key] = spec

    def key(self, name: str) -> str:
        """The table key of a scoped name (a nested model's name is its model frame)."""
        return self.alias.get(name, name)

    def has(self, name: str) -> bool:
        return name == WORLD or self.key(name) in self.specs

    def _spec(self, key: str, by: str | None) -> FrameSpec:
        """The spec of ``key``; ModelError naming the frame ``by`` whose pose refers to it when absent."""
        if key not in self.specs:
            s = self.specs.get(by) if by is not None else None
            if s is None:
                raise ModelError(f"frame {key!r} is not defined")
            raise ModelError(f"{s.where}: {s.ref} names no frame in its scope")
        return self.specs[key]

    def _local(self, key: str) -> np.ndarray:
        """Pose of frame ``key`` relative to its ``relative_to`` frame."""
        s = self.specs[key]
        if s.placement is None:
            return s.X
        return s.X @ inverse(self.within(s.placement, key))

    def within(self, key: str, ancestor: str) -> np.ndarray:
        """Pose of frame ``key`` relative to ``ancestor``, following relative_to links up to it."""
        T, cur, prev, seen = np.eye(4), self.key(key), None, set()
        while cur != ancestor:
            if cur == WORLD or cur in seen:
                raise ModelError(f"{self.specs[ancestor].where}: its placement frame {key!r} is not a frame "
                                 "of the model it places")
            seen.add(cur)
            s = self._spec(cur, prev)
            T = self._local(cur) @ T
            prev, cur = cur, self.key(s.relative_to)
        return T

    def world(self, name: str) -> np.ndarray:
        """(4, 4) pose of frame ``name`` in the world; ModelError for a dangling name or a cycle."""
        key = self.key(name)
        path = []
        while key not in self._world:
            if key in path:
                cycle = path[path.index(key):] + [key]
                raise ModelError(f"{self.specs[key].where}: pose cycle (relative_to, attached_to) {' -> '.join(cycle)}")
            self._spec(key, path[-1] if path else None)
            path.append(key)
            key = self.key(self.specs[key].relative_to)
        T = self._world[key]
        for k in reversed(path):
            T = T @ self._local(k)
            self._world[k] = T
        return T

    def relative(self, frame: str, base: str) -> np.ndarray:
        """Pose of ``frame`` in ``base`` (both resolved through the world)."""
        return inverse(self.world(base)) @ self.world(frame)
