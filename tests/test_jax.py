"""``robot.to_jax()``: the Robot's methods as pure JAX functions.

Values equal the NumPy Robot's (float64 with ``jax_enable_x64`` to 1e-12, float32
to 1e-5 relative) on bundled robots and random trees (friction, armature, mimic
joints, floating bases); ``jax.jacfwd``/``jacrev`` of inverse and forward dynamics
equal composedyn's analytic derivatives (floating bases through the tangent of
``integrate``); ``jax.grad`` with respect to the parameters is the regressor;
``jax.test_util.check_grads`` passes; ``jit(vmap(f))`` equals a loop.  The GPU tests
run where JAX has a GPU device (the summary counts them).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the [jax] extra is part of the test extra")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from tensor_cases import (  # noqa: E402
    BLOCKER,
    CASES,
    calls,
    close,
    frames,
    method,
    reference,
    robot,
    states,
    tangent,
    with_q1,
)


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend
        return []


GPUS = _gpus()
# Each case compiles its own XLA programs (seconds each): float32 values and the Jacobians run on the cases
# that take different code paths (a bundled chain, mimic joints, branched trees, floating bases); float64
# values run on every case.
FLOAT32_CASES = ("panda", "mimic", "floating_mimic")
GRADIENT_CASES = ("tree", "mimic", "floating", "floating_mimic")
gpu = pytest.mark.gpu


def args_of(st: dict, names: tuple, dtype=jnp.float64) -> list:
    return [jnp.asarray(st[a], dtype=dtype) for a in names]


def check_values(r, jd, dtype, tol, batch=(3, 2)):
    st = with_q1(r, states(r, batch))
    for name, (names, kwargs) in calls(r).items():
        want = reference(r, name, names, kwargs, st)
        got = getattr(jd, method(name))(*args_of(st, names, dtype), **kwargs)  # eager: jit is test_jit_vmap's
        assert isinstance(got, jax.Array) and got.dtype == dtype, (name, got.dtype)
        close(np.asarray(got), want, tol, f"{r.name} {name} {dtype}")


# ---- values ----
@pytest.mark.parametrize("case", CASES)
def test_values_float64_equal_numpy(case):
    r = robot(case)
    check_values(r, r.to_jax(), jnp.float64, 1e-12)


@pytest.mark.parametrize("case", FLOAT32_CASES)
def test_values_float32_equal_numpy(case):
    r = robot(case)
    check_values(r, r.to_jax(), jnp.float32, 1e-5)


@pytest.mark.parametrize("case", ("mimic", "floating"))
def test_jit_vmap_equals_loop(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (6,), seed=2)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    frame = frames(r)[0]
    for name, f, xs in (("ID", jd.inverse_dynamics, (q, v, a)), ("FD", jd.forward_dynamics, (q, v, tau)),
                        ("M", jd.mass_matrix, (q,)),
                        ("J", lambda x: jd.jacobian(x, frame, reference="local"), (q,))):
        batched = jax.jit(jax.vmap(f))(*xs)
        loop = np.stack([np.asarray(f(*(x[k] for x in xs))) for k in range(6)])
        close(batched, loop, 1e-12, f"jit(vmap({name}))")
    close(jax.jit(jd.inverse_dynamics)(q, v, a), r.inverse_dynamics(st["q"], st["v"], st["a"]), 1e-12, "jit ID")


@pytest.mark.parametrize("case", ("tree", "floating"))
def test_parameters_and_joint_terms_equal_numpy(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (4,), seed=3)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    other = r.perturbed(0.3, seed=7)
    p = jnp.asarray(other.inertial_parameters())
    close(jd.inverse_dynamics(q, v, a, params=p), other.inverse_dynamics(st["q"], st["v"], st["a"]), 1e-12, "ID")
    close(jd.forward_dynamics(q, v, tau, params=p), other.forward_dynamics(st["q"], st["v"], st["tau"]), 1e-12, "FD")
    close(jd.mass_matrix(q, params=p), other.mass_matrix(st["q"]), 1e-12, "M")
    close(jax.jit(jd.inverse_dynamics, static_argnames="friction")(q, v, a, friction=False),
          r.inverse_dynamics(st["q"], st["v"], st["a"], friction=False), 1e-12, "rigid ID")


@pytest.mark.parametrize("case", ("tree", "floating"))
def test_batch_axes_of_terms_and_widths_broadcast_as_numpy(case):
    """Parameters, joint terms and smooth-friction widths with batch axes of their own broadcast
    against the state's (a batch of robots at one state, one robot at a batch of states,
    a width per sample), under jax.jit and eagerly, as the NumPy Robot's calls one by one."""
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (3,), seed=11)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    others = [r.perturbed(0.3, seed=s) for s in (1, 2, 3)]
    P = jnp.asarray(np.stack([o.inertial_parameters() for o in others]))  # (3, 10 n)
    for f in (jd.forward_dynamics, jax.jit(jd.forward_dynamics)):
        got = f(q[0], v[0], tau[0], params=P)  # one state, three robots
        close(got, np.stack([o.forward_dynamics(st["q"][0], st["v"][0], st["tau"][0]) for o in others]), 1e-12,
              "FD, parameters batched")
    got = jd.inverse_dynamics(q[:, None], v[:, None], a[:, None], params=P)  # (3, 3): state x robot
    want = np.stack([[o.inverse_dynamics(st["q"][i], st["v"][i], st["a"][i]) for o in others] for i in range(3)])
    close(got, want, 1e-12, "ID, states x parameters")
    widths = np.array([0.05, 0.2, 1.0])
    for f in (jd.forward_dynamics, jax.jit(jd.forward_dynamics)):
        got = f(q, v, tau, smooth_friction=jnp.asarray(widths))
        want = np.stack([r.forward_dynamics(st["q"][i], st["v"][i], st["tau"][i], smooth_friction=float(w))
                         for i, w in enumerate(widths)])
        close(got, want, 1e-12, "FD, a width per sample")
    damping = jnp.asarray(np.linspace(0.1, 0.5, jd.layout.joint_terms))
    per_sample = jnp.broadcast_to(damping, (3, damping.shape[0]))
    close(jd.inverse_dynamics(q, v, a, damping=damping), jd.inverse_dynamics(q, v, a, damping=per_sample),
          1e-12, "ID, shared damping = damping per sample")


