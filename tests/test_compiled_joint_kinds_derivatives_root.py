"""The compiled derivatives of inverse and forward dynamics in their form for a free flyer, planar or spherical
joint at the root followed by revolute and prismatic joints (the root's columns, perturbed on the right as
Pinocchio's): random trees, forests among them (bodies hanging from the world beside the root), against
Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives``; a quaternion or (cos, sin) pair of any
norm is normalised, a zero one refused (status 4); trees with other joints of several coordinates take the
kernels' general form (``test_compiled_derivatives_general.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from composedyn.dynamics.compiled import derivatives, fd_derivatives
from composedyn.dynamics.compiled.layout import ARM, FORM, MASS, NO_FW, pack_tree
from composedyn.dynamics.joint_types import TreeForm
from composedyn.testing.pinocchio_trees import array_model, random_configuration, random_tree
from pin_oracle import pin, rel_err

SEEDS = (0, 1, 2, 3)
ROOTS = {"free_flyer": slice(3, 7), "planar": slice(2, 4), "spherical": slice(0, 4)}  # -> the root's orientation
_NO_P = np.empty((0, 9))


def _derivatives(im, fm, nv, q, v, a):
    """(status, d tau / d q, d tau / d v) of the declared kernel, friction off."""
    dq, dv = np.full((nv, nv), np.nan), np.full((nv, nv), np.nan)
    w = np.full((nv, derivatives.SCRATCH), np.nan)
    status = fd_derivatives.inverse_dynamics_derivatives(im, fm, q, v, a, NO_FW, _NO_P, 0, 0.0, dq, dv, w)
    return status, dq, dv


def _fd_derivatives(im, fm, nv, q, v, tau):
    """(status, d a / d q, d a / d v, M^-1) of the declared kernel, friction off, on NaN-filled scratch."""
    aq, av, minv, L = (np.full((nv, nv), np.nan) for _ in range(4))
    qdd, wa = np.full(nv, np.nan), np.full((nv, fd_derivatives.SCRATCH), np.nan)
    wd = np.full((nv, derivatives.SCRATCH), np.nan)
    status = fd_derivatives.forward_dynamics_derivatives(im, fm, q, v, tau, 0, 0.0, aq, av, minv, qdd, wa, wd, L)
    return status, aq, av, minv


@pytest.fixture(scope="module", params=[(s, r) for r in ROOTS for s in SEEDS[:4 if r == "free_flyer" else 2]],
                ids=lambda p: f"{p[1]}-{p[0]}")
def tree(request):
    seed, root = request.param
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 12, kinds=("revolute", "prismatic"), root=root)
    return rng, model, array_model(model), ROOTS[root]


def test_some_trees_are_forests():
    """The world carries other bodies beside the free flyer in some of the trees tested."""
    parents = [list(random_tree(np.random.default_rng(s), 12, kinds=("revolute", "prismatic"),
                                root="free_flyer").parents) for s in SEEDS]
    assert any(0 in p[2:] for p in parents), parents


def inverse_equals_pinocchio(im, fm, model, data, am, rng, tol):
    """At a random state (q, v, a) drawn from ``rng``, the declared inverse kernel's (d tau / d q, d tau / d v)
    equal ``computeRNEADerivatives`` to ``tol``; returns (q, v, a, d tau / d q)."""
    q = random_configuration(am, rng)
    v, a = rng.normal(size=(2, model.nv))
    status, dq, dv = _derivatives(im, fm, model.nv, q, v, a)
    assert status == 0
    pq, pv, _ = [np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a)]
    assert rel_err(dq, pq) < tol and rel_err(dv, pv) < tol
    return q, v, a, dq


def test_derivatives_equal_pinocchio(tree):
    rng, model, am, turn = tree
    data = model.createData()
    im, fm = pack_tree(am)
    assert im[0, FORM] == int(TreeForm.FREE_ROOT if turn == ROOTS["free_flyer"] else TreeForm.GENERAL)
    for _ in range(4):
        q, v, a, dq = inverse_equals_pinocchio(im, fm, model, data, am, rng, 1e-11)
        scaled = q.copy()
        scaled[turn] *= 2.5  # a quaternion or (cos, sin) of any norm: the kernel normalises it
        assert rel_err(_derivatives(im, fm, model.nv, scaled, v, a)[1], dq) < 1e-12


def test_a_zero_quaternion_is_refused_and_other_joint_kinds_take_the_general_form(tree):
    rng, model, am, turn = tree
    im, fm = pack_tree(am)
    q = random_configuration(am, rng)
    v = np.zeros(model.nv)
    q[turn] = 0.0
    assert _derivatives(im, fm, model.nv, q, v, v)[0] == 4
    other = random_tree(np.random.default_rng(5), 6, kinds=("spherical", "revolute"), root="free_flyer")
    oam = array_model(other)
    oim, ofm = pack_tree(oam)
    assert oim[0, FORM] == int(TreeForm.GENERAL)
    z = np.zeros(other.nv)
    q = random_configuration(oam, rng)
    status, dq, _ = _derivatives(oim, ofm, other.nv, q, z, z)
    assert status == 0
    odata = other.createData()  # alive while its arrays are read
    assert rel_err(dq, np.array(pin.computeRNEADerivatives(other, odata, q, z, z)[0])) < 1e-10


def forward_equals_pinocchio(im, fm, model, q, v, tau):
    """The declared forward kernel's (d a / d q, d a / d v, M^-1) equal ``computeABADerivatives`` to 1e-9 (M^-1
    exactly symmetric); returns d a / d q."""
    status, aq, av, minv = _fd_derivatives(im, fm, model.nv, q, v, tau)
    assert status == 0
    data = model.createData()  # alive while its arrays are copied
    pq, pv, pm = [np.array(x) for x in pin.computeABADerivatives(model, data, q, v, tau)]
    pm = np.triu(pm) + np.triu(pm, 1).T  # Pinocchio fills the upper triangle of M^-1
    assert rel_err(aq, pq) < 1e-9 and rel_err(av, pv) < 1e-9 and rel_err(minv, pm) < 1e-9
    assert np.array_equal(minv, minv.T)
    return aq


def test_forward_dynamics_derivatives_equal_pinocchio(tree):
    rng, model, am, turn = tree
    im, fm = pack_tree(am)
    for _ in range(4):
        q = random_configuration(am, rng)
        v, tau = rng.normal(size=(2, model.nv))
        aq = forward_equals_pinocchio(im, fm, model, q, v, tau)
        scaled = q.copy()
        scaled[turn] *= 0.3
        assert rel_err(_fd_derivatives(im, fm, model.nv, scaled, v, tau)[1], aq) < 1e-12


def test_forward_dynamics_derivatives_refusals_and_the_general_form(tree):
    rng, model, am, turn = tree
    im, fm = pack_tree(am)
    q = random_configuration(am, rng)
    z = np.zeros(model.nv)
    q[turn] = 0.0
    assert _fd_derivatives(im, fm, model.nv, q, z, z)[0] == 4
    massless = fm.copy()
    massless[:, MASS:ARM] = 0.0  # every body massless: M is singular
    assert _fd_derivatives(im, massless, model.nv, random_configuration(am, rng), z, z)[0] == 3
    other = random_tree(np.random.default_rng(5), 6, kinds=("spherical", "revolute"), root="free_flyer")
    oam = array_model(other)
    oim, ofm = pack_tree(oam)
    z = np.zeros(other.nv)
    q = random_configuration(oam, rng)
    status, aq, _, _ = _fd_derivatives(oim, ofm, other.nv, q, z, z)
    assert status == 0  # the general form takes it
    odata = other.createData()
    assert rel_err(aq, np.array(pin.computeABADerivatives(other, odata, q, z, z)[0])) < 1e-9
