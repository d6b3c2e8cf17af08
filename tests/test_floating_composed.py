"""Composed vectors of a floating robot (free flyer and planar base).

Oracles: the floating robot's own M, C, g, inverse dynamics and centre of mass
(themselves equal to Pinocchio's free flyer in tests/test_floating.py), and its
centroidal momentum (Pinocchio's ``computeCentroidalMomentum`` there), which
checks the world-axes composed vectors and centres of mass independently of M.
"""

import warnings

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import erd_urdf, rel_err
from random_robots import random_urdf

PLANAR_ROOT = ('<link name="world"/><joint name="base_joint" type="planar"><parent link="world"/>'
               '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint>')


def _robot(name):
    if name == "solo12":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cd.load(erd_urdf("solo12"), floating=True)
    xml = random_urdf(3, 7, p_fixed=0.3)
    return cd.from_urdf(xml.replace("</robot>", PLANAR_ROOT + "</robot>")) if name == "planar" else \
        cd.from_urdf(xml, floating=True)


@pytest.mark.parametrize("name", ["free", "planar", "solo12"])
def test_floating_composed_vectors_give_the_equations_of_motion(name):
    robot = _robot(name)
    rng = np.random.default_rng(4)
    q = robot.random_configuration(size=3, seed=2)
    v, a = rng.normal(size=(2, 3, robot.nv))
    cv = robot.composed_vectors(q)
    N = cv.com.shape[-2]
    assert cv.vw.shape == cv.PL.shape == (3, robot.nv, 6 * N) and cv.XY.shape == (3, robot.nv, robot.nv, 6 * N)
    arm = np.diag(robot.array_model.armature)
    assert rel_err(cv.mass_matrix + arm, robot.mass_matrix(q)) < 1e-12
    assert rel_err(cv.coriolis_matrix(v), robot.coriolis_matrix(q, v)) < 1e-12
    m = robot.array_model.inertia[:, 0]
    FN = np.zeros((3, N, 6))
    FN[..., :3] = m[:, None] * robot.base.gravity
    assert rel_err(cv.generalized_forces(FN), -robot.gravity_torques(q)) < 1e-12
    eom = np.einsum("...ga,...a->...g", cv.mass_matrix + arm, a) + cv.velocity_terms(v) - cv.generalized_forces(FN)
    assert rel_err(eom, robot.inverse_dynamics(q, v, a, friction=False)) < 1e-12
    one = robot.composed_vectors(q[1])
    for key in ("vw", "PL", "XY", "brackets", "com", "mass_matrix"):
        np.testing.assert_allclose(getattr(one, key), getattr(cv, key)[1], atol=1e-13)


@pytest.mark.parametrize("name", ["free", "planar", "solo12"])
def test_floating_composed_vectors_carry_the_centroidal_momentum(name):
    robot = _robot(name)
    q = robot.random_configuration(seed=5)
    v = np.random.default_rng(5).normal(size=robot.nv)
    cv = robot.composed_vectors(q)
    N = cv.com.shape[-2]
    vel = np.einsum("ak,a->k", cv.vw, v).reshape(N, 6)  # (v_ci, ω_i) per body, world axes
    mom = np.einsum("ak,a->k", cv.PL, v).reshape(N, 6)  # (m_i v_ci, I_i ω_i)
    m = robot.array_model.inertia[:, 0]
    c = robot.center_of_mass(q)
    assert rel_err(m @ cv.com / m.sum(), c) < 1e-12
    assert rel_err(mom[:, :3], m[:, None] * vel[:, :3]) < 1e-12
    h = np.r_[mom[:, :3].sum(0), (np.cross(cv.com - c, mom[:, :3]) + mom[:, 3:]).sum(0)]
    assert rel_err(h, robot.centroidal_momentum(q, v)) < 1e-12