# ---- gradients ----
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


@pytest.mark.parametrize("case", ("panda", "tree", "mimic", "floating"))
def test_mass_matrix_derivatives_equal_differences_and_the_recursion(case, monkeypatch):
    """M's written-out tangent (one-coordinate trees, float64; a floating base differentiates the recursion):
    jacfwd, jacrev and the gradient of <P, M> (parameters and armature included) equal autodiff through the
    recursion without the rule to 1e-12, and jacrev equals central differences of the Robot's compiled M."""
    from composedyn.dynamics import array_api as aa
    from composedyn.dynamics.array_api import crba

    used = []
    tangent = crba.mass_matrix_jvp
    monkeypatch.setattr(crba, "mass_matrix_jvp", lambda *a: used.append(1) or tangent(*a))
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


@pytest.mark.parametrize("case", ("two_link", "floating"))
def test_check_grads(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (2,), seed=10)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    p = jnp.asarray(r.inertial_parameters())
    arm = jnp.full(jd.layout.joint_terms, 0.1)
    check_grads(lambda *x: jd.inverse_dynamics(*x[:3], params=x[3], armature=x[4]), (q, v, a, p, arm), order=1)
    check_grads(lambda *x: jd.forward_dynamics(*x[:3], params=x[3]), (q, v, tau, p), order=1)
    check_grads(lambda x: jd.jacobian(x, frames(r)[0]), (q,), order=1)


def _reductions(jaxpr) -> list:
    """(primitive, operand shape, axes, source line) of every reduction over an axis longer than 1
    in ``jaxpr`` and the jaxprs nested in it."""
    from jax._src import source_info_util

    found = []
    for e in jaxpr.eqns:
        if e.primitive.name.startswith("reduce_"):
            shape = e.invars[0].aval.shape
            if any(shape[k] > 1 for k in e.params.get("axes", ())):
                found.append((e.primitive.name, shape, e.params["axes"], source_info_util.summarize(e.source_info)))
        for p in e.params.values():
            for sub in p if isinstance(p, (list, tuple)) else [p]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    found += _reductions(inner)
    return found


@pytest.mark.parametrize("case", ("panda", "tree", "mimic"))
def test_reverse_mode_has_no_reductions_across_component_axes(case):
    """The products of the spatial algebra are written without broadcasting a factor across a
    component axis on JAX: reverse mode would turn each broadcast into a reduction, several times
    slower on XLA's CPU backend than the elementwise programs around it (bench/tensors.py)."""
    r = robot(case)
    jd = r.to_jax()
    st = with_q1(r, states(r, (3,)))
    for name, (names, kwargs) in calls(r).items():
        f = getattr(jd, method(name))
        y, pullback = jax.vjp(lambda *x: f(*x, **kwargs), *args_of(st, names))
        found = _reductions(jax.make_jaxpr(pullback)(jnp.ones_like(y)).jaxpr)
        assert not found, f"{case} {name}: reverse mode reduces across component axes: {found[:3]}"


# ---- argument checks ----
def test_errors_name_the_argument_and_the_shape():
    r = robot("panda")
    jd = r.to_jax()
    z, q = jnp.zeros((4096, 6)), jnp.zeros((4096, 7))
    with pytest.raises(ValueError, match=r"^q must have 7 entries in its last axis \(panda's nq\), got \(4096, 6\)$"):
        jd.mass_matrix(z)
    with pytest.raises(ValueError, match=r"^qdd must have 7 entries in its last axis \(panda's nv\), got \(6,\)"):
        jax.jit(jd.inverse_dynamics)(q[0], q[0], z[0])  # at trace time
    with pytest.raises(ValueError, match=r"unknown frame 'flang'; close names: flange"):
        jd.frame_pose(q, "flang")
    with pytest.raises(ValueError, match=r"q is complex"):
        jd.gravity_torques(jnp.zeros(7, dtype=jnp.complex128))
    out = jd.gravity_torques(np.zeros(7, dtype=int))  # integers compute in the default float
    assert out.dtype == jnp.float64


def test_without_jax_one_line_names_the_extra():
    proc = subprocess.run([sys.executable, "-c", BLOCKER.format(module="jax", call="to_jax()")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("MissingExtra: robot.to_jax"), proc.stdout
    assert 'pip install "composedyn[jax]"' in lines[0]


# ---- GPU ----
@gpu
@pytest.mark.skipif(not GPUS, reason="no JAX GPU device")
@pytest.mark.parametrize("case", ("panda", "floating"))
def test_gpu_values_and_gradients(case):
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (8,), seed=12)
    q, v, a = (jax.device_put(x, GPUS[0]) for x in args_of(st, ("q", "v", "a")))
    tau = jax.jit(jax.vmap(jd.inverse_dynamics))(q, v, a)
    assert tau.devices() == {GPUS[0]}
    close(tau, r.inverse_dynamics(st["q"], st["v"], st["a"]), 1e-12, "GPU ID")
    Jv = jax.jacfwd(jd.inverse_dynamics, argnums=1)(q[0], v[0], a[0])
    close(Jv, r.inverse_dynamics_derivatives(st["q"][0], st["v"][0], st["a"][0])[1], 1e-9, "GPU dtau/dv")
