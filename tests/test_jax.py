"""``robot.to_jax()``: the Robot's methods as pure JAX functions.

Values equal the NumPy Robot's (float64 with ``jax_enable_x64`` to 1e-12, float32
to 1e-5 relative) on bundled robots and random trees (friction, armature, mimic
joints, floating bases); parameters, joint terms and friction widths broadcast with
batch axes of their own; ``jit(vmap(f))`` equals a loop; errors name the argument.
Derivatives: ``test_jax_jacobians.py``, reverse mode: ``test_jax_reverse.py``.  The GPU
tests run where JAX has a GPU device (the summary counts them).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from jax_cases import FLOAT32_CASES, args_of, jax, jnp
from tensor_cases import BLOCKER, CASES, calls, close, frames, method, reference, robot, states, with_q1


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend
        return []


GPUS = _gpus()
gpu = pytest.mark.gpu


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
