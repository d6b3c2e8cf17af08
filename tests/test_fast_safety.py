"""``robot.fast`` never returns stale or uninitialised memory and never reads or writes past an array.

Every method, one sample and batches: NaN or inf in -> NaN out (the whole
result of that sample, also into a reused ``out``); an ``out`` or input of the
wrong shape, length, dtype or layout -> ``ValueError``; a strided input gives
the contiguous result; a singular mass matrix -> ``ModelError``.  Correct
values are compared with the ``Robot`` methods (the checked path).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.schema import add_joint, add_link, new_graph
from random_robots import random_urdf

# method -> (number of inputs, result shape for n, takes batches, the Robot method it equals)
METHODS = {
    "inverse_dynamics": (3, lambda n: (n,), True, lambda r, a: r.inverse_dynamics(*a)),
    "mass_matrix": (1, lambda n: (n, n), True, lambda r, a: r.mass_matrix(*a)),
    "coriolis_matrix": (2, lambda n: (n, n), True, lambda r, a: r.coriolis_matrix(*a)),
    "gravity_torques": (1, lambda n: (n,), True, lambda r, a: r.gravity_torques(*a)),
    "bias_torques": (2, lambda n: (n,), True, lambda r, a: r.bias_torques(*a)),
    "forward_dynamics": (3, lambda n: (n,), True, lambda r, a: r.forward_dynamics(*a)),
}
BATCHED = [m for m, spec in METHODS.items() if spec[2]]


@pytest.fixture(scope="module")
def robot():
    r = cd.from_urdf(random_urdf(11, 6, damping=True, friction=True, armature=True))
    r.fast.warm_up(batch=True)
    return r


def inputs(robot, k: int, batch=(), seed=0) -> list[np.ndarray]:
    return list(np.random.default_rng(seed).uniform(-1.5, 1.5, (k,) + batch + (robot.dof,)))


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_one_sample_nonfinite_gives_all_nan_even_into_a_used_out(robot, name, bad):
    k, shape, _, method = METHODS[name]
    f = getattr(robot.fast, name)
    args = inputs(robot, k)
    out = np.empty(shape(robot.dof))
    assert np.allclose(f(*args, out=out), method(robot, args), rtol=1e-12, atol=1e-12)  # a good call first
    for j in range(k):  # the bad number in each argument in turn, at each end
        for pos in (0, robot.dof - 1):
            a = [x.copy() for x in args]
            a[j][pos] = bad
            assert np.isnan(f(*a, out=out)).all() and np.isnan(out).all(), (j, pos)
            assert np.isnan(f(*a)).all()
            f(*args, out=out)  # good values again before the next bad call


@pytest.mark.parametrize("name", BATCHED)
def test_batch_nonfinite_sample_gives_a_nan_row_and_the_others_stay_right(robot, name):
    k, shape, _, method = METHODS[name]
    f = getattr(robot.fast, name)
    N = 7
    args = inputs(robot, k, (N,), seed=1)
    want = np.array([method(robot, [x[s] for x in args]) for s in range(N)])
    for j in range(k):
        a = [x.copy() for x in args]
        a[j][2, 0], a[j][5, -1] = np.nan, np.inf
        out = np.full((N,) + shape(robot.dof), 7.0)
        got = f(*a, out=out)
        assert got is out
        bad = np.zeros(N, bool)
        bad[[2, 5]] = True
        assert np.isnan(got[bad]).all() and np.isfinite(got[~bad]).all()
        assert np.allclose(got[~bad], want[~bad], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(METHODS))
def test_out_of_the_wrong_shape_dtype_or_layout_raises(robot, name):
    k, shape, _, _ = METHODS[name]
    f, n = getattr(robot.fast, name), robot.dof
    args = inputs(robot, k)
    s = shape(n)
    wrong = [np.empty(s[:-1] + (n - 1,)), np.empty(s[:-1] + (n + 1,)), np.empty((n * n + 5,)),
             np.empty(s, np.float32), np.empty(s, np.int64), np.empty(s + (2,))[..., 0], np.empty(()),
             np.empty((2,) + s)]
    ro = np.empty(s)
    ro.flags.writeable = False
    for out in wrong + [ro]:
        with pytest.raises(ValueError, match=f"robot.fast.{name}"):
            f(*args, out=out)


@pytest.mark.parametrize("name", BATCHED)
def test_batch_out_of_the_wrong_shape_dtype_or_layout_raises(robot, name):
    k, shape, _, _ = METHODS[name]
    f, n, N = getattr(robot.fast, name), robot.dof, 5
    args = inputs(robot, k, (N,))
    s = (N,) + shape(n)
    ro = np.empty(s)
    ro.flags.writeable = False
    for out in (np.empty((N - 1,) + shape(n)), np.empty(s[:-1] + (n - 1,)), np.empty(s, np.float32),
                np.empty(s + (2,))[..., 0], np.empty(shape(n)), ro):
        with pytest.raises(ValueError, match=f"robot.fast.{name}"):
            f(*args, out=out)


@pytest.mark.parametrize("name", list(METHODS))
def test_inputs_of_the_wrong_length_or_dtype_raise(robot, name):
    k, _, batched, _ = METHODS[name]
    f, n = getattr(robot.fast, name), robot.dof
    args = inputs(robot, k)
    for j in range(k):
        for wrong in (np.zeros(n - 1), np.zeros(n + 1), np.zeros(0), args[j].astype(np.float32),
                      np.zeros(n, np.int64)):
            a = list(args)
            a[j] = wrong
            with pytest.raises(ValueError, match=f"robot.fast.{name}"):
                f(*a)
    if batched:
        B = inputs(robot, k, (4,))
        for j in range(k):
            mismatched = [np.zeros((3, n))] if k > 1 else []  # fewer samples than the other inputs
            for wrong in [np.zeros((4, n - 1)), np.zeros((4, n), np.float32), np.zeros((4, n, 1))] + mismatched:
                a = list(B)
                a[j] = wrong
                with pytest.raises(ValueError, match=f"robot.fast.{name}"):
                    f(*a)
    else:
        with pytest.raises(ValueError, match=f"robot.fast.{name}"):
            f(*inputs(robot, k, (4,)))


@pytest.mark.parametrize("name", list(METHODS))
def test_strided_inputs_give_the_contiguous_result(robot, name):
    k, _, batched, _ = METHODS[name]
    f = getattr(robot.fast, name)
    args = inputs(robot, k, seed=4)
    strided = [np.repeat(x, 2)[::2] for x in args]
    assert not strided[0].flags.c_contiguous
    assert np.array_equal(f(*strided), f(*args))
    if batched:
        B = inputs(robot, k, (6,), seed=5)
        cols = [np.asfortranarray(x) for x in B]
        assert not cols[0].flags.c_contiguous
        assert np.array_equal(f(*cols), f(*B))


def test_forward_dynamics_after_a_good_call_nan_q_gives_nan_not_old_memory(robot):
    fd, n = robot.fast, robot.dof
    z = np.zeros(n)
    fd.forward_dynamics(z, z, z)
    q = np.full(n, np.nan)
    for _ in range(3):
        assert np.isnan(fd.forward_dynamics(q, z, z)).all()


def test_singular_mass_matrix_raises_model_error():
    g = new_graph("tip")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    add_link(g, "l2")
    add_joint(g, "j1", "base", "l1", axis=(0, 0, 1))
    add_joint(g, "j2", "l1", "l2", axis=(0, 1, 0), origin=np.eye(4))
    fd = cd.from_graph(g).fast
    z, Z = np.zeros(2), np.zeros((3, 2))
    with pytest.raises(cd.ModelError, match="j2"):
        fd.forward_dynamics(z, z, z)
    with pytest.raises(cd.ModelError, match="j2"):
        fd.forward_dynamics(Z, Z, Z)


def test_options_that_are_not_integers_are_refused_by_name(robot):
    """``robot.fast`` takes a frame by its index in ``robot.frame_names``: a frame name, a reference word
    or a non-numeric option is a ValueError naming the option and what it takes (one sample and a batch);
    an index gives the Robot method's result."""
    q = inputs(robot, 1)[0]
    name = robot.frame_names[-1]
    for call in (lambda: robot.fast.frame_pose(q, name), lambda: robot.fast.jacobian(q[None], name),
                 lambda: robot.fast.jacobian(q, robot.frame_names.index(name), "world")):
        with pytest.raises(ValueError, match=r"robot\.fast\.(frame_pose|jacobian): (frame|local) must be an integer"):
            call()
    k = robot.frame_names.index(name)
    assert np.allclose(robot.fast.frame_pose(q, k), robot.frame_pose(q, name))
    assert np.allclose(robot.fast.jacobian(q, k, 1), robot.jacobian(q, name, "local"))
