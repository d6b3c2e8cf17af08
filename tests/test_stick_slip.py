"""Simulation with Coulomb friction: joints held by static friction stay at rest, released
joints slide with the closed-form acceleration and deceleration (prismatic and revolute),
energy never increases, short runs finish in a few evaluations, the guard stops a run."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd

MASS, INERTIA, FRICTION = 2.0, 0.5, 3.0


def one_joint(kind: str):
    """A single joint whose motion gravity does not drive: a horizontal slider (mass 2 kg)
    or a vertical-axis rotor (0.5 kg m^2 about its axis), Coulomb friction 3 N or N m."""
    axis = "1 0 0" if kind == "prismatic" else "0 0 1"
    izz = INERTIA if kind == "revolute" else 0.1
    return cd.from_urdf(f"""<robot name="{kind}">
      <link name="base"/>
      <link name="body"><inertial><mass value="{MASS}"/><origin xyz="0 0 0"/>
        <inertia ixx="0.3" iyy="0.3" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="{kind}"><parent link="base"/><child link="body"/><axis xyz="{axis}"/>
        <limit lower="-100" upper="100" velocity="100" effort="100"/>
        <dynamics damping="0" friction="{FRICTION}"/></joint>
    </robot>""")


@pytest.mark.parametrize("kind", ["prismatic", "revolute"])
def test_held_by_static_friction_it_stays_exactly_at_rest(kind):
    robot = one_joint(kind)
    t = np.linspace(0.0, 2.0, 21)
    for push in (0.99 * FRICTION, -0.5 * FRICTION):
        sim = cd.simulate(robot, [0.3], [0.0], t, torque=np.array([push]))
        assert np.all(sim.q == 0.3) and np.all(sim.qd == 0.0) and np.all(sim.qdd == 0.0)
        assert sim.friction_model == "stick-slip" and sim.nfev < 200


@pytest.mark.parametrize("kind", ["prismatic", "revolute"])
def test_released_it_accelerates_with_the_closed_form(kind):
    robot = one_joint(kind)
    m = MASS if kind == "prismatic" else INERTIA
    t = np.linspace(0.0, 1.0, 11)
    for push in (1.5 * FRICTION, -2.0 * FRICTION):
        sim = cd.simulate(robot, [0.0], [0.0], t, torque=np.array([push]), rtol=1e-10, atol=1e-12)
        a = (push - np.sign(push) * FRICTION) / m
        assert np.allclose(sim.q[:, 0], 0.5 * a * t**2, rtol=0, atol=1e-9)
        assert np.allclose(sim.qd[:, 0], a * t, rtol=0, atol=1e-9)
        assert np.allclose(sim.qdd[:, 0], a, rtol=1e-9)


@pytest.mark.parametrize("kind", ["prismatic", "revolute"])
def test_sliding_it_decelerates_and_then_sticks(kind):
    robot = one_joint(kind)
    m = MASS if kind == "prismatic" else INERTIA
    v0 = 1.2
    stop = m * v0 / FRICTION  # deceleration F / m until the velocity is zero
    t = np.linspace(0.0, 3 * stop, 31)
    sim = cd.simulate(robot, [0.0], [v0], t, rtol=1e-10, atol=1e-12)
    before, after = t < stop - 1e-9, t > stop + 1e-9
    a = -FRICTION / m
    assert np.allclose(sim.qd[before, 0], v0 + a * t[before], rtol=0, atol=1e-9)
    assert np.allclose(sim.q[before, 0], v0 * t[before] + 0.5 * a * t[before] ** 2, rtol=0, atol=1e-9)
    assert np.all(sim.qd[after, 0] == 0.0)
    assert np.allclose(sim.q[after, 0], m * v0**2 / (2 * FRICTION), rtol=0, atol=1e-9)
    assert sim.switches == 1
    assert np.all(np.diff(sim.energy) <= 1e-12)


@pytest.fixture(scope="module")
def puma():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the toolbox's PUMA inertias trip the plausibility warning
        return cd.load("puma560")


def test_puma_from_rest_with_friction_finishes_quickly(puma):
    assert np.all(puma.model.friction > 0)
    sim = cd.simulate(puma, np.zeros(6), np.zeros(6), np.linspace(0.0, 0.01, 11))
    assert sim.nfev < 1000 and sim.friction_model == "stick-slip"


def test_energy_never_increases_under_friction(puma):
    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.5, 0.0])
    sim = cd.simulate(puma, q0, np.zeros(6), np.linspace(0.0, 5.0, 501))
    E = sim.energy
    assert E[-1] < E[0] - 10.0  # it fell, and friction took energy
    assert np.all(np.diff(E) <= 1e-9 * abs(E[0]))
    assert sim.nfev < 20000 and sim.switches >= 1
    moved = np.ptp(sim.q, axis=0) > 1e-3
    assert moved.any() and not moved.all()  # some joints slide, some are held
    assert np.all(sim.qd[:, ~moved] == 0.0)


def test_guard_stops_a_run_with_a_clear_message(puma):
    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.5, 0.0])
    with pytest.raises(RuntimeError, match=r"stopped at t = .* after 50 right-hand side evaluations"):
        cd.simulate(puma, q0, np.zeros(6), np.linspace(0.0, 5.0, 11), max_evaluations=50)
    with pytest.raises(RuntimeError, match="wall time"):
        cd.simulate(puma, q0, np.zeros(6), np.linspace(0.0, 5.0, 11), timeout=0.0)



@pytest.mark.parametrize("friction", [True, False])
def test_the_wall_time_limit_starts_after_the_first_evaluation(puma, friction):
    """The first right-hand side evaluation compiles the kernels of a new process (minutes with an empty
    cache): a slow first evaluation (here a torque function) must not count against ``timeout``."""
    import time

    calls = [0]

    def slow_first(tt, q, qd):
        calls[0] += 1
        if calls[0] == 1:
            time.sleep(1.5)
        return np.zeros(6)

    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.5, 0.0])
    sim = cd.simulate(puma, q0, np.zeros(6), np.linspace(0.0, 0.05, 3), torque=slow_first, timeout=1.0,
                      friction=friction)
    assert sim.q.shape == (3, 6) and calls[0] > 3

def test_progress_is_silent_off_a_terminal(puma, capsys):
    cd.simulate(puma, np.zeros(6), np.zeros(6), np.linspace(0.0, 0.01, 3))
    assert capsys.readouterr().err == ""


BALL_TREE = """<mujoco><worldbody><body name="a"><joint name="ja" type="ball" frictionloss="0.3"/>
<geom type="box" size="0.1 0.05 0.2" mass="1.3" pos="0 0 -0.2"/><body name="b" pos="0 0 -0.4">
<joint name="jb" type="hinge" axis="0 1 0" frictionloss="0.2"/>
<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="0.7"/></body></body></worldbody></mujoco>"""


@pytest.mark.parametrize("which", ["floating", "ball"])
def test_stick_slip_on_a_floating_base_and_a_ball_joint(which):
    """Coordinates of a floating robot's joints and of a ball joint (each angular-velocity coordinate with its
    own Coulomb level) stick and slip as a fixed base's do: the run finishes in few evaluations, the energy
    of the unactuated robot never increases, the quaternions stay unit, and the motion is that of a stiff
    tanh friction model (width 1e-5 rad/s, an implicit integrator) to 1e-4."""
    from composedyn.testing.random_robots import random_urdf

    robot = cd.from_urdf(random_urdf(3, 3, friction=True), floating=True) if which == "floating" \
        else cd.from_mjcf(BALL_TREE)
    v0 = np.zeros(robot.nv)
    v0[-1] = 2.0
    q0 = robot.neutral() if which == "floating" else robot.integrate(robot.neutral(), np.r_[0.3, -0.2, 0.1, 0.4])
    t = np.linspace(0.0, 0.3, 31)
    sim = cd.simulate(robot, q0, v0, t)
    assert sim.friction_model == "stick-slip" and sim.nfev < 20000
    E = sim.energy
    assert np.all(np.diff(E) <= 1e-9 * max(1.0, abs(E[0])))
    quaternions = [j for j in robot.joints if j.nq == 7 or j.kind == "spherical"]
    for j in quaternions:
        start = j.idx_q + (3 if j.nq == 7 else 0)
        assert np.allclose(np.linalg.norm(sim.q[:, start:start + 4], axis=1), 1.0, atol=1e-12)
    stiff = cd.simulate(robot, q0, v0, t, smooth_friction=1e-5, method="Radau", rtol=1e-10, atol=1e-12)
    assert np.abs(robot.difference(stiff.q[-1], sim.q[-1])).max() < 1e-4
    assert np.abs(stiff.qd - sim.qd).max() < 1e-3


def test_a_bad_torque_or_guard_argument_is_named(puma):
    """A torque function returning NaN is named as forward dynamics names it, on the stick-slip path too
    (not a diverged state at t = nan); a negative or NaN timeout and a max_evaluations below 1 are refused."""
    t = np.linspace(0.0, 0.1, 3)
    bad = lambda tt, q, qd: np.r_[np.nan, np.zeros(5)]  # noqa: E731
    with pytest.raises(ValueError, match="tau contains NaN or infinite values"):
        cd.simulate(puma, np.zeros(6), np.zeros(6), t, torque=bad)
    with pytest.raises(ValueError, match=r"tau has shape \(5,\)"):
        cd.simulate(puma, np.zeros(6), np.zeros(6), t, torque=lambda tt, q, qd: np.zeros(5))
    for timeout in (-1.0, np.nan):
        with pytest.raises(ValueError, match="timeout must be None .* >= 0"):
            cd.simulate(puma, np.zeros(6), np.zeros(6), t, timeout=timeout)
    with pytest.raises(ValueError, match="max_evaluations must be an integer >= 1"):
        cd.simulate(puma, np.zeros(6), np.zeros(6), t, max_evaluations=0)
