"""Arguments the robustness fuzzer found accepted or crashing, now refused in one line naming them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd


@pytest.fixture(scope="module")
def floating():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cd.load("puma560", floating=True)


@pytest.mark.parametrize("dt", [10**400, float("nan"), float("inf"), "x", [0.1, 0.2]])
def test_integrate_refuses_a_time_step_that_is_not_a_finite_number(floating, dt):
    with pytest.raises(ValueError, match="dt must be a finite number") as e:
        floating.integrate(floating.neutral(), np.zeros(floating.nv), dt=dt)
    assert "\n" not in str(e.value) and len(str(e.value)) < 120


@pytest.mark.parametrize("method", ["integrate", "configuration_rate"])
def test_group_operations_refuse_a_zero_quaternion(floating, method):
    q = floating.neutral()
    q[3:7] = 0.0
    with pytest.raises(ValueError, match="zero norm"):
        getattr(floating, method)(q, np.ones(floating.nv))
    # a unit quaternion still works and moves the configuration
    assert not np.allclose(getattr(floating, method)(floating.neutral(), np.ones(floating.nv)), 0.0)


def test_perturbed_refuses_a_scale_too_large_for_a_float_in_one_short_line():
    robot = cd.load("two_link")
    with pytest.raises(ValueError, match="scale must be a number") as e:
        robot.perturbed(scale=10**400)
    assert len(str(e.value)) < 120


@pytest.mark.parametrize("samples", [0, -3])
def test_base_parameters_refuse_no_samples(samples):
    robot = cd.load("two_link")
    with pytest.raises(ValueError, match="samples must be a positive"):
        robot.base_parameters(samples=samples)
    assert robot.base_parameters(samples=5).rank > 0


@pytest.mark.parametrize("method", ["gravity_torques", "jacobian"])
def test_a_ragged_list_is_refused_naming_the_argument(method):
    robot = cd.load("two_link")
    args = ([[0.1, 0.2], [0.3]],) + (("link2",) if method == "jacobian" else ())
    with pytest.raises(ValueError, match=r"^q must be a numeric array of shape \(\.\.\., 2\)"):
        getattr(robot, method)(*args)
