"""Task-space kinematics against Pinocchio on the same URDF.

For every link frame of vendor robots (example-robot-data: Panda with its
fingers as independent joints, UR5, UR3, Talos reduced and full, Romeo, all
fixed base) and of random trees (``random_robots.py``), at random states:
frame pose (``framesForwardKinematics``), the Jacobian in both references
(``computeFrameJacobian`` LOCAL_WORLD_ALIGNED and LOCAL), the frame velocity,
the classical acceleration (``forwardKinematics(q, v, a)`` then
``getFrameClassicalAcceleration``, both references) and Jdot qd (a = 0),
the centre of mass and its Jacobian (``centerOfMass``, ``jacobianCenterOfMass``),
the task-space inertia against (J M^-1 J^T)^-1 built from Pinocchio's
``crba`` and ``computeFrameJacobian``, and the centroidal momentum matrix
(``computeCentroidalMap``): relative error below 1e-9.  composedyn
evaluates each quantity on the whole batch of states, Pinocchio per state.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import PinPair, erd_robots_dir, pin, rel_err
from random_robots import FIXED_SEEDS, random_urdf

TOL = 1e-9
VENDOR = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "talos_full": "talos_data/robots/talos_full_v2.urdf",
    "romeo": "romeo_description/urdf/romeo_small.urdf",
}
WORLD, LOCAL = pin.LOCAL_WORLD_ALIGNED, pin.LOCAL


def load(urdf: str) -> cd.Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(urdf, mimic="independent")


def states(robot: cd.Robot, count: int, seed: int):
    """Random (q, qd, qdd) (count, n), q within finite limits."""
    rng = np.random.default_rng(seed)
    lim = robot.limits
    lo = np.where(np.isfinite(lim["lower"]), lim["lower"], -np.pi)
    hi = np.where(np.isfinite(lim["upper"]), lim["upper"], np.pi)
    q = rng.uniform(lo, hi, (count, robot.dof))
    return q, rng.normal(size=(count, robot.dof)), rng.normal(size=(count, robot.dof))


def check_robot(urdf: str, count: int = 3, seed: int = 0, frames=None) -> None:
    robot = load(urdf)
    pp = PinPair(robot, urdf)
    m, d = pp.model, pp.data
    Q, QD, QDD = states(robot, count, seed)
    names = robot.frame_names if frames is None else frames
    com, Jcom = robot.center_of_mass(Q), robot.com_jacobian(Q)
    for name in names:
        fid = m.getFrameId(name, pin.BODY)
        assert fid < len(m.frames), name
        T = robot.frame_pose(Q, name)
        J = {ref: robot.jacobian(Q, name, ref) for ref in ("world", "local")}
        V = {ref: robot.frame_velocity(Q, QD, name, ref) for ref in ("world", "local")}
        A = {ref: robot.frame_acceleration(Q, QD, QDD, name, ref) for ref in ("world", "local")}
        A0 = {ref: robot.frame_acceleration(Q, QD, np.zeros_like(QD), name, ref) for ref in ("world", "local")}
        for s in range(count):
            qp, vp, ap = pp.q(Q[s]), pp.v(QD[s]), pp.v(QDD[s])
            pin.framesForwardKinematics(m, d, qp)
            assert rel_err(T[s], d.oMf[fid].homogeneous) < TOL, name
            for ref, pref in (("world", WORLD), ("local", LOCAL)):
                Jp = pin.computeFrameJacobian(m, d, qp, fid, pref).reshape(6, -1)  # n = 1: (6,)
                assert J[ref][s].shape == (6, robot.dof)
                assert rel_err(J[ref][s][:, pp.perm], Jp) < TOL, (name, ref)
                assert rel_err(V[ref][s], Jp @ vp) < TOL, (name, ref)
            for acc, out in ((ap, A), (np.zeros_like(ap), A0)):
                pin.forwardKinematics(m, d, qp, vp, acc)
                pin.updateFramePlacements(m, d)
                for ref, pref in (("world", WORLD), ("local", LOCAL)):
                    ref_acc = pin.getFrameClassicalAcceleration(m, d, fid, pref).vector
                    assert rel_err(out[ref][s], ref_acc) < TOL, (name, ref)
    for s in range(count):
        qp = pp.q(Q[s])
        assert rel_err(com[s], pin.centerOfMass(m, d, qp)) < TOL
        assert rel_err(Jcom[s][:, pp.perm], pin.jacobianCenterOfMass(m, d, qp).reshape(3, -1)) < TOL


@pytest.mark.parametrize("key", sorted(VENDOR))
def test_vendor_robots(key):
    frames = None
    if key.startswith("talos") or key == "romeo":  # every 3rd link: keeps the run short, still > 20 frames
        frames = load(str(erd_robots_dir() / VENDOR[key])).frame_names[::3]
    check_robot(str(erd_robots_dir() / VENDOR[key]), frames=frames)


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_random_trees(seed, n):
    check_robot(random_urdf(seed, n), count=2, seed=seed)


@pytest.mark.parametrize("key,frame", [("panda", "panda_hand"), ("ur5", "tool0")])
def test_task_inertia_against_pinocchio(key, frame):
    urdf = str(erd_robots_dir() / VENDOR[key])
    robot = load(urdf)
    pp = PinPair(robot, urdf)
    m, d = pp.model, pp.data
    fid = m.getFrameId(frame, pin.BODY)
    Q = states(robot, 3, 1)[0]
    lam = robot.task_inertia(Q, frame)
    lam3 = robot.task_inertia(Q, frame, translational=True)
    lam_local = robot.task_inertia(Q, frame, reference="local")
    for s in range(len(Q)):
        qp = pp.q(Q[s])
        M = pin.crba(m, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        for ref, out in ((WORLD, lam[s]), (LOCAL, lam_local[s])):
            Jp = pin.computeFrameJacobian(m, d, qp, fid, ref)
            expected = np.linalg.inv(Jp @ np.linalg.solve(M, Jp.T))
            assert rel_err(out, expected) < TOL
        Jp = pin.computeFrameJacobian(m, d, qp, fid, WORLD)[:3]
        assert rel_err(lam3[s], np.linalg.inv(Jp @ np.linalg.solve(M, Jp.T))) < TOL


@pytest.mark.parametrize("key,mimic", [("ur5", "dependent"), ("panda", "dependent"), ("panda", "independent"),
                                       ("talos_reduced", "dependent")])
def test_centroidal_momentum_of_fixed_base_robots(key, mimic):
    """``Robot.centroidal_momentum_matrix`` and ``centroidal_momentum`` (one sample and a batch) against
    Pinocchio's ``computeCentroidalMap`` (the Panda's dependent finger joint: Pinocchio's mimic model)."""
    urdf = str(erd_robots_dir() / VENDOR[key])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(urdf, mimic=mimic)
    pp = PinPair(robot, urdf)
    Q, QD, _ = states(robot, 3, 5)
    A, h = robot.centroidal_momentum_matrix(Q), robot.centroidal_momentum(Q, QD)
    assert A.shape == (3, 6, robot.dof) and h.shape == (3, 6)
    for s in range(len(Q)):
        Ag = pin.computeCentroidalMap(pp.model, pp.data, pp.q(Q[s]))
        assert rel_err(A[s][:, pp.perm], Ag) < TOL
        assert rel_err(robot.centroidal_momentum_matrix(Q[s]), A[s]) < 1e-14
        assert rel_err(h[s], Ag @ pp.v(QD[s])) < TOL
    import pickle  # a robot that computed it still pickles (sent to fleet workers), and gives the same map after

    again = pickle.loads(pickle.dumps(robot))
    assert np.array_equal(again.centroidal_momentum_matrix(Q), A)
