"""Array arguments of the Robot facade: batch shapes in, matching shapes out,
and bad arrays (wrong length, NaN/inf, non-numeric, mismatched batch shapes,
bad wrenches) raise ValueError naming the argument and the expected shape.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import composedyn as cd
from random_robots import random_urdf

# method -> joint-array arguments, in call order
CALLS = {
    "inverse_dynamics": ("q", "qd", "qdd"),
    "forward_dynamics": ("q", "qd", "tau"),
    "mass_matrix": ("q",),
    "coriolis_matrix": ("q", "qd"),
    "gravity_torques": ("q",),
    "bias_torques": ("q", "qd"),
    "kinetic_energy": ("q", "qd"),
    "potential_energy": ("q",),
    "energy": ("q", "qd"),
    "link_poses": ("q",),
}


@pytest.fixture(scope="module")
def robot():
    r = cd.from_urdf(random_urdf(4, 7, p_fixed=0.5, damping=True, friction=True, armature=True))
    assert r.dof == 7 and len(r.model.link_names) > r.dof + 1  # has welded links
    return r


def out_shape(method: str, batch: tuple, n: int):
    if method in ("mass_matrix", "coriolis_matrix"):
        return batch + (n, n)
    if method in ("kinetic_energy", "potential_energy", "energy"):
        return batch
    if method == "link_poses":
        return batch + (4, 4)
    return batch + (n,)


def call(robot, method, arrays):
    out = getattr(robot, method)(*arrays)
    return next(iter(out.values())) if isinstance(out, dict) else out


@pytest.mark.parametrize("method", sorted(CALLS))
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_batched_shapes_and_values_match_single_calls(robot, method, batch):
    n, k = robot.dof, len(CALLS[method])
    X = np.random.default_rng(0).uniform(-1, 1, (k,) + batch + (n,))
    out = call(robot, method, X)
    assert out.shape == out_shape(method, batch, n)
    flat = X.reshape(k, -1, n)
    singles = np.array([call(robot, method, flat[:, s]) for s in range(flat.shape[1])])
    np.testing.assert_allclose(out.reshape(singles.shape), singles, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("method", sorted(m for m in CALLS if len(CALLS[m]) > 1))
def test_single_vectors_broadcast_against_a_trajectory(robot, method):
    n = robot.dof
    X = [np.random.default_rng(1).uniform(-1, 1, (6, n))] + [np.full(n, 0.3)] * (len(CALLS[method]) - 1)
    full = [X[0]] + [np.broadcast_to(x, (6, n)) for x in X[1:]]
    np.testing.assert_array_equal(call(robot, method, X), call(robot, method, full))


def bad_cases(n: int):
    """(label, bad value, message pattern with {arg})."""
    return [
        ("short", np.zeros(n - 1), rf"{{arg}} has shape \({n - 1},\), expected \(\.\.\., {n}\)"),
        ("long", np.zeros((3, n + 1)), rf"{{arg}} has shape \(3, {n + 1}\), expected \(\.\.\., {n}\)"),
        ("scalar", 0.5, rf"{{arg}} has shape \(\), expected \(\.\.\., {n}\)"),
        ("nan", np.r_[np.nan, np.zeros(n - 1)], rf"{{arg}} contains NaN.*\(\.\.\., {n}\)"),
        ("inf", np.r_[np.zeros(n - 1), np.inf], rf"{{arg}} contains NaN or infinite.*\(\.\.\., {n}\)"),
        ("text", ["a"] * n, rf"{{arg}} must be a numeric array of shape \(\.\.\., {n}\)"),
    ]


@pytest.mark.parametrize("method", sorted(CALLS))
def test_bad_arrays_name_argument_and_shape(robot, method):
    n = robot.dof
    args = CALLS[method]
    for pos, arg in enumerate(args):
        for label, bad, pattern in bad_cases(n):
            arrays = [np.zeros(n)] * len(args)
            arrays[pos] = bad
            with pytest.raises(ValueError, match=pattern.format(arg=arg)):
                call(robot, method, arrays)


@pytest.mark.parametrize("method", sorted(m for m in CALLS if len(CALLS[m]) > 1))
def test_mismatched_batch_shapes_name_both_arguments(robot, method):
    n = robot.dof
    args = CALLS[method]
    arrays = [np.zeros((4, n))] + [np.zeros((5, n))] * (len(args) - 1)
    pattern = rf"batch shapes do not broadcast: {args[0]} \(4, {n}\), {args[1]} \(5, {n}\).*\(\.\.\., {n}\)"
    with pytest.raises(ValueError, match=pattern):
        call(robot, method, arrays)


@pytest.mark.parametrize("method", ["inverse_dynamics", "forward_dynamics"])
def test_bad_wrenches(robot, method):
    n, link = robot.dof, robot.model.link_names[-1]
    q = np.zeros((4, n))
    f = getattr(robot, method)
    cases = [
        ({"no_such_link": np.zeros(6)}, r"f_ext names unknown link 'no_such_link'"),
        ({link: np.zeros(5)}, rf"f_ext\['{link}'\] has shape \(5,\), expected \(\.\.\., 6\)"),
        ({link: np.full(6, np.nan)}, rf"f_ext\['{link}'\] contains NaN.*\(\.\.\., 6\)"),
        ({link: np.zeros((3, 6))}, rf"f_ext\['{link}'\] has shape \(3, 6\).*batch shape \(4,\)"),
        ([np.zeros(6)], r"f_ext must map link names"),
    ]
    for f_ext, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            f(q, q, q, f_ext=f_ext)
    base = robot.model.link_names[0]  # the base absorbs its wrench, but its shape is still checked
    with pytest.raises(ValueError, match=re.escape(f"f_ext['{base}'] has shape (3, 6)")):
        f(q, q, q, f_ext={base: np.zeros((3, 6))})


def test_batched_wrenches_match_single_calls(robot):
    n = robot.dof
    rng = np.random.default_rng(2)
    Q, QD, X = rng.uniform(-1, 1, (3, 5, n))
    F = {lk: rng.normal(size=(5, 6)) for lk in robot.model.link_names[1::2]}
    for method in ("inverse_dynamics", "forward_dynamics"):
        out = getattr(robot, method)(Q, QD, X, f_ext=F)
        for s in range(5):
            single = getattr(robot, method)(Q[s], QD[s], X[s], f_ext={k: w[s] for k, w in F.items()})
            np.testing.assert_allclose(out[s], single, rtol=1e-13, atol=1e-13)
