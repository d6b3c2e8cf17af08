"""The compiled derivatives of inverse dynamics in their general form: spherical, free-flyer, planar and helical
joints anywhere in the tree among revolute and prismatic ones (every joint contributing its columns).

Oracles: Pinocchio's ``computeRNEADerivatives`` on random trees built with its own joint models (the kernel
alone, on NaN-filled scratch); the NumPy recursion of any joints (the NumPy backend) through the public
methods with friction, link wrenches and batches, universal joints among them (finite differences are their
oracle in ``test_tree_derivatives.py``: Pinocchio's derivatives omit the turning of their first column);
Pinocchio's ``computeABADerivatives`` for the forward kernel's general form.  A zero quaternion is refused
(status 4), a singular mass matrix too (status 3)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.layout import ARM, FORM, MASS, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.dynamics.schema import add_joint, add_link
from composedyn.testing.pinocchio_trees import array_model, random_configuration, random_joint_graph, random_tree
from pin_oracle import rel_err
from test_compiled_joint_kinds_derivatives_root import (
    _derivatives,
    _fd_derivatives,
    forward_equals_pinocchio,
    inverse_equals_pinocchio,
)
from test_floating_derivatives import _central, _group_central
from test_tree_derivatives import _without_universal

KINDS = ("revolute", "spherical", "prismatic", "free_flyer", "helical", "planar")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("root", [None, "free_flyer"])
def test_kernel_equals_pinocchio_with_joints_of_several_coordinates_below_the_root(seed, root):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 13, kinds=KINDS, root=root)
    am = array_model(model)
    kinds = [j.kind for j in am.joints[1:]]
    assert {"spherical", "free_flyer", "planar"} <= set(kinds)
    im, fm = pack_tree(am)
    assert im[0, FORM] == int(TreeForm.GENERAL)
    data = model.createData()
    for _ in range(3):
        q, v, a, dq = inverse_equals_pinocchio(im, fm, model, data, am, rng, 1e-10)
    turns = [slice(j.idx_q + 3, j.idx_q + 7) if j.kind == "free_flyer" else slice(j.idx_q, j.idx_q + 4)
             for j in am.joints if j.kind in ("free_flyer", "spherical")]
    scaled = q.copy()
    for t in turns:
        scaled[t] *= 1.7  # quaternions of any norm: the joint model normalises them
    assert rel_err(_derivatives(im, fm, model.nv, scaled, v, a)[1], dq) < 1e-12
    scaled[turns[-1]] = 0.0
    assert _derivatives(im, fm, model.nv, scaled, v, a)[0] == 4


@pytest.mark.parametrize("seed", [0, 3])
def test_forward_kernel_equals_pinocchio_with_joints_of_several_coordinates_below_the_root(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 13, kinds=KINDS)
    model.armature[:] = rng.uniform(0.0, 0.1, size=model.nv)
    am = array_model(model)
    im, fm = pack_tree(am)
    fm = fm.copy()
    fm[:model.nv, ARM] = model.armature  # rotor inertias on M's diagonal (array_model has none)
    for _ in range(3):
        q = random_configuration(am, rng)
        v, tau = rng.normal(size=(2, model.nv))
        forward_equals_pinocchio(im, fm, model, q, v, tau)
    massless = fm.copy()
    massless[:, MASS:ARM + 1] = 0.0  # every body massless, no armature: M is singular
    assert _fd_derivatives(im, massless, model.nv, q, v, tau)[0] == 3


@pytest.mark.parametrize("seed, universal", [(0, False), (2, False), (0, True), (1, True)])
def test_public_methods_equal_the_numpy_recursion_with_friction_wrenches_and_batches(seed, universal):
    robot = cd.from_graph(random_joint_graph(seed) if universal else _without_universal(seed))
    kinds = {j.kind for j in robot.joints[1:]}
    assert {"spherical", "planar"} & kinds and ("universal" in kinds) == universal
    rng = np.random.default_rng(seed)
    Q = robot.random_configuration(size=3, seed=seed)
    V, X = rng.normal(size=(2, 3, robot.nv))
    f = {robot.frame_names[-1]: rng.normal(size=6), robot.frame_names[4]: rng.normal(size=6)}
    calls = [(m, kw) for m in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")
             for kw in ({"smooth_friction": 0.2}, {"f_ext": f}, {"friction": False})]
    fast = [getattr(robot, m)(Q, V, X, **kw) for m, kw in calls]
    one = [getattr(robot, m)(Q[1], V[1], X[1], **kw) for m, kw in calls]
    dispatch.set_backend("numpy")
    try:
        slow = [getattr(robot, m)(Q, V, X, **kw) for m, kw in calls]
    finally:
        dispatch.set_backend("auto")
    for mine, single, ref in zip(fast, one, slow):
        for x, y, z in zip(mine, single, ref):
            assert x.shape == (3, robot.nv, robot.nv) and np.isfinite(x).all()
            assert rel_err(x, z) < 1e-11
            assert rel_err(y, x[1]) < 1e-12  # one sample (the C caller) = the batch's


def test_a_spherical_root_with_friction_and_rotor_inertia_equals_finite_differences():
    """A spherical root joint with damping, Coulomb friction and armature (the rigid-root form of the kernels; a
    free-flyer or planar joint has none): the forward derivatives equal central differences of forward dynamics
    along ``integrate``, M^-1 the inverse of the mass matrix."""
    root = "spherical"
    rng = np.random.default_rng(5)
    g = nx.DiGraph(name="rooted", gravity=np.array([0.2, 0.1, -9.81]))
    add_link(g, "base")
    for k, (parent, kind) in enumerate([("base", root), ("l0", "revolute"), ("l1", "revolute"), ("l0", "prismatic")]):
        add_link(g, f"l{k}", mass=rng.uniform(0.5, 2.0), com=0.1 * rng.normal(size=3),
                 inertia=np.diag(rng.uniform(0.02, 0.05, 3)))
        T = np.eye(4)
        T[:3, 3] = 0.3 * rng.normal(size=3)
        axis = (0.0, 0.0, 1.0) if kind == "planar" else rng.normal(size=3)
        add_joint(g, f"j{k}", parent, f"l{k}", type=kind, origin=T, axis=axis, damping=0.4, friction=0.3,
                  armature=0.05)
    robot = cd.from_graph(g)
    assert robot.joints[0].kind == root and robot.array_model.damping[0] > 0 and robot.array_model.armature[0] > 0
    q = robot.random_configuration(seed=2)
    v, tau = rng.normal(size=(2, robot.nv))
    kw = {"smooth_friction": 0.3}
    aq, av, Minv = robot.forward_dynamics_derivatives(q, v, tau, **kw)
    assert rel_err(aq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, **kw), q)) < 1e-6
    assert rel_err(av, _central(lambda w: robot.forward_dynamics(q, w, tau, **kw), v)) < 1e-6
    assert rel_err(Minv, np.linalg.inv(robot.mass_matrix(q))) < 1e-10
