"""Derivatives through the array-API engine: torch autograd and JAX forward/reverse mode equal
the Robot's analytic derivatives of inverse and forward dynamics (along the configuration
space for floating robots, through the engine's own ``integrate``), the regressor is the
derivative of the inverse dynamics with respect to the inertial parameters, the joint-term
columns its derivative with respect to damping, Coulomb friction and armature;
``torch.autograd.gradcheck`` and ``jax.test_util.check_grads`` pass; ``jit(vmap(...))`` equals
the loop."""

from __future__ import annotations

import numpy as np
import pytest

from composedyn.dynamics import array_api as aa
from test_array_api_core import close, robot_case, state

CASES = ("panda.toml", "tree_3_9", "panda_gripper_mimic", "free_5_8", "planar_4_6")


@pytest.fixture
def jax64():
    import jax

    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


def _torch_model(robot):
    import array_api_compat.torch as xp

    return aa.on(aa.from_robot(robot), xp)


def _t(a):
    import torch

    return torch.asarray(np.asarray(a, float), dtype=torch.float64)


@pytest.mark.parametrize("name", CASES)
def test_torch_autograd_equals_analytic_derivatives(name):
    import torch
    from torch.autograd.functional import jacobian

    robot = robot_case(name)
    bm = _torch_model(robot)
    q, qd, qdd = (a[0] for a in state(robot, seed=11))
    dq = torch.zeros(robot.nv, dtype=torch.float64)

    def at(d):  # configurations along the tangent space (the identity for a fixed base)
        return aa.integrate(bm, _t(q), d)

    dtau_dq, dtau_dv = robot.inverse_dynamics_derivatives(q, qd, qdd)
    close(jacobian(lambda d: aa.inverse_dynamics(bm, at(d), _t(qd), _t(qdd)), dq).numpy(), dtau_dq, 1e-9)
    close(jacobian(lambda v: aa.inverse_dynamics(bm, at(dq), v, _t(qdd)), _t(qd)).numpy(), dtau_dv, 1e-9)
    tau = robot.inverse_dynamics(q, qd, qdd)
    da_dq, da_dv, Minv = robot.forward_dynamics_derivatives(q, qd, tau)
    close(jacobian(lambda d: aa.forward_dynamics(bm, at(d), _t(qd), _t(tau)), dq).numpy(), da_dq, 1e-9)
    close(jacobian(lambda v: aa.forward_dynamics(bm, at(dq), v, _t(tau)), _t(qd)).numpy(), da_dv, 1e-9)
    close(jacobian(lambda u: aa.forward_dynamics(bm, at(dq), _t(qd), u), _t(tau)).numpy(), Minv, 1e-9)


@pytest.mark.parametrize("name", ["tree_7_14", "free_5_8", "panda_gripper_mimic"])
def test_parameter_derivatives_are_the_regressor(name):
    from torch.autograd.functional import jacobian

    robot = robot_case(name)
    bm = _torch_model(robot)
    q, qd, qdd = (_t(a[0]) for a in state(robot, seed=12))
    Y = robot.regressor(*(a.numpy() for a in (q, qd, qdd)), joint_terms=True)
    P = 10 * bm.am.n
    close(jacobian(lambda p: aa.inverse_dynamics(bm, q, qd, qdd, params=p), _t(robot.inertial_parameters())).numpy(),
          Y[:, :P], 1e-10)
    terms = list(bm.am.term_joints)
    for c, key in enumerate(("damping", "coulomb", "armature")):
        d = jacobian(lambda x: aa.inverse_dynamics(bm, q, qd, qdd, **{key: x}), getattr(bm, key)).numpy()
        close(d[:, terms], Y[:, P + c::3], 1e-12)


def test_torch_gradcheck():
    import torch

    robot = robot_case("tree_3_9")
    bm = _torch_model(robot)
    q, qd, qdd = (_t(a[:2]).requires_grad_() for a in state(robot, seed=13))
    pi = _t(robot.inertial_parameters()).requires_grad_()
    assert torch.autograd.gradcheck(lambda *x: aa.inverse_dynamics(bm, *x), (q, qd, qdd, pi))
    assert torch.autograd.gradcheck(lambda a, b, c: aa.forward_dynamics(bm, a, b, c), (q, qd, qdd))
    assert torch.autograd.gradcheck(lambda a: aa.mass_matrix(bm, a), (q,))


@pytest.mark.parametrize("name", ["free_2_4"])
def test_jax_derivatives_jit_and_vmap(jax64, name):
    import jax
    import jax.numpy as jnp
    from jax.test_util import check_grads

    robot = robot_case(name)
    bm = aa.on(aa.from_robot(robot), jnp)
    Q, QD, QDD = state(robot, batch=(4,), seed=14)
    q, qd, qdd = Q[0], QD[0], QDD[0]
    dq = jnp.zeros(robot.nv)
    dtau_dq, dtau_dv = robot.inverse_dynamics_derivatives(q, qd, qdd)

    def tau_at(d, v):
        return aa.inverse_dynamics(bm, aa.integrate(bm, jnp.asarray(q), d), v, jnp.asarray(qdd))

    close(jax.jacfwd(tau_at, argnums=(0, 1))(dq, jnp.asarray(qd))[0], dtau_dq, 1e-9)
    close(jax.jacrev(tau_at, argnums=1)(dq, jnp.asarray(qd)), dtau_dv, 1e-9)
    check_grads(lambda v: aa.forward_dynamics(bm, jnp.asarray(q), v, jnp.asarray(qdd)), (jnp.asarray(qd),), order=1)
    fast = jax.jit(jax.vmap(lambda a, b, c: aa.inverse_dynamics(bm, a, b, c)))
    close(fast(jnp.asarray(Q), jnp.asarray(QD), jnp.asarray(QDD)), robot.inverse_dynamics(Q, QD, QDD))
    mass = jax.jit(jax.vmap(lambda a: aa.mass_matrix(bm, a)))
    close(mass(jnp.asarray(Q)), robot.mass_matrix(Q))
