"""The array-API joint model against Pinocchio's joint models and Lie groups, finite differences and identities.

Per kind, at random configurations and velocities: the transform, motion subspace and bias equal Pinocchio's
``jdata.M``, ``jdata.S``, ``jdata.c`` after ``jmodel.calc``; integrate, difference, neutral and dIntegrate equal
Pinocchio's on a one-joint model; batched calls equal the loop; torch and JAX (float64) equal NumPy; the bias is
the time derivative of the motion subspace along the motion; the subspace is the derivative of the transform
along ``integrate``; the integrate Jacobian is the derivative of ``difference(q, integrate(q, v + dv))``.
"""

from __future__ import annotations

import array_api_compat
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from composedyn.dynamics.array_api import joints as J
from composedyn.testing.pinocchio_trees import one_joint_model
from pin_oracle import pin

jax.config.update("jax_enable_x64", True)

TOL = 1e-12
XP = array_api_compat.array_namespace(np.zeros(1))
SAMPLES = 6


def _joint(kind: str, rng: np.random.Generator) -> J.Joint:
    a1 = rng.normal(size=3)
    a1 /= np.linalg.norm(a1)
    a2 = np.cross(a1, rng.normal(size=3))
    return J.make_joint(f"{kind}_joint", kind, 0, 0, axis=a1, axis2=a2, pitch=float(rng.uniform(-0.3, 0.3)))


def _samples(joint: J.Joint, rng: np.random.Generator, n: int = SAMPLES):
    """Random (q, v, q1) triples; velocities of order 1 with rotations below π."""
    out = []
    for _ in range(n):
        q = J.random_configuration(joint, rng)
        v = rng.uniform(-1.5, 1.5, size=joint.nv)
        out.append((q, v, J.random_configuration(joint, rng)))
    return out


def _pin_calc(joint: J.Joint, q: np.ndarray, v: np.ndarray):
    jm = one_joint_model(joint).joints[1]  # the generic joint model: its data converts every kind's c and S
    jd = jm.createData()
    jm.calc(jd, q, v)
    return jd


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _same_configuration(joint: J.Joint, qa: np.ndarray, qb: np.ndarray) -> float:
    """Distance between two configurations as transforms (a quaternion and its negative are one rotation)."""
    ra, pa = J.joint_transform(XP, joint, qa)
    rb, pb = J.joint_transform(XP, joint, qb)
    return max(_rel(ra, rb), _rel(pa, pb))


@pytest.mark.parametrize("kind", J.KINDS)
def test_kinematics_equal_pinocchio(kind):
    rng = np.random.default_rng(11)
    joint = _joint(kind, rng)
    for q, v, _ in _samples(joint, rng):
        jd = _pin_calc(joint, q, v)
        rot, p = J.joint_transform(XP, joint, q)
        assert _rel(rot, jd.M.rotation) < TOL
        assert _rel(p, jd.M.translation) < TOL
        s = J.motion_subspace(XP, joint, q)
        assert s.shape == (6, joint.nv)
        assert _rel(s, np.asarray(jd.S).reshape(6, joint.nv)) < TOL
        assert _rel(J.bias(XP, joint, q, v), np.asarray(jd.c)) < TOL
        assert _rel(s @ v, np.asarray(jd.v)) < TOL


@pytest.mark.parametrize("kind", J.KINDS)
def test_configuration_space_equals_pinocchio(kind):
    rng = np.random.default_rng(12)
    joint = _joint(kind, rng)
    model = one_joint_model(joint)
    assert model.nq == joint.nq and model.nv == joint.nv
    assert np.array_equal(J.neutral(joint), pin.neutral(model))
    for q, v, q1 in _samples(joint, rng):
        assert _rel(J.integrate(XP, joint, q, v), pin.integrate(model, q, v)) < TOL
        assert _rel(J.difference(XP, joint, q, q1), pin.difference(model, q, q1)) < TOL
        assert _rel(J.integrate_jacobian(XP, joint, q, v), pin.dIntegrate(model, q, v, pin.ArgumentPosition.ARG1)) < TOL


