"""A singular mass matrix is refused, never solved with a round-off pivot (``composedyn.dynamics.pivots``).

Where M is singular, the articulated-body pivot at a joint is computed as round-off of either sign;
a positive one used to turn into accelerations of 1e16.  The oracle says M is singular (Pinocchio's
mass matrix, its smallest eigenvalue at round-off level); every path of forward dynamics must then
raise ``ModelError``: compiled one sample and batch, ``robot.fast``, the derivatives, the NumPy
backend.  The floors must not refuse a mass matrix that is merely ill-conditioned: a robot whose
inertias span nine decades still equals Pinocchio's ABA.  And the floor is built from a bound of
M_kk that holds in every configuration: checked against Pinocchio's M on random robots.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.pivots import RELATIVE, model_pivot_floors
from composedyn.testing.random_robots import random_urdf
from pin_oracle import PinPair, pin, rel_err
from test_closed_compiled import numpy_backend

# joint2 turns about joint1's axis, through the same point, and link1 between them has no mass: the
# first column of M equals the second in every configuration.
COAXIAL = """<robot name="coaxial">
  <link name="base"/>
  <link name="link1"/>
  <link name="link2"><inertial><origin xyz="0.3 0.05 0.1"/><mass value="{m}"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial></link>
  <link name="link3"><inertial><origin xyz="0.1 0 0"/><mass value="0.7"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.004"/></inertial></link>
  <joint name="joint1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <joint name="joint2" type="revolute"><parent link="link1"/><child link="link2"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <joint name="joint3" type="revolute"><parent link="link2"/><child link="link3"/>
    <origin xyz="0.4 0 0" rpy="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="2"/>
  </joint>
</robot>"""


def _load(xml: str, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)  # the load warns of the massless link
        return cd.from_urdf(xml, **kwargs)


def _states(robot, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(count):
        yield robot.random_configuration(seed=seed + k), rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def _back(pair: PinPair, y) -> np.ndarray:
    """A vector in Pinocchio's joint order -> the robot's."""
    out = np.empty(len(pair.perm))
    out[pair.perm] = y
    return out


def _pin_min_eig(pair: PinPair, q) -> float:
    M = pin.crba(pair.model, pair.data, pair.q(q))
    M = np.triu(M) + np.triu(M, 1).T
    eig = np.linalg.eigvalsh(M)
    return eig[0] / eig[-1]


def test_a_singular_fixed_base_mass_matrix_is_refused_on_every_path():
    robot = _load(COAXIAL.format(m=1.3))
    pair = PinPair(robot, COAXIAL.format(m=1.3))
    states = list(_states(robot, 40, 5))
    for q, v, tau in states:
        assert _pin_min_eig(pair, q) < 1e-14  # the oracle: M is singular here
        for call in (lambda: robot.forward_dynamics(q, v, tau), lambda: robot.fast.forward_dynamics(q, v, tau),
                     lambda: robot.forward_dynamics_derivatives(q, v, tau)):
            with pytest.raises(cd.ModelError, match=r"singular.*joint"):
                call()
    Q, V, T = (np.array(x) for x in zip(*states))
    with pytest.raises(cd.ModelError, match="singular"):
        robot.forward_dynamics(Q, V, T)
    with numpy_backend(), pytest.raises(cd.ModelError, match=r"singular at joints \['joint1'\]"):
        robot.forward_dynamics(Q, V, T)


def test_a_singular_floating_mass_matrix_is_refused_on_every_path():
    # two_link: a massless base link, point masses on one line, the rotation about that line moves nothing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load("two_link", floating=True)
    for q, v, tau in _states(robot, 60, 11):
        assert np.linalg.eigvalsh(robot.mass_matrix(q))[0] < 1e-12
        for call in (lambda: robot.forward_dynamics(q, v, tau), lambda: robot.fast.forward_dynamics(q, v, tau),
                     lambda: robot.forward_dynamics_derivatives(q, v, tau)):
            with pytest.raises(cd.ModelError, match="singular|not positive definite"):
                call()
        with numpy_backend(), pytest.raises(cd.ModelError, match=r"singular at joints \['root_joint'\]"):
            robot.forward_dynamics(q, v, tau)


def test_ill_conditioned_but_regular_robots_are_solved_as_pinocchio_does():
    # the same geometry with a tiny link1 (inertia 1e-9 kg m^2 about the joint axis against ~0.2 for the
    # arm): M has condition number ~1e9, far from round-off; the floors accept it and the result is
    # Pinocchio's to the accuracy its conditioning allows
    xml = COAXIAL.replace('<link name="link1"/>', '<link name="link1"><inertial><mass value="1e-7"/><inertia '
                          'ixx="1e-9" ixy="0" ixz="0" iyy="1e-9" iyz="0" izz="1e-9"/></inertial></link>').format(m=1.3)
    robot = _load(xml)
    pair = PinPair(robot, xml)
    for q, v, tau in _states(robot, 20, 3):
        assert _pin_min_eig(pair, q) > 1e-11
        expect = _back(pair, pin.aba(pair.model, pair.data, pair.q(q), pair.v(v), pair.v(tau)))
        assert rel_err(robot.forward_dynamics(q, v, tau, friction=False), expect) < 1e-6
        with numpy_backend():
            assert rel_err(robot.forward_dynamics(q, v, tau, friction=False), expect) < 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_the_floor_bounds_the_mass_matrix_diagonal_in_every_configuration(seed):
    xml = random_urdf(seed, 8, types=("revolute", "continuous"))
    robot = _load(xml)
    pair = PinPair(robot, xml)
    floors = model_pivot_floors(robot.model) / RELATIVE
    for k in range(20):
        q = robot.random_configuration(seed=k)
        M = pin.crba(pair.model, pair.data, pair.q(q))
        diag = _back(pair, np.diagonal(M)) + robot.model.armature
        assert np.all(diag <= floors * (1 + 1e-12)), (diag, floors)
    assert np.all(floors > 0)
