"""The compiled frame kinematics (pose, Jacobian in world and local axes, twist, classical acceleration),
gravity torques, centre of mass, its Jacobian and velocity on random trees mixing free-flyer, spherical,
universal, helical, planar, revolute and prismatic joints anywhere in the tree, against Pinocchio built with
the same joint models (:mod:`composedyn.testing.pinocchio_trees`); a floating robot's free-flyer tree and the
robot's own methods against Pinocchio's free-flyer model of the same URDF; a bundled fixed-base robot packed from
either model."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics.array_api import joints as J
from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled import com, com_velocity, frames, gravity
from composedyn.dynamics.compiled.layout import FORM, pack, pack_frames, pack_tree, packed_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import (
    FLOATING_URDFS,
    array_model,
    floating_robot,
    random_configuration,
    random_tree,
    seeded_tree,
)
from pin_oracle import legged_pair, pin

TOL = 1e-10
TREES = {  # seed, bodies, root kind
    "floating": (6, 16, "free_flyer"),
    "fixed": (7, 16, None),
    "planar_root": (3, 16, "planar"),
    "spherical_root": (11, 9, "spherical"),
}
LWA, LOCAL = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, pin.ReferenceFrame.LOCAL  # 'world' and 'local'


def _err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(1.0, float(np.max(np.abs(b)))))


class Kernels:
    """The declared single-sample quantities' C entries (the kernels the Robot methods run) on one packed
    tree, with fresh (NaN-filled) outputs and scratch."""

    def __init__(self, arrays):
        (self.im, self.fm), (_, self.fx) = arrays.bodies, arrays.frames
        self.n = self.im.shape[0]
        self.nv = int(self.im[-1, 3] + self.im[-1, 5])

    def status(self, quantity, *inputs, options=()) -> int:
        """The status of ``quantity``'s entry on these inputs."""
        model = (self.im, self.fx) if quantity.model == "frames" else (self.im, self.fm)
        return entry(quantity, model, *inputs, options=options)[0]

    def _run(self, quantity, *inputs, options=()):
        model = (self.im, self.fx) if quantity.model == "frames" else (self.im, self.fm)
        status, out = entry(quantity, model, *inputs, options=options)
        assert status == 0
        return out

    def pose(self, q, k):
        return self._run(frames.FRAME_POSE, q, options=(k,))

    def jacobian(self, q, k, local):
        return self._run(frames.JACOBIAN, q, options=(k, local))

    def velocity(self, q, v, k, local):
        return self._run(frames.FRAME_VELOCITY, q, v, options=(k, local))

    def acceleration(self, q, v, a, k, local):
        return self._run(frames.FRAME_ACCELERATION, q, v, a, options=(k, local))

    def gravity(self, q):
        return self._run(gravity.GRAVITY_TORQUES, q)

    def com(self, q):
        return self._run(com.CENTER_OF_MASS, q)

    def com_jacobian(self, q):
        return self._run(com.COM_JACOBIAN, q)

    def com_velocity(self, q, v):
        return self._run(com_velocity.CENTER_OF_MASS_VELOCITY, q, v)

    def _scratch(self):
        return np.full((6, self.nv), np.nan)


@pytest.fixture(scope="module", params=list(TREES))
def tree(request):
    rng, model, am = seeded_tree(request.param, *TREES[request.param])
    return rng, model, am, Kernels(packed_tree(am))


_q = random_configuration


def test_the_trees_mix_every_kind_and_have_more_coordinates_than_bodies(tree):
    _, model, am, k = tree
    kinds = [j.kind for j in am.joints]
    assert set(J.KINDS) - {"continuous"} <= set(kinds)
    assert any(kind in ("free_flyer", "spherical", "planar", "universal") for kind in kinds[1:])  # inside the tree
    assert k.nv == model.nv > k.n and k.fx.shape[0] == model.nv + len(model.frames)


