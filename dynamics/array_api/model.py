"""The array-API model: a robot's constants as NumPy arrays (``ArrayModel``), and the same
constants made once as arrays of one namespace, device and dtype (``BackendModel``).

Bodies are numbered so that ``parent[i] < i`` (-1: the fixed world).  Body ``i`` moves with
joint ``joints[i]`` (:mod:`composedyn.dynamics.array_api.joints`); its frame is the joint's
child frame, whose pose in the parent body frame is the constant placement
``(placement_R[i], placement_p[i])`` composed with the joint transform.  A fixed-base
:class:`composedyn.Robot` gives one body per moving joint (links merged by fixed joints
included); a :class:`composedyn.FloatingRobot` gives its base link as body 0, moved by a
``free_flyer`` (or ``planar``) root joint placed at the base joint's origin, then the joints'
bodies.

Coordinates.  The model's own coordinates ("full": every joint, mimic joints included) are
``q_full`` (nq_full,) and ``v_full`` (nv_full,) with each joint's ``idx_q``/``idx_v`` offsets.
The arrays the algorithms take and return are the robot's coordinates (nq,), (nv,): with
dependent mimic joints ``q_full = Gq q + bq`` and ``v_full = Gv v`` (Kolev's projection,
:mod:`composedyn.dynamics.constraints.mimic`), and generalised forces are reduced as
``Gv^T tau_full``; without them the two coincide.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from composedyn.dynamics.array_api.joints import Joint, make_joint, moves_freely
from composedyn.dynamics.joint_types import angular
from composedyn.dynamics.reference.regressor import inertial_parameters


@dataclass(frozen=True, eq=False)
class ArrayModel:
    """A robot's constants for the array-API algorithms (NumPy arrays, n bodies).

    Attributes (shapes):
      name, source: the robot's name and description file, for messages.
      joints (n,): the joint of each body (kind, nq, nv, idx_q, idx_v into the full coordinates).
      parent (n,): parent body index, -1 for the world; parent[i] < i.
      placement_R (n, 3, 3), placement_p (n, 3): parent body frame -> joint frame (m).
      inertia (n, 10): per body [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the
        body frame origin in body axes (kg, kg m, kg m^2): the regressor's layout.
      gravity (3,): gravity acceleration in world axes (m/s^2).
      damping, coulomb, armature (nv_full,): viscous (N m s/rad), Coulomb (N m) and rotor
        inertia (kg m^2) per velocity coordinate (0 on a floating base).
      term_joints: full velocity indices of the joints that carry regressor joint terms.
      Gq (nq_full, nq), bq (nq_full,), Gv (nv_full, nv): the mimic map, or None without
        dependent mimic joints.
      frame_names (F,), frame_body (F,) (-1: welded to the world), frame_R (F, 3, 3),
        frame_p (F, 3): every frame (link) and its constant pose in its body's frame.
      nq, nv: the robot's coordinates; nq_full, nv_full: the model's.
      coordinate_joints: the joints of the robot's coordinates (the independent ones, indexed
        into q (nq,) and v (nv,)); ``joints`` itself without dependent mimic joints.
    """

    name: str
    source: str
    joints: tuple[Joint, ...]
    parent: tuple[int, ...]
    placement_R: np.ndarray
    placement_p: np.ndarray
    inertia: np.ndarray
    gravity: np.ndarray
    damping: np.ndarray
    coulomb: np.ndarray
    armature: np.ndarray
    term_joints: tuple[int, ...]
    Gq: np.ndarray | None
    bq: np.ndarray | None
    Gv: np.ndarray | None
    frame_names: tuple[str, ...]
    frame_body: tuple[int, ...]
    frame_R: np.ndarray
    frame_p: np.ndarray
    nq: int
    nv: int
    nq_full: int
    nv_full: int
    coordinate_joints: tuple[Joint, ...]

    @property
    def n(self) -> int:
        """Number of bodies."""
        return len(self.joints)

    def ancestors(self, i: int) -> list[int]:
        """Body i and its ancestors, from i up to the root body."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.parent[i]
        return out

    def frame_index(self, frame: str) -> int:
        """Index of ``frame`` in ``frame_names``; ValueError listing close names otherwise."""
        try:
            return self.frame_names.index(frame)
        except ValueError:
            from composedyn.dynamics.reference.frames import unknown_frame

            raise unknown_frame(self.name, frame, self.frame_names) from None


