"""Analytical dynamics derivatives, linearisation and LQR.

Oracles: Pinocchio's computeRNEADerivatives / computeABADerivatives on vendor
URDFs (example-robot-data) and random trees (friction off; armature set in
Pinocchio's model from the XML); central finite differences of composedyn's
own inverse and forward dynamics with friction on (viscous, smoothed Coulomb),
with external wrenches, and with dependent mimic joints; finite differences
of the simulated flow for ``linearize``; the compiled kernel against the NumPy
reference; broadcasting of batches.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.reference.derivatives import external_terms, forward_dynamics_derivatives, rnea_derivatives
from composedyn.dynamics.reference.friction import friction_torques
from composedyn.dynamics.reference.kinematics import body_poses
from pin_oracle import PinPair, erd_urdf, pin, rel_err
from random_robots import FIXED_SEEDS, random_urdf

TOL_PIN = 1e-8


def load(urdf: str, mimic: str = "independent") -> cd.Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(urdf, mimic=mimic)


def pin_pair(robot: cd.Robot, urdf: str) -> PinPair:
    """Pinocchio model of ``urdf`` with the non-standard ``<dynamics armature>`` copied in."""
    pp = PinPair(robot, urdf)
    root = ET.fromstring(urdf) if urdf.lstrip().startswith("<") else ET.parse(urdf).getroot()
    arm = {j.get("name"): float(j.find("dynamics").get("armature", 0.0))
           for j in root.iter("joint") if j.find("dynamics") is not None}
    pp.model.armature = np.array([arm.get(nm, 0.0) for nm in pp.names])
    pp.data = pp.model.createData()
    return pp


def central(fun, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian d fun / d x (m, n) of fun: (n,) -> (m,)."""
    cols = []
    for j in range(x.shape[0]):
        e = np.zeros_like(x)
        e[j] = eps
        cols.append((fun(x + e) - fun(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


def check_pinocchio(robot: cd.Robot, pp: PinPair, rng: np.random.Generator, k: int = 3) -> None:
    n = robot.dof
    Q, QD, X = rng.uniform(-1.5, 1.5, (3, k, n))
    dq, dqd = robot.inverse_dynamics_derivatives(Q, QD, X, friction=False)
    rq, rqd = rnea_derivatives(robot.model, Q, QD, X)  # the NumPy reference too, whatever the backend
    fq, fqd, Minv = robot.forward_dynamics_derivatives(Q, QD, X, friction=False)
    m, d = pp.model, pp.data
    for s in range(k):
        qp, vp, xp = pp.q(Q[s]), pp.v(QD[s]), pp.v(X[s])
        pin.computeRNEADerivatives(m, d, qp, vp, xp)
        tq, tv = d.dtau_dq.copy(), d.dtau_dv.copy()
        pin.computeABADerivatives(m, d, qp, vp, xp)
        aq, av = d.ddq_dq.copy(), d.ddq_dv.copy()
        Mi = np.triu(d.Minv) + np.triu(d.Minv, 1).T
        for name, mine, ref in (("dtau_dq", dq, tq), ("dtau_dqd", dqd, tv), ("ref dtau_dq", rq, tq),
                                ("ref dtau_dqd", rqd, tv), ("dqdd_dq", fq, aq), ("dqdd_dqd", fqd, av),
                                ("Minv", Minv, Mi)):
            err = rel_err(pp.mat(mine[s]), ref)
            assert err < TOL_PIN, (name, s, err)


@pytest.mark.parametrize("key", ["ur5", "panda", "talos", "double_pendulum"])
def test_vendor_urdfs_match_pinocchio(key):
    urdf = erd_urdf(key)
    robot = load(urdf)
    check_pinocchio(robot, pin_pair(robot, urdf), np.random.default_rng(1))


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_random_trees_match_pinocchio(seed, n):
    xml = random_urdf(seed, n, armature=seed % 2 == 1)
    robot = load(xml)
    check_pinocchio(robot, pin_pair(robot, xml), np.random.default_rng(seed))


def test_pinocchio_batch_loop_numpy_backend():
    """The NumPy backend of the facade agrees with Pinocchio too."""
    xml = random_urdf(7, 9, armature=True)
    robot = load(xml)
    dispatch.set_backend("numpy")
    try:
        check_pinocchio(robot, pin_pair(robot, xml), np.random.default_rng(3), k=2)
    finally:
        dispatch.set_backend("auto")


def friction_robot(seed: int = 5, n: int = 8) -> cd.Robot:
    return load(random_urdf(seed, n, damping=True, friction=True, armature=True))


@pytest.mark.parametrize("smooth", [None, 0.3])
def test_inverse_dynamics_derivatives_match_finite_differences_with_friction(smooth):
    robot = friction_robot()
    m, n = robot.model, robot.dof
    assert m.damping.any() and m.friction.any()
    rng = np.random.default_rng(2)
    q, qdd = rng.uniform(-1.5, 1.5, (2, n))
    qd = rng.uniform(0.5, 1.5, n) * rng.choice([-1.0, 1.0], n)  # away from the Coulomb kink

    def tau(q, qd):
        if smooth is None:
            return robot.inverse_dynamics(q, qd, qdd)
        return robot.inverse_dynamics(q, qd, qdd, friction=False) + friction_torques(m, qd, smooth=smooth)

    dq, dqd = robot.inverse_dynamics_derivatives(q, qd, qdd, smooth_friction=smooth)
    assert rel_err(dq, central(lambda x: tau(x, qd), q)) < 1e-7
    assert rel_err(dqd, central(lambda x: tau(q, x), qd)) < 1e-7


def test_coulomb_at_rest_documented_values():
    """At qd = 0: smoothed model -> damping + friction / smooth; exact sign -> damping only."""
    robot = friction_robot()
    m, n = robot.model, robot.dof
    q = np.random.default_rng(4).uniform(-1, 1, n)
    z = np.zeros(n)
    _, rigid = robot.inverse_dynamics_derivatives(q, z, z, friction=False)
    _, exact = robot.inverse_dynamics_derivatives(q, z, z)
    _, smooth = robot.inverse_dynamics_derivatives(q, z, z, smooth_friction=0.05)
    assert np.allclose(exact - rigid, np.diag(m.damping), atol=1e-12)
    assert np.allclose(smooth - rigid, np.diag(m.damping + m.friction / 0.05), atol=1e-12)


@pytest.mark.parametrize("smooth", [None, 0.2])
def test_forward_dynamics_derivatives_match_finite_differences(smooth):
    robot = friction_robot(6, 7)
    n = robot.dof
    rng = np.random.default_rng(5)
    q, tau = rng.uniform(-1.5, 1.5, (2, n))
    qd = rng.uniform(0.5, 1.5, n) * rng.choice([-1.0, 1.0], n)
    fd = lambda q, qd, tau: robot.forward_dynamics(q, qd, tau, smooth_friction=smooth)  # noqa: E731
    aq, aqd, Minv = robot.forward_dynamics_derivatives(q, qd, tau, smooth_friction=smooth)
    assert rel_err(aq, central(lambda x: fd(x, qd, tau), q)) < 1e-6
    assert rel_err(aqd, central(lambda x: fd(q, x, tau), qd)) < 1e-6
    assert rel_err(Minv, central(lambda x: fd(q, qd, x), tau)) < 1e-6
    assert rel_err(Minv @ robot.mass_matrix(q), np.eye(n)) < 1e-12


def wrench_links(robot: cd.Robot) -> list:
    """A moving link, a link welded by a fixed joint to a moving one, and a base link."""
    m = robot.model
    moving = [nm for k, nm in enumerate(m.link_names) if m.link_body[k] >= 0 and nm in m.body_names]
    welded = [nm for k, nm in enumerate(m.link_names) if m.link_body[k] >= 0 and nm not in m.body_names]
    base = [nm for k, nm in enumerate(m.link_names) if m.link_body[k] < 0]
    return moving[-2:] + welded[:1] + base[:1]


def test_external_wrench_derivatives_match_finite_differences():
    xml = random_urdf(8, 10, p_fixed=0.5, damping=True)
    robot = load(xml)
    n = robot.dof
    rng = np.random.default_rng(6)
    links = wrench_links(robot)
    assert len(links) >= 3
    f_ext = {nm: rng.normal(size=6) for nm in links}
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, n))
    tau = lambda q, qd: robot.inverse_dynamics(q, qd, qdd, f_ext=f_ext)  # noqa: E731
    dq, dqd = robot.inverse_dynamics_derivatives(q, qd, qdd, f_ext=f_ext)
    assert rel_err(dq, central(lambda x: tau(x, qd), q)) < 1e-7
    assert rel_err(dqd, central(lambda x: tau(q, x), qd)) < 1e-7
    dq0, _ = robot.inverse_dynamics_derivatives(q, qd, qdd)
    assert rel_err(dq, dq0) > 1e-3  # the wrench term matters here
    # forward dynamics with the same wrenches
    tq = robot.inverse_dynamics(q, qd, qdd, f_ext=f_ext)
    aq, aqd, _ = robot.forward_dynamics_derivatives(q, qd, tq, f_ext=f_ext)
    fd = lambda q, qd: robot.forward_dynamics(q, qd, tq, f_ext=f_ext)  # noqa: E731
    assert rel_err(aq, central(lambda x: fd(x, qd), q)) < 1e-6
    assert rel_err(aqd, central(lambda x: fd(q, x), qd)) < 1e-6


def test_mimic_joints_reduce_through_G():
    urdf = erd_urdf("panda")
    robot = load(urdf, mimic="dependent")
    assert robot.mimic_joint_names
    n = robot.dof
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, n))
    q[-1] = 0.02  # finger opening
    dq, dqd = robot.inverse_dynamics_derivatives(q, qd, qdd)
    assert dq.shape == (n, n)
    assert rel_err(dq, central(lambda x: robot.inverse_dynamics(x, qd, qdd), q)) < 1e-7
    assert rel_err(dqd, central(lambda x: robot.inverse_dynamics(q, x, qdd), qd)) < 1e-7
    full = load(urdf)
    G = robot.mimic_jacobian
    Fq, _ = full.inverse_dynamics_derivatives(robot.full_positions(q), G @ qd, G @ qdd)
    assert rel_err(dq, G.T @ Fq @ G) < 1e-12
    _, _, Minv = robot.forward_dynamics_derivatives(q, qd, qdd)
    assert rel_err(Minv, np.linalg.inv(robot.mass_matrix(q))) < 1e-10