def test_frames_equal_pinocchio(tree):
    rng, model, am, k = tree
    data = model.createData()
    for _ in range(3):
        q, v, a = _q(am, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        for fid, frame in enumerate(model.frames):
            name = frame.name
            assert _err(k.pose(q, fid), data.oMf[fid].homogeneous) < TOL, name
            for local, ref in ((0, LWA), (1, LOCAL)):
                jac = pin.computeFrameJacobian(model, data, q, fid, ref)
                assert _err(k.jacobian(q, fid, local), jac) < TOL, (name, ref)
                assert _err(k.velocity(q, v, fid, local), pin.getFrameVelocity(model, data, fid, ref).vector) < TOL
                acc = pin.getFrameClassicalAcceleration(model, data, fid, ref).vector
                assert _err(k.acceleration(q, v, a, fid, local), acc) < TOL, (name, ref)


def test_classical_acceleration_with_zero_acceleration_is_the_jacobian_derivative_times_v(tree):
    """a = 0 gives Jdot v: the universal joint's S' term shows here (central differences of J along v)."""
    rng, model, am, k = tree
    q, v = _q(am, rng), rng.normal(size=model.nv)
    h = 1e-6
    for fid in range(len(model.frames)):
        ahead, behind = pin.integrate(model, q, h * v), pin.integrate(model, q, -h * v)
        jdot = k.jacobian(ahead, fid, 0) - k.jacobian(behind, fid, 0)
        assert _err(k.acceleration(q, v, np.zeros(model.nv), fid, 0), jdot @ v / (2 * h)) < 1e-6


def test_gravity_and_centre_of_mass_equal_pinocchio(tree):
    rng, model, am, k = tree
    data = model.createData()
    for _ in range(3):
        q, v = _q(am, rng), rng.normal(size=model.nv)
        assert _err(k.gravity(q), pin.computeGeneralizedGravity(model, data, q)) < TOL
        assert _err(k.com(q), pin.centerOfMass(model, data, q)) < TOL
        assert _err(k.com_jacobian(q), pin.jacobianCenterOfMass(model, data, q)) < TOL
        pin.centerOfMass(model, data, q, v)
        assert _err(k.com_velocity(q, v), data.vcom[0]) < TOL


def test_a_quaternion_of_any_norm_is_normalised_and_a_zero_one_is_refused(tree):
    rng, model, am, k = tree
    q = _q(am, rng)
    scaled, zero = q.copy(), q.copy()
    for j in am.joints:
        if j.kind in ("spherical", "free_flyer", "planar"):
            s = j.idx_q + (3 if j.kind == "free_flyer" else 2 if j.kind == "planar" else 0)
            e = s + (2 if j.kind == "planar" else 4)
            scaled[s:e] *= 2.5
            zero[s:e] = 0.0
    last = len(model.frames) - 1
    assert _err(k.jacobian(scaled, last, 0), k.jacobian(q, last, 0)) < 1e-12
    assert _err(k.gravity(scaled), k.gravity(q)) < 1e-12
    pose = np.full((4, 4), 0.0)
    frames.pose_into(k.im, k.fx, zero, 2 * last, pose, k._scratch())
    assert np.isnan(pose).any()  # the inner step propagates NaN; the declarations refuse it with status 4
    assert k.status(frames.FRAME_POSE, zero, options=(last,)) == 4
    assert k.status(gravity.GRAVITY_TORQUES, zero) == 4
    assert k.status(com.COM_JACOBIAN, zero) == 4


def test_frame_codes_past_the_last_frame_are_refused(tree):
    _, model, am, k = tree
    L = len(model.frames)
    q = _q(am, np.random.default_rng(0))
    assert frames.frame_code(k.im, k.fx, L - 1, 1) == 2 * (L - 1) + 1
    assert frames.frame_code(k.im, k.fx, L, 0) == -1 and k.status(frames.JACOBIAN, q, options=(L, 0)) == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_free_flyer_root_with_one_coordinate_joints_equals_pinocchio(seed):
    """The frame kernels' path for floating robots (free flyer at the root, then revolute and prismatic
    joints: the root's placement in straight-line code, its six Jacobian columns in closed form) against
    Pinocchio, with a root placement that is not the identity and quaternions of any norm; a zero
    quaternion refused (status 4)."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root="free_flyer")
    data = model.createData()
    am = array_model(model)
    k = Kernels(packed_tree(am))
    assert k.im[0, FORM] == TreeForm.FREE_ROOT
    assert not np.allclose(model.jointPlacements[1].rotation, np.eye(3))
    for _ in range(3):
        q, v, a = random_configuration(am, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        pin.forwardKinematics(model, data, q, v, a)
        pin.updateFramePlacements(model, data)
        scaled = q.copy()
        scaled[3:7] *= rng.uniform(0.1, 10.0)
        for fid, frame in enumerate(model.frames):
            name = frame.name
            assert _err(k.pose(q, fid), data.oMf[fid].homogeneous) < 1e-12, name
            for local, ref in ((0, LWA), (1, LOCAL)):
                jac = pin.computeFrameJacobian(model, data, q, fid, ref)
                assert _err(k.jacobian(q, fid, local), jac) < 1e-12, (name, ref)
                assert _err(k.jacobian(scaled, fid, local), jac) < 1e-12, (name, ref)
                assert _err(k.velocity(q, v, fid, local), pin.getFrameVelocity(model, data, fid, ref).vector) < 1e-12
                acc = pin.getFrameClassicalAcceleration(model, data, fid, ref).vector
                assert _err(k.acceleration(q, v, a, fid, local), acc) < 1e-12, (name, ref)
    zero = q.copy()
    zero[3:7] = 0.0
    last = len(model.frames) - 1
    assert k.status(frames.JACOBIAN, zero, options=(last, 0)) == 4
    assert k.status(frames.FRAME_POSE, zero, options=(last,)) == 4


@pytest.mark.parametrize("name", list(FLOATING_URDFS))
def test_a_floating_robot_as_a_free_flyer_tree_equals_the_robot(name):
    """The kernels on the robot's free-flyer tree, and the robot's own single-sample and batch frame methods
    (which run on that tree), against Pinocchio's free-flyer model of the same URDF (each link a BODY frame of
    the same name; Jacobian columns in Pinocchio's joint order through ``pp.cols``); gravity torques, the centre
    of mass, its Jacobian and velocity too."""
    robot = floating_robot(name)
    am = from_robot(robot)
    k = Kernels(packed_tree(am))
    assert tuple(am.frame_names) == tuple(robot.frame_names) and k.im[0, FORM] == TreeForm.FREE_ROOT
    pp = legged_pair(name, robot)
    m, d = pp.model, pp.data
    fids = [m.getFrameId(frame, pin.FrameType.BODY) for frame in robot.frame_names]
    assert all(fid < len(m.frames) for fid in fids)  # every link is a Pinocchio frame
    rng = np.random.default_rng(5)
    for _ in range(2):
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
        v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        qp, vp, ap = pp.q(q), pp.v(v), pp.v(a)
        pin.forwardKinematics(m, d, qp, vp, ap)
        pin.updateFramePlacements(m, d)
        Q, V, A = q[None], v[None], a[None]  # a batch of one
        for f, (frame, fid) in enumerate(zip(robot.frame_names, fids)):
            want = d.oMf[fid].homogeneous
            assert _err(k.pose(q, f), want) < TOL and _err(robot.frame_pose(q, frame), want) < TOL, frame
            assert _err(robot.frame_pose(Q, frame)[0], want) < TOL, frame
            for local, ref, pref in ((0, "world", LWA), (1, "local", LOCAL)):
                want = pin.computeFrameJacobian(m, d, qp, fid, pref)
                assert _err(pp.cols(k.jacobian(q, f, local)), want) < TOL, (frame, ref)
                assert _err(pp.cols(robot.jacobian(q, frame, ref)), want) < TOL, (frame, ref)
                assert _err(pp.cols(robot.jacobian(Q, frame, reference=ref)[0]), want) < TOL, (frame, ref)
                want = pin.getFrameVelocity(m, d, fid, pref).vector
                assert _err(k.velocity(q, v, f, local), want) < TOL
                assert _err(robot.frame_velocity(q, v, frame, ref), want) < TOL, (frame, ref)
                assert _err(robot.frame_velocity(Q, V, frame, reference=ref)[0], want) < TOL, (frame, ref)
                want = pin.getFrameClassicalAcceleration(m, d, fid, pref).vector
                assert _err(k.acceleration(q, v, a, f, local), want) < TOL, (frame, ref)
                assert _err(robot.frame_acceleration(q, v, a, frame, ref), want) < TOL, (frame, ref)
                assert _err(robot.frame_acceleration(Q, V, A, frame, reference=ref)[0], want) < TOL, (frame, ref)
        # gravity and the centre of mass run on this tree: the independent route is Pinocchio's free flyer
        assert _err(pp.v(k.gravity(q)), pin.computeGeneralizedGravity(m, d, qp)) < TOL
        assert _err(k.com(q), pin.centerOfMass(m, d, qp)) < TOL
        assert _err(pp.cols(k.com_jacobian(q)), pin.jacobianCenterOfMass(m, d, qp)) < TOL
        pin.centerOfMass(m, d, qp, vp)
        assert _err(k.com_velocity(q, v), d.vcom[0]) < TOL  # no center_of_mass_velocity method


@pytest.mark.parametrize("name", ["panda", "stanford"])
def test_a_bundled_fixed_base_robot_packs_the_same_from_either_model(name):
    robot = cd.load(name)
    tree, arrays = Kernels(packed_tree(from_robot(robot))), Kernels(robot.arrays)
    im, fm = pack(robot.model)
    assert np.array_equal(pack_frames(robot.model, fm), arrays.fx)
    assert np.array_equal(pack_tree(from_robot(robot))[0], im)
    rng = np.random.default_rng(1)
    q, v, a = (rng.normal(size=robot.dof) for _ in range(3))
    for f, frame in enumerate(robot.frame_names):
        assert _err(tree.jacobian(q, f, 1), robot.jacobian(q, frame, reference="local")) < 1e-12
        assert _err(tree.acceleration(q, v, a, f, 0), robot.frame_acceleration(q, v, a, frame)) < 1e-12
    assert _err(tree.gravity(q), robot.gravity_torques(q)) < 1e-12
    assert _err(tree.com_jacobian(q), robot.com_jacobian(q)) < 1e-12
