"""Pinocchio as an independent oracle (needs the test extra): locate example-robot-data URDFs, build
Pinocchio models of the same URDF and convert joint arrays between orders.

Pinocchio orders joints depth-first too, but continuous joints take two
configuration entries (cos, sin); we map by joint name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pinocchio as pin


def erd_robots_dir() -> Path:
    """The ``robots`` folder of the installed example-robot-data package."""
    candidates = [Path(p) / "cmeel.prefix" / "share" / "example-robot-data" / "robots" for p in sys.path if p]
    candidates += [Path(sys.prefix) / "share" / "example-robot-data" / "robots"]
    for c in candidates:
        if c.is_dir():
            return c
    raise FileNotFoundError("example-robot-data robots folder not found; install the test extra")


ERD_URDFS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
    "anymal": "anymal_b_simple_description/robots/anymal.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "a1": "a1_description/urdf/a1.urdf",
}


def erd_urdf(key: str) -> str:
    """Absolute path of one of the ERD_URDFS files."""
    return str(erd_robots_dir() / ERD_URDFS[key])


class PinPair:
    """A Pinocchio model of a URDF plus the joint-order map to a composedyn Robot."""

    def __init__(self, robot, urdf: str):
        mimic = bool(getattr(robot, "mimic_joint_names", ()))  # dependent mimic joints: reduced pin model
        if urdf.lstrip().startswith("<"):
            self.model = pin.buildModelFromXML(urdf, mimic=mimic)
        else:
            self.model = pin.buildModelFromUrdf(urdf, mimic=mimic)
        self.data = self.model.createData()
        self.joint_ids = [i for i in range(1, self.model.njoints) if self.model.joints[i].nv > 0]
        names = [self.model.names[i] for i in self.joint_ids]
        assert sorted(names) == sorted(robot.joint_names), (names, robot.joint_names)
        self.names = names
        self.perm = np.array([robot.joint_names.index(nm) for nm in names], dtype=int)

    def q(self, q: np.ndarray) -> np.ndarray:
        """composedyn joint positions (n,) -> Pinocchio configuration (nq,)."""
        out = []
        for k, i in enumerate(self.perm):
            if self.model.joints[self.joint_ids[k]].nq == 2:
                out += [np.cos(q[i]), np.sin(q[i])]
            else:
                out.append(q[i])
        return np.array(out)

    def v(self, x: np.ndarray) -> np.ndarray:
        """composedyn velocity-like vector (n,) -> Pinocchio order."""
        return np.asarray(x)[self.perm]

    def mat(self, A: np.ndarray) -> np.ndarray:
        """composedyn (n, n) matrix -> Pinocchio order."""
        return np.asarray(A)[np.ix_(self.perm, self.perm)]


class FreeFlyerPair:
    """A Pinocchio free-flyer (or planar) model of a URDF and the map from a FloatingRobot's arrays.

    ``root``: None -- the URDF's own root joint (floating / planar); else a
    ``pin.JointModelFreeFlyer()`` (or ``pin.JointModelPlanar()``) added at its root link."""

    def __init__(self, robot, urdf: str, root=None):
        xml = urdf.lstrip().startswith("<")
        build = pin.buildModelFromXML if xml else pin.buildModelFromUrdf
        self.model = build(urdf) if root is None else build(urdf, root)
        self.data = self.model.createData()
        self.nb = robot.base.nv
        ids = [i for i in range(2, self.model.njoints) if self.model.joints[i].nv > 0]
        names = [self.model.names[i] for i in ids]
        assert sorted(names) == sorted(robot.joint_names), (names, robot.joint_names)
        self.two = [self.model.joints[i].nq == 2 for i in ids]
        self.perm = np.array([robot.joint_names.index(nm) for nm in names], dtype=int)
        self.nqb = robot.base.nq
        self.vperm = np.r_[np.arange(self.nb), self.nb + self.perm]

    def q(self, q: np.ndarray) -> np.ndarray:
        """FloatingRobot configuration (nq,) -> Pinocchio's (continuous joints as cos, sin)."""
        out = list(q[:self.nqb])
        for two, i in zip(self.two, self.perm):
            x = q[self.nqb + i]
            out += [np.cos(x), np.sin(x)] if two else [x]
        return np.array(out)

    def v(self, x: np.ndarray) -> np.ndarray:
        """(nv,) -> Pinocchio order."""
        return np.asarray(x)[..., self.vperm]

    def mat(self, A: np.ndarray) -> np.ndarray:
        """(nv, nv) -> Pinocchio order."""
        return np.asarray(A)[np.ix_(self.vperm, self.vperm)]

    def cols(self, A: np.ndarray) -> np.ndarray:
        """(r, nv) -> Pinocchio column order."""
        return np.asarray(A)[..., self.vperm]


def rel_err(a, b) -> float:
    """max |a - b| / max(1, max |b|)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def loop_constraints(pp: PinPair, robot, loops):
    """Pinocchio constraint models and data for loop closures: one CONTACT_3D constraint per loop
    between ``point_a`` on ``link_a`` and ``point_b`` on ``link_b`` (LOCAL_WORLD_ALIGNED), initialised
    for ``constraintDynamics``.  Returns (models, datas)."""
    joint_of = {v: d["name"] for u, v, d in robot.graph.edges(data=True)}  # link -> its joint (= frame)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for lp in loops:
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pp.model,
                                      pp.model.getJointId(joint_of[lp.link_a]),
                                      pin.SE3(np.eye(3), np.array(lp.point_a)),
                                      pp.model.getJointId(joint_of[lp.link_b]),
                                      pin.SE3(np.eye(3), np.array(lp.point_b)),
                                      pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pp.model, pp.data, cms, cds)
    return cms, cds
