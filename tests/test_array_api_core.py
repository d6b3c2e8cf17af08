"""The array-API engine against the Robot's own methods (NumPy, compiled or reference route):
inverse and forward dynamics, mass matrix, bias and gravity torques, on NumPy arrays, torch
tensors and JAX arrays (float64), for bundled robots, random trees, floating robots (free flyer
and planar base), mimic joints, friction and armature; batch = loop; replaced inertial
parameters and joint terms.

The helpers here (``BACKENDS``, ``backend`` fixture, ``cases``, ``state``) serve the other
``test_array_api_*`` files too.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import array_api as aa
from composedyn.testing.pinocchio_oracle import erd_urdf
from composedyn.testing.random_robots import random_urdf

BACKENDS = ("numpy", "torch", "jax")
TOL = 1e-12


class Backend:
    """One array namespace: ``xp``, ``asarray`` (from NumPy, float64) and ``numpy`` (back)."""

    def __init__(self, name: str):
        self.name = name
        if name == "numpy":
            import array_api_compat.numpy as xp

            self.xp, self.asarray, self.numpy = xp, np.asarray, np.asarray
        elif name == "torch":
            import array_api_compat.torch as xp
            import torch

            self.xp = xp
            self.asarray = lambda a: torch.asarray(np.asarray(a, float), dtype=torch.float64)
            self.numpy = lambda t: t.detach().cpu().numpy()
        else:
            import jax.numpy as jnp

            self.xp = jnp
            self.asarray = lambda a: jnp.asarray(np.asarray(a, float), dtype=jnp.float64)
            self.numpy = np.asarray

    def model(self, robot):
        return aa.on(aa.from_robot(robot), self.xp)


@pytest.fixture(params=BACKENDS)
def backend(request):  # parametrized by the tests through ``combos``
    """A :class:`Backend`; for JAX with 64-bit floats enabled for the test and restored after."""
    if request.param != "jax":
        yield Backend(request.param)
        return
    import jax

    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        yield Backend("jax")
    finally:
        jax.config.update("jax_enable_x64", before)


@lru_cache(maxsize=None)
def robot_case(name: str):
    """The robots every test runs on, by name (built once)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bundled robots with implausible inertias warn on load
        if name.endswith(".toml"):
            return cd.load(f"robots/{name}")
        if name == "panda_gripper_mimic":
            return cd.from_urdf(erd_urdf("panda"))
        if name == "solo12_floating":
            return cd.from_urdf(erd_urdf("solo12"), floating=True)
        kind, seed, n = name.split("_")
        urdf = random_urdf(int(seed), int(n), damping=True, friction=True, armature=True)
        if kind == "tree":
            return cd.from_urdf(urdf)
        if kind == "free":
            return cd.from_urdf(urdf, floating=True)
        return cd.from_urdf(urdf, floating="planar")


CASES = ("panda.toml", "puma560.toml", "stanford.toml", "planar3r.toml", "panda_gripper_mimic",
         "solo12_floating", "tree_3_9", "tree_7_14", "free_5_8", "planar_4_6")
JAX_CASES = ("panda_gripper_mimic", "tree_3_9", "free_5_8", "planar_4_6")  # JAX runs op by op: smaller set


def combos(names=CASES, jax=JAX_CASES):
    """(backend, robot) pairs: every robot on NumPy and torch, those also in ``jax`` on JAX."""
    return [(b, n) for b in BACKENDS for n in names if b != "jax" or n in jax]


def state(robot, batch=(5,), seed=0):
    """Random q (*batch, nq), qd and qdd (*batch, nv) (a floating robot's random configurations)."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(batch))
    q = robot.random_configuration(size=count, seed=seed) if robot.floating else rng.normal(size=(count, robot.nq))
    qd, qdd = rng.normal(size=(2, count, robot.nv))
    return q.reshape(batch + (robot.nq,)), qd.reshape(batch + (robot.nv,)), qdd.reshape(batch + (robot.nv,))


def close(a, b, tol=TOL):
    """|a - b| <= tol (1 + |b|) elementwise, with the worst offender in the message."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    err = np.abs(a - b) / (1.0 + np.abs(b))
    assert err.max(initial=0.0) <= tol, f"max relative error {err.max():.3g} > {tol:g}"