def _kinds(model) -> list[str]:
    """The array-API kind of each body's joint (a compiled Model's joints have one coordinate)."""
    return ["prismatic" if not angle else "continuous" if free else "revolute"
            for angle, free in zip(angular(model.jtype), model.continuous)]


def one_coordinate_kind(model, c: int) -> str:
    """The array-API kind of body ``c``'s joint of a compiled Model (one coordinate)."""
    return _kinds(model)[c]


def array_model_of(model, joints: list[Joint]) -> ArrayModel:
    """The :class:`ArrayModel` of a compiled fixed-base Model whose body ``i`` moves with
    ``joints[i]`` (offsets given), without mimic joints: every link frame, the Model's gravity,
    its damping, Coulomb friction and armature repeated over each joint's velocity coordinates
    (none on a free-flyer or planar joint); the regressor's joint terms for one-coordinate joints."""
    nv = [j.nv for j in joints]
    free = np.repeat([not moves_freely(j) for j in joints], nv)

    def per_coordinate(x):
        return np.where(free, np.repeat(np.asarray(x, float), nv), 0.0)

    names = tuple(model.link_names)
    return ArrayModel(
        name=model.name, source=model.source, joints=tuple(joints), parent=tuple(int(p) for p in model.parent),
        placement_R=np.asarray(model.tree_R, float).reshape(-1, 3, 3),
        placement_p=np.asarray(model.tree_p, float).reshape(-1, 3),
        inertia=np.asarray(inertial_parameters(model), float).reshape(-1, 10),
        gravity=np.asarray(model.gravity, float), damping=per_coordinate(model.damping),
        coulomb=per_coordinate(model.friction), armature=per_coordinate(model.armature),
        term_joints=tuple(j.idx_v for j in joints if j.nv == 1 and j.nq == 1), Gq=None, bq=None, Gv=None,
        frame_names=names, frame_body=tuple(int(b) for b in model.link_body),
        frame_R=np.asarray(model.link_T[:, :3, :3], float).reshape(-1, 3, 3),
        frame_p=np.asarray(model.link_T[:, :3, 3], float).reshape(-1, 3),
        nq=sum(j.nq for j in joints), nv=sum(nv), nq_full=sum(j.nq for j in joints), nv_full=sum(nv),
        coordinate_joints=tuple(joints),
    )


