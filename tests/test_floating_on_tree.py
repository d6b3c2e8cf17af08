"""A floating robot's quantities that run on its free-flyer tree (``floating_robot.ON_TREE``): gravity and
bias torques, the Coriolis matrix, the centre of mass and its Jacobian, the joint-torque regressor, and what
is built on them (energies, centroidal momentum matrix).

Oracles: Pinocchio with a free flyer (``computeGeneralizedGravity``, ``nonLinearEffects``,
``computeCoriolisMatrix``, ``centerOfMass``, ``jacobianCenterOfMass``, ``computeJointTorqueRegressor``,
``computeCentroidalMap``, ``computeKineticEnergy``, ``computePotentialEnergy``) on Solo12 and ANYmal-B loaded
with ``JointModelFreeFlyer`` and on random trees with a free-flyer root followed by revolute and prismatic
joints (the declared quantities called on the packed tree); Pinocchio's RNEA, CRBA and frame Jacobians on the
same free-flyer model (a second route: gravity and bias torques as inverse dynamics, the kinetic energy from the
mass matrix, the centre of mass from the bodies' placements), with the regressor's joint terms by their
definition; and the Christoffel identities of the Coriolis matrix on the tree (C v = bias - gravity torques,
dM/dt = C + C^T by central differences along ``integrate``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from composedyn import floating_robot as fr
from composedyn.dynamics.array_api.model import from_robot
from composedyn.dynamics.compiled import declare, quantities
from composedyn.dynamics.compiled.layout import FORM, model_dims, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import (
    FLOATING_URDFS,
    array_model,
    floating_robot,
    random_configuration,
    random_tree,
)
from pin_oracle import FreeFlyerPair, erd_robots_dir, pin

TOL = 1e-12
MOVED = ("gravity_torques", "bias_torques", "coriolis_matrix", "center_of_mass", "com_jacobian", "regressor")


def _err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _callers(im, fm) -> dict:
    """Name -> the declared fixed-base quantity's C caller on the packed tree (im, fm)."""
    out = {}
    for name in MOVED:
        q = quantities.DECLARED[name]
        out[name] = declare.caller(q, (im, fm), tuple(np.zeros(q.shape(s, model_dims(im))) for s in q.scratch))
    return out


def _mass(model, data, q) -> np.ndarray:
    upper = np.triu(pin.crba(model, data, q))
    return upper + np.triu(upper, 1).T


def test_the_moved_quantities_are_on_the_tree():
    assert set(MOVED) <= fr.ON_TREE


# ---- random trees: a free-flyer root, then revolute and prismatic joints ----

