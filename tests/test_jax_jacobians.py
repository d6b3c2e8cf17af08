"""``robot.to_jax()``'s derivatives: ``jax.jacfwd``/``jacrev`` of inverse and forward dynamics equal
composedyn's analytic derivatives (floating bases through the tangent of ``integrate``); the mass matrix's
and inverse dynamics' written-out tangents equal autodiff through the recursion and central differences;
``integrate`` is differentiable at zero; ``jax.grad`` with respect to the parameters is the regressor."""

from __future__ import annotations

import numpy as np
import pytest

from jax_cases import GRADIENT_CASES, args_of, jax, jnp
from tensor_cases import close, robot, states, tangent


@pytest.mark.parametrize("case, jac", [(c, "jacfwd") for c in GRADIENT_CASES] + [("panda", "jacrev"),
                                                                                  ("floating", "jacrev")])
def test_inverse_dynamics_jacobians_equal_analytic_derivatives(case, jac):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (), seed=5)
    q, v, a = args_of(st, ("q", "v", "a"))
    Jq, Jv, Ja = getattr(jax, jac)(jd.inverse_dynamics, argnums=(0, 1, 2))(q, v, a)
    dq, dv = r.inverse_dynamics_derivatives(st["q"], st["v"], st["a"])
    close(np.asarray(Jq) @ tangent(r, st["q"]), dq, 1e-9, "dtau/dq")
    close(Jv, dv, 1e-9, "dtau/dv")
    close(Ja, r.mass_matrix(st["q"]), 1e-9, "dtau/da")


@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_forward_dynamics_jacobians_equal_analytic_derivatives(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (), seed=6)
    q, v, tau = args_of(st, ("q", "v", "tau"))
    Jq, Jv, Jt = jax.jit(jax.jacfwd(jd.forward_dynamics, argnums=(0, 1, 2)))(q, v, tau)
    dq, dv, Minv = r.forward_dynamics_derivatives(st["q"], st["v"], st["tau"])
    close(np.asarray(Jq) @ tangent(r, st["q"]), dq, 1e-9, "da/dq")
    close(Jv, dv, 1e-9, "da/dv")
    close(Jt, Minv, 1e-9, "da/dtau")


def _counted(monkeypatch, module, name: str) -> list:
    """``module.name`` replaced by itself counting its calls in the returned list."""
    used = []
    f = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a: used.append(1) or f(*a))
    return used


@pytest.mark.parametrize("case", ("panda", "tree", "mimic", "floating"))
def test_mass_matrix_derivatives_equal_differences_and_the_recursion(case, monkeypatch):
    """M's written-out tangent (one-coordinate trees, float64; a floating base differentiates the recursion):
    jacfwd, jacrev and the gradient of <P, M> (parameters and armature included) equal autodiff through the
    recursion without the rule to 1e-12, and jacrev equals central differences of the Robot's compiled M."""
    from composedyn.dynamics import array_api as aa
    from composedyn.dynamics.array_api import crba

    used = _counted(monkeypatch, crba, "mass_matrix_jvp")
    r = robot(case)
    jd = r.to_jax()
    bm = aa.on(aa.from_robot(r), jnp, dtype=jnp.float64)
    st = states(r, (3,), seed=12)
    q = jnp.asarray(st["q"])
    p = jnp.asarray(r.inertial_parameters())
    arm = None if r.floating else jnp.full(jd.layout.joint_terms, 0.1)  # a floating base's has other rows
    P = jnp.asarray(np.random.default_rng(3).normal(size=(3, r.nv, r.nv)))

    def plain(q, p=None, arm=None):
        return aa.mass_matrix(bm, q, params=p, armature=arm)

    for jac in (jax.jacfwd, jax.jacrev):
        close(jac(jd.mass_matrix)(q[0]), jac(plain)(q[0]), 1e-12, f"{jac.__name__} of M")
    args = (q, p) if arm is None else (q, p, arm)
    got = jax.jit(jax.grad(lambda *x: jnp.sum(P * jd.mass_matrix(x[0], params=x[1], armature=x[2] if x[2:] else None)),
                           argnums=tuple(range(len(args)))))(*args)
    want = jax.grad(lambda *x: jnp.sum(P * plain(*x)), argnums=tuple(range(len(args))))(*args)
    for g, w, what in zip(got, want, ("q", "params", "armature")):
        close(g, w, 1e-12, f"grad of <P, M> by {what}")
    assert bool(used) == (not r.floating), f"{case}: the written-out tangent ran {len(used)} times"
    if r.nq == r.nv:  # central differences of the compiled M along every coordinate
        e = 1e-6
        fd = np.stack([(r.mass_matrix(st["q"][0] + e * d) - r.mass_matrix(st["q"][0] - e * d)) / (2 * e)
                       for d in np.eye(r.nq)], axis=-1)
        close(jax.jacrev(jd.mass_matrix)(q[0]), fd, 1e-6, "jacrev of M against differences")