@pytest.mark.parametrize("seed,n", [(3, 5), (8, 22), (9, 30)])
def test_compiled_equals_reference(seed, n):
    robot = load(random_urdf(seed, n, p_fixed=0.4, damping=True, friction=True))
    m = robot.model
    rng = np.random.default_rng(seed)
    Q, QD, X = rng.uniform(-2, 2, (3, 4, n))
    f_ext = {nm: rng.normal(size=(4, 6)) for nm in wrench_links(robot)}
    fw, P = external_terms(m, *body_poses(m, Q), f_ext)
    P9 = P.reshape(P.shape[:-2] + (9,))

    def rnea_derivatives_of(*inputs, f_world=None, P=None, friction=0, smooth=None):
        return dispatch.call("inverse_dynamics_derivatives", m, robot.arrays, *inputs, f_world=f_world, P=P,
                             friction=friction, smooth_friction=smooth)
    assert dispatch.backend() == "numba"
    for s in range(4):  # single samples (the kernel's one-sample entry) and the batch loop
        cq, cqd = rnea_derivatives_of(Q[s], QD[s], X[s], f_world=fw[s], P=P9[s], friction=True, smooth=0.1)
        dispatch.set_backend("numpy")
        try:
            rq, rqd = rnea_derivatives_of(Q[s], QD[s], X[s], f_world=fw[s], P=P9[s], friction=True, smooth=0.1)
        finally:
            dispatch.set_backend("auto")
        assert rel_err(cq, rq) < 1e-11 and rel_err(cqd, rqd) < 1e-11
    cq, cqd = rnea_derivatives_of(Q, QD, X, f_world=fw, P=P9)
    rq, rqd = rnea_derivatives(m, Q, QD, X, fw, P)
    assert rel_err(cq, rq) < 1e-11 and rel_err(cqd, rqd) < 1e-11
    for args in ((Q, QD, X), (Q[0], QD[0], X[0])):  # forward derivatives: batch loop and one sample
        compiled = dispatch.call("forward_dynamics_derivatives", m, robot.arrays, *args, smooth_friction=0.1)
        reference = forward_dynamics_derivatives(m, *args, smooth=0.1)
        for c, r in zip(compiled, reference):
            assert rel_err(c, r) < 1e-11