@pytest.mark.parametrize("kind", ["spherical", "planar", "free_flyer"])
@pytest.mark.parametrize("scale", [1e-9, 1e-3, 0.49, 0.51, 3.0])
def test_lie_group_near_and_far_from_zero(kind, scale):
    """Across the switch between series and closed forms (squared angle 0.25) and at large angles."""
    rng = np.random.default_rng(13)
    joint = _joint(kind, rng)
    model = one_joint_model(joint)
    q = J.random_configuration(joint, rng)
    v = rng.normal(size=joint.nv)
    v = v * (scale / np.linalg.norm(v[-3:] if kind != "planar" else v[-1:]))
    assert _rel(J.integrate(XP, joint, q, v), pin.integrate(model, q, v)) < TOL
    q1 = pin.integrate(model, q, v)
    assert _rel(J.difference(XP, joint, q, q1), v) < 1e-9
    jac = J.integrate_jacobian(XP, joint, q, v)
    # Pinocchio's closed form of beta'(t)/t in Jexp6 cancels catastrophically near t = 1e-3 (an error of about 30
    # in a coefficient of order 3e-3, damped by factors of t): there it agrees to 1e-10; finite differences decide
    tol = 1e-10 if scale == 1e-3 else TOL
    assert _rel(jac, pin.dIntegrate(model, q, v, pin.ArgumentPosition.ARG1)) < tol
    assert _rel(jac, _integrate_jacobian_fd(joint, q, v)) < 1e-8


@pytest.mark.parametrize("kind", J.KINDS)
def test_integrate_difference_identities(kind):
    rng = np.random.default_rng(14)
    joint = _joint(kind, rng)
    for q, v, q1 in _samples(joint, rng):
        assert _rel(J.difference(XP, joint, q, J.integrate(XP, joint, q, v)), v) < 1e-10
        assert _same_configuration(joint, J.integrate(XP, joint, q, J.difference(XP, joint, q, q1)), q1) < 1e-10
        assert np.max(np.abs(J.difference(XP, joint, q, q))) < 1e-14


@pytest.mark.parametrize("kind", J.KINDS)
def test_subspace_and_bias_are_derivatives_along_integrate(kind):
    """S v is the child's velocity relative to the parent (child frame), dS/dt and c = dS/dt v, by central
    differences along q(t) = integrate(q, t v)."""
    rng = np.random.default_rng(15)
    joint = _joint(kind, rng)
    h = 1e-5
    for q, v, _ in _samples(joint, rng, 4):
        qp, qm = J.integrate(XP, joint, q, h * v), J.integrate(XP, joint, q, -h * v)
        (rp, pp), (rm, pm) = J.joint_transform(XP, joint, qp), J.joint_transform(XP, joint, qm)
        rot, _ = J.joint_transform(XP, joint, q)
        rdot, pdot = (rp - rm) / (2 * h), (pp - pm) / (2 * h)
        w_hat = rot.T @ rdot
        twist = np.concatenate((rot.T @ pdot, [w_hat[2, 1], w_hat[0, 2], w_hat[1, 0]]))
        assert _rel(J.motion_subspace(XP, joint, q) @ v, twist) < 1e-8
        sdot = (J.motion_subspace(XP, joint, qp) - J.motion_subspace(XP, joint, qm)) / (2 * h)
        assert _rel(J.motion_subspace_derivative(XP, joint, q, v), sdot) < 1e-8
        assert _rel(J.bias(XP, joint, q, v), sdot @ v) < 1e-8
        assert _rel(J.bias(XP, joint, q, v), J.motion_subspace_derivative(XP, joint, q, v) @ v) < 1e-14


@pytest.mark.parametrize("kind", ["spherical", "planar", "free_flyer", "universal"])
def test_integrate_jacobian_by_finite_differences(kind):
    rng = np.random.default_rng(16)
    joint = _joint(kind, rng)
    for q, v, _ in _samples(joint, rng, 3):
        assert _rel(J.integrate_jacobian(XP, joint, q, v), _integrate_jacobian_fd(joint, q, v)) < 1e-8


