"""Derivatives of inverse and forward dynamics on trees of every joint type: spherical, free-flyer, planar,
helical and universal joints anywhere, through the public methods (the compiled kernels' general form, and
:mod:`composedyn.dynamics.array_api.derivatives` of the NumPy backend).

Oracles: Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` on the same graph built edge by
edge with its own joint models (``testing.pinocchio_trees``) for every joint type but the universal one;
central finite differences along ``integrate`` of composedyn's own inverse and forward dynamics (with
friction, link wrenches held in world axes, dependent mimic joints) for every joint type.  Pinocchio's
derivatives are not an oracle for a universal joint: they omit how its first column turns with the second
angle and its bias' derivatives (on the trees below they differ from finite differences by O(1)).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.testing.pinocchio_trees import graph_pinocchio, random_joint_graph
from pin_oracle import pin, rel_err
from test_floating_derivatives import _central, _group_central
from test_tree_robot import HUMANOID
from test_tree_robot_mimic import mimic_graph

TOL_PIN = 1e-9
TOL_FD = 1e-6


def _without_universal(seed: int):
    """``random_joint_graph`` with its universal joints made revolute (Pinocchio's derivatives omit theirs)."""
    g = random_joint_graph(seed, bodies=12)
    for _, _, d in g.edges(data=True):
        if d["type"] == "universal":
            d["type"] = "revolute"
    return g


def pinocchio_tree(seed: int):
    """(robot, Pinocchio model without armature, its data, q rows, v rows) of ``_without_universal(seed)``,
    a tree with at least three of the spherical, free-flyer, planar and helical kinds below its root."""
    g = _without_universal(seed)
    robot = cd.from_graph(g)
    assert len({"spherical", "free_flyer", "planar", "helical"} & {j.kind for j in robot.joints[1:]}) >= 3
    model, _ = graph_pinocchio(g)
    model.armature[:] = 0.0
    return (robot, model, model.createData(), *_pinocchio_rows(robot, model))


def _pinocchio_rows(robot, model):
    """Pinocchio's velocity indices in composedyn's order."""
    iq, iv = [], []
    for j in robot.joints:
        jm = model.joints[model.getJointId(j.name)]
        iq += range(jm.idx_q, jm.idx_q + j.nq)
        iv += range(jm.idx_v, jm.idx_v + j.nv)
    return np.array(iq), np.array(iv)


def _inverse(robot, q, v, a, smooth: float, f_ext=None):
    """The inverse dynamics the derivatives differentiate with ``smooth_friction``: the rigid body's, the
    link wrenches', damping v + Coulomb tanh(v / smooth) on the tree's coordinates (Gvᵀ of them with
    dependent mimic joints)."""
    t = robot.array_model
    G = np.eye(robot.nv) if t.Gv is None else t.Gv
    w = v @ G.T
    rigid = robot.inverse_dynamics(q, v, a, f_ext=f_ext, friction=False)
    return rigid + (t.damping * w + t.coulomb * np.tanh(w / smooth)) @ G


def _states(robot, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(size=n, seed=seed), rng.normal(size=(n, robot.nv)), rng.normal(size=(n, robot.nv))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_joint_type_in_the_tree_equals_pinocchio(seed):
    robot, model, data, iq, iv = pinocchio_tree(seed)
    Q, V, A = _states(robot, 4, seed)
    tau = robot.inverse_dynamics(Q, V, A, friction=False)
    dq, dv = robot.inverse_dynamics_derivatives(Q, V, A, friction=False)
    aq, av, Minv = robot.forward_dynamics_derivatives(Q, V, tau, friction=False)
    assert dq.shape == aq.shape == (4, robot.nv, robot.nv)
    robot_armature = robot.array_model.armature
    for s in range(4):
        q, v, a = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
        q[iq], v[iv], a[iv] = Q[s], V[s], A[s]
        pin.computeRNEADerivatives(model, data, q, v, a)
        assert rel_err(dq[s], data.dtau_dq[np.ix_(iv, iv)]) < TOL_PIN
        assert rel_err(dv[s], data.dtau_dv[np.ix_(iv, iv)]) < TOL_PIN
        model.armature[iv] = robot_armature  # forward dynamics with the rotor inertias
        t = np.zeros(model.nv)
        t[iv] = tau[s]
        pin.computeABADerivatives(model, data, q, v, t)
        model.armature[:] = 0.0
        assert rel_err(aq[s], data.ddq_dq[np.ix_(iv, iv)]) < TOL_PIN
        assert rel_err(av[s], data.ddq_dv[np.ix_(iv, iv)]) < TOL_PIN
        assert rel_err(Minv[s], np.linalg.inv(robot.mass_matrix(Q[s]))) < TOL_PIN
        one = robot.inverse_dynamics_derivatives(Q[s], V[s], A[s], friction=False)  # batch = loop
        assert rel_err(one[0], dq[s]) < 1e-13 and rel_err(one[1], dv[s]) < 1e-13


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_universal_and_every_joint_equal_finite_differences_with_friction(seed):
    robot = cd.from_graph(random_joint_graph(seed))
    assert "universal" in {j.kind for j in robot.joints}
    assert robot.array_model.damping.any() and robot.array_model.coulomb.any()
    (q,), (v,), (a,) = _states(robot, 1, seed + 10)
    kw = {"smooth_friction": 0.3}
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, **kw)
    assert rel_err(dq, _group_central(robot, lambda y: _inverse(robot, y, v, a, 0.3), q)) < TOL_FD
    assert rel_err(dv, _central(lambda w: _inverse(robot, q, w, a, 0.3), v)) < TOL_FD
    tau = _inverse(robot, q, v, a, 0.3)
    aq, av, Minv = robot.forward_dynamics_derivatives(q, v, tau, **kw)
    assert rel_err(aq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, **kw), q)) < TOL_FD
    assert rel_err(av, _central(lambda w: robot.forward_dynamics(q, w, tau, **kw), v)) < TOL_FD
    assert rel_err(Minv, _central(lambda t: robot.forward_dynamics(q, v, t, **kw), tau)) < TOL_FD
    # friction without smoothing: the damping alone on dτ/dv's diagonal
    plain = (robot.inverse_dynamics_derivatives(q, v, a)[1]
             - robot.inverse_dynamics_derivatives(q, v, a, friction=False)[1])
    assert rel_err(plain, np.diag(robot.array_model.damping)) < 1e-12


