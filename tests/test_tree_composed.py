"""Composed vectors of Giacaglia & Lamas on trees of every joint type (spherical, universal, helical,
planar and free-flyer joints anywhere; :mod:`composedyn.dynamics.array_api.composed`).

Oracles: Pinocchio on the same graph built with its own joint models (``testing.pinocchio_trees``):
``crba``, ``computeCoriolisMatrix``, ``nonLinearEffects``, ``computeGeneralizedGravity`` and
``computeCentroidalMomentum``, for every joint type but the universal one; for every joint type,
central finite differences along ``integrate``: of the composed momenta PL (the linear part of XY),
of the mass matrix (Ṁ - 2C skew-symmetric), and composedyn's own bias forces (themselves compared with
Pinocchio and MuJoCo in test_tree_robot.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.testing.pinocchio_trees import random_joint_graph
from pin_oracle import pin, rel_err
from test_tree_derivatives import pinocchio_tree
from test_tree_robot_mimic import mimic_graph

TOL = 1e-10


def _gravity_FN(robot, cv):
    """(m_i g, 0) on every body (..., N, 6), masses and gravity from the model's description."""
    t = robot.array_model if hasattr(robot, "array_model") else robot._tree
    FN = np.zeros(cv.com.shape[:-1] + (6,))
    FN[..., :3] = t.inertia[:, 0, None] * t.gravity
    return FN


def _bodies(cv):
    """Per body (..., N, 6) velocities-like rows of vω or PL (..., nv, 6N) contracted with v."""
    return lambda X, v: np.einsum("...ak,...a->...k", X, v).reshape(v.shape[:-1] + (-1, 6))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_joint_type_equals_pinocchio(seed):
    robot, model, data, iq, iv = pinocchio_tree(seed)
    rng = np.random.default_rng(seed)
    Q, V = robot.random_configuration(size=3, seed=seed), rng.normal(size=(3, robot.nv))
    cv = robot.composed_vectors(Q)
    N = len(cv.body_names)
    assert cv.vw.shape == cv.PL.shape == (3, robot.nv, 6 * N) and cv.XY.shape == (3, robot.nv, robot.nv, 6 * N)
    Q_gravity = cv.generalized_forces(_gravity_FN(robot, cv))
    for s in range(3):
        q, v = np.zeros(model.nq), np.zeros(model.nv)
        q[iq], v[iv] = Q[s], V[s]
        sub = np.ix_(iv, iv)
        assert rel_err(cv.mass_matrix[s], pin.crba(model, data, q)[sub]) < TOL
        assert rel_err(cv.coriolis_matrix(V[s])[s], pin.computeCoriolisMatrix(model, data, q, v)[sub]) < TOL
        gravity = pin.computeGeneralizedGravity(model, data, q)[iv]
        assert rel_err(cv.velocity_terms(V[s])[s], pin.nonLinearEffects(model, data, q, v)[iv] - gravity) < TOL
        assert rel_err(Q_gravity[s], -gravity) < TOL
        # the composed momenta carry the centroidal momentum (world axes, about the centre of mass)
        mom = _bodies(cv)(cv.PL[s], V[s])
        c = robot.center_of_mass(Q[s])
        h = np.r_[mom[:, :3].sum(0), (np.cross(cv.com[s] - c, mom[:, :3]) + mom[:, 3:]).sum(0)]
        pin.computeCentroidalMomentum(model, data, q, v)
        assert rel_err(h, np.r_[data.hg.linear, data.hg.angular]) < TOL
    one = robot.composed_vectors(Q[1])  # batch = loop
    for key in ("vw", "PL", "XY", "brackets", "com", "mass_matrix"):
        np.testing.assert_allclose(getattr(one, key), getattr(cv, key)[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_universal_and_every_joint_equal_finite_differences(seed):
    robot = cd.from_graph(random_joint_graph(seed))
    assert "universal" in {j.kind for j in robot.joints}
    rng = np.random.default_rng(seed + 5)
    q, v = robot.random_configuration(seed=seed + 5), rng.normal(size=robot.nv)
    cv = robot.composed_vectors(q)
    N, h = len(cv.body_names), 1e-6
    # XY's linear part is the derivative of PL's along the configuration space: (m_i ∂_γ v_βi)
    for gamma in range(robot.nv):
        e = np.zeros(robot.nv)
        e[gamma] = h
        dPL = (robot.composed_vectors(robot.integrate(q, e)).PL - robot.composed_vectors(robot.integrate(q, -e)).PL)
        dPL = (dPL / (2 * h)).reshape(robot.nv, N, 6)[..., :3]
        assert rel_err(cv.XY[:, gamma].reshape(robot.nv, N, 6)[..., :3], dPL) < 1e-6
    # C v is the bias forces less gravity, and Ṁ - 2C is skew-symmetric (Ṁ along the motion)
    bias = robot.bias_torques(q, v) - robot.gravity_torques(q)
    assert rel_err(cv.velocity_terms(v), bias) < TOL
    assert rel_err(cv.coriolis_matrix(v), robot.coriolis_matrix(q, v)) < TOL
    Mdot = (robot.mass_matrix(robot.integrate(q, v * h)) - robot.mass_matrix(robot.integrate(q, -v * h))) / (2 * h)
    K = Mdot - 2 * cv.coriolis_matrix(v)
    assert np.abs(K + K.T).max() < 1e-6 * np.abs(Mdot).max()
    assert rel_err(cv.generalized_forces(_gravity_FN(robot, cv)), -robot.gravity_torques(q)) < TOL
    # where both velocities are coordinates' rates (one-coordinate and universal joints), the brackets
    # are Christoffel symbols: symmetric in (α, β)
    rates = np.concatenate([np.arange(j.idx_v, j.idx_v + j.nv) for j in robot.joints
                            if j.kind not in ("spherical", "planar", "free_flyer")])
    B = cv.brackets[:, rates][:, :, rates]
    assert np.abs(B - np.swapaxes(B, -1, -2)).max() < 1e-12 * np.abs(B).max()


def test_dependent_mimic_joints_on_the_tree_coordinates():
    robot = cd.from_graph(mimic_graph(1))
    G = robot.mimic_jacobian
    assert G.shape[0] > robot.nv
    rng = np.random.default_rng(9)
    q, v = robot.random_configuration(seed=9), rng.normal(size=robot.nv)
    cv = robot.composed_vectors(q)
    assert cv.mass_matrix.shape == (G.shape[0], G.shape[0])
    arm = G.T @ np.diag(robot.array_model.armature) @ G
    assert rel_err(G.T @ cv.mass_matrix @ G + arm, robot.mass_matrix(q)) < TOL
    assert rel_err(G.T @ cv.coriolis_matrix(G @ v) @ G, robot.coriolis_matrix(q, v)) < TOL
    assert rel_err(G.T @ cv.generalized_forces(_gravity_FN(robot, cv)), -robot.gravity_torques(q)) < TOL


def test_zero_quaternion_is_refused_by_name():
    robot = cd.from_graph(random_joint_graph(0))
    q = robot.neutral()
    ball = next(j for j in robot.joints if j.kind == "spherical")
    q[ball.idx_q:ball.idx_q + 4] = 0.0
    with pytest.raises(ValueError, match=f"quaternion of joint '{ball.name}'.*zero norm"):
        robot.composed_vectors(q)
