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


def _fast_cases(n: int) -> list:
    """(method, arguments, the argument the error must name, what it must say about it)."""
    z, b = np.zeros(n), np.zeros((2, n))
    return [
        ("rnea", (z, z.astype(">f8"), z), "qd", r"dtype >f8"),
        ("inverse_dynamics", (z, z, z.astype(np.float32)), "qdd", r"dtype float32"),
        ("inverse_dynamics", (b, b, b[:, 1:].copy()), "qdd", rf"shape \(2, {n - 1}\)"),
        ("coriolis_matrix", (z, b), "qd", rf"shape \(2, {n}\) and q \({n},\)"),
        ("bias_torques", (z, None), "qd", r"None"),
        ("bias_torques", ([[1.0, 2.0], [1.0]], z), "q", r"a list"),  # ragged: NumPy cannot even measure it
        ("forward_dynamics", (z, z, np.ma.array(z)), "tau", r"a MaskedArray"),
        ("forward_dynamics", (np.zeros((0, n)), np.zeros((0, n - 1)), np.zeros((0, n))), "qd",
         rf"shape \(0, {n - 1}\)"),
        ("gravity_torques", (z[:, None].copy(),), "q", rf"shape \({n}, 1\)"),
    ]


@pytest.mark.parametrize("case", range(9))
def test_fast_names_the_argument_that_does_not_fit(puma, case):
    method, args, name, what = _fast_cases(puma.dof)[case]
    with pytest.raises(ValueError, match=rf"^robot\.fast\.{method}: {name} (is|has) [^;]*{what}") as info:
        getattr(puma.fast, method)(*args)
    assert len(str(info.value)) < 400 and "\n" not in str(info.value)


def test_fast_names_out_and_how_it_does_not_fit(puma):
    z = np.zeros(puma.dof)
    for out, what in ((np.zeros((puma.dof, puma.dof - 1)), r"shape"), (np.zeros((puma.dof,) * 2, np.float32),
                      r"dtype float32"), (np.zeros((puma.dof, 2 * puma.dof))[:, ::2], r"not C-contiguous")):
        with pytest.raises(ValueError, match=rf"^robot\.fast\.mass_matrix: out (is|has) [^;]*{what}"):
            puma.fast.mass_matrix(z, out=out)


@pytest.mark.parametrize("path", [None, 42])
def test_to_urdf_names_a_path_that_is_not_a_file_name(puma, solo, path):
    for robot in (puma, solo):
        with pytest.raises(TypeError, match=rf"to_urdf: path must be a file name .*got {type(path).__name__}"):
            robot.to_urdf(path)


@pytest.mark.parametrize("target", ["x", [[1.0, 2.0], [3.0]], object()])
def test_inverse_kinematics_names_a_target_that_is_not_numbers(puma, target):
    with pytest.raises(ValueError, match=r"inverse_kinematics: target must be a numeric 4x4 transform"):
        puma.inverse_kinematics(puma.frame_names[-1], target)


@pytest.mark.parametrize("size", [-1, "x", (2, -3), [[2]]])
def test_random_configuration_names_a_bad_size(puma, solo, size):
    for robot in (puma, solo):
        with pytest.raises(ValueError, match=r"random_configuration: size must be None, a non-negative integer"):
            robot.random_configuration(size=size, seed=0)


@pytest.mark.parametrize("seed", [-1, "x", 1.5])
def test_random_draws_name_a_bad_seed(puma, solo, seed):
    calls = {"random_configuration": lambda r: r.random_configuration(size=2, seed=seed),
             "perturbed": lambda r: r.perturbed(0.1, seed=seed),
             "base_parameters": lambda r: r.base_parameters(samples=2, seed=seed)}
    for robot in (puma, solo):
        for where, call in calls.items():
            with pytest.raises(ValueError, match=rf"^{where}: seed must be None, a non-negative integer"):
                call(robot)


@pytest.mark.parametrize("samples", ["x", 2.5, 0, -1, None])
def test_base_parameters_names_a_bad_number_of_samples(puma, samples):
    with pytest.raises(ValueError, match=r"base_parameters: samples must be a positive integer"):
        puma.base_parameters(samples=samples)


def test_random_draws_still_take_what_numpy_takes(puma, solo):
    """The checks refuse only what NumPy refuses: sizes as integers or tuples, seeds as integers,
    sequences of them or a Generator, giving NumPy's draws."""
    assert solo.random_configuration(size=(2, 3), seed=[1, 2]).shape == (2, 3, solo.nq)
    assert puma.random_configuration(size=np.int64(0), seed=np.int64(3)).shape == (0, puma.nq)
    same = puma.random_configuration(seed=np.random.default_rng(5))
    assert np.array_equal(same, puma.random_configuration(seed=5))


def test_velocity_products_overflow_only_beyond_the_documented_range(puma):
    """The velocity-product terms are quadratic in qd: h(q, s qd) - g(q) = s^2 (h(q, qd) - g(q)).
    At s = 1e100 that holds in float64; at s = 1e300 the result is not representable and
    overflows (docs/guide/robustness.md), on the single-sample and the batch route alike."""
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, (2, puma.dof))
    g = puma.gravity_torques(q)
    c = puma.bias_torques(q, qd) - g
    assert np.allclose((puma.bias_torques(q, 1e100 * qd) - g) / 1e200, c, rtol=1e-12, atol=0)
    with np.errstate(all="ignore"):
        for big in (puma.bias_torques(q, 1e300 * qd), puma.bias_torques(q[None], 1e300 * qd[None])[0]):
            assert not np.isfinite(big).all()
