"""Floating-base dynamics derivatives on the configuration group, and the error-state linearisation.

Oracles: Pinocchio's computeRNEADerivatives / computeABADerivatives with a
free flyer (``buildModelFromUrdf(path, JointModelFreeFlyer())``) on Solo12,
Talos and random trees, and with the URDF's own planar root joint (friction
off); central finite differences on the group (q ⊕ ±h e_k via
``robot.integrate``) of composedyn's own inverse and forward dynamics with
viscous and smoothed Coulomb friction and with external wrenches; finite differences of the simulated
flow (``cd.simulate``) for ``linearize``; batches equal loops of single samples.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.array_api.model import from_robot
from pin_oracle import FreeFlyerPair, erd_urdf, pin, rel_err
from random_robots import random_urdf

TOL_PIN = 1e-8


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(seed=seed), rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def _pinocchio(pp, q, v, a, tau):
    """Pinocchio's (dtau_dq, dtau_dv) at (q, v, a) and (ddq_dq, ddq_dv, Minv) at (q, v, tau), its order."""
    m, d = pp.model, pp.data
    pin.computeRNEADerivatives(m, d, pp.q(q), pp.v(v), pp.v(a))
    tq, tv = d.dtau_dq.copy(), d.dtau_dv.copy()
    pin.computeABADerivatives(m, d, pp.q(q), pp.v(v), pp.v(tau))
    Minv = np.triu(d.Minv) + np.triu(d.Minv, 1).T
    return tq, tv, d.ddq_dq.copy(), d.ddq_dv.copy(), Minv


def _check_pinocchio(robot, pp, seeds):
    """Batched derivatives (friction off) against Pinocchio sample by sample."""
    samples = [_state(robot, s) for s in seeds]
    Q, V, A = (np.stack(x) for x in zip(*samples))
    TAU = robot.inverse_dynamics(Q, V, A, friction=False)
    dq, dv = robot.inverse_dynamics_derivatives(Q, V, A, friction=False)
    fq, fv, Minv = robot.forward_dynamics_derivatives(Q, V, TAU, friction=False)
    for k in range(len(seeds)):
        refs = _pinocchio(pp, Q[k], V[k], A[k], TAU[k])
        for name, mine, ref in zip(("dtau_dq", "dtau_dv", "ddq_dq", "ddq_dv", "Minv"), (dq, dv, fq, fv, Minv), refs):
            err = rel_err(pp.mat(mine[k]), ref)
            assert err < TOL_PIN, (name, k, err)


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cd.load(path, floating=True)


@pytest.mark.parametrize("key", ["solo12", "talos"])
def test_vendor_robots_match_pinocchio_free_flyer(key):
    path = erd_urdf(key)
    robot = _load(path)
    _check_pinocchio(robot, FreeFlyerPair(robot, path, pin.JointModelFreeFlyer()), (0, 1, 2))


@pytest.mark.parametrize("seed", range(5))
def test_random_floating_trees_match_pinocchio(seed):
    xml = random_urdf(seed, 2 + 3 * seed, p_fixed=0.3)
    robot = cd.from_urdf(xml, floating=True)
    _check_pinocchio(robot, FreeFlyerPair(robot, xml, pin.JointModelFreeFlyer()), (seed, seed + 10))


def _rooted(xml: str, kind: str) -> str:
    """The random tree's URDF with a world link and a floating or planar root joint (turned origin)."""
    joint = (f'<link name="world"/><joint name="base_joint" type="{kind}"><parent link="world"/>'
             '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint>')
    return xml.replace("</robot>", joint + "</robot>")


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_urdf_root_joint_matches_pinocchio(kind):
    xml = _rooted(random_urdf(4, 6, p_fixed=0.3), kind)
    robot = cd.from_urdf(xml)
    assert robot.base.kind == ("free" if kind == "floating" else "planar")
    _check_pinocchio(robot, FreeFlyerPair(robot, xml), (3, 4))


def _group_central(robot, fun, q, h=1e-6):
    """d fun(q ⊕ dq) / d dq (m, nv) by central differences on the group."""
    cols = []
    for k in range(robot.nv):
        e = np.zeros(robot.nv)
        e[k] = h
        cols.append((fun(robot.integrate(q, e)) - fun(robot.integrate(q, -e))) / (2 * h))
    return np.stack(cols, -1)