@pytest.mark.parametrize("seed", [31, 32, 33])
def test_free_flyer_trees_equal_pinocchio(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root="free_flyer")
    data, am = model.createData(), array_model(model)
    im, fm = pack_tree(am)
    assert im[0, FORM] == TreeForm.FREE_ROOT
    call = _callers(im, fm)
    for _ in range(3):
        q = random_configuration(am, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        g = call["gravity_torques"](q)
        assert _err(g, pin.computeGeneralizedGravity(model, data, q)) < TOL
        h = call["bias_torques"](q, v)
        assert _err(h, pin.nonLinearEffects(model, data, q, v)) < TOL
        C = call["coriolis_matrix"](q, v)
        assert _err(C, pin.computeCoriolisMatrix(model, data, q, v)) < TOL
        assert _err(call["center_of_mass"](q), pin.centerOfMass(model, data, q)) < TOL
        assert _err(call["com_jacobian"](q), pin.jacobianCenterOfMass(model, data, q)) < TOL
        assert _err(call["regressor"](q, v, a), pin.computeJointTorqueRegressor(model, data, q, v, a)) < TOL
        # Christoffel form on the tree: C v = h - g, dM/dt = C + C^T
        assert _err(C @ v, h - g) < TOL
        step = 1e-6
        mdot = (_mass(model, data, pin.integrate(model, q, step * v))
                - _mass(model, data, pin.integrate(model, q, -step * v))) / (2 * step)
        assert _err(C + C.T, mdot) < 1e-7


# ---- legged robots: the FloatingRobot's methods ----

@pytest.fixture(scope="module", params=list(FLOATING_URDFS))
def legged(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = floating_robot(request.param)
    path = str(erd_robots_dir() / FLOATING_URDFS[request.param])
    return robot, FreeFlyerPair(robot, path, pin.JointModelFreeFlyer()), pack_tree(from_robot(robot))


def _sample(robot, rng):
    q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
    return q, rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def test_legged_robot_methods_equal_pinocchio(legged):
    robot, pp, _ = legged
    m, d = pp.model, pp.data
    blocks = np.concatenate([np.arange(10 * b, 10 * b + 10) for b in [0] + [1 + int(i) for i in pp.perm]])
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, v, a = _sample(robot, rng)
        qp, vp, ap = pp.q(q), pp.v(v), pp.v(a)
        assert _err(pp.v(robot.gravity_torques(q)), pin.computeGeneralizedGravity(m, d, qp)) < TOL
        assert _err(pp.v(robot.bias_torques(q, v)), pin.nonLinearEffects(m, d, qp, vp)) < TOL
        assert _err(pp.mat(robot.coriolis_matrix(q, v)), pin.computeCoriolisMatrix(m, d, qp, vp)) < TOL
        assert _err(robot.center_of_mass(q), pin.centerOfMass(m, d, qp)) < TOL
        assert _err(pp.cols(robot.com_jacobian(q)), pin.jacobianCenterOfMass(m, d, qp)) < TOL
        Y = robot.regressor(q, v, a)
        assert _err(Y[pp.vperm][:, blocks], pin.computeJointTorqueRegressor(m, d, qp, vp, ap)) < TOL
        assert _err(pp.cols(robot.centroidal_momentum_matrix(q)), pin.computeCentroidalMap(m, d, qp)) < TOL
        assert _err(robot.kinetic_energy(q, v), pin.computeKineticEnergy(m, d, qp, vp)) < TOL
        assert _err(robot.potential_energy(q), pin.computePotentialEnergy(m, d, qp)) < TOL


def test_legged_robot_methods_run_the_tree_kernels(legged):
    """Each moved method returns the declared quantity's numbers on the robot's free-flyer tree, bit for bit,
    for one sample and for a batch."""
    robot, _, (im, fm) = legged
    call = _callers(im, fm)
    rng = np.random.default_rng(9)
    q, v, a = _sample(robot, rng)
    got = {"gravity_torques": robot.gravity_torques(q), "bias_torques": robot.bias_torques(q, v),
           "coriolis_matrix": robot.coriolis_matrix(q, v), "center_of_mass": robot.center_of_mass(q),
           "com_jacobian": robot.com_jacobian(q), "regressor": robot.regressor(q, v, a)}
    ins = {"gravity_torques": (q,), "bias_torques": (q, v), "coriolis_matrix": (q, v), "center_of_mass": (q,),
           "com_jacobian": (q,), "regressor": (q, v, a)}
    for name in MOVED:
        assert np.array_equal(got[name], call[name](*ins[name])), name
    Q = np.stack([q, robot.random_configuration(seed=3)])
    V, A = rng.normal(size=(2, 2, robot.nv))
    for k in range(2):
        assert np.array_equal(robot.gravity_torques(Q)[k], call["gravity_torques"](Q[k]))
        assert np.array_equal(robot.coriolis_matrix(Q, V)[k], call["coriolis_matrix"](Q[k], V[k]))
        assert np.array_equal(robot.com_jacobian(Q)[k], call["com_jacobian"](Q[k]))
        assert np.array_equal(robot.regressor(Q, V, A)[k], call["regressor"](Q[k], V[k], A[k]))


def test_legged_robot_tree_equals_pinocchio_by_a_second_route(legged):
    """The independent route: Pinocchio's free flyer through other algorithms than the Pinocchio test above
    (gravity and bias torques by RNEA at zero velocity and acceleration, the Coriolis matrix, the centre of mass
    as the mass-weighted centres of the bodies at their placements, its Jacobian from the bodies' frame
    Jacobians, the kinetic energy as v^T M v / 2 by CRBA), and the regressor with joint terms and offset: the
    inertial columns against ``computeJointTorqueRegressor`` (body blocks in Pinocchio's joint order), the
    joint terms (fv, fc, Ia, off) of joint j: (v_j, sgn v_j, a_j, 1) in row j, zero elsewhere."""
    robot, pp, _ = legged
    m, d = pp.model, pp.data
    nb, n = robot.base.nv, len(robot.joint_names)
    blocks = np.concatenate([np.arange(10 * b, 10 * b + 10) for b in [0] + [1 + int(i) for i in pp.perm]])
    bodies = range(1, m.njoints)
    mass = sum(m.inertias[i].mass for i in bodies)
    rng = np.random.default_rng(10)
    for _ in range(3):
        q, v, a = _sample(robot, rng)
        qp, vp, ap, zero = pp.q(q), pp.v(v), pp.v(a), np.zeros(m.nv)
        assert _err(pp.v(robot.gravity_torques(q)), pin.rnea(m, d, qp, zero, zero)) < TOL
        h = pin.rnea(m, d, qp, vp, zero)
        assert _err(pp.v(robot.bias_torques(q, v)), h) < TOL
        C = pin.computeCoriolisMatrix(m, d, qp, vp)
        assert _err(pp.mat(robot.coriolis_matrix(q, v)), C) < TOL
        assert _err(C @ vp, h - pin.rnea(m, d, qp, zero, zero)) < TOL  # the oracle's own Christoffel form
        pin.computeJointJacobians(m, d, qp)  # forward kinematics too
        com = sum(m.inertias[i].mass * d.oMi[i].act(m.inertias[i].lever) for i in bodies) / mass
        assert _err(robot.center_of_mass(q), com) < TOL
        Jc = np.zeros((3, m.nv))
        for i in bodies:  # the velocity of body i's centre: its joint's world-aligned Jacobian at the centre
            J = pin.getJointJacobian(m, d, i, pin.LOCAL_WORLD_ALIGNED)
            r = d.oMi[i].rotation @ m.inertias[i].lever
            Jc += m.inertias[i].mass * (J[:3] - np.cross(r, J[3:].T).T)
        assert _err(pp.cols(robot.com_jacobian(q)), Jc / mass) < TOL
        Y = robot.regressor(q, v, a, joint_terms=True, offset=True)
        k = Y.shape[1] - 4 * n
        assert k == 10 * (n + 1) and Y.shape == (robot.nv, 10 * (n + 1) + 4 * n)
        assert _err(Y[pp.vperm][:, blocks], pin.computeJointTorqueRegressor(m, d, qp, vp, ap)) < TOL
        terms = np.zeros((robot.nv, 4 * n))
        for j in range(n):
            terms[nb + j, 4 * j:4 * j + 4] = v[nb + j], np.sign(v[nb + j]), a[nb + j], 1.0
        assert np.array_equal(Y[:, k:], terms)
        upper = np.triu(pin.crba(m, d, qp))
        assert _err(robot.kinetic_energy(q, v), vp @ (upper + np.triu(upper, 1).T) @ vp / 2) < TOL


def test_legged_robot_coriolis_identities(legged):
    robot, _, _ = legged
    rng = np.random.default_rng(11)
    for _ in range(2):
        q, v, _ = _sample(robot, rng)
        C = robot.coriolis_matrix(q, v)
        assert _err(C @ v, robot.bias_torques(q, v) - robot.gravity_torques(q)) < TOL
        step = 1e-6
        mdot = (robot.mass_matrix(robot.integrate(q, v, step)) - robot.mass_matrix(robot.integrate(q, v, -step)))
        assert _err(C + C.T, mdot / (2 * step)) < 1e-7
