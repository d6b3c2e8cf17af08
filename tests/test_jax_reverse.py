"""``robot.to_jax()`` in reverse mode: ``jax.test_util.check_grads`` passes, and the reverse passes hold no
reduction across a spatial vector's component axis."""

from __future__ import annotations

import pytest

from jax_cases import args_of, check_grads, jax, jnp
from tensor_cases import calls, frames, method, robot, states, with_q1


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


def _live(jaxpr, match) -> list:
    """(primitive, operand shape, parameters, source line) of every equation for which ``match(eqn)``
    holds, in ``jaxpr`` and the jaxprs nested in it, whose result reaches the outputs (a dead one,
    such as the cotangent of a constant zero, is dropped by the compiler)."""
    from jax._src import core, source_info_util

    live = {v for v in jaxpr.outvars if isinstance(v, core.Var)}
    used = []
    for e in reversed(jaxpr.eqns):
        if any(v in live for v in e.outvars if not isinstance(v, core.DropVar)):
            used.append(e)
            live.update(v for v in e.invars if isinstance(v, core.Var))
    found = []
    for e in reversed(used):
        if match(e):
            where = source_info_util.summarize(e.source_info)
            found.append((e.primitive.name, e.invars[0].aval.shape, e.params, where))
        for p in e.params.values():
            for sub in p if isinstance(p, (list, tuple)) else [p]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    found += _live(inner, match)
    return found


def _reductions(jaxpr) -> list:
    """The live reductions over an axis longer than 1 in ``jaxpr`` (:func:`_live`)."""
    return _live(jaxpr, lambda e: e.primitive.name.startswith("reduce_")
                 and any(e.invars[0].aval.shape[k] > 1 for k in e.params.get("axes", ())))


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


@pytest.mark.parametrize("case", ("panda", "mimic"))
def test_derivative_rules_transpose_without_padding(case):
    """The written-out tangents of inverse dynamics and the mass matrix (joints of one coordinate,
    float64; forward dynamics' rule runs the former) read the coordinates' rates as rows
    (``unstack``), not as slices: a slice's transpose pads its cotangent to the full width, and XLA's
    CPU backend fuses those pads into slow loops (the gradient ratios of bench/tensors.py)."""
    r = robot(case)
    jd = r.to_jax()
    st = states(r, (3,))
    for name in ("inverse_dynamics", "forward_dynamics", "mass_matrix"):
        names = {"inverse_dynamics": ("q", "v", "a"), "forward_dynamics": ("q", "v", "tau"),
                 "mass_matrix": ("q",)}[name]
        args = args_of(st, names)
        assert args[0].dtype == jnp.float64
        y, pullback = jax.vjp(getattr(jd, name), *args)
        found = _live(jax.make_jaxpr(pullback)(jnp.ones_like(y)).jaxpr, lambda e: e.primitive.name == "pad")
        assert not found, f"{case} {name}: the gradient pads cotangents: {[(f[0], f[1], f[3]) for f in found[:3]]}"