def _central(fun, x, h=1e-6):
    cols = []
    for k in range(x.shape[0]):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((fun(x + e) - fun(x - e)) / (2 * h))
    return np.stack(cols, -1)


@pytest.mark.parametrize(("kind", "smooth"), [("floating", None), ("floating", 0.3), ("planar", 0.3)])
def test_derivatives_match_group_finite_differences_with_friction(kind, smooth):
    xml = _rooted(random_urdf(7, 7, p_fixed=0.2, damping=True, friction=smooth is not None, armature=True), kind)
    robot = cd.from_urdf(xml)
    tree = from_robot(robot)  # the joint terms per velocity coordinate (the base's six or three first)
    assert tree.damping.shape == tree.coulomb.shape == (robot.nv,) and tree.damping.any()
    q, v, a = _state(robot, 3)
    kw = {"smooth_friction": smooth}
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, **kw)

    def inverse(y, w=v):
        """The inverse dynamics differentiated: with ``smooth`` its tanh-Coulomb form
        M a + h + damping v + friction tanh(v / smooth) (the joints' only: the base has none)."""
        if smooth is None:
            return robot.inverse_dynamics(y, w, a)
        return robot.inverse_dynamics(y, w, a, friction=False) + tree.damping * w + tree.coulomb * np.tanh(w / smooth)

    if smooth is not None:
        assert np.abs(tree.coulomb).max() > 1e-3 and not tree.coulomb[:robot.base.nv].any()
    assert rel_err(dq, _group_central(robot, inverse, q)) < 1e-6
    assert rel_err(dv, _central(lambda w: inverse(q, w), v)) < 1e-6
    tau = inverse(q)
    fq, fv, Minv = robot.forward_dynamics_derivatives(q, v, tau, **kw)
    assert rel_err(fq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, **kw), q)) < 1e-6
    assert rel_err(fv, _central(lambda w: robot.forward_dynamics(q, w, tau, **kw), v)) < 1e-6
    assert rel_err(Minv, _central(lambda t: robot.forward_dynamics(q, v, t, **kw), tau)) < 1e-6


def _flow(robot, q, v, tau, dt, **kw):
    sim = cd.simulate(robot, q, v, [0.0, dt], torque=tau, rtol=1e-12, atol=1e-13, **kw)
    return sim.q[-1], sim.qd[-1]


def _flow_jacobian(robot, q, v, tau, dt, h=1e-5, **kw):
    """d (δq, δv)(dt) / d (δq, δv)(0) of the simulated flow, δq(dt) = difference(q_ref(dt), q(dt))."""
    qr, vr = _flow(robot, q, v, tau, dt, **kw)
    n, cols = robot.nv, []
    for k in range(2 * n):
        out = []
        for s in (h, -h):
            e = np.zeros(2 * n)
            e[k] = s
            q1, v1 = _flow(robot, robot.integrate(q, e[:n]), v + e[n:], tau, dt, **kw)
            out.append(np.concatenate([robot.difference(qr, q1), v1 - vr]))
        cols.append((out[0] - out[1]) / (2 * h))
    return np.stack(cols, -1)


def _damped_floating(seed, n, kind="floating"):
    return cd.from_urdf(_rooted(random_urdf(seed, n, p_fixed=0.2, damping=True), kind))


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_linearize_discrete_is_the_flow_jacobian_at_an_equilibrium(kind):
    """v = 0 and tau = the gravity-holding forces (base wrench included) is an equilibrium:
    the zero-order-hold pair is the Jacobian of the simulated flow in the error state."""
    robot = _damped_floating(5, 3, kind)
    q, dt = robot.random_configuration(seed=2), 0.05
    v, tau = np.zeros(robot.nv), robot.gravity_torques(robot.random_configuration(seed=2))
    Ad, Bd = robot.linearize(q, v, tau, dt=dt)
    assert rel_err(Ad, _flow_jacobian(robot, q, v, tau, dt)) < 1e-6
    B = _central(lambda u: np.concatenate([robot.difference(q, _flow(robot, q, v, u, dt)[0]),
                                           _flow(robot, q, v, u, dt)[1]]), tau, h=1e-5)
    assert rel_err(Bd, B) < 1e-6