def from_robot(robot) -> ArrayModel:
    """The :class:`ArrayModel` of a :class:`composedyn.Robot` (one body per moving joint); a
    :class:`composedyn.TreeRobot` or :class:`composedyn.FloatingRobot` (whose base is a ``free_flyer``
    or ``planar`` root joint) holds its own."""
    if getattr(robot, "array_model", None) is not None:
        return robot.array_model
    model = robot.model
    n = model.n
    kinds = _kinds(model)
    joints = [make_joint(model.joint_names[c], kinds[c], c, c, axis=tuple(float(a) for a in model.axis[c]))
              for c in range(n)]
    Gq = bq = Gv = None
    coordinate_joints = tuple(joints)
    if robot.mimic_joint_names:
        Gv = Gq = np.asarray(robot.mimic_jacobian, float)
        bq = np.asarray(robot.full_positions(np.zeros(robot.dof)), float)
        dependent, kept = set(robot.mimic_joint_names), []
        for j in joints:
            if j.name not in dependent:
                kept.append(replace(j, idx_q=len(kept), idx_v=len(kept)))
        coordinate_joints = tuple(kept)
    names = tuple(robot.frame_names)
    k = [model.link_names.index(f) for f in names]
    return ArrayModel(
        name=robot.name, source=model.source, joints=tuple(joints), parent=tuple(int(p) for p in model.parent),
        placement_R=np.asarray(model.tree_R, float).reshape(-1, 3, 3),
        placement_p=np.asarray(model.tree_p, float).reshape(-1, 3),
        inertia=np.asarray(inertial_parameters(model), float).reshape(n, 10),
        gravity=np.asarray(model.gravity, float),
        damping=np.asarray(model.damping, float), coulomb=np.asarray(model.friction, float),
        armature=np.asarray(model.armature, float), term_joints=tuple(range(n)),
        Gq=Gq, bq=bq, Gv=Gv, frame_names=names, frame_body=tuple(int(model.link_body[j]) for j in k),
        frame_R=np.asarray(model.link_T[k, :3, :3], float).reshape(-1, 3, 3),
        frame_p=np.asarray(model.link_T[k, :3, 3], float).reshape(-1, 3),
        nq=int(robot.nq), nv=int(robot.nv), nq_full=n, nv_full=n,
        coordinate_joints=coordinate_joints,
    )


class BackendModel:
    """An :class:`ArrayModel`'s constants as arrays of one namespace, device and dtype (made once),
    in the components-first layout of :mod:`composedyn.dynamics.array_api.spatial` (N = 1).

    ``xp``: the array namespace (array-api-compat); ``am``: the NumPy model (structure: joints,
    parents, names); per body lists ``R`` (3, 3, 1) / ``p`` (3, 1) (placements, with
    ``identity_R[i]`` when the placement does not rotate), ``m`` (1,), ``h`` (3, 1), ``I``
    (3, 3, 1) (inertia); ``inertia`` (n, 10); ``gravity`` (3, 1); ``damping``/``coulomb``/
    ``armature`` (nv_full,); ``Gq``/``bq``/``Gv`` or None; per frame ``frame_R``/``frame_p``.
    """

    def __init__(self, am: ArrayModel, xp, device=None, dtype=None):
        self.am, self.xp, self.device = am, xp, device
        self.dtype = xp.float64 if dtype is None else dtype

        def arr(a):
            return xp.asarray(np.array(a, dtype=float), dtype=self.dtype, device=device)  # a writable copy

        self.R = [arr(r[..., None]) for r in am.placement_R]
        self.identity_R = tuple(bool(np.array_equal(r, np.eye(3))) for r in am.placement_R)
        self.p = [arr(p[:, None]) for p in am.placement_p]
        self.inertia = arr(am.inertia)
        self.m, self.h, self.I = [], [], []
        for pi in am.inertia:
            self.m.append(arr(pi[:1]))
            self.h.append(arr(pi[1:4, None]))
            xx, xy, yy, xz, yz, zz = pi[4:]
            self.I.append(arr(np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])[..., None]))
        self.gravity = arr(am.gravity[:, None])
        self.damping, self.coulomb, self.armature = arr(am.damping), arr(am.coulomb), arr(am.armature)
        self.Gq = None if am.Gq is None else arr(am.Gq)
        self.bq = None if am.bq is None else arr(am.bq)
        self.Gv = None if am.Gv is None else arr(am.Gv)
        self.frame_R = [arr(r[..., None]) for r in am.frame_R]
        self.frame_p = [arr(p[:, None]) for p in am.frame_p]

    def __repr__(self) -> str:
        return f"BackendModel({self.am.name!r}, {getattr(self.xp, '__name__', self.xp)}, {self.dtype}, {self.device})"


def on(am: ArrayModel, xp, device=None, dtype=None) -> BackendModel:
    """The constants of ``am`` as arrays of namespace ``xp`` (array-api-compat) on ``device`` in
    ``dtype`` (default float64); build it once and pass it to every algorithm."""
    return BackendModel(am, xp, device, dtype)
