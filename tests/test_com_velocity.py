"""``robot.center_of_mass_velocity``: equal to Pinocchio's ``centerOfMass(model, data, q, v)``
(``data.vcom[0]``) on vendor URDFs, and to the time derivative of ``robot.center_of_mass``
along q + t qd (central differences), on every route: the C caller (one sample), the compiled
batch loop, the NumPy backend and a robot with dependent mimic joints."""

import inspect

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from pin_oracle import PinPair, erd_urdf, pin, rel_err
from random_robots import random_urdf


@pytest.mark.parametrize("key", ["ur5", "panda"])
def test_equals_pinocchio(key):
    urdf = erd_urdf(key)
    robot = cd.from_urdf(urdf, mimic="independent")
    pp = PinPair(robot, urdf)
    rng = np.random.default_rng(1)
    Q, QD = rng.uniform(-1.5, 1.5, (2, 5, robot.dof))
    batch = robot.center_of_mass_velocity(Q, QD)
    for s in range(5):
        pin.centerOfMass(pp.model, pp.data, pp.q(Q[s]), pp.v(QD[s]))
        want = pp.data.vcom[0]
        assert rel_err(robot.center_of_mass_velocity(Q[s], QD[s]), want) < 1e-10
        assert rel_err(batch[s], want) < 1e-10


def finite_difference(robot, q, qd, h=1e-6):
    return (robot.center_of_mass(q + h * qd) - robot.center_of_mass(q - h * qd)) / (2 * h)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_derivative_of_the_centre_of_mass(backend):
    robot = cd.from_urdf(random_urdf(4, 9))
    rng = np.random.default_rng(2)
    q, qd = rng.uniform(-2, 2, (2, 3, robot.dof))
    dispatch.set_backend(backend)
    try:
        got = robot.center_of_mass_velocity(q, qd), robot.center_of_mass_velocity(q[0], qd[0])
    finally:
        dispatch.set_backend("auto")
    want = finite_difference(robot, q, qd)
    assert rel_err(got[0], want) < 1e-7 and rel_err(got[1], want[0]) < 1e-7


def test_mimic_coordinates():
    robot = cd.from_urdf(erd_urdf("panda"))  # its fingers: one mimics the other
    assert robot.mimic_joint_names
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-1, 1, (2, robot.dof))
    assert rel_err(robot.center_of_mass_velocity(q, qd), finite_difference(robot, q, qd)) < 1e-7


def test_bad_input_is_named():
    robot = cd.load("puma560")
    with pytest.raises(ValueError, match="qd"):
        robot.center_of_mass_velocity(np.zeros(robot.dof), np.full(robot.dof, np.nan))


def test_named_arguments_and_arity():
    robot = cd.load("panda")
    q, qd = np.full(robot.dof, 0.3), np.full(robot.dof, -0.2)
    np.testing.assert_array_equal(robot.center_of_mass_velocity(q=q, qd=qd), robot.center_of_mass_velocity(q, qd))
    assert list(inspect.signature(robot.center_of_mass_velocity).parameters) == ["q", "qd"]
    with pytest.raises(TypeError, match=r"center_of_mass_velocity\(q, qd\)"):
        robot.center_of_mass_velocity(q)


def test_no_moving_mass_is_named_on_every_route():
    from composedyn.dynamics.schema import add_joint, add_link, new_graph

    g = new_graph("massless")
    add_link(g, "base", mass=1.0, com=(0, 0, 0), inertia=np.eye(3))
    add_link(g, "arm")
    add_joint(g, "j", "base", "arm", axis=(0, 0, 1))
    with pytest.warns(cd.ModelWarning):
        robot = cd.from_graph(g)
    z = np.zeros(1)
    for call in (lambda: robot.center_of_mass_velocity(z, z), lambda: robot.center_of_mass(z),
                 lambda: robot.com_jacobian(np.zeros((3, 1))), lambda: robot.center_of_mass_velocity([0.0], [0.0])):
        with pytest.raises(ValueError, match="no mass"):
            call()