def test_linearize_agrees_with_the_flow_to_second_order_in_flight():
    """Away from an equilibrium (a spinning, drifting body under joint torques) the ZOH pair
    differs from the flow Jacobian by O(dt²): halving dt divides the error by about 4; the
    continuous A without the -ad_v block would leave an O(dt) error."""
    robot = _damped_floating(6, 3)
    q, v, _ = _state(robot, 4)
    v[:6] *= 2.0
    tau = np.r_[np.zeros(6), np.random.default_rng(4).normal(size=robot.nv - 6)]
    errs = []
    for dt in (0.02, 0.01):
        Ad, _ = robot.linearize(q, v, tau, dt=dt)
        errs.append(np.abs(Ad - _flow_jacobian(robot, q, v, tau, dt)).max())
    assert 3.0 < errs[0] / errs[1] < 5.0, errs
    A, B = robot.linearize(q, v, tau)
    n = robot.nv
    assert np.abs(A[:n, n:] - np.eye(n)).max() == 0 and np.abs(B[:n]).max() == 0
    assert rel_err(B[n:], robot.forward_dynamics_derivatives(q, v, tau)[2]) < 1e-15


def test_batches_broadcast_and_equal_loops():
    robot = _damped_floating(8, 4)
    Q = robot.random_configuration(size=(2, 3), seed=1)
    rng = np.random.default_rng(2)
    V, A = rng.normal(size=(2, 3, robot.nv)), rng.normal(size=(3, robot.nv))  # A broadcasts over the first axis
    dq, dv = robot.inverse_dynamics_derivatives(Q, V, A)
    fq, fv, Minv = robot.forward_dynamics_derivatives(Q, V, A)
    La, Lb = robot.linearize(Q, V, A, dt=0.01)
    assert dq.shape == dv.shape == fq.shape == Minv.shape == (2, 3, robot.nv, robot.nv)
    assert La.shape == (2, 3, 2 * robot.nv, 2 * robot.nv) and Lb.shape == (2, 3, 2 * robot.nv, robot.nv)
    for i in range(2):
        for j in range(3):
            one = robot.inverse_dynamics_derivatives(Q[i, j], V[i, j], A[j])
            assert rel_err(dq[i, j], one[0]) < 1e-13 and rel_err(dv[i, j], one[1]) < 1e-13
            one = robot.forward_dynamics_derivatives(Q[i, j], V[i, j], A[j])
            for mine, ref in zip((fq, fv, Minv), one):
                assert rel_err(mine[i, j], ref) < 1e-13
            a1, b1 = robot.linearize(Q[i, j], V[i, j], A[j], dt=0.01)
            assert rel_err(La[i, j], a1) < 1e-13 and rel_err(Lb[i, j], b1) < 1e-13


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_external_wrenches_fixed_in_world_axes_match_group_finite_differences(kind):
    """Wrenches fixed in world axes turn in base axes when the base turns: the base columns."""
    robot = cd.from_urdf(_rooted(random_urdf(9, 5, p_fixed=0.2, damping=True), kind))
    q, v, a = _state(robot, 5)
    rng = np.random.default_rng(5)
    f_ext = {robot.frame_names[0]: rng.normal(size=6) * 5, robot.frame_names[-1]: rng.normal(size=6) * 5}
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, f_ext=f_ext)
    assert rel_err(dq, _group_central(robot, lambda y: robot.inverse_dynamics(y, v, a, f_ext=f_ext), q)) < 1e-6
    assert rel_err(dv, _central(lambda w: robot.inverse_dynamics(q, w, a, f_ext=f_ext), v)) < 1e-6
    free = robot.inverse_dynamics_derivatives(q, v, a)[0]
    assert np.abs(dq - free)[:, :robot.base.nv].max() > 1e-3  # the wrenches' base columns are not zero
    tau = robot.inverse_dynamics(q, v, a)
    fq, fv, Minv = robot.forward_dynamics_derivatives(q, v, tau, f_ext=f_ext)
    assert rel_err(fq, _group_central(robot, lambda y: robot.forward_dynamics(y, v, tau, f_ext=f_ext), q)) < 1e-6
    assert rel_err(fv, _central(lambda w: robot.forward_dynamics(q, w, tau, f_ext=f_ext), v)) < 1e-6
    A, _ = robot.linearize(q, v, tau, f_ext=f_ext)
    assert rel_err(A[robot.nv:, :robot.nv], fq) < 1e-15