@pytest.mark.parametrize("backend,name", combos(), indirect=["backend"])
def test_dynamics_equal_the_robot(backend, name):
    robot = robot_case(name)
    bm = backend.model(robot)
    q, qd, qdd = state(robot)
    x = [backend.asarray(a) for a in (q, qd, qdd)]
    close(backend.numpy(aa.inverse_dynamics(bm, *x)), robot.inverse_dynamics(q, qd, qdd))
    rigid = aa.inverse_dynamics(bm, *x, friction=False)
    close(backend.numpy(rigid), robot.inverse_dynamics(q, qd, qdd, friction=False))
    close(backend.numpy(aa.mass_matrix(bm, x[0])), robot.mass_matrix(q))
    close(backend.numpy(aa.bias_torques(bm, x[0], x[1])), robot.bias_torques(q, qd))
    close(backend.numpy(aa.gravity_torques(bm, x[0])), robot.gravity_torques(q))
    tau = robot.inverse_dynamics(q, qd, qdd)
    # forward dynamics: the Robot's, and the inverse of the Robot's inverse dynamics
    fd = backend.numpy(aa.forward_dynamics(bm, x[0], x[1], backend.asarray(tau)))
    close(fd, robot.forward_dynamics(q, qd, tau), 1e-10)
    close(fd, qdd, 1e-9)
    smooth = backend.numpy(aa.forward_dynamics(bm, x[0], x[1], backend.asarray(tau), smooth_friction=0.05))
    close(smooth, robot.forward_dynamics(q, qd, tau, smooth_friction=0.05), 1e-10)


@pytest.mark.parametrize("backend,name", combos(["tree_3_9", "panda_gripper_mimic", "free_5_8"], jax=["free_5_8"]),
                         indirect=["backend"])
def test_batch_equals_loop(backend, name):
    robot = robot_case(name)
    bm = backend.model(robot)
    q, qd, qdd = state(robot, batch=(2, 3), seed=4)
    batched = backend.numpy(aa.inverse_dynamics(bm, *(backend.asarray(a) for a in (q, qd, qdd))))
    M = backend.numpy(aa.mass_matrix(bm, backend.asarray(q)))
    assert batched.shape == q.shape[:-1] + (robot.nv,) and M.shape == q.shape[:-1] + (robot.nv, robot.nv)
    for i in range(2):
        for j in range(3):
            one = [backend.asarray(a[i, j]) for a in (q, qd, qdd)]
            close(batched[i, j], backend.numpy(aa.inverse_dynamics(bm, *one)), 1e-14)
            close(M[i, j], backend.numpy(aa.mass_matrix(bm, one[0])), 1e-14)
    # a single configuration broadcasts against a batch of rates
    wide = backend.numpy(aa.inverse_dynamics(bm, backend.asarray(q[0, 0]), backend.asarray(qd[0]),
                                             backend.asarray(qdd[0])))
    close(wide, robot.inverse_dynamics(np.broadcast_to(q[0, 0], qd[0].shape[:-1] + q.shape[-1:]), qd[0], qdd[0]))


@pytest.mark.parametrize("backend,name", combos(["tree_7_14", "free_5_8", "panda_gripper_mimic"]),
                         indirect=["backend"])
def test_parameters_and_joint_terms_replace_the_model(backend, name):
    robot = robot_case(name)
    bm = backend.model(robot)
    q, qd, qdd = state(robot, seed=2)
    x = [backend.asarray(a) for a in (q, qd, qdd)]
    pi = robot.inertial_parameters()
    # the model's own parameters reproduce the model
    close(backend.numpy(aa.inverse_dynamics(bm, *x, params=backend.asarray(pi))), robot.inverse_dynamics(q, qd, qdd))
    # other parameters: the Robot of a perturbed description, and the regressor's prediction
    other = robot.perturbed(0.3, seed=5)
    tau = backend.numpy(aa.inverse_dynamics(bm, *x, params=backend.asarray(other.inertial_parameters()),
                                            damping=bm.damping, coulomb=bm.coulomb, armature=bm.armature))
    close(tau, other.inverse_dynamics(q, qd, qdd))
    close(backend.numpy(aa.mass_matrix(bm, x[0], params=backend.asarray(other.inertial_parameters()))),
          other.mass_matrix(q))
    # joint terms: zero friction and armature give the rigid-body torques of the Robot
    zero = backend.asarray(np.zeros(bm.am.nv_full))
    rigid = backend.numpy(aa.inverse_dynamics(bm, *x, damping=zero, coulomb=zero, armature=zero))
    close(rigid, robot.regressor(q, qd, qdd) @ pi, 1e-10)


def test_floating_base_is_a_root_free_flyer():
    """The floating robot's model has one free-flyer joint at the root, no virtual bodies."""
    robot = robot_case("solo12_floating")
    am = aa.from_robot(robot)
    assert am.joints[0].kind == "free_flyer" and (am.joints[0].nq, am.joints[0].nv) == (7, 6)
    assert am.parent[0] == -1 and am.n == 13 and (am.nq, am.nv) == (robot.nq, robot.nv)
    assert am.frame_names == robot.frame_names
    assert aa.from_robot(robot_case("planar_4_6")).joints[0].kind == "planar"


def test_bad_parameters_name_the_robot():
    robot = robot_case("panda.toml")
    bm = aa.on(aa.from_robot(robot), __import__("array_api_compat.numpy").numpy)
    q = np.zeros(robot.nq)
    with pytest.raises(ValueError, match="params must have 10 x 7 bodies"):
        aa.inverse_dynamics(bm, q, q, q, params=np.zeros(69))
    with pytest.raises(ValueError, match="smooth_friction"):
        aa.forward_dynamics(bm, q, q, q, smooth_friction=-1.0)