def _integrate_jacobian_fd(joint: J.Joint, q: np.ndarray, v: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d integrate(q, v) / dv in the tangent space at integrate(q, v), by central differences of difference."""
    base = J.integrate(XP, joint, q, v)
    cols = []
    for k in range(joint.nv):
        dv = np.zeros(joint.nv)
        dv[k] = h
        plus = J.difference(XP, joint, base, J.integrate(XP, joint, q, v + dv))
        minus = J.difference(XP, joint, base, J.integrate(XP, joint, q, v - dv))
        cols.append((plus - minus) / (2 * h))
    return np.stack(cols, axis=-1)


def _all_functions(xp, joint, q, v, q1):
    rot, p = J.joint_transform(xp, joint, q)
    return {
        "R": rot,
        "p": p,
        "S": J.motion_subspace(xp, joint, q),
        "c": J.bias(xp, joint, q, v),
        "dS": J.motion_subspace_derivative(xp, joint, q, v),
        "integrate": J.integrate(xp, joint, q, v),
        "difference": J.difference(xp, joint, q, q1),
        "jacobian": J.integrate_jacobian(xp, joint, q, v),
    }


@pytest.mark.parametrize("kind", J.KINDS)
def test_batch_equals_loop(kind):
    rng = np.random.default_rng(17)
    joint = _joint(kind, rng)
    qs, vs, q1s = (np.stack(a) for a in zip(*_samples(joint, rng), strict=True))
    loop = [_all_functions(XP, joint, qs[k], vs[k], q1s[k]) for k in range(SAMPLES)]
    batch = _all_functions(XP, joint, qs.reshape(2, 3, -1), vs.reshape(2, 3, -1), q1s.reshape(2, 3, -1))
    for key, value in batch.items():
        assert value.shape[:2] == (2, 3), key
        expected = np.stack([out[key] for out in loop]).reshape(value.shape)
        assert _rel(value, expected) < 1e-14, key
    # one configuration, many velocities: the batch axes broadcast
    c = J.bias(XP, joint, qs[0], vs)
    assert c.shape == (SAMPLES, 6)
    assert _rel(c, np.stack([J.bias(XP, joint, qs[0], v) for v in vs])) < 1e-14


@pytest.mark.parametrize("backend", ["torch", "jax"])
@pytest.mark.parametrize("kind", J.KINDS)
def test_torch_and_jax_equal_numpy(kind, backend):
    rng = np.random.default_rng(18)
    joint = _joint(kind, rng)
    qs, vs, q1s = (np.stack(a) for a in zip(*_samples(joint, rng, 4), strict=True))
    to = (lambda a: torch.asarray(a, dtype=torch.float64)) if backend == "torch" else jnp.asarray
    xp = array_api_compat.array_namespace(to(qs))
    got = _all_functions(xp, joint, to(qs), to(vs), to(q1s))
    expected = _all_functions(XP, joint, qs, vs, q1s)
    for key, value in got.items():
        assert array_api_compat.array_namespace(value) is xp, key
        assert value.dtype == to(qs).dtype, key
        assert _rel(np.asarray(value), expected[key]) < 1e-14, key


@pytest.mark.parametrize("kind", ["spherical", "planar", "free_flyer"])
def test_gradients_at_zero_velocity(kind):
    """Autodiff through integrate at v = 0 and difference at q1 = q0 (the series branches) gives finite, correct
    derivatives."""
    rng = np.random.default_rng(19)
    joint = _joint(kind, rng)
    q = torch.asarray(J.random_configuration(joint, rng), dtype=torch.float64)
    xp = array_api_compat.array_namespace(q)
    v0 = torch.zeros(joint.nv, dtype=torch.float64)
    auto = torch.autograd.functional.jacobian(lambda v: J.integrate(xp, joint, q, v), v0)
    h = 1e-6
    eye = np.eye(joint.nv)
    fd = np.stack(
        [
            (J.integrate(XP, joint, q.numpy(), h * eye[k]) - J.integrate(XP, joint, q.numpy(), -h * eye[k])) / (2 * h)
            for k in range(joint.nv)
        ],
        axis=-1,
    )
    assert torch.all(torch.isfinite(auto))
    assert _rel(auto.numpy(), fd) < 1e-8
    qj = jnp.asarray(q.numpy())
    jac = jax.jacfwd(lambda v: J.integrate_jacobian(jnp, joint, qj, v))(jnp.zeros(joint.nv))
    assert bool(jnp.all(jnp.isfinite(jac)))
    # the derivative of difference(q, q1) at q1 = q is the inverse of d integrate / dv at v = 0 (coordinates)
    d_diff = jax.jacfwd(lambda q1: J.difference(jnp, joint, qj, q1))(qj)
    assert _rel(np.asarray(d_diff) @ auto.numpy(), np.eye(joint.nv)) < 1e-12


@pytest.mark.parametrize("kind", J.KINDS)
def test_torch_gradcheck(kind):
    """Autograd through every joint function equals finite differences (torch.autograd.gradcheck)."""
    rng = np.random.default_rng(23)
    joint = _joint(kind, rng)
    q, v, q1 = (torch.asarray(x, dtype=torch.float64, requires_grad=True) for x in _samples(joint, rng, 1)[0])
    xp = array_api_compat.array_namespace(q)

    def everything(q, v, q1):
        rot, p = J.joint_transform(xp, joint, q)
        return (
            rot,
            p,
            J.motion_subspace(xp, joint, q),
            J.motion_subspace_derivative(xp, joint, q, v),
            J.bias(xp, joint, q, v),
            J.integrate(xp, joint, q, v),
            J.difference(xp, joint, q, q1),
            J.integrate_jacobian(xp, joint, q, v),
        )

    assert torch.autograd.gradcheck(everything, (q, v, q1))


def test_jit_and_vmap():
    rng = np.random.default_rng(20)
    joint = _joint("free_flyer", rng)
    qs, vs, _ = (np.stack(a) for a in zip(*_samples(joint, rng, 4), strict=True))
    f = jax.jit(jax.vmap(lambda q, v: J.integrate(jnp, joint, q, v)))
    assert _rel(np.asarray(f(jnp.asarray(qs), jnp.asarray(vs))), J.integrate(XP, joint, qs, vs)) < 1e-14


@pytest.mark.parametrize("kind", J.KINDS)
def test_random_configuration(kind):
    rng = np.random.default_rng(21)
    joint = _joint(kind, rng)
    for _ in range(20):
        q = J.random_configuration(joint, rng)
        assert q.shape == (joint.nq,)
        rot, _ = J.joint_transform(XP, joint, q)
        assert _rel(rot.T @ rot, np.eye(3)) < 1e-14
    if kind in ("revolute", "prismatic", "helical", "universal"):
        lower, upper = np.full(joint.nq, -0.1), np.full(joint.nq, 0.2)
        qs = np.stack([J.random_configuration(joint, rng, lower, upper) for _ in range(50)])
        assert np.all(qs >= lower) and np.all(qs <= upper)
    if kind in ("planar", "free_flyer"):
        k = 2 if kind == "planar" else 3  # the translation coordinates; the rotation is uniform
        lower, upper = np.full(joint.nq, -0.1), np.full(joint.nq, 0.2)
        qs = np.stack([J.random_configuration(joint, rng, lower, upper) for _ in range(50)])
        assert np.all(qs[:, :k] >= -0.1) and np.all(qs[:, :k] <= 0.2)
        assert np.ptp(qs[:, k:], axis=0).min() > 0.5


def test_continuous_is_the_angle_of_pinocchios_unbounded_revolute():
    rng = np.random.default_rng(22)
    for axis, unbounded in (
        ((1, 0, 0), pin.JointModelRUBX()),
        ((0, 1, 0), pin.JointModelRUBY()),
        ((0, 0, 1), pin.JointModelRUBZ()),
    ):
        joint = J.make_joint("wheel", "continuous", 0, 0, axis=axis)
        model = pin.Model()
        model.addJoint(0, unbounded, pin.SE3.Identity(), "wheel")
        jm = model.joints[1]
        jd = jm.createData()
        for angle in rng.uniform(-7.0, 7.0, size=3):
            jm.calc(jd, np.array([np.cos(angle), np.sin(angle)]))
            rot, p = J.joint_transform(XP, joint, np.array([angle]))
            assert _rel(rot, jd.M.rotation) < TOL and _rel(p, jd.M.translation) < TOL


def test_make_joint_errors_name_the_joint():
    with pytest.raises(ValueError, match="'hip'.*unknown joint kind 'ball'"):
        J.make_joint("hip", "ball", 0, 0)
    with pytest.raises(ValueError, match="'knee'.*zero vector"):
        J.make_joint("knee", "revolute", 0, 0, axis=(0, 0, 0))
    with pytest.raises(ValueError, match="'wrist'.*3 finite numbers"):
        J.make_joint("wrist", "prismatic", 0, 0, axis=(0, float("nan"), 1))
    with pytest.raises(ValueError, match="'base'.*7 entries"):
        J.random_configuration(J.make_joint("base", "free_flyer", 0, 0), np.random.default_rng(0), np.zeros(3), None)
    with pytest.raises(ValueError, match="'cardan'.*parallel"):
        J.make_joint("cardan", "universal", 0, 0, axis=(0, 0, 1), axis2=(0, 0, -3))
    joint = J.make_joint("screw", "helical", 3, 2, axis=(0, 0, 2), pitch=0.01)
    assert (joint.nq, joint.nv, joint.idx_q, joint.idx_v, joint.axis) == (1, 1, 3, 2, (0.0, 0.0, 1.0))
    assert [J.make_joint("j", k, 0, 0).nq for k in J.KINDS] == [1, 1, 1, 1, 2, 4, 4, 7]
    assert [J.make_joint("j", k, 0, 0).nv for k in J.KINDS] == [1, 1, 1, 1, 2, 3, 3, 6]