def test_batches_broadcast():
    robot = friction_robot(3, 6)
    n = robot.dof
    rng = np.random.default_rng(8)
    q = rng.uniform(-1, 1, (3, 1, n))
    qd = rng.uniform(-1, 1, (4, n))
    qdd = rng.uniform(-1, 1, n)
    dq, dqd = robot.inverse_dynamics_derivatives(q, qd, qdd)
    aq, _, Minv = robot.forward_dynamics_derivatives(q, qd, qdd)
    A, B = robot.linearize(q, qd, qdd)
    Ad, Bd = robot.linearize(q, qd, qdd, dt=0.01)
    assert dq.shape == dqd.shape == aq.shape == Minv.shape == (3, 4, n, n)
    assert A.shape == Ad.shape == (3, 4, 2 * n, 2 * n) and B.shape == Bd.shape == (3, 4, 2 * n, n)
    for i, j in [(0, 0), (2, 3), (1, 2)]:
        one = robot.inverse_dynamics_derivatives(q[i, 0], qd[j], qdd)
        assert np.allclose(dq[i, j], one[0], rtol=0, atol=1e-12) and np.allclose(dqd[i, j], one[1], atol=1e-12)
        a1, b1 = robot.linearize(q[i, 0], qd[j], qdd, dt=0.01)
        assert np.allclose(Ad[i, j], a1, atol=1e-12) and np.allclose(Bd[i, j], b1, atol=1e-12)