def test_link_wrenches_and_dependent_mimic_joints_equal_finite_differences():
    robot = cd.from_graph(mimic_graph(1))
    assert robot.array_model.Gv is not None and "universal" in {j.kind for j in robot.joints}
    (q,), (v,), (a,) = _states(robot, 1, 7)
    rng = np.random.default_rng(3)
    f = {robot.frame_names[-1]: rng.normal(size=6), robot.frame_names[3]: rng.normal(size=6)}
    kw = {"f_ext": f, "smooth_friction": 0.2}
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, **kw)
    assert rel_err(dq, _group_central(robot, lambda y: _inverse(robot, y, v, a, 0.2, f), q)) < TOL_FD
    assert rel_err(dv, _central(lambda w: _inverse(robot, q, w, a, 0.2, f), v)) < TOL_FD
    tau = _inverse(robot, q, v, a, 0.2, f)
    aq, av, _ = robot.forward_dynamics_derivatives(q, v, tau, **kw)
    assert rel_err(aq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, **kw), q)) < TOL_FD
    assert rel_err(av, _central(lambda w: robot.forward_dynamics(q, w, tau, **kw), v)) < TOL_FD
    both = {k: np.stack([w, 0 * w]) for k, w in f.items()}  # a batch: the wrenches, then none
    batch = robot.inverse_dynamics_derivatives(np.stack([q, q]), v, a, f_ext=both, smooth_friction=0.2)
    assert rel_err(batch[0][0], dq) < 1e-13
    assert rel_err(batch[0][1], robot.inverse_dynamics_derivatives(q, v, a, smooth_friction=0.2)[0]) < 1e-13


def test_mjcf_humanoid_with_ball_joints_and_the_numpy_backend():
    robot = cd.from_mjcf(HUMANOID)
    assert [j.kind for j in robot.joints].count("spherical") == 3
    (q,), (v,), (a,) = _states(robot, 1, 2)
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a)
    assert rel_err(dq, _group_central(robot, lambda y: robot.inverse_dynamics(y, v, a), q)) < TOL_FD
    assert rel_err(dv, _central(lambda w: robot.inverse_dynamics(q, w, a), v)) < TOL_FD
    tau = robot.inverse_dynamics(q, v, a)
    fast = robot.forward_dynamics_derivatives(q, v, tau)
    dispatch.set_backend("numpy")
    try:
        slow = robot.forward_dynamics_derivatives(q, v, tau)
    finally:
        dispatch.set_backend("auto")
    for x, y in zip(fast, slow):
        assert rel_err(x, y) < 1e-12


def test_floating_robot_numpy_backend_equals_the_compiled_kernels_with_link_wrenches():
    from random_robots import random_urdf
    from test_floating_derivatives import _rooted

    robot = cd.from_urdf(_rooted(random_urdf(3, 6, damping=True, friction=True), "floating"))
    rng = np.random.default_rng(0)
    Q = robot.random_configuration(size=3, seed=1)
    V, T = rng.normal(size=(2, 3, robot.nv))
    f = {link: rng.normal(size=6) for link in robot.frame_names[1:4]}
    calls = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")
    fast = [getattr(robot, m)(Q, V, T, f_ext=f, smooth_friction=0.2) for m in calls]
    dispatch.set_backend("numpy")
    try:
        slow = [getattr(robot, m)(Q, V, T, f_ext=f, smooth_friction=0.2) for m in calls]
    finally:
        dispatch.set_backend("auto")
    for x, y in zip(fast, slow):
        for mine, ref in zip(x, y):
            assert mine.shape == (3, robot.nv, robot.nv) and rel_err(mine, ref) < 1e-12
