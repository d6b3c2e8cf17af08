"""Link wrenches -> the kernels' body forces (composedyn.link_wrenches), against the NumPy
reference that takes every body's pose from the reference kinematics
(composedyn.dynamics.reference.derivatives.external_terms): one sample (plain-float path) and
batches, several links on one body, links welded to the world, mimic joints (all-joint q)."""

import numpy as np
import pytest

import composedyn as cd
from composedyn.checks import wrenches
from composedyn.dynamics.reference.derivatives import external_terms
from composedyn.dynamics.reference.kinematics import body_poses
from composedyn.link_wrenches import body_forces
from composedyn.testing.random_robots import random_urdf


def _robot_case(seed):
    robot = cd.from_urdf(random_urdf(seed, 7, p_fixed=0.7, p_branch=0.5))
    m = robot.model
    shared = [b for b in set(m.link_body) if b >= 0 and list(m.link_body).count(b) > 1]
    assert shared and min(m.link_body) < 0  # links sharing a body, and links welded to the world
    return robot


def _helper(robot, q, f, lever_arms=False):
    m = robot.model
    ids = {name: k for k, name in enumerate(m.link_names)}
    pose = lambda q, link: robot.compute("frame_pose", q, frame=ids[link])  # noqa: E731
    return body_forces(pose, q, f, {k: m.link_body[ids[k]] for k in f}, {k: m.link_com[ids[k]] for k in f}, m.n,
                       lever_arms)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_body_forces_equal_the_reference(seed):
    robot = _robot_case(seed)
    m = robot.model
    rng = np.random.default_rng(seed)
    links = list(m.link_names)
    for batch in [(), (4,), (2, 3)]:
        q = rng.uniform(-2, 2, batch + (m.n,))
        f = wrenches({k: rng.normal(size=batch + (6,)) if k != links[1] else rng.normal(size=6)
                      for k in links}, m.link_names)
        want_f, want_P = external_terms(m, *body_poses(m, q), f)
        got_f, got_P = _helper(robot, q, f, lever_arms=True)
        np.testing.assert_allclose(got_f, want_f, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got_P, want_P.reshape(batch + (m.n, 9)), rtol=0, atol=1e-12)
        np.testing.assert_allclose(_helper(robot, q, f), want_f, rtol=0, atol=1e-12)
        assert np.any(got_f != 0)


def test_mimic_robot_wrenches_at_all_joint_coordinates():
    """A robot with mimic joints: the wrench's generalised forces are J^T w with the reduced
    Jacobian (world-aligned, linear rows first) of the link's centre-of-mass point."""
    from tensor_cases import mimic_urdf

    robot = cd.from_urdf(mimic_urdf(6, 8, p_fixed=0.3))
    assert robot.mimic_joint_names
    rng = np.random.default_rng(3)
    link = robot.model.link_names[-1]
    q, qd, qdd = robot.random_configuration(seed=4), rng.normal(size=robot.dof), rng.normal(size=robot.dof)
    w = rng.normal(size=6)
    tau = robot.inverse_dynamics(q, qd, qdd, f_ext={link: w}) - robot.inverse_dynamics(q, qd, qdd)
    J = robot.jacobian(q, link)
    T = robot.frame_pose(q, link)
    c = T[:3, :3] @ robot.model.link_com[list(robot.model.link_names).index(link)]
    Jc = J[:3] - np.cross(c, J[3:].T).T  # velocity of the centre of mass
    np.testing.assert_allclose(tau, -(Jc.T @ w[:3] + J[3:].T @ w[3:]), rtol=0, atol=1e-10)
    batch = robot.inverse_dynamics(np.stack([q, q]), qd, qdd, f_ext={link: np.stack([w, 2 * w])})
    np.testing.assert_allclose(batch[1] - robot.inverse_dynamics(q, qd, qdd), 2 * tau, rtol=0, atol=1e-10)


def test_wrench_batch_must_broadcast_to_the_state():
    robot = _robot_case(1)
    link = robot.model.link_names[-1]
    with pytest.raises(ValueError, match=f"f_ext\\['{link}'\\]"):
        robot.inverse_dynamics(np.zeros(robot.dof), np.zeros(robot.dof), np.zeros(robot.dof),
                               f_ext={link: np.ones((3, 6))})


def _cases():
    from tensor_cases import mimic_urdf

    yield cd.from_urdf(random_urdf(2, 7, p_fixed=0.7, p_branch=0.5, damping=True, friction=True, armature=True))
    yield cd.from_urdf(random_urdf(4, 6, p_fixed=0.5, damping=True, friction=True), floating=True)
    yield cd.from_urdf(mimic_urdf(6, 8, p_fixed=0.3, damping=True, friction=True))


@pytest.mark.parametrize("k", range(3))
def test_one_sample_with_wrenches_equals_the_batch_path(k):
    """A one-sample call with wrenches (C callers: frame poses, then the entry taking the body forces)
    equals the same sample as a batch of one (the batch loop with the NumPy-built body forces), for
    inverse and forward dynamics, friction on and off, smooth friction, out=, wrenches as lists and
    on a link welded to the world."""
    robot = list(_cases())[k]
    rng = np.random.default_rng(k)
    names = list(robot.frame_names)
    q = robot.random_configuration(seed=k)
    v, x = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    f = {names[0]: rng.normal(size=6).tolist(), names[-1]: rng.normal(size=6),
         names[len(names) // 2]: rng.normal(size=6)}
    for friction in (True, False):
        tau = robot.inverse_dynamics(q, v, x, f_ext=f, friction=friction)
        want = robot.inverse_dynamics(q[None], v[None], x[None], f_ext={n: np.asarray(w)[None] for n, w in f.items()},
                                      friction=friction)[0]
        np.testing.assert_allclose(tau, want, rtol=0, atol=1e-10)
        assert np.max(np.abs(tau - robot.inverse_dynamics(q, v, x, friction=friction))) > 1e-3  # the wrenches count
        for smooth in (None, 0.05):
            a = robot.forward_dynamics(q, v, tau, f_ext=f, friction=friction, smooth_friction=smooth)
            want = robot.forward_dynamics(q[None], v, tau, f_ext=f, friction=friction, smooth_friction=smooth)[0]
            np.testing.assert_allclose(a, want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(robot.forward_dynamics(q, v, tau, f_ext=f, friction=False), x, rtol=0, atol=1e-9)
    out = np.empty(robot.nv)
    assert robot.inverse_dynamics(q, v, x, f_ext=f, out=out) is out
    np.testing.assert_allclose(out, robot.inverse_dynamics(q, v, x, f_ext=f), rtol=0, atol=0)
    bad = dict(f, **{names[-1]: np.full(6, np.nan)})
    with pytest.raises(ValueError, match=f"f_ext\\['{names[-1]}'\\] contains NaN"):
        robot.inverse_dynamics(q, v, x, f_ext=bad)
    with pytest.raises(ValueError, match="q contains NaN"):  # the C caller declines, the general path names it
        robot.inverse_dynamics(np.full(robot.nq, np.nan), v, x, f_ext=f)