def test_linearize_continuous_matches_finite_differences():
    robot = friction_robot(4, 5)
    n = robot.dof
    rng = np.random.default_rng(9)
    q, tau = rng.uniform(-1, 1, (2, n))
    qd = rng.uniform(0.5, 1.0, n)
    s = 0.2

    def f(x, u):
        return np.concatenate([x[n:], robot.forward_dynamics(x[:n], x[n:], u, smooth_friction=s)])

    x = np.concatenate([q, qd])
    A, B = robot.linearize(q, qd, tau, smooth_friction=s)
    assert rel_err(A, central(lambda y: f(y, tau), x)) < 1e-6
    assert rel_err(B, central(lambda u: f(x, u), tau)) < 1e-6


def flow(robot, x, u, dt, **kw):
    """The state after dt of the nonlinear dynamics with torque u held (tight tolerances)."""
    n = robot.dof
    sim = cd.simulate(robot, x[:n], x[n:], [0.0, dt], torque=u, rtol=1e-12, atol=1e-13, **kw)
    return np.concatenate([sim.q[-1], sim.qd[-1]])


def test_linearize_discrete_is_the_flow_jacobian_at_an_equilibrium():
    robot = friction_robot(4, 4)
    n, dt, s = robot.dof, 0.05, 0.3
    q = np.random.default_rng(10).uniform(-1, 1, n)
    x = np.concatenate([q, np.zeros(n)])
    u = robot.gravity_torques(q)  # holds q at rest: f(x, u) = 0
    Ad, Bd = robot.linearize(q, np.zeros(n), u, dt=dt, smooth_friction=s)
    kw = {"smooth_friction": s}
    assert rel_err(Ad, central(lambda y: flow(robot, y, u, dt, **kw), x, eps=1e-5)) < 1e-6
    assert rel_err(Bd, central(lambda v: flow(robot, x, v, dt, **kw), u, eps=1e-5)) < 1e-6


def test_linearize_discrete_agrees_with_the_flow_to_second_order():
    """Away from an equilibrium the ZOH pair of the linearisation differs from the flow
    Jacobian by O(dt^2): halving dt divides the error by about 4."""
    robot = friction_robot(4, 3)
    n = robot.dof
    rng = np.random.default_rng(11)
    q, qd, u = rng.uniform(-1, 1, (3, n))
    x = np.concatenate([q, qd])
    errs = []
    for dt in (0.02, 0.01):
        Ad, _ = robot.linearize(q, qd, u, dt=dt, smooth_friction=0.3)
        J = central(lambda y, dt=dt: flow(robot, y, u, dt, smooth_friction=0.3), x, eps=1e-5)
        errs.append(np.abs(Ad - J).max())
    assert 3.0 < errs[0] / errs[1] < 5.0, errs


def test_linearize_rejects_bad_dt():
    robot = friction_robot(4, 3)
    z = np.zeros(robot.dof)
    for dt in (0.0, -1.0, float("nan"), "x"):
        with pytest.raises(ValueError, match="dt"):
            robot.linearize(z, z, z, dt=dt)


def upright_two_link():
    robot = cd.load("two_link")
    return robot, np.array([np.pi / 2, 0.0])