def test_mass_matrix_tangent_equals_differences_on_random_trees():
    """The CRBA's written-out tangent on trees of revolute, prismatic, helical and continuous joints (several
    roots and branches) equals central differences of the CRBA along random directions (NumPy)."""
    from composedyn.dynamics import array_api as aa
    from composedyn.dynamics.array_api import crba
    from composedyn.dynamics.array_api.kinematics import tree
    from composedyn.testing.pinocchio_trees import array_model, random_tree

    for seed in range(4):
        rng = np.random.default_rng(seed)
        am = array_model(random_tree(rng, 9, kinds=("revolute", "prismatic", "helical", "continuous")))
        bm = aa.on(am, np, dtype=np.float64)
        assert crba.scalar_tree(bm)
        q, dq = rng.uniform(-1.0, 1.0, (2, 2, am.nq_full))
        e = 1e-6
        fd = (crba.rigid_mass_matrix(bm, q + e * dq) - crba.rigid_mass_matrix(bm, q - e * dq)) / (2 * e)
        got = crba.mass_matrix_jvp(bm, crba.root_terms(bm, *tree(bm, q)), dq)
        assert np.abs(got - fd).max() <= 1e-7 * np.abs(fd).max(), f"seed {seed}: {np.abs(got - fd).max():.3g}"


def test_inverse_dynamics_tangent_equals_differences_on_random_trees():
    """The RNEA's written-out tangent on trees of revolute, prismatic, helical and continuous joints (random
    axes, several roots and branches) equals central differences of the RNEA along random directions of q,
    qd, qdd and the inertial parameters together (NumPy), and its torques equal the RNEA's."""
    from composedyn.dynamics import array_api as aa
    from composedyn.dynamics.array_api import crba, rnea
    from composedyn.testing.pinocchio_trees import array_model, random_tree

    for seed in range(4):
        rng = np.random.default_rng(10 + seed)
        am = array_model(random_tree(rng, 9, kinds=("revolute", "prismatic", "helical", "continuous")))
        bm = aa.on(am, np, dtype=np.float64)
        assert crba.scalar_tree(bm)
        q, v, a, dq, dv, da = rng.uniform(-1.0, 1.0, (6, 2, am.nq_full))
        p, dp = rng.uniform(0.2, 1.0, (2, 2, 10 * am.n))
        e = 1e-6

        def rnea_at(t):
            return rnea.rigid_torques(bm, q + t * dq, v + t * dv, a + t * da, p + t * dp)

        fd = (rnea_at(e) - rnea_at(-e)) / (2 * e)
        tau, got = rnea.rigid_torques_jvp(bm, q, v, a, p, dq, dv, da, dp)
        assert np.abs(tau - rnea_at(0.0)).max() <= 1e-12 * np.abs(tau).max(), f"seed {seed}: torques"
        assert np.abs(got - fd).max() <= 1e-7 * np.abs(fd).max(), f"seed {seed}: {np.abs(got - fd).max():.3g}"
        _, without_params = rnea.rigid_torques_jvp(bm, q, v, a, p, dq, dv, da, None)
        _, params_only = rnea.rigid_torques_jvp(bm, q, v, a, p, 0 * dq, 0 * dv, 0 * da, dp)
        close(without_params + params_only, got, 1e-12, f"seed {seed}: tangent linear in the parameters'")


