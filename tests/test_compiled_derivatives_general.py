"""The compiled derivatives of inverse and forward dynamics on trees of any joints (the declarations'
``general`` kernels, which the methods run on trees of ``TreeForm.GENERAL`` but rigid roots): spherical,
free-flyer, planar and helical joints anywhere in the tree among revolute and prismatic ones (every joint
contributing its columns).

Oracles: Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` on random trees built with its own
joint models (the C entries alone, on NaN-filled scratch); the NumPy recursion of any joints (the NumPy backend)
through the public methods with friction, link wrenches and batches, universal joints among them (finite
differences are their oracle in ``test_tree_derivatives.py``: Pinocchio's derivatives omit the turning of their
first column).  A zero quaternion is refused (status 4), a singular mass matrix too (status 3)."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from compiled_calls import entry
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import fd_derivatives
from composedyn.dynamics.compiled.declare import for_tree
from composedyn.dynamics.compiled.layout import ARM, FORM, MASS, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import array_model, random_configuration, random_joint_graph, random_tree
from pin_oracle import pin, rel_err
from test_tree_derivatives import _without_universal

ID, FD = fd_derivatives.INVERSE_DYNAMICS_DERIVATIVES, fd_derivatives.FORWARD_DYNAMICS_DERIVATIVES


def _derivatives(im, fm, q, v, a):
    """(status, d tau / d q, d tau / d v) of the general kernel's C entry, friction off, NaN-filled scratch."""
    return entry(ID.general, (im, fm), q, v, a, options=(0,))


def _fd_derivatives(im, fm, q, v, tau):
    """(status, d a / d q, d a / d v, M^-1) of the general kernel's C entry, as :func:`_derivatives`."""
    return entry(FD.general, (im, fm), q, v, tau, options=(0,))


def inverse_equals_pinocchio(im, fm, model, data, am, rng, tol):
    """At a random state (q, v, a) drawn from ``rng``, the general kernel's (d tau / d q, d tau / d v) equal
    ``computeRNEADerivatives`` to ``tol``; returns (q, v, a, d tau / d q)."""
    q = random_configuration(am, rng)
    v, a = rng.normal(size=(2, model.nv))
    status, dq, dv = _derivatives(im, fm, q, v, a)
    assert status == 0
    pq, pv, _ = [np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a)]
    assert rel_err(dq, pq) < tol and rel_err(dv, pv) < tol
    return q, v, a, dq


def forward_equals_pinocchio(im, fm, model, q, v, tau):
    """The general kernel's (d a / d q, d a / d v, M^-1) equal ``computeABADerivatives`` to 1e-9 (M^-1 exactly
    symmetric)."""
    status, aq, av, minv = _fd_derivatives(im, fm, q, v, tau)
    assert status == 0
    data = model.createData()  # alive while its arrays are copied
    pq, pv, pm = [np.array(x) for x in pin.computeABADerivatives(model, data, q, v, tau)]
    pm = np.triu(pm) + np.triu(pm, 1).T  # Pinocchio fills the upper triangle of M^-1
    assert rel_err(aq, pq) < 1e-9 and rel_err(av, pv) < 1e-9 and rel_err(minv, pm) < 1e-9
    assert np.array_equal(minv, minv.T)


def test_the_general_kernels_are_chosen_for_general_trees_only():
    general = pack_tree(array_model(random_tree(np.random.default_rng(0), 6, kinds=("spherical", "revolute"))))[0]
    floating = pack_tree(array_model(random_tree(np.random.default_rng(0), 6, kinds=("revolute",),
                                                 root="free_flyer")))[0]
    roots = [pack_tree(array_model(random_tree(np.random.default_rng(0), 6, kinds=("revolute", "prismatic"),
                                               root=root)))[0] for root in ("spherical", "planar")]
    assert general[0, FORM] == int(TreeForm.GENERAL) and floating[0, FORM] == int(TreeForm.FREE_ROOT)
    assert all(im[0, FORM] == int(TreeForm.GENERAL) for im in roots)
    for q in (ID, FD):  # a planar or spherical root before one-coordinate joints keeps the rigid-root kernels
        assert for_tree(q, general) is q.general and for_tree(q, floating) is q
        assert all(for_tree(q, im) is q for im in roots)
        assert q.general.inputs == q.inputs and q.general.results == q.results and q.general.options == q.options


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
    assert rel_err(_derivatives(im, fm, scaled, v, a)[1], dq) < 1e-12
    scaled[turns[-1]] = 0.0
    assert _derivatives(im, fm, scaled, v, a)[0] == 4


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
    assert _fd_derivatives(im, massless, q, v, tau)[0] == 3


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
    ran = dispatch.compile_times()  # the general kernels ran (C entry and batch loop), not a NumPy fallback
    assert {f"{m}_general_entry" for m, _ in calls} | {f"{m}_general_loop_serial" for m, _ in calls} <= set(ran)
    for mine, single, ref in zip(fast, one, slow):
        for x, y, z in zip(mine, single, ref):
            assert x.shape == (3, robot.nv, robot.nv) and np.isfinite(x).all()
            assert rel_err(x, z) < 1e-11
            assert rel_err(y, x[1]) < 1e-12  # one sample (the C caller) = the batch's
