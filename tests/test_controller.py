"""Computed-torque control: the law itself, saturation, and closed-loop
tracking on the Panda and PUMA 560 (exact model converges along the
closed-form error dynamics; 10 % mass mismatch stays bounded)."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.simulation.reference_motion import demo_motion
from composedyn.simulation.tracking import track

KP, KD = 100.0, 20.0  # critically damped, omega = 10 rad/s


@pytest.fixture(scope="module", params=["panda", "puma560"])
def robot(request):
    return cd.load(request.param)


def test_law_is_mass_matrix_times_servo_acceleration_plus_bias(robot):
    rng = np.random.default_rng(0)
    n = robot.dof
    q, qd, qr, qdr, qddr = rng.normal(size=(5, 4, n))
    ctrl = cd.ComputedTorqueController(robot, KP, KD)
    a = qddr + KD * (qdr - qd) + KP * (qr - q)
    friction = robot.model.damping * qd + robot.model.friction * np.sign(qd)
    expected = np.einsum("bij,bj->bi", robot.mass_matrix(q), a) + robot.bias_torques(q, qd) + friction
    assert np.allclose(ctrl(q, qd, qr, qdr, qddr), expected, rtol=1e-10, atol=1e-9)


def test_saturation_clips_at_the_effort_limits():
    panda = cd.load("panda")
    ctrl = cd.ComputedTorqueController(panda, 1e4, 200.0, saturate=True)
    q = demo_motion(panda, 1.0)(0.0)[0]
    tau = ctrl(q, np.zeros(7), q + 1.0, np.zeros(7), np.zeros(7))
    free = cd.ComputedTorqueController(panda, 1e4, 200.0)(q, np.zeros(7), q + 1.0, np.zeros(7), np.zeros(7))
    eff = panda.limits["effort"]
    assert np.all(np.abs(tau) <= eff) and np.any(np.abs(free) > eff)
    assert np.allclose(tau, np.clip(free, -eff, eff))


@pytest.mark.parametrize("kp, kd, match", [(-1.0, 1.0, "kp"), (1.0, [1.0, 2.0], "kd"), (np.nan, 1.0, "kp")])
def test_bad_gains(kp, kd, match):
    with pytest.raises(ValueError, match=match):
        cd.ComputedTorqueController(cd.load("panda"), kp, kd)


def test_exact_model_tracking_converges_along_the_error_dynamics(robot):
    motion = demo_motion(robot, 1.0, fraction=0.5)
    t = np.linspace(0.0, 2.0, 81)
    # friction sgn(qd) in the plant, as in the controller's model: the closed form needs the
    # controller to cancel friction exactly, which static friction (joints sticking when a
    # velocity reverses under a small torque, simulate's default) does not allow
    run = track(robot, motion, t, kp=KP, kd=KD, offset=0.05, rtol=1e-10, atol=1e-12, smooth_friction=0)
    # e'' + 20 e' + 100 e = 0 from e(0) = -0.05, e'(0) = 0:  e = -0.05 (1 + 10 t) exp(-10 t)
    closed_form = 0.05 * (1 + 10 * t) * np.exp(-10 * t)
    assert np.abs(run.error - closed_form[:, None]).max() < 1e-6
    assert run.error[-1].max() < 1e-6


def test_ten_percent_mass_mismatch_stays_bounded(robot):
    motion = demo_motion(robot, 1.0, fraction=0.5)
    t = np.linspace(0.0, 2.0, 41)
    run = track(robot, motion, t, kp=KP, kd=KD, mismatch=0.1, offset=0.05)
    assert run.error.max() < 0.1   # never far from the reference
    assert run.error[-1].max() < 0.05  # and settled near it
    assert run.error[-1].max() > 1e-6  # the mismatch is real: no exact convergence


def test_perturbed_copy_scales_each_link_consistently_and_leaves_the_original():
    robot = cd.load("panda")
    before = robot.model.mass.copy()
    wrong = robot.perturbed(0.1, seed=3)
    assert np.array_equal(robot.model.mass, before) and wrong.joint_names == robot.joint_names
    ratio = wrong.model.mass / robot.model.mass
    assert np.all(np.abs(ratio - 1) <= 0.1) and np.ptp(ratio) > 0.01
    with np.errstate(divide="ignore", invalid="ignore"):
        inertia_ratio = wrong.model.inertia_com / robot.model.inertia_com
    finite = np.isfinite(inertia_ratio)
    assert np.allclose(inertia_ratio[finite], np.broadcast_to(ratio[:, None, None], inertia_ratio.shape)[finite])
    assert np.array_equal(robot.perturbed(0.1, seed=3).model.mass, wrong.model.mass)  # reproducible
