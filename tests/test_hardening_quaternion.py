"""A base quaternion of huge norm (its square overflows a double) is divided out like any other
norm, on every route: the C caller of one sample, the compiled batch loops, the NumPy backend
and ``normalize``.  The identity: results at ``k quat`` equal those at the unit ``quat``."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from pin_oracle import erd_robots_dir


@pytest.fixture(scope="module")
def solo():
    return cd.load(str(erd_robots_dir() / "solo_description/robots/solo12.urdf"), floating=True)


def _states(robot, scale):
    q = robot.random_configuration(seed=3)
    v = np.random.default_rng(4).uniform(-1, 1, robot.nv)
    big = q.copy()
    big[3:7] *= scale
    return q, big, v


def _methods(robot, q, v):
    frame = robot.frame_names[-1]
    return {
        "gravity_torques": robot.gravity_torques(q),
        "inverse_dynamics": robot.inverse_dynamics(q, v, v),
        "forward_dynamics": robot.forward_dynamics(q, v, v),
        "mass_matrix": robot.mass_matrix(q),
        "coriolis_matrix": robot.coriolis_matrix(q, v),
        "frame_pose": robot.frame_pose(q, frame),
        "jacobian": robot.jacobian(q, frame),
        "center_of_mass": robot.center_of_mass(q),
        "energy": robot.energy(q, v),
        "normalize": robot.normalize(q),
    }


def _same(robot, q, big, v):
    want, got = _methods(robot, q, v), _methods(robot, big, v)
    for k in want:
        if k == "normalize":
            assert np.allclose(got[k], q, rtol=0, atol=1e-15), got[k][3:7]
        else:
            assert np.all(np.isfinite(got[k])) and np.allclose(got[k], want[k], rtol=1e-12, atol=1e-9), k


@pytest.mark.parametrize("scale", [1e155, 1e300, 1e-9])
def test_one_sample_with_huge_or_tiny_quaternion_norm(solo, scale):
    q, big, v = _states(solo, scale)
    _same(solo, q, big, v)


def test_issue_case_gravity_sign(solo):
    q = solo.random_configuration(seed=0)
    q[3:7] = [1.0, 0.0, 0.0, 0.0]
    big = q.copy()
    big[3:7] = [1e155, 0.0, 0.0, 0.0]
    assert np.allclose(solo.gravity_torques(big), solo.gravity_torques(q), rtol=1e-12, atol=1e-9)
    assert np.array_equal(solo.normalize(big)[3:7], [1.0, 0.0, 0.0, 0.0])


def test_batch_with_huge_quaternion_norm(solo):
    q, big, v = _states(solo, 1e200)
    Q, V = np.stack([big, q]), np.stack([v, v])
    for name in ("gravity_torques", "mass_matrix"):
        r = getattr(solo, name)(Q)
        assert np.allclose(r[0], r[1], rtol=1e-12, atol=1e-9), name
    r = solo.inverse_dynamics(Q, V, V)
    assert np.allclose(r[0], r[1], rtol=1e-12, atol=1e-9)
    r = solo.forward_dynamics(Q, V, V)
    assert np.allclose(r[0], r[1], rtol=1e-12, atol=1e-9)


def test_numpy_backend_with_huge_quaternion_norm(solo):
    q, big, v = _states(solo, 1e155)
    dispatch.set_backend("numpy")
    try:
        _same(solo, q, big, v)
    finally:
        dispatch.set_backend("auto")


def test_zero_quaternion_is_still_refused(solo):
    q = solo.random_configuration(seed=1)
    q[3:7] = 0.0
    with pytest.raises(ValueError, match="zero norm"):
        solo.gravity_torques(q)
    with pytest.raises(ValueError, match="zero norm"):
        solo.normalize(q)


def test_group_operations_with_huge_quaternion_norm(solo):
    q, big, v = _states(solo, 1e200)
    assert np.allclose(solo.integrate(big, v, 0.1), solo.integrate(q, v, 0.1), rtol=0, atol=1e-12)
    assert np.allclose(solo.difference(big, q), 0.0, atol=1e-12)
    assert np.allclose(solo.difference(q, solo.integrate(big, v, 0.1)), 0.1 * v, rtol=1e-9, atol=1e-12)
    rate, want = solo.configuration_rate(big, v), solo.configuration_rate(q, v)
    assert np.allclose(rate[:3], want[:3], rtol=1e-12, atol=1e-12)
    assert np.allclose(rate[3:7] / 1e200, want[3:7], rtol=1e-12, atol=1e-12)  # the quaternion's rate scales with it
