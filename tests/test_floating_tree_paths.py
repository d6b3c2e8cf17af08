"""A floating robot computes every quantity on its free-flyer tree, also with dependent mimic joints and
under the NumPy backend; link wrenches under the NumPy backend (floating robots and trees with joints of
several coordinates).

Oracles: Pinocchio with ``JointModelFreeFlyer`` on the same URDF with the mimic tags ignored (every joint
a coordinate), reduced by a mimic map built here from the URDF's ``<mimic>`` tags (q_full = G q + b,
generalised forces Gᵀ tau, matrices Gᵀ A G, Jacobians J G); the identities τ = M a + h, FD(ID) = a and
regressor @ parameters = ID; and, for the NumPy backend, the compiled kernels (an independent
implementation: the NumPy backend runs the array-API algorithms and turns link wrenches into generalised
forces by Jacobians, the kernels take them as body forces in the recursion).
"""

from __future__ import annotations

import contextlib
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import composedyn as cd
from composedyn.testing.pinocchio_trees import random_joint_graph
from pin_oracle import pin, rel_err
from tensor_cases import mimic_urdf
from test_closed_compiled import numpy_backend

TOL = 1e-10


def _load(xml: str, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(xml, floating=True, **options)


class MimicOracle:
    """Pinocchio's free-flyer model of the URDF (mimic tags ignored) and the mimic map to the robot's
    coordinates, read from the URDF's tags."""

    def __init__(self, xml: str, robot):
        self.model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        mimic = {j.get("name"): (j.find("mimic").get("joint"), float(j.find("mimic").get("multiplier")),
                                 float(j.find("mimic").get("offset")))
                 for j in ET.fromstring(xml).findall("joint") if j.find("mimic") is not None}
        reduced = {name: k for k, name in enumerate(robot.joint_names)}
        m = self.model
        self.G = np.zeros((m.nv, robot.nv))
        self.G[:6, :6] = np.eye(6)
        self.angles = []  # per Pinocchio joint: (idx_q, nq, source coordinate, multiplier, offset)
        for jid in range(2, m.njoints):
            name, iv = m.names[jid], m.joints[jid].idx_v
            src, k, off = mimic.get(name, (name, 1.0, 0.0))
            self.G[iv, 6 + reduced[src]] = k
            self.angles.append((m.joints[jid].idx_q, m.joints[jid].nq, 7 + reduced[src], k, off))
        self.frame = m.names[m.njoints - 1]

    def q(self, q):
        """Pinocchio's configuration (a continuous joint's (cos, sin)) of the robot's q."""
        out = np.zeros(self.model.nq)
        out[:7] = q[:7]
        for iq, nq, src, k, off in self.angles:
            x = k * q[src] + off
            out[iq:iq + nq] = x if nq == 1 else (np.cos(x), np.sin(x))
        return out

    def forces(self, x):
        return self.G.T @ x

    def matrix(self, A):
        return self.G.T @ A @ self.G


def _sample(robot, seed):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(seed=seed), rng.normal(size=robot.nv), rng.normal(size=robot.nv)


@pytest.mark.parametrize("seed", [6, 11])
def test_dependent_mimic_floating_robot_against_pinocchio(seed):
    xml = mimic_urdf(seed, 7)
    robot = _load(xml)
    assert robot.mimic_joint_names, "the case has dependent mimic joints"
    o = MimicOracle(xml, robot)
    m, d = o.model, o.data
    for s in range(3):
        q, v, a = _sample(robot, 100 * seed + s)
        qf, vf, af = o.q(q), o.G @ v, o.G @ a
        tau = o.forces(pin.rnea(m, d, qf, vf, af))
        assert rel_err(robot.inverse_dynamics(q, v, a, friction=False), tau) < TOL
        M = pin.crba(m, d, qf)
        M = o.matrix(np.triu(M) + np.triu(M, 1).T)
        assert rel_err(robot.mass_matrix(q), M) < TOL
        assert rel_err(robot.gravity_torques(q), o.forces(pin.computeGeneralizedGravity(m, d, qf))) < TOL
        assert rel_err(robot.bias_torques(q, v), o.forces(pin.nonLinearEffects(m, d, qf, vf))) < TOL
        assert rel_err(robot.coriolis_matrix(q, v), o.matrix(pin.computeCoriolisMatrix(m, d, qf, vf))) < TOL
        h = o.forces(pin.nonLinearEffects(m, d, qf, vf))
        assert rel_err(robot.forward_dynamics(q, v, tau, friction=False), np.linalg.solve(M, tau - h)) < 1e-9
        assert rel_err(robot.center_of_mass(q), pin.centerOfMass(m, d, qf)) < TOL
        assert rel_err(robot.com_jacobian(q), pin.jacobianCenterOfMass(m, d, qf) @ o.G) < TOL
        assert rel_err(robot.centroidal_momentum_matrix(q), pin.computeCentroidalMap(m, d, qf) @ o.G) < TOL
        pin.forwardKinematics(m, d, qf)
        jid = m.getJointId(o.frame)
        J = pin.computeJointJacobian(m, d, qf, jid)  # LOCAL, at the joint frame
        link = next(c for _, c, e in robot.graph.edges(data=True) if e.get("name") == o.frame)
        assert rel_err(robot.frame_pose(q, link), d.oMi[jid].homogeneous) < TOL
        assert rel_err(robot.jacobian(q, link, "local"), J @ o.G) < TOL
        Y = robot.regressor(q, v, a)
        assert rel_err(Y @ robot.inertial_parameters(), tau) < TOL
        # what the coupling carries: the unreduced inverse dynamics at the dependent joints
        full = pin.rnea(m, d, qf, vf, af)
        dep = [m.joints[m.getJointId(name)].idx_v for name in robot.mimic_joint_names]
        assert rel_err(robot.mimic_torques(q, v, a, friction=False), full[dep]) < TOL
        assert rel_err(robot.mimic_jacobian, o.G[np.r_[0:6, [m.joints[m.getJointId(n)].idx_v for n in
                                                          robot.all_joint_names]]]) < 1e-15


@pytest.mark.parametrize("seed", [6, 11])
def test_dependent_mimic_batches_and_identities(seed):
    robot = _load(mimic_urdf(seed, 7, damping=True, friction=True, armature=True))
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(size=5, seed=seed)
    v, a = rng.normal(size=(2, 5, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    for k in range(5):  # batch = one sample at a time
        assert rel_err(tau[k], robot.inverse_dynamics(q[k], v[k], a[k])) < 1e-13
    assert rel_err(robot.forward_dynamics(q, v, tau), a) < 1e-9
    M = robot.mass_matrix(q)
    h = robot.inverse_dynamics(q, v, np.zeros_like(v))
    assert rel_err(np.einsum("kij,kj->ki", M, a) + h, tau) < 1e-10
    link = robot.frame_names[-1]
    f = {link: rng.normal(size=(5, 6))}
    tau_f = robot.inverse_dynamics(q, v, a, f_ext=f)
    assert rel_err(robot.forward_dynamics(q, v, tau_f, f_ext=f), a) < 1e-9
    out = np.empty_like(tau)
    assert robot.inverse_dynamics(q, v, a, out=out) is out and rel_err(out, tau) < 1e-15


@pytest.mark.parametrize("case", ["floating", "floating_mimic", "planar_mimic"])
def test_numpy_backend_equals_the_compiled_kernels(case):
    xml = mimic_urdf(6, 7, damping=True, friction=True, armature=True)
    from random_robots import random_urdf

    if case == "floating":
        xml = random_urdf(4, 6, p_fixed=0.3, damping=True, friction=True, armature=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(xml, floating="planar" if case == "planar_mimic" else True)
    rng = np.random.default_rng(3)
    q = robot.random_configuration(size=4, seed=3)
    v, a, tau = rng.normal(size=(3, 4, robot.nv))
    links = robot.frame_names
    f = {links[-1]: rng.normal(size=(4, 6)), links[len(links) // 2]: rng.normal(size=6)}
    frame = links[-2]
    calls = {
        "ID": lambda: robot.inverse_dynamics(q, v, a),
        "ID f_ext": lambda: robot.inverse_dynamics(q, v, a, f_ext=f),
        "FD": lambda: robot.forward_dynamics(q, v, tau, smooth_friction=0.1),
        "FD f_ext": lambda: robot.forward_dynamics(q, v, tau, f_ext=f),
        "M": lambda: robot.mass_matrix(q), "g": lambda: robot.gravity_torques(q),
        "h": lambda: robot.bias_torques(q, v), "C": lambda: robot.coriolis_matrix(q, v),
        "com": lambda: robot.center_of_mass(q), "Jcom": lambda: robot.com_jacobian(q),
        "A_G": lambda: robot.centroidal_momentum_matrix(q), "Y": lambda: robot.regressor(q, v, a),
        "pose": lambda: robot.frame_pose(q, frame), "J": lambda: robot.jacobian(q, frame, "local"),
        "twist": lambda: robot.frame_velocity(q, v, frame),
        "acc": lambda: robot.frame_acceleration(q, v, a, frame, "local"),
        "one sample": lambda: robot.inverse_dynamics(q[0], v[0], a[0], f_ext={links[-1]: f[links[-1]][0]}),
        "A_G one sample": lambda: robot.centroidal_momentum_matrix(q[0]),
    }
    compiled = {k: c() for k, c in calls.items()}
    with numpy_backend():
        for k, c in calls.items():
            assert rel_err(c(), compiled[k]) < 1e-10, k


def test_numpy_backend_link_wrenches_of_joints_with_several_coordinates():
    robot = cd.from_graph(random_joint_graph(3))
    assert type(robot).__name__ == "TreeRobot"
    rng = np.random.default_rng(0)
    q = robot.random_configuration(size=3, seed=0)
    v, a = rng.normal(size=(2, 3, robot.nv))
    f = {robot.frame_names[-1]: rng.normal(size=(3, 6)), robot.frame_names[2]: rng.normal(size=6)}
    tau = robot.inverse_dynamics(q, v, a, f_ext=f)
    acc = robot.forward_dynamics(q, v, tau, f_ext=f)
    with numpy_backend():
        assert rel_err(robot.inverse_dynamics(q, v, a, f_ext=f), tau) < 1e-10
        assert rel_err(robot.forward_dynamics(q, v, tau, f_ext=f), acc) < 1e-9
        assert rel_err(acc, a) < 1e-9


@pytest.mark.parametrize("numpy", [False, True])
def test_a_zero_quaternion_is_named(numpy):
    robot = _load(mimic_urdf(6, 7))
    q, v, a = _sample(robot, 0)
    q[3:7] = 0.0
    with numpy_backend() if numpy else contextlib.nullcontext():
        with pytest.raises(ValueError, match="base quaternion q\\[3:7\\].*zero norm"):
            robot.inverse_dynamics(q, v, a)
        with pytest.raises(ValueError, match="zero norm"):
            robot.jacobian(np.stack([q, q]), robot.frame_names[-1])


def _central(f, x0, step, h=1e-6):
    """Central differences of f along the tangent directions of x0 (``step(x0, dx)`` moves x0)."""
    cols = []
    for k in range(step(None, None)):
        e = np.zeros(step(None, None))
        e[k] = h
        cols.append((f(step(x0, e)) - f(step(x0, -e))) / (2 * h))
    return np.stack(cols, -1)


@pytest.mark.parametrize("seed", [6, 11])
def test_dependent_mimic_derivatives_on_the_tree(seed):
    robot = _load(mimic_urdf(seed, 6, damping=True, friction=True, armature=True))
    q, v, a = _sample(robot, seed)
    f = {robot.frame_names[-1]: np.random.default_rng(seed).normal(size=6)}
    options = dict(f_ext=f, smooth_friction=0.3)
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, **options)
    tau = robot.inverse_dynamics(q, v, a, f_ext=f)
    aq, av, Minv = robot.forward_dynamics_derivatives(q, v, tau, **options)
    # forward ∘ inverse, then the NumPy backend's route (the array-API recursion): an independent derivation
    assert rel_err(robot.forward_dynamics(q, v, tau, f_ext=f), a) < 1e-9
    with numpy_backend():
        numpy_id = robot.inverse_dynamics_derivatives(q, v, a, **options)
        numpy_fd = robot.forward_dynamics_derivatives(q, v, tau, **options)
    for mine, ref in zip((dq, dv, aq, av, Minv), numpy_id + numpy_fd):
        assert rel_err(mine, ref) < 1e-9
    # finite differences along integrate (d/dv: plain differences), with the smooth friction
    on_q = lambda x, d: robot.nv if x is None else robot.integrate(x, d)  # noqa: E731
    on_v = lambda x, d: robot.nv if x is None else x + d  # noqa: E731
    sf = 0.3  # d tau/dv with tanh friction: against the NumPy backend's route above (the method has sgn friction)
    ID = lambda x: robot.inverse_dynamics(x, v, a, f_ext=f)  # noqa: E731
    assert rel_err(dq, _central(ID, q, on_q)) < 1e-6
    FD = lambda x: robot.forward_dynamics(x, v, tau, f_ext=f, smooth_friction=sf)  # noqa: E731
    assert rel_err(aq, _central(FD, q, on_q)) < 1e-6
    FDv = lambda x: robot.forward_dynamics(q, x, tau, f_ext=f, smooth_friction=sf)  # noqa: E731
    assert rel_err(av, _central(FDv, v, on_v)) < 1e-6
    batch = robot.inverse_dynamics_derivatives(np.stack([q, q]), np.stack([v, v]), np.stack([a, a]), **options)
    assert rel_err(batch[0][1], dq) < 1e-13 and rel_err(batch[1][0], dv) < 1e-13


def test_dependent_mimic_regressor_with_joint_terms():
    from composedyn.parameters import parameters

    robot = _load(mimic_urdf(6, 7, damping=True, friction=True, armature=True))
    q, v, a = _sample(robot, 2)
    Y = robot.regressor(q, v, a, joint_terms=True)
    assert Y.shape == (robot.nv, len(robot.parameter_names(joint_terms=True)))
    assert rel_err(Y @ parameters(robot, joint_terms=True), robot.inverse_dynamics(q, v, a)) < 1e-10
    with numpy_backend():
        assert rel_err(robot.regressor(q, v, a, joint_terms=True), Y) < 1e-12
