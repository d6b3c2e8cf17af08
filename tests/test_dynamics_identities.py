"""Identities of rigid-body dynamics on random robots (hypothesis).

Robots come from ``random_robots.urdfs`` with damping, Coulomb friction and
armature; states are drawn from a seeded generator.  Checked: M symmetric
positive definite; forward(inverse(qdd)) = qdd (ABA and CRBA + Cholesky);
tau = M qdd + C qd + g with g = ID(q, 0, 0); dM/dt = C + C^T by central
differences along qd; T = 1/2 qd^T M qd; the power balance
dE/dt = qd^T (tau - tau_friction) along qdd = FD(q, qd, tau); and conservation
of E + dissipated work along a damped free motion integrated by solve_ivp.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import composedyn as cd
from composedyn.dynamics.reference.aba import aba
from composedyn.dynamics.reference.crba import crba
from composedyn.dynamics.reference.forward import solve_mass
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.dynamics.reference.rnea import rnea
from random_robots import random_urdf, urdfs

ROBOTS = urdfs(max_joints=12, damping=True, friction=True, armature=True)
SETTINGS = settings(max_examples=50, deadline=None)


def load(xml: str) -> cd.Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(xml)


def states(robot: cd.Robot, seed: int, k: int = 4):
    """k random (q, qd, qdd or tau) states, shape (k, n) each."""
    return np.random.default_rng(seed).uniform(-1.5, 1.5, (3, k, robot.dof))


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


@given(ROBOTS, st.integers(0, 2**31))
@SETTINGS
def test_mass_matrix_symmetric_positive_definite(xml, seed):
    robot = load(xml)
    q, _, _ = states(robot, seed)
    M = robot.mass_matrix(q)
    assert rel(M, np.swapaxes(M, -1, -2)) < 1e-14
    assert np.all(np.linalg.eigvalsh(M) > 0.0)


@given(ROBOTS, st.integers(0, 2**31))
@SETTINGS
def test_forward_inverts_inverse_and_equation_of_motion(xml, seed):
    robot = load(xml)
    m = robot.model
    q, qd, qdd = states(robot, seed)
    tau = robot.inverse_dynamics(q, qd, qdd)
    assert rel(robot.forward_dynamics(q, qd, tau), qdd) < 1e-9
    tau_rigid = tau - friction_torques(m, qd)
    assert rel(aba(m, q, qd, tau_rigid), qdd) < 1e-9
    M = crba(m, q) + np.diag(m.armature)
    assert rel(solve_mass(m, M, tau_rigid - rnea(m, q, qd, 0 * q)), qdd) < 1e-9
    C, g = robot.coriolis_matrix(q, qd), robot.gravity_torques(q)
    assert rel(g, robot.inverse_dynamics(q, 0 * q, 0 * q, friction=False)) < 1e-12
    assert rel(robot.bias_torques(q, qd), np.einsum("...ij,...j->...i", C, qd) + g) < 1e-9
    lhs = np.einsum("...ij,...j->...i", robot.mass_matrix(q), qdd) + np.einsum("...ij,...j->...i", C, qd) + g
    assert rel(tau_rigid, lhs) < 1e-9


@given(ROBOTS, st.integers(0, 2**31))
@SETTINGS
def test_mass_matrix_derivative_is_c_plus_c_transpose(xml, seed):
    robot = load(xml)
    q, qd, _ = states(robot, seed)
    h = 1e-6
    Mdot = (robot.mass_matrix(q + h * qd) - robot.mass_matrix(q - h * qd)) / (2 * h)
    C = robot.coriolis_matrix(q, qd)
    assert rel(Mdot, C + np.swapaxes(C, -1, -2)) < 1e-6
    N = Mdot - 2 * C  # skew-symmetric
    assert rel(N, -np.swapaxes(N, -1, -2)) < 1e-6


@given(ROBOTS, st.integers(0, 2**31))
@SETTINGS
def test_kinetic_energy_is_quadratic_form_of_mass_matrix(xml, seed):
    robot = load(xml)
    q, qd, _ = states(robot, seed)
    T = robot.kinetic_energy(q, qd)
    assert T.shape == q.shape[:-1]
    assert rel(T, 0.5 * np.einsum("...i,...ij,...j->...", qd, robot.mass_matrix(q), qd)) < 1e-12
    assert rel(robot.energy(q, qd), T + robot.potential_energy(q)) < 1e-14


@given(ROBOTS, st.integers(0, 2**31))
@SETTINGS
def test_power_balance_at_random_states(xml, seed):
    """dE/dt along (qd, qdd = FD(q, qd, tau)) equals qd . (tau - tau_friction)."""
    robot = load(xml)
    q, qd, tau = states(robot, seed)
    qdd = robot.forward_dynamics(q, qd, tau)
    h = 1e-6
    dE = (robot.energy(q + h * qd, qd + h * qdd) - robot.energy(q - h * qd, qd - h * qdd)) / (2 * h)
    power = np.einsum("...i,...i->...", qd, tau - friction_torques(robot.model, qd))
    scale = max(1.0, float(np.abs(power).max()))
    assert np.abs(dE - power).max() / scale < 1e-6


def test_power_balance_along_damped_free_motion():
    """E(t) + dissipated work stays constant along a free (tau = 0) motion with viscous damping."""
    robot = load(random_urdf(11, 5, damping=True, armature=True))
    m, n = robot.model, robot.dof

    def rhs(t, y):
        q, qd = y[:n], y[n:2 * n]
        qdd = robot.forward_dynamics(q, qd, np.zeros(n))
        return np.concatenate([qd, qdd, [qd @ (m.damping * qd)]])

    y0 = np.concatenate([np.random.default_rng(3).uniform(-1, 1, 2 * n), [0.0]])
    sol = solve_ivp(rhs, (0.0, 1.0), y0, method="DOP853", rtol=1e-11, atol=1e-11, dense_output=False)
    assert sol.success
    E = robot.energy(sol.y[:n].T, sol.y[n:2 * n].T) + sol.y[2 * n]
    assert sol.y[2 * n, -1] > 1e-3  # damping did dissipate energy
    assert np.abs(E - E[0]).max() < 1e-7 * max(1.0, abs(E[0]))