def test_bad_input_one_clear_error():
    robot = _damped_floating(8, 3)
    q, v, a = _state(robot, 0)
    with pytest.raises(ValueError, match="f_ext"):
        robot.inverse_dynamics_derivatives(q, v, a, f_ext={robot.frame_names[0]: np.ones(5)})
    with pytest.raises(ValueError, match="q"):
        robot.forward_dynamics_derivatives(q[:-1], v, a)
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        robot.inverse_dynamics_derivatives(bad, v, a)
    with pytest.raises(ValueError, match="dt"):
        robot.linearize(q, v, a, dt=-1.0)
    nan = v.copy()
    nan[-1] = np.nan
    for call in (robot.inverse_dynamics_derivatives, robot.forward_dynamics_derivatives, robot.linearize):
        for args in ((q, nan, a), (np.stack([q, q]), np.stack([v, nan]), a)):  # one sample, a batch
            with pytest.raises(ValueError, match="v contains NaN"):
                call(*args)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_compiled_equals_numpy_backend(kind):
    """The compiled entries (one sample) and loops (batches) against the NumPy path of the same formulas."""
    from composedyn.dynamics import dispatch

    robot = cd.from_urdf(_rooted(random_urdf(3, 6, damping=True, friction=True), kind))
    rng = np.random.default_rng(0)
    q, Q = robot.random_configuration(seed=1), robot.random_configuration(size=4, seed=2)
    v, a = rng.normal(size=(2, robot.nv))
    V, A = rng.normal(size=(2, 4, robot.nv))
    calls = [(q, v, a), (Q, V, A), (q, V, a)]
    fast = [(robot.inverse_dynamics_derivatives(*x, smooth_friction=0.2),
             robot.forward_dynamics_derivatives(*x, smooth_friction=0.2)) for x in calls]
    dispatch.set_backend("numpy")
    try:
        slow = [(robot.inverse_dynamics_derivatives(*x, smooth_friction=0.2),
                 robot.forward_dynamics_derivatives(*x, smooth_friction=0.2)) for x in calls]
    finally:
        dispatch.set_backend("auto")
    for f, s in zip(fast, slow):
        for mine, ref in zip(f[0] + f[1], s[0] + s[1]):
            assert mine.shape == ref.shape and rel_err(mine, ref) < 1e-12


def test_lqr_holds_a_fully_actuated_floating_base():
    """LQR on the error-state linearisation (base wrench as an input, as a thrust-vectored
    body): stable poles, and the simulated closed loop returns from q_ref ⊕ δq to q_ref."""
    robot = _damped_floating(4, 3)
    q_ref = robot.random_configuration(seed=6)
    n = robot.nv
    lqr = cd.LQRController(robot, q_ref, Q=np.r_[np.full(n, 100.0), np.ones(n)], R=0.1)
    assert lqr.K.shape == (n, 2 * n) and lqr.poles.real.max() < 0
    dq0 = np.random.default_rng(6).normal(size=n) * 0.05
    q0 = robot.integrate(q_ref, dq0)
    t = np.linspace(0.0, 5.0, 11)
    sim = cd.simulate(robot, q0, np.zeros(n), t, torque=lqr, reference=lqr.reference)
    err = [np.abs(robot.difference(q_ref, q)).max() for q in sim.q]
    assert err[0] > 0.01 and err[-1] < 1e-3 * err[0], err
    assert rel_err(lqr(q_ref, np.zeros(n)), robot.gravity_torques(q_ref)) < 1e-12
    # the closed loop follows its linearisation to first order in the perturbation
    from scipy.linalg import expm

    for scale in (1.0, 0.5):
        x0 = np.r_[dq0 * 0.2 * scale, np.zeros(n)]
        sim = cd.simulate(robot, robot.integrate(q_ref, x0[:n]), np.zeros(n), [0.0, 0.5], torque=lqr,
                          reference=lqr.reference, rtol=1e-11, atol=1e-12)
        x = np.r_[robot.difference(q_ref, sim.q[-1]), sim.qd[-1]]
        lin = expm((lqr.A - lqr.B @ lqr.K) * 0.5) @ x0
        assert np.abs(x - lin).max() < 0.02 * np.abs(lin).max() * scale, (scale, np.abs(x - lin).max())
