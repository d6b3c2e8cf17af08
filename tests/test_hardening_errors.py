"""Unclear errors made clear: each names the argument and what is wrong, the same on every route."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.schema import add_link, new_graph
from pin_oracle import erd_robots_dir


@pytest.fixture(scope="module")
def puma():
    return cd.load("puma560")


@pytest.fixture(scope="module")
def solo():
    return cd.load(str(erd_robots_dir() / "solo_description/robots/solo12.urdf"), floating=True)


def test_smoothing_width_too_large_for_a_float_names_the_argument(puma, solo):
    q = np.zeros(puma.dof)
    for call in (lambda: puma.forward_dynamics(q, q, q, smooth_friction=10**400),
                 lambda: puma.fast.forward_dynamics(q, q, q, smooth_friction=10**400),
                 lambda: puma.forward_dynamics_derivatives(q, q, q, smooth_friction=10**400),
                 lambda: solo.forward_dynamics(solo.random_configuration(seed=0), np.zeros(solo.nv),
                                               np.zeros(solo.nv), smooth_friction=10**400)):
        with pytest.raises(ValueError, match=r"smooth_friction .*too large for a float") as info:
            call()
        assert len(str(info.value)) < 200


def test_fast_refuses_a_memoryview_naming_it(puma):
    with pytest.raises(ValueError, match=r"robot.fast.gravity_torques: .*got q memoryview"):
        puma.fast.gravity_torques(memoryview(np.zeros(puma.dof)))
    with pytest.raises(ValueError, match=r"robot.fast.inverse_dynamics: "):
        puma.fast.inverse_dynamics(np.zeros(puma.dof), memoryview(np.zeros(puma.dof)), np.zeros(puma.dof))


@pytest.mark.parametrize("method", ["inverse_dynamics_derivatives", "forward_dynamics_derivatives",
                                    "forward_dynamics", "inverse_dynamics"])
def test_friction_none_means_off_on_every_route(puma, method):
    rng = np.random.default_rng(0)
    Q = rng.uniform(-1, 1, (3, 2, puma.dof))
    f = getattr(puma, method)
    off = f(*Q, friction=False)
    for a, b in zip(np.atleast_1d(f(*Q, friction=None)), np.atleast_1d(off)):  # a batch: compiled loops
        assert np.array_equal(a, b)
    one = f(*Q[:, 0], friction=None)  # one sample: the C entries
    for a, b in zip(one if isinstance(one, tuple) else (one,), off if isinstance(off, tuple) else (off,)):
        assert np.allclose(a, b[0], rtol=1e-12, atol=1e-12)
    dispatch.set_backend("numpy")
    try:
        ref = f(*Q, friction=None)
    finally:
        dispatch.set_backend("auto")
    for a, b in zip(ref if isinstance(ref, tuple) else (ref,), off if isinstance(off, tuple) else (off,)):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("method", ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"])
def test_floating_derivatives_of_a_0d_configuration_name_the_shape(solo, method):
    with pytest.raises(ValueError, match=r"q has shape \(\), expected \(\.\.\., 19\)"):
        getattr(solo, method)(np.array(1.0), np.array(1.0), np.array(1.0))


def test_masked_arrays_are_one_clear_error(puma, solo):
    q = np.ma.masked_array(np.zeros(puma.dof), mask=[0, 1, 0, 0, 0, 0])
    z = np.zeros(puma.dof)
    for call in (lambda: puma.gravity_torques(q), lambda: puma.inverse_dynamics(z, q, z),
                 lambda: puma.mass_matrix(q)):
        with pytest.raises(ValueError, match=r"masked array"):
            call()
    with pytest.raises(ValueError, match=r"robot.fast.gravity_torques: .*MaskedArray"):
        puma.fast.gravity_torques(q)
    with pytest.raises(ValueError, match=r"q is a masked array"):
        solo.gravity_torques(np.ma.masked_array(solo.random_configuration(seed=0)))


def test_fast_of_a_robot_without_moving_joints_names_it():
    g = new_graph("plate")
    add_link(g, "base", mass=1.0)
    r = cd.from_graph(g)
    with pytest.raises(ValueError, match=r"robot.fast: robot 'plate' .*no moving joint"):
        r.fast.gravity_torques(np.zeros(0))
