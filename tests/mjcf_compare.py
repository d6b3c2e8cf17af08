"""composedyn's MJCF import against MuJoCo on the same file: mass matrix, inverse dynamics, frames.

``mujoco`` is imported at the top: a missing MuJoCo fails the tests that use this module (it is in
the ``test`` extra), it never skips them.

States are drawn in MuJoCo's coordinates and mapped to composedyn's by joint name
(``jnt_qposadr``/``jnt_dofadr``).  For a free root joint MuJoCo's ``qpos`` holds the body position
and a (w, x, y, z) quaternion, its ``qvel`` the world-frame velocity of the body origin and the
angular velocity in body axes; composedyn (Pinocchio) takes (x, y, z, qx, qy, qz, qw) and both
velocities in body axes.  The map is built here from MuJoCo's own body rotation ``xmat``, and
checked against :func:`composedyn.convert_floating`.
"""

from __future__ import annotations

import mujoco
import numpy as np

TOL = 1e-9
_NO_PASSIVE = int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_SPRING) \
    | int(mujoco.mjtDisableBit.mjDSBL_DAMPER)


def rel_err(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def documented_name(model: mujoco.MjModel, kind: str, i: int) -> str:
    """The name composedyn's MJCF guide gives element ``i`` of ``kind``: its own, else ``<kind><id>``
    with ``_`` appended while that is a name in the file."""
    name = getattr(model, kind)(i).name
    if name:
        return name
    taken = set(bytes(model.names).decode().split("\0"))  # every name in the file (all kinds, the model's)
    name = f"{kind}{i}"
    while name in taken:
        name += "_"
    return name


def joint_ids(model: mujoco.MjModel) -> dict[str, int]:
    """{composedyn's joint name: MuJoCo joint id}."""
    return {documented_name(model, "joint", j): j for j in range(model.njnt)}


class MjPair:
    """A composedyn robot and the MuJoCo model of the same file, with index maps by joint name.

    ``passive``: keep MuJoCo's joint damping (and springs) in ``mj_inverse``; constraints
    (limits, equalities, contacts, friction loss) are always disabled."""

    def __init__(self, robot, model: mujoco.MjModel, passive: bool = False):
        self.robot, self.m = robot, model
        model.opt.disableflags |= _NO_PASSIVE if not passive else int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        self.d = mujoco.MjData(model)
        names, ids = robot.joint_names, joint_ids(model)  # every joint a coordinate: load with mimic="independent"
        self.qa = [int(model.jnt_qposadr[ids[n]]) for n in names]
        self.va = [int(model.jnt_dofadr[ids[n]]) for n in names]
        self.free = None
        if robot.floating:
            j = model.joint(ids[robot.base.joint])
            assert int(j.type[0]) == int(mujoco.mjtJoint.mjJNT_FREE)
            self.free = (int(j.qposadr[0]), int(j.dofadr[0]), int(model.jnt_bodyid[j.id]))
            self.qa = list(range(self.free[0], self.free[0] + 7)) + self.qa
            self.va = list(range(self.free[1], self.free[1] + 6)) + self.va

    def set_state(self, qpos, qvel, qacc) -> None:
        """MuJoCo's state: ``mj_forward`` at (qpos, qvel) (positions, velocities, mass matrix), then
        ``qacc`` (which ``mj_forward`` would overwrite) for ``mj_inverse``."""
        self.d.qpos[:], self.d.qvel[:] = qpos, qvel
        mujoco.mj_forward(self.m, self.d)
        self.d.qacc[:] = qacc

    def random_state(self, rng) -> None:
        """A random MuJoCo state (unit quaternions for free and ball joints), see :meth:`set_state`."""
        m = self.m
        qpos = m.qpos0 + rng.uniform(-0.8, 0.8, m.nq)
        for j in range(m.njnt):
            if int(m.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
                a = int(m.jnt_qposadr[j]) + (3 if int(m.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
                quat = rng.normal(size=4)
                qpos[a:a + 4] = quat / np.linalg.norm(quat)
        self.set_state(qpos, rng.uniform(-1.0, 1.0, m.nv), rng.uniform(-1.0, 1.0, m.nv))

    def velocity_map(self) -> np.ndarray:
        """T (nv, nv) with v_mujoco = T v_composedyn on the robot's dofs (identity but the base's
        linear block, which is the base rotation R: MuJoCo's linear velocity is in world axes)."""
        T = np.eye(len(self.va))
        if self.free is not None:
            T[:3, :3] = self.d.xmat[self.free[2]].reshape(3, 3)
        return T

    def state(self):
        """(q, v, a) of composedyn at MuJoCo's current state (free flyer: Pinocchio's convention)."""
        d = self.d
        q, T = d.qpos[self.qa].copy(), self.velocity_map()
        v, a = np.linalg.solve(T, d.qvel[self.va]), d.qacc[self.va].copy()
        if self.free is not None:
            q[3:7] = np.r_[q[4:7], q[3]]  # (w, x, y, z) -> (x, y, z, w)
            w_b, v_b = v[3:6], v[:3]
            a[:3] = np.linalg.solve(T[:3, :3], a[:3]) - np.cross(w_b, v_b)  # d/dt(R v_b) = R(dv_b/dt + w_b x v_b)
        return q, v, a

    def mass_matrix(self) -> np.ndarray:
        """MuJoCo's mass matrix (armature included) on the robot's dofs, composedyn's coordinates."""
        M = np.zeros((self.m.nv, self.m.nv))
        mujoco.mj_fullM(self.m, self.d, M)
        T = self.velocity_map()
        return T.T @ M[np.ix_(self.va, self.va)] @ T

    def inverse_dynamics(self) -> np.ndarray:
        """MuJoCo's ``qfrc_inverse`` on the robot's dofs, composedyn's coordinates (T^T tau)."""
        mujoco.mj_inverse(self.m, self.d)
        tau = self.d.qfrc_inverse[self.va]
        assert np.abs(tau).max() > 1e-3  # a state where the forces are not all zero
        return self.velocity_map().T @ tau

    def frame_errors(self, q) -> float:
        """Largest difference between composedyn's frame poses and MuJoCo's body and site poses."""
        robot, m, d, worst, seen = self.robot, self.m, self.d, 0.0, 0
        frames = set(robot.frame_names)
        bodies = {documented_name(m, "body", i) for i in range(m.nbody)}
        for kind, n, xpos, xmat in (("body", m.nbody, d.xpos, d.xmat), ("site", m.nsite, d.site_xpos, d.site_xmat)):
            for i in range(n):
                name = documented_name(m, kind, i)
                if kind == "site" and name in bodies:
                    name += "::site"  # the guide: a site with a body's name is the frame <name>::site
                if name in frames:
                    T = robot.frame_pose(q, name)
                    worst = max(worst, rel_err(T[:3, 3], xpos[i]), rel_err(T[:3, :3], xmat[i].reshape(3, 3)))
                    seen += 1
        assert seen > 0
        return worst


def compare(robot, model: mujoco.MjModel, seed: int = 0, samples: int = 3, friction: bool = False,
            passive: bool = False) -> None:
    """Assert mass matrix, inverse dynamics and frame poses agree with MuJoCo at random states."""
    pair = MjPair(robot, model, passive=passive)
    rng = np.random.default_rng(seed)
    for _ in range(samples):
        pair.random_state(rng)
        q, v, a = pair.state()
        assert rel_err(robot.mass_matrix(q), pair.mass_matrix()) < TOL
        assert rel_err(robot.inverse_dynamics(q, v, a, friction=friction), pair.inverse_dynamics()) < TOL
        assert pair.frame_errors(q) < TOL
