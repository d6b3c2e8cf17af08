"""simulate: energy conservation without actuation, dissipation with friction,
static equilibria held by torques or external wrenches, protocol duck typing."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import erd_urdf


@pytest.fixture(scope="module")
def pendulum():
    return cd.load(erd_urdf("double_pendulum"))


def test_unactuated_double_pendulum_conserves_energy(pendulum):
    t = np.linspace(0.0, 5.0, 101)
    sim = cd.simulate(pendulum, [0.8, -0.4], [0.0, 0.0], t, friction=False, rtol=1e-9, atol=1e-11)
    E = pendulum.energy(sim.q, sim.qd)
    scale = max(abs(E[0]), pendulum.kinetic_energy(sim.q, sim.qd).max())
    assert np.abs(E - E[0]).max() / scale < 1e-6
    assert sim.energy_drift < 1e-6 and sim.energy_drift == pytest.approx(np.abs(E - E[0]).max() / scale)
    assert np.ptp(sim.q[:, 0]) > 0.5  # it really swung
    assert np.allclose(sim.tau, 0.0)


def test_friction_dissipates_energy(pendulum):
    assert np.all(pendulum.model.damping > 0)
    t = np.linspace(0.0, 2.0, 41)
    sim = cd.simulate(pendulum, [0.8, -0.4], [0.0, 0.0], t, friction=True)
    E = sim.energy
    assert np.all(np.diff(E) <= 1e-9 * abs(E[0])) and E[-1] < E[0] - 1e-3


def test_gravity_compensation_holds_still(pendulum):
    q0 = np.array([0.7, -1.1])
    t = np.linspace(0.0, 1.0, 11)
    sim = cd.simulate(pendulum, q0, np.zeros(2), t, torque=lambda tt, q, qd: pendulum.gravity_torques(q))
    assert np.abs(sim.q - q0).max() < 1e-8 and np.abs(sim.qd).max() < 1e-7
    assert sim.energy_drift is None  # actuated: no drift figure


def test_external_wrenches_cancelling_gravity_hold_still(pendulum):
    m = pendulum.model
    g = np.asarray(m.gravity)
    f_ext = {name: np.r_[-mass * g, 0.0, 0.0, 0.0] for name, mass in zip(m.link_names, m.link_mass)
             if mass > 0 and name != m.link_names[0]}
    q0 = np.array([0.3, 0.9])
    sim = cd.simulate(pendulum, q0, np.zeros(2), np.linspace(0.0, 1.0, 11), f_ext=f_ext)
    assert np.abs(sim.q - q0).max() < 1e-8


class Wrapped:
    """Existing robot code exposing only the DynamicsModel members (and a projection hook)."""

    def __init__(self, robot):
        self._r, self.projected = robot, 0
        self.dof, self.joint_names, self.limits = robot.dof, robot.joint_names, robot.limits

    def inverse_dynamics(self, q, qd, qdd, f_ext=None, friction=True):
        return self._r.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=friction)

    def forward_dynamics(self, q, qd, tau, f_ext=None, friction=True):
        return self._r.forward_dynamics(q, qd, tau, f_ext=f_ext, friction=friction)

    def mass_matrix(self, q):
        return self._r.mass_matrix(q)

    def bias_torques(self, q, qd):
        return self._r.bias_torques(q, qd)

    def project(self, q, qd):
        self.projected += 1
        return q, qd


def test_any_dynamics_model_simulates_like_the_robot(pendulum):
    w = Wrapped(pendulum)
    assert isinstance(w, cd.DynamicsModel)
    t = np.linspace(0.0, 0.5, 11)
    a = cd.simulate(w, [0.5, 0.1], [0.0, 0.0], t, torque=np.array([0.1, -0.2]))
    b = cd.simulate(pendulum, [0.5, 0.1], [0.0, 0.0], t, torque=np.array([0.1, -0.2]))
    assert np.allclose(a.q, b.q, atol=1e-12) and w.projected == 1 and a.energy is None


def test_bad_arguments(pendulum):
    ctrl = cd.ComputedTorqueController(pendulum, 10.0, 6.0)
    with pytest.raises(ValueError, match="reference"):
        cd.simulate(pendulum, [0, 0], [0, 0], [0.0, 1.0], torque=ctrl)
    with pytest.raises(ValueError, match="increasing"):
        cd.simulate(pendulum, [0, 0], [0, 0], [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="q0"):
        cd.simulate(pendulum, [0, 0, 0], [0, 0], [0.0, 1.0])


def test_closed_chain_model_simulates_through_the_protocol():
    from composedyn.closed_chain import load_closed_chain

    fourbar = load_closed_chain("fourbar")
    assert isinstance(fourbar, cd.DynamicsModel)
    t = np.linspace(0.0, 0.5, 11)
    sim = cd.simulate(fourbar, [0.3], [0.0], t, friction=False, rtol=1e-9, atol=1e-11)
    assert np.ptp(sim.q) > 0.1 and sim.energy_drift < 1e-6


def test_progress_callback_sees_the_integrated_share(pendulum):
    seen = []
    cd.simulate(pendulum, [0.3, 0.0], [0.0, 0.0], np.linspace(1.0, 2.0, 5), progress=seen.append)
    assert min(seen) == 0.0 and 0.999 < max(seen) <= 1.0 + 1e-12
