"""``out=`` of ``inverse_dynamics``, ``forward_dynamics`` and ``mass_matrix`` (one array), and of
the derivatives of inverse and forward dynamics (a tuple of two or three): the result is
written into the caller's arrays and they are returned, equal to the result without ``out``
on every route (compiled and NumPy, one sample and batches, fixed and floating base, a tree of
every joint kind, dependent mimic joints, external wrenches); a wrong ``out`` is refused
before anything is computed."""

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.testing.pinocchio_oracle import erd_urdf
from composedyn.testing.pinocchio_trees import random_joint_graph
from composedyn.testing.random_robots import random_urdf
from composedyn.tree_robot import TreeRobot


@pytest.fixture(params=["numba", "numpy"])
def backend(request):
    dispatch.set_backend(request.param)
    yield request.param
    dispatch.set_backend("auto")


def _robots():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "random tree": cd.from_urdf(random_urdf(3, 9)),
            "panda, mimic fingers": cd.load(erd_urdf("panda"), mimic="dependent"),
            "solo12 floating": cd.load(erd_urdf("solo12"), floating=True),
            "tree of every joint kind": TreeRobot(random_joint_graph(3, bodies=6)),
        }


ROBOTS = _robots()


def _state(robot, batch, seed):
    rng = np.random.default_rng(seed)
    if robot.nq != robot.nv:
        q = robot.random_configuration(size=batch or None, seed=seed)
    else:
        q = rng.uniform(-1.0, 1.0, batch + (robot.dof,))
    v, a = rng.uniform(-1.0, 1.0, (2,) + batch + (robot.nv,))
    return q, v, a


CALLS = {  # method name -> (arguments from (q, v, a), result shape from (batch, nv))
    "inverse_dynamics": (lambda q, v, a: (q, v, a), lambda b, n: b + (n,)),
    "forward_dynamics": (lambda q, v, a: (q, v, a), lambda b, n: b + (n,)),
    "mass_matrix": (lambda q, v, a: (q,), lambda b, n: b + (n, n)),
}


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("method", sorted(CALLS))
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_out_is_filled_and_returned(backend, name, method, batch):
    robot = ROBOTS[name]
    args = CALLS[method][0](*_state(robot, batch, seed=len(batch)))
    expected = getattr(robot, method)(*args)
    out = np.full(CALLS[method][1](batch, robot.nv), np.nan)  # NaN: any entry left unwritten shows
    got = getattr(robot, method)(*args, out=out)
    assert got is out
    np.testing.assert_array_equal(out, expected)


DERIVATIVES = {"inverse_dynamics_derivatives": 2, "forward_dynamics_derivatives": 3}


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("method", sorted(DERIVATIVES))
@pytest.mark.parametrize("batch", [(), (4,)])
def test_derivatives_out_is_filled_and_returned(backend, name, method, batch):
    robot = ROBOTS[name]
    q, v, a = _state(robot, batch, seed=7)
    expected = getattr(robot, method)(q, v, a)
    out = tuple(np.full(batch + (robot.nv, robot.nv), np.nan) for _ in range(DERIVATIVES[method]))
    got = getattr(robot, method)(q, v, a, out=out)
    assert len(got) == len(out) and all(g is o for g, o in zip(got, out))
    for o, e in zip(out, expected):
        np.testing.assert_array_equal(o, e)


@pytest.mark.parametrize("name", ["random tree", "solo12 floating"])
def test_derivatives_out_with_external_wrenches_and_bad_outs(name):
    robot = ROBOTS[name]
    q, v, a = _state(robot, (3,), seed=8)
    f_ext = {robot.frame_names[-1]: np.array([1.0, -2.0, 0.5, 0.1, 0.0, -0.3])}
    n = robot.nv
    for method, k in DERIVATIVES.items():
        f = getattr(robot, method)
        out = tuple(np.full((3, n, n), np.nan) for _ in range(k))
        f(q, v[0], a, f_ext=f_ext, out=out)
        for o, e in zip(out, f(q, v[0], a, f_ext=f_ext)):
            np.testing.assert_array_equal(o, e)
        for bad, what in (((out[0],) * k, "share memory"), (out[:-1], f"tuple of {k}"), (out[0], f"tuple of {k}"),
                          ((np.empty((3, n, n + 1)),) + out[1:], "got shape"), (out[:-1] + (v,), "got shape")):
            with pytest.raises(ValueError, match=what):
                f(q, v, a, out=bad)


def test_out_with_external_wrenches_and_broadcast_inputs():
    robot = ROBOTS["random tree"]
    q, v, a = _state(robot, (4,), seed=1)
    f_ext = {robot.model.link_names[-1]: np.array([1.0, -2.0, 0.5, 0.1, 0.0, -0.3])}
    out = np.full((4, robot.dof), np.nan)
    assert robot.inverse_dynamics(q, v[0], a, f_ext=f_ext, out=out) is out
    np.testing.assert_array_equal(out, robot.inverse_dynamics(q, v[0], a, f_ext=f_ext))
    tau = robot.inverse_dynamics(q, v, a)
    assert robot.forward_dynamics(q, v, tau, f_ext=f_ext, out=out) is out
    np.testing.assert_allclose(robot.inverse_dynamics(q, v, out, f_ext=f_ext), tau, atol=1e-9)


def test_out_reused_across_calls_holds_the_latest_result():
    robot = ROBOTS["solo12 floating"]
    out = np.empty((50, robot.nv, robot.nv))
    for seed in (1, 2):
        q = _state(robot, (50,), seed)[0]
        robot.mass_matrix(q, out=out)
        np.testing.assert_array_equal(out, robot.mass_matrix(q))


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_bad_out_is_refused_with_what_is_wrong(name):
    robot = ROBOTS[name]
    q, v, a = _state(robot, (3,), seed=4)
    n = robot.nv
    bad = {
        "got shape": np.empty((3, n + 1)),
        "got dtype float32": np.empty((3, n), dtype=np.float32),
        "not C-contiguous": np.empty((n, 3)).T,
        "read-only": np.broadcast_to(np.empty(n), (3, n)),
        "numpy array": [[0.0] * n] * 3,
        "shares memory": v,
    }
    for what, out in bad.items():
        with pytest.raises(ValueError, match=what):
            robot.inverse_dynamics(q, v, a, out=out)
    with pytest.raises(ValueError, match=r"shape \(3, %d, %d\)" % (n, n)):
        robot.mass_matrix(q, out=np.empty((3, n)))
