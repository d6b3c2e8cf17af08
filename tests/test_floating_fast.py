"""``robot.fast`` of a floating robot: the quantities it computes on its free-flyer (or planar) tree.

Every quantity of ``floating_robot.ON_TREE`` through ``robot.fast`` equals the robot's method
(one sample, a batch, ``out=``), and inverse dynamics, M and a frame Jacobian equal
Pinocchio's with a free flyer; a zero quaternion, a wrong length and a missing quantity are
refused with errors that name them.
"""

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.floating_robot import FAST, ON_TREE
from pin_oracle import FreeFlyerPair, erd_urdf, pin, rel_err
from random_robots import random_urdf


def _calls(robot, rng, samples=None):
    """name -> (fast arguments, the method's arguments) for every quantity on the tree."""
    size = () if samples is None else (samples,)
    q = robot.random_configuration(size=samples, seed=int(rng.integers(1000)))
    v, a = rng.normal(size=(2, *size, robot.nv))
    k, frame = len(robot.frame_names) - 1, robot.frame_names[-1]
    return {
        "inverse_dynamics": ((q, v, a), (q, v, a)),
        "forward_dynamics": ((q, v, a), (q, v, a)),
        "mass_matrix": ((q,), (q,)),
        "gravity_torques": ((q,), (q,)),
        "bias_torques": ((q, v), (q, v)),
        "coriolis_matrix": ((q, v), (q, v)),
        "center_of_mass": ((q,), (q,)),
        "com_jacobian": ((q,), (q,)),
        "regressor": ((q, v, a), (q, v, a)),
        "frame_pose": ((q, k), (q, frame)),
        "jacobian": ((q, k, 1), (q, frame, "local")),
        "frame_velocity": ((q, v, k, 0), (q, v, frame, "world")),
        "frame_acceleration": ((q, v, a, k, 1), (q, v, a, frame, "local")),
    }


def _robots():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield "solo12", cd.load(erd_urdf("solo12"), floating=True)
    yield "random", cd.from_urdf(random_urdf(4, 7, p_fixed=0.3), floating=True)
    xml = random_urdf(5, 5, p_fixed=0.3).replace("</robot>", (
        '<link name="world"/><joint name="base_joint" type="planar"><parent link="world"/>'
        '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint></robot>'))
    yield "planar", cd.from_urdf(xml)


ROBOTS = dict(_robots())


@pytest.mark.parametrize("key", sorted(ROBOTS))
def test_every_quantity_on_the_tree_equals_the_method(key):
    robot = ROBOTS[key]
    fast, rng = robot.fast, np.random.default_rng(0)
    assert set(dir(fast)) >= set(FAST) and fast.names == FAST
    one, batch = _calls(robot, rng), _calls(robot, rng, samples=5)
    for name in sorted(ON_TREE):
        (fa, ma), (fb, mb) = one[name], batch[name]
        method = getattr(robot, name)
        expected = method(*ma)
        got = getattr(fast, name)(*fa)
        assert got.shape == expected.shape and rel_err(got, expected) < 1e-13, name
        out = np.full(expected.shape, np.nan)
        assert getattr(fast, name)(*fa, out=out) is out and rel_err(out, expected) < 1e-13, name
        expected = method(*mb)
        got = getattr(fast, name)(*fb)
        assert got.shape == expected.shape and rel_err(got, expected) < 1e-13, name
        out = np.full(expected.shape, np.nan)
        assert getattr(fast, name)(*fb, out=out) is out and rel_err(out, expected) < 1e-13, name


def test_fast_equals_pinocchio_with_a_free_flyer():
    path = erd_urdf("solo12")
    robot = ROBOTS["solo12"]
    pp = FreeFlyerPair(robot, path, pin.JointModelFreeFlyer())
    rng = np.random.default_rng(3)
    Q = robot.random_configuration(size=4, seed=3)
    V, A = rng.normal(size=(2, 4, robot.nv))
    tau, M = robot.fast.rnea(Q, V, A, friction=0), robot.fast.mass_matrix(Q)
    frame = robot.frame_names[-1]
    fid = pp.model.getFrameId(frame)
    J = robot.fast.jacobian(Q, robot.frame_names.index(frame), 0)
    for s in range(4):
        qp, vp, ap = pp.q(Q[s]), pp.v(V[s]), pp.v(A[s])
        assert rel_err(pp.v(tau[s]), pin.rnea(pp.model, pp.data, qp, vp, ap)) < 1e-9
        Mp = pin.crba(pp.model, pp.data, qp)
        assert rel_err(pp.mat(M[s]), np.triu(Mp) + np.triu(Mp, 1).T) < 1e-9
        pin.computeJointJacobians(pp.model, pp.data, qp)
        pin.updateFramePlacements(pp.model, pp.data)
        Jp = pin.getFrameJacobian(pp.model, pp.data, fid, pin.LOCAL_WORLD_ALIGNED)
        assert rel_err(pp.cols(J[s]), Jp) < 1e-9