def test_lqr_stabilises_the_inverted_double_pendulum():
    robot, q_up = upright_two_link()
    A, _ = robot.linearize(q_up, np.zeros(2), robot.gravity_torques(q_up))
    assert np.linalg.eigvals(A).real.max() > 1.0  # unstable set point
    ctrl = cd.LQRController(robot, q_up, Q=np.diag([100.0, 100.0, 1.0, 1.0]), R=0.1)
    assert isinstance(robot, cd.control.lqr.LinearizableModel)
    assert ctrl.poles.real.max() < 0
    assert np.allclose(ctrl.poles, np.linalg.eigvals(ctrl.A - ctrl.B @ ctrl.K))
    t = np.linspace(0.0, 3.0, 301)
    q0 = q_up + np.array([0.1, -0.1])
    closed = cd.simulate(robot, q0, np.zeros(2), t, torque=ctrl, reference=ctrl.reference)
    assert np.abs(closed.q[-1] - q_up).max() < 1e-6 and np.abs(closed.qd[-1]).max() < 1e-5
    assert np.abs(closed.q - q_up).max() <= 0.1 + 1e-9
    fall = cd.simulate(robot, q0, np.zeros(2), t[:101])
    assert np.abs(fall.q[-1] - q_up).max() > 1.0  # without control it falls
    # the regulator form ctrl(q, qd) is the same law
    assert np.allclose(ctrl(closed.q[5], closed.qd[5]), closed.tau[5])


def test_discrete_lqr_is_stable():
    robot, q_up = upright_two_link()
    ctrl = cd.LQRController(robot, q_up, Q=np.array([100.0, 100.0, 1.0, 1.0]), R=np.array([0.1, 0.1]), dt=0.01)
    assert np.abs(ctrl.poles).max() < 1.0
    # sampled closed loop on the nonlinear plant: zero-order hold at dt
    n, x = 2, np.concatenate([q_up + 0.05, np.zeros(2)])
    for _ in range(300):
        u = ctrl(x[:n], x[n:])
        x = flow(robot, x, u, 0.01)
    assert np.abs(x - np.concatenate([q_up, np.zeros(2)])).max() < 1e-4


def test_lqr_rejects_bad_input():
    robot, q_up = upright_two_link()
    with pytest.raises(ValueError, match="R must be positive definite"):
        cd.LQRController(robot, q_up, Q=1.0, R=np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="Q must"):
        cd.LQRController(robot, q_up, Q=np.ones((3, 3)), R=1.0)
    with pytest.raises(ValueError, match="q_ref"):
        cd.LQRController(robot, [0.0, 0.0, 0.0], Q=1.0, R=1.0)
    ctrl = cd.LQRController(robot, q_up, Q=1.0, R=1.0)
    with pytest.raises(ValueError, match="reference=ctrl.reference"):
        cd.simulate(robot, q_up, np.zeros(2), [0.0, 0.1], torque=ctrl)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_non_finite_input_gives_nan_or_value_error(backend, batch):
    """Every route: NaN in -> NaN out (kernels, reference) or ValueError (Robot methods)."""
    robot = cd.load("panda")
    q = np.full(batch + (robot.dof,), 0.3)
    q[..., 2] = np.nan
    dispatch.set_backend(backend)
    try:
        dq, dqd = dispatch.call("inverse_dynamics_derivatives", robot.model, None, q, q, q, friction=0)
        assert np.isnan(dq).reshape(-1, robot.dof ** 2).any(axis=1).all()
        for method in (robot.inverse_dynamics_derivatives, robot.forward_dynamics_derivatives, robot.linearize):
            with pytest.raises(ValueError, match="NaN|finite"):
                method(q, np.zeros_like(q), np.zeros_like(q))
    finally:
        dispatch.set_backend("auto")


def test_bad_arguments_name_what_is_wrong():
    robot = cd.load("panda")
    z = np.zeros(robot.dof)
    with pytest.raises(ValueError, match="qd has shape"):
        robot.inverse_dynamics_derivatives(z, np.zeros(3), z)
    with pytest.raises(ValueError, match="unknown link 'nope'"):
        robot.inverse_dynamics_derivatives(z, z, z, f_ext={"nope": np.zeros(6)})
    with pytest.raises(ValueError, match="smooth_friction"):
        robot.forward_dynamics_derivatives(z, z, z, smooth_friction=-1.0)