@pytest.mark.parametrize("case", ("panda", "mimic", "floating"))
def test_inverse_dynamics_rule_equals_the_recursion(case, monkeypatch):
    """ID's written-out tangent (trees of one-coordinate joints; a floating base differentiates the recursion):
    the gradient of <w, tau> by q, qd, qdd, parameters, damping and armature equals autodiff through the
    recursion without the rule to 1e-11 (its jacfwd, jacrev and forward dynamics' Jacobians, through the rule,
    equal the analytic derivatives in the tests above)."""
    from composedyn.dynamics import array_api as aa
    from composedyn.dynamics.array_api import rnea

    used = _counted(monkeypatch, rnea, "rigid_torques_jvp")
    r = robot(case)
    jd = r.to_jax()
    bm = aa.on(aa.from_robot(r), jnp, dtype=jnp.float64)
    st = states(r, (3,), seed=13)
    n = None if r.floating else jd.layout.joint_terms  # a floating base's terms have other rows
    args = (*args_of(st, ("q", "v", "a")), jnp.asarray(r.inertial_parameters()),
            *((jnp.full(n, 0.3), jnp.full(n, 0.1)) if n else ()))
    w = jnp.asarray(np.random.default_rng(4).normal(size=(3, r.nv)))

    def plain(q, v, a, p, damping=None, armature=None):
        return aa.inverse_dynamics(bm, q, v, a, params=p, damping=damping, armature=armature)

    def ruled(q, v, a, p, damping=None, armature=None):
        return jd.inverse_dynamics(q, v, a, params=p, damping=damping, armature=armature)

    k = tuple(range(len(args)))
    got = jax.grad(lambda *x: jnp.sum(w * ruled(*x)), argnums=k)(*args)
    want = jax.grad(lambda *x: jnp.sum(w * plain(*x)), argnums=k)(*args)
    for g, x, what in zip(got, want, ("q", "qd", "qdd", "params", "damping", "armature")):
        close(g, x, 1e-11 * max(1.0, float(jnp.abs(x).max())), f"grad of <w, ID> by {what}")
    assert bool(used) == (not r.floating), f"{case}: the written-out tangent ran {len(used)} times"


def test_inverse_dynamics_rule_in_float32_equals_float64():
    """The written-out tangent in float32 (the rule serves both dtypes): the gradient of <w, tau> by q, qd and
    qdd equals the float64 one to 1e-4 relative, on a robot with mimic joints, friction and armature."""
    r = robot("mimic")
    jd = r.to_jax()
    st = states(r, (2,), seed=14)
    w = np.random.default_rng(5).normal(size=(2, r.nv))

    def grads(dtype):
        f = jax.grad(lambda *x: jnp.sum(jnp.asarray(w, dtype) * jd.inverse_dynamics(*x)), argnums=(0, 1, 2))
        return f(*args_of(st, ("q", "v", "a"), dtype))

    for g32, g64, what in zip(grads(jnp.float32), grads(jnp.float64), ("q", "qd", "qdd")):
        assert g32.dtype == jnp.float32
        close(g32, g64, 1e-4, f"float32 grad of <w, ID> by {what}")


@pytest.mark.parametrize("case", ("floating", "floating_mimic"))
def test_integrate_is_differentiable_at_zero(case):
    r = robot(case)
    jd = r.to_jax()
    q = jnp.asarray(states(r, (), seed=7)["q"])
    J = jax.jacfwd(lambda d: jd.integrate(q, d))(jnp.zeros(r.nv))
    close(J, tangent(r, np.asarray(q)), 1e-12, "d integrate / d v at 0")


@pytest.mark.parametrize("case", ("panda", "mimic", "floating"))
def test_parameter_gradient_is_the_regressor(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (), seed=8)
    q, v, a = args_of(st, ("q", "v", "a"))
    p = jnp.asarray(r.inertial_parameters())
    Y = r.regressor(st["q"], st["v"], st["a"])
    close(jax.jacrev(lambda x: jd.inverse_dynamics(q, v, a, params=x))(p), Y, 1e-12, "d tau / d params")
    w = np.linspace(-1.0, 1.0, r.nv)
    close(jax.grad(lambda x: jnp.dot(jnp.asarray(w), jd.inverse_dynamics(q, v, a, params=x)))(p), w @ Y, 1e-12,
          "grad of w . tau")