def test_refusals_name_the_sample_the_argument_and_the_quantity():
    robot = ROBOTS["solo12"]
    fast = robot.fast
    Q = robot.random_configuration(size=3, seed=1)
    V = np.zeros((3, robot.nv))
    Q[1, 3:7] = 0.0
    with pytest.raises(ValueError, match=r"robot.fast.mass_matrix on robot 'solo', sample 1: .*zero quaternion"):
        fast.mass_matrix(Q)
    with pytest.raises(ValueError, match="zero quaternion"):
        fast.inverse_dynamics(Q[1], V[1], V[1])
    with pytest.raises(ValueError, match=rf"q has shape \({robot.nv},\), not \({robot.nq},\)"):
        fast.inverse_dynamics(V[0], V[0], V[0])
    with pytest.raises(ValueError, match=r"v has shape"):
        fast.bias_torques(Q[0], Q[0])
    with pytest.raises(AttributeError, match="composed_vectors"):
        fast.composed_vectors  # noqa: B018 -- a NumPy reference, not in robot.fast
    q = Q[0]
    bad = q.copy()
    bad[0] = np.nan
    assert np.isnan(fast.gravity_torques(bad)).all()  # NaN in, NaN out (as for a fixed base)
    with pytest.raises(ValueError, match="out of range"):
        fast.frame_pose(q, len(robot.frame_names) + 3)


def test_floating_fast_needs_independent_coordinates():
    xml = random_urdf(6, 4, p_fixed=0.0)
    robot = cd.from_urdf(xml, floating=True)
    assert robot.fast.n == robot.nv
    assert np.array_equal(robot.mimic_jacobian, np.eye(robot.nv))  # no mimic joints: the identity


@pytest.mark.parametrize("key", sorted(ROBOTS))
def test_fast_derivatives_equal_the_methods(key):
    robot = ROBOTS[key]
    fast, rng = robot.fast, np.random.default_rng(4)
    for samples in (None, 3):
        q = robot.random_configuration(size=samples, seed=4)
        v, x = rng.normal(size=(2,) + q.shape[:-1] + (robot.nv,))
        for name in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives"):
            expected = getattr(robot, name)(q, v, x)
            got = getattr(fast, name)(q, v, x)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.shape == e.shape and rel_err(g, e) < 1e-13, name


def test_fast_with_dependent_mimic_joints_runs_on_the_tree_coordinates():
    """With dependent mimic joints robot.fast computes on the tree's coordinates (every joint's), as a
    fixed-base Robot.fast does: at q_full = full_positions(q), rates G v (G = mimic_jacobian), its
    results reduced by G (Gᵀ τ, Gᵀ M G, J G) equal the robot's methods (compared with Pinocchio in
    test_floating_tree_paths); its forward dynamics is the tree's, every joint free."""
    from tensor_cases import mimic_urdf

    robot = cd.from_urdf(mimic_urdf(6, 8, p_fixed=0.3, damping=True, friction=True), floating=True)
    assert robot.mimic_joint_names
    fast, rng, G = robot.fast, np.random.default_rng(5), robot.mimic_jacobian
    assert fast.n == G.shape[0] > robot.nv
    q = robot.random_configuration(seed=5)
    v, a = rng.normal(size=(2, robot.nv))
    qf, vf, af = robot.full_positions(q), G @ v, G @ a
    k, frame = len(robot.frame_names) - 1, robot.frame_names[-1]
    pairs = {
        "inverse_dynamics": (G.T @ fast.inverse_dynamics(qf, vf, af), robot.inverse_dynamics(q, v, a)),
        "mass_matrix": (G.T @ fast.mass_matrix(qf) @ G, robot.mass_matrix(q)),
        "gravity_torques": (G.T @ fast.gravity_torques(qf), robot.gravity_torques(q)),
        "bias_torques": (G.T @ fast.bias_torques(qf, vf), robot.bias_torques(q, v)),
        "coriolis_matrix": (G.T @ fast.coriolis_matrix(qf, vf) @ G, robot.coriolis_matrix(q, v)),
        "center_of_mass": (fast.center_of_mass(qf), robot.center_of_mass(q)),
        "com_jacobian": (fast.com_jacobian(qf) @ G, robot.com_jacobian(q)),
        "regressor": (G.T @ fast.regressor(qf, vf, af), robot.regressor(q, v, a)),
        "frame_pose": (fast.frame_pose(qf, k), robot.frame_pose(q, frame)),
        "jacobian": (fast.jacobian(qf, k, 1) @ G, robot.jacobian(q, frame, "local")),
        "frame_velocity": (fast.frame_velocity(qf, vf, k, 0), robot.frame_velocity(q, v, frame)),
        "frame_acceleration": (fast.frame_acceleration(qf, vf, af, k, 0), robot.frame_acceleration(q, v, a, frame)),
    }
    for name, (got, want) in pairs.items():
        assert got.shape == want.shape and rel_err(got, want) < 1e-12, name
    dq, dv = fast.inverse_dynamics_derivatives(qf, vf, af)
    want_q, want_v = robot.inverse_dynamics_derivatives(q, v, a)
    assert rel_err(G.T @ dq @ G, want_q) < 1e-10 and rel_err(G.T @ dv @ G, want_v) < 1e-10
    tau = rng.normal(size=G.shape[0])  # the tree's forward dynamics: every joint free
    assert rel_err(fast.inverse_dynamics(qf, vf, fast.forward_dynamics(qf, vf, tau)), tau) < 1e-10
