"""Dependent mimic joints in a robot whose joints have configuration spaces of their own (a ``TreeRobot``).

Oracle: Pinocchio built edge by edge from the same graph with its own joint models
(``testing.pinocchio_trees.graph_pinocchio``; the mimic relations ignored, every joint a coordinate),
reduced by the mimic map built here from the graph's ``mimic`` attributes (q_r = k q_s + o):
generalised forces Gᵀ τ, matrices Gᵀ A G, Jacobians J G.  Identities: τ = M a + h, FD(ID) = a,
regressor @ parameters = ID, the derivatives against central differences along ``integrate``.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.errors import ModelError
from composedyn.testing.pinocchio_trees import graph_pinocchio, random_joint_graph
from pin_oracle import pin, rel_err
from test_closed_compiled import numpy_backend
from test_floating_derivatives import _flow_jacobian

TOL = 1e-10
ONE = ("revolute", "prismatic", "continuous")


def mimic_graph(seed: int, bodies: int = 16):
    """``random_joint_graph`` with two one-coordinate joints mimicking earlier one-coordinate ones (one a chain)."""
    rng = np.random.default_rng(seed + 100)
    g = random_joint_graph(seed, bodies)
    one = [d for _, _, d in g.edges(data=True) if d["type"] in ONE]
    assert len(one) >= 4, "the case needs four one-coordinate joints"
    src, dep, src2, dep2 = one[:4]
    dep["mimic"] = (src["name"], float(rng.uniform(-2, 2)), float(rng.uniform(-0.5, 0.5)))
    dep2["mimic"] = (dep["name"], float(rng.uniform(-2, 2)), float(rng.uniform(-0.5, 0.5)))  # a chain
    return g


class Projection:
    """Pinocchio's model of the graph (every joint a coordinate) and the map from the robot's coordinates."""

    def __init__(self, g, robot):
        self.model, self.where = graph_pinocchio(g)
        self.data = self.model.createData()
        m = self.model
        mimic = {d["name"]: d["mimic"] for _, _, d in g.edges(data=True) if d.get("mimic") is not None}
        edges = {d["name"]: d for _, _, d in g.edges(data=True)}
        self.armature = np.zeros(m.nv)  # rotor inertia per velocity coordinate (none on free/planar joints)
        mine = {j.name: j for j in robot.joints}
        self.G = np.zeros((m.nv, robot.nv))
        self.rows = []  # (pin idx_q, nq, robot idx_q or None, (k, o, source) for a mimic joint)
        for jid in range(1, m.njoints):
            name, jm = m.names[jid], m.joints[jid]
            if edges[name]["type"] not in ("floating", "planar"):
                self.armature[jm.idx_v:jm.idx_v + jm.nv] = edges[name]["armature"]
            k, o, src = 1.0, 0.0, name
            while src in mimic:  # resolve a chain of mimic joints to its independent joint
                s, kk, oo = mimic[src]
                k, o, src = k * kk, k * oo + o, s
            j = mine[src]
            if name in mimic:
                self.G[jm.idx_v, j.idx_v] = k
                self.rows.append((jm.idx_q, 1, j.idx_q, (k, o)))
            else:
                self.G[jm.idx_v:jm.idx_v + jm.nv, j.idx_v:j.idx_v + j.nv] = np.eye(jm.nv)
                self.rows.append((jm.idx_q, jm.nq, j.idx_q, None))

    def q(self, q):
        out = np.zeros(self.model.nq)
        for iq, nq, jq, mimic in self.rows:
            out[iq:iq + nq] = q[jq:jq + nq] if mimic is None else mimic[0] * q[jq] + mimic[1]
        return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mimic_tree_against_pinocchio(seed):
    g = mimic_graph(seed)
    robot = cd.from_graph(g)
    assert type(robot).__name__ == "TreeRobot" and len(robot.mimic_joint_names) == 2
    assert robot.nv == sum(j.nv for j in robot.joints) == robot.array_model.nv_full - 2
    o = Projection(g, robot)
    m, d = o.model, o.data
    rng = np.random.default_rng(seed)
    for s in range(3):
        q = robot.random_configuration(seed=10 * seed + s)
        v, a = rng.normal(size=(2, robot.nv))
        qf, vf, af = o.q(q), o.G @ v, o.G @ a
        tau = o.G.T @ (pin.rnea(m, d, qf, vf, af) + o.armature * af)  # Pinocchio's, plus the rotor inertia
        assert rel_err(robot.inverse_dynamics(q, v, a, friction=False), tau) < TOL
        M = pin.crba(m, d, qf)
        M = o.G.T @ (np.triu(M) + np.triu(M, 1).T + np.diag(o.armature)) @ o.G
        assert rel_err(robot.mass_matrix(q), M) < TOL
        h = o.G.T @ pin.nonLinearEffects(m, d, qf, vf)
        assert rel_err(robot.bias_torques(q, v), h) < TOL
        assert rel_err(robot.gravity_torques(q), o.G.T @ pin.computeGeneralizedGravity(m, d, qf)) < TOL
        assert rel_err(robot.forward_dynamics(q, v, tau, friction=False), np.linalg.solve(M, tau - h)) < 1e-9
        assert rel_err(robot.center_of_mass(q), pin.centerOfMass(m, d, qf)) < TOL
        assert rel_err(robot.com_jacobian(q), pin.jacobianCenterOfMass(m, d, qf) @ o.G) < TOL
        assert rel_err(robot.centroidal_momentum_matrix(q), pin.computeCentroidalMap(m, d, qf) @ o.G) < TOL
        pin.forwardKinematics(m, d, qf)
        pin.computeJointJacobians(m, d, qf)
        for link, (jid, X) in list(o.where.items())[1:]:
            T = (d.oMi[jid] * X).homogeneous
            assert rel_err(robot.frame_pose(q, link), T) < TOL
            J = pin.getFrameJacobian(m, d, jid, X, pin.LOCAL)
            assert rel_err(robot.jacobian(q, link, "local"), J @ o.G) < TOL
        rigid = o.G.T @ pin.rnea(m, d, qf, vf, af)  # the regressor leaves out friction and armature
        assert rel_err(robot.regressor(q, v, a) @ robot.inertial_parameters(), rigid) < TOL


def test_mimic_tree_identities_batches_and_derivatives():
    robot = cd.from_graph(mimic_graph(2))
    rng = np.random.default_rng(0)
    q = robot.random_configuration(size=4, seed=0)
    v, a = rng.normal(size=(2, 4, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    assert rel_err(robot.forward_dynamics(q, v, tau), a) < 1e-9
    h = robot.inverse_dynamics(q, v, np.zeros_like(a))
    assert rel_err(np.einsum("kij,kj->ki", robot.mass_matrix(q), a) + h, tau) < 1e-10
    assert rel_err(robot.inverse_dynamics(q[1], v[1], a[1]), tau[1]) < 1e-13
    f = {robot.frame_names[-1]: rng.normal(size=(4, 6))}
    assert rel_err(robot.forward_dynamics(q, v, robot.inverse_dynamics(q, v, a, f_ext=f), f_ext=f), a) < 1e-9
    # integrate / difference on the robot's coordinates
    dq = robot.difference(q[0], q[1])
    assert np.max(np.abs(robot.difference(q[1], robot.integrate(q[0], dq)))) < 1e-9  # (a quaternion or its negative)
    # robot.fast runs on the tree's coordinates, every joint's (the robot's reduced by G, as Robot.fast)
    G, qf = robot.mimic_jacobian, robot.full_positions(q[0])
    assert rel_err(G.T @ robot.fast.inverse_dynamics(qf, G @ v[0], G @ a[0]), tau[0]) < 1e-12
    assert rel_err(G.T @ robot.fast.mass_matrix(qf) @ G, robot.mass_matrix(q[0])) < 1e-12


def _ball_arm(coulomb: float = 0.05):
    """A spherical root, then revolute and prismatic joints; j3 mimics j1 (0.7 q + 0.2)."""
    import networkx as nx

    from composedyn.dynamics.schema import add_joint, add_link

    rng = np.random.default_rng(5)
    g = nx.DiGraph(name="ball_arm", gravity=np.array([0.0, 0.0, -9.81]))
    add_link(g, "world")
    parent = "world"
    for k, kind in enumerate(["spherical", "revolute", "prismatic", "revolute", "revolute"]):
        add_link(g, f"l{k}", mass=rng.uniform(0.5, 2), com=0.1 * rng.normal(size=3),
                 inertia=np.diag(rng.uniform(0.01, 0.05, 3)))
        T = np.eye(4)
        T[:3, 3] = 0.3 * rng.normal(size=3)
        add_joint(g, f"j{k}", parent, f"l{k}", type=kind, origin=T, axis=rng.normal(size=3),
                  damping=0.1, friction=coulomb)
        parent = f"l{k}"
    g.edges["l2", "l3"]["mimic"] = ("j1", 0.7, 0.2)
    return g


def test_mimic_tree_derivatives_with_a_spherical_root():
    """The derivative kernels take a spherical root and one-coordinate joints after it: a mimic pair among
    them, against central differences along ``integrate``."""
    rng = np.random.default_rng(5)
    g = _ball_arm()
    robot = cd.from_graph(g)
    assert robot.mimic_joint_names == ("j3",)
    q = robot.random_configuration(seed=1)
    v, a = rng.normal(size=(2, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a)
    aq, av, Minv = robot.forward_dynamics_derivatives(q, v, tau)
    eps, n = 1e-6, robot.nv
    E = np.eye(n) * eps

    def central(f, x, step):
        return np.stack([(f(step(x, E[k])) - f(step(x, -E[k]))) / (2 * eps) for k in range(n)], -1)

    assert rel_err(dq, central(lambda x: robot.inverse_dynamics(x, v, a), q, robot.integrate)) < 1e-6
    assert rel_err(dv, central(lambda x: robot.inverse_dynamics(q, x, a), v, np.add)) < 1e-6
    assert rel_err(aq, central(lambda x: robot.forward_dynamics(x, v, tau), q, robot.integrate)) < 1e-6
    assert rel_err(av, central(lambda x: robot.forward_dynamics(q, x, tau), v, np.add)) < 1e-6
    assert rel_err(Minv, np.linalg.inv(robot.mass_matrix(q))) < 1e-10


def test_independent_mode_and_refusals():
    g = mimic_graph(1)
    robot = cd.from_graph(g, mimic="independent")
    assert robot.mimic_joint_names == () and robot.nv == robot.array_model.nv_full
    spherical = next(d["name"] for _, _, d in g.edges(data=True) if d["type"] == "spherical")
    g.edges[next((u, v) for u, v, d in g.edges(data=True) if d["type"] in ONE)]["mimic"] = (spherical, 1.0, 0.0)
    with pytest.raises(ModelError, match=f"mimics {spherical!r}"):
        cd.from_graph(g)
    assert cd.from_graph(g, mimic="independent").mimic_joint_names == ()  # the relations are ignored


@pytest.mark.parametrize("mimic", ["dependent", "independent"])
def test_derivatives_with_link_wrenches_on_the_tree(mimic):
    """Link wrenches held in world axes: the lever arms of their application points, against central
    differences along ``integrate`` (a spherical root, one-coordinate joints, a mimic pair)."""
    robot = cd.from_graph(_ball_arm(), mimic=mimic)
    rng = np.random.default_rng(7)
    q = robot.random_configuration(seed=2)
    v, a = rng.normal(size=(2, robot.nv))
    f = {"l4": rng.normal(size=6), "l1": rng.normal(size=6)}
    tau = robot.inverse_dynamics(q, v, a, f_ext=f)
    dq, dv = robot.inverse_dynamics_derivatives(q, v, a, f_ext=f)
    aq, av, _ = robot.forward_dynamics_derivatives(q, v, tau, f_ext=f)
    n, eps = robot.nv, 1e-6
    E = np.eye(n) * eps

    def central(fn, x, step):
        return np.stack([(fn(step(x, E[k])) - fn(step(x, -E[k]))) / (2 * eps) for k in range(n)], -1)

    assert rel_err(dq, central(lambda x: robot.inverse_dynamics(x, v, a, f_ext=f), q, robot.integrate)) < 1e-6
    assert rel_err(dv, central(lambda x: robot.inverse_dynamics(q, x, a, f_ext=f), v, np.add)) < 1e-6
    assert rel_err(aq, central(lambda x: robot.forward_dynamics(x, v, tau, f_ext=f), q, robot.integrate)) < 1e-6
    assert rel_err(av, central(lambda x: robot.forward_dynamics(q, x, tau, f_ext=f), v, np.add)) < 1e-6
    batch = robot.inverse_dynamics_derivatives(np.stack([q, q]), v, a, f_ext={k: w[None] for k, w in f.items()})
    assert rel_err(batch[0][1], dq) < 1e-12


URDF = """<robot name="gripper_on_a_ball">
  <link name="base"/>
  <link name="post"><inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="hand"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="left"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="right"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0"
  iyz="0"/></inertial></link>
  <joint name="turn" type="continuous"><parent link="base"/><child link="post"/><axis xyz="0 0 1"/></joint>
  <joint name="wrist" type="floating"><parent link="post"/><child link="hand"/><origin xyz="0 0 0.5"/></joint>
  <joint name="finger_l" type="prismatic"><parent link="hand"/><child link="left"/><origin xyz="0 0.05 0.1"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="10" velocity="1"/></joint>
  <joint name="finger_r" type="prismatic"><parent link="hand"/><child link="right"/><origin xyz="0 -0.05 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-0.04" upper="0" effort="10" velocity="1"/>
    <mimic joint="finger_l" multiplier="-1" offset="0"/></joint>
</robot>"""


def test_urdf_free_flyer_below_the_root_with_a_mimic_gripper(tmp_path, capsys):
    from composedyn.cli import main

    path = tmp_path / "gripper.urdf"
    path.write_text(URDF)
    robot = cd.load(path)
    assert type(robot).__name__ == "TreeRobot"
    assert (robot.nq, robot.nv, robot.mimic_joint_names) == (9, 8, ("finger_r",))
    assert robot.joint_names == ("turn", "wrist", "finger_l")
    q = robot.random_configuration(seed=0)
    v = np.random.default_rng(0).normal(size=8)
    M = robot.mass_matrix(q)
    # against the same robot with every joint a coordinate: q_r = -q_l
    full = cd.load(path, mimic="independent")
    at = {j.name: j for j in full.joints}
    G, qf = np.zeros((9, 8)), np.zeros(10)
    for j in robot.joints:
        G[at[j.name].idx_v:at[j.name].idx_v + j.nv, j.idx_v:j.idx_v + j.nv] = np.eye(j.nv)
        qf[at[j.name].idx_q:at[j.name].idx_q + j.nq] = q[j.idx_q:j.idx_q + j.nq]
    G[at["finger_r"].idx_v, next(j.idx_v for j in robot.joints if j.name == "finger_l")] = -1.0
    qf[at["finger_r"].idx_q] = -qf[at["finger_l"].idx_q]
    assert rel_err(M, G.T @ full.mass_matrix(qf) @ G) < 1e-12
    assert rel_err(robot.inverse_dynamics(q, v, v), G.T @ full.inverse_dynamics(qf, G @ v, G @ v)) < 1e-12
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "joint finger_r (prismatic): mimics finger_l (q = -1 q_finger_l + 0)" in out


def test_contact_inverse_dynamics_of_a_free_tree_with_ball_hips():
    """A free torso, ball hips, knees: b = Sᵀ tau + Σ J_cᵀ f with the robot's own dynamics and Jacobians
    (each checked against Pinocchio elsewhere); a fixed-base tree is refused."""
    import networkx as nx

    from composedyn.dynamics.schema import add_joint, add_link

    rng = np.random.default_rng(3)
    g = nx.DiGraph(name="ball_legs", gravity=np.array([0.0, 0.0, -9.81]))
    add_link(g, "world")
    add_link(g, "torso", mass=10.0, com=np.zeros(3), inertia=np.diag([0.3, 0.3, 0.1]))
    add_joint(g, "root", "world", "torso", type="floating")
    for side, y in (("l", 0.1), ("r", -0.1)):
        for link, parent, kind, z in ((f"{side}_thigh", "torso", "spherical", 0.0),
                                      (f"{side}_shin", f"{side}_thigh", "revolute", -0.4),
                                      (f"{side}_foot", f"{side}_shin", "revolute", -0.4)):
            add_link(g, link, mass=rng.uniform(0.5, 2), com=np.array([0, 0, -0.2]),
                     inertia=np.diag([0.03, 0.03, 0.01]))
            T = np.eye(4)
            T[:3, 3] = (0.0, y if kind == "spherical" else 0.0, z)
            add_joint(g, f"{link}_joint", parent, link, type=kind, origin=T, axis=np.array([0.0, 1.0, 0.0]))
    robot = cd.from_graph(g)
    assert type(robot).__name__ == "TreeRobot" and robot.floating
    q = robot.neutral()
    q[2] = 0.9
    v, a = 0.1 * rng.normal(size=(2, robot.nv))
    res = robot.contact_inverse_dynamics(q, v, a, {"l_foot": "surface", "r_foot": "surface"})
    assert res.feasible and res.tau.shape == (robot.nv - 6,)
    b = robot.inverse_dynamics(q, v, a)
    JT = sum(robot.jacobian(q, f, "world").T @ res.forces[f] for f in ("l_foot", "r_foot"))
    assert rel_err(np.concatenate([np.zeros(6), res.tau]) + JT, b) < 1e-9
    fixed = cd.from_graph(_ball_arm())
    with pytest.raises(ValueError, match="needs a floating base"):
        fixed.contact_inverse_dynamics(fixed.neutral(), np.zeros(fixed.nv), np.zeros(fixed.nv), ["l4"])


def test_linearize_a_ball_joint_against_the_simulated_flow():
    """At an equilibrium the zero-order-hold pair is the flow's Jacobian in the error state; spinning
    about the ball joint it differs by O(dt²) (halving dt divides the error by about 4): the -ω× block."""
    robot = cd.from_graph(_ball_arm(coulomb=0.0))  # (Coulomb friction chatters at rest)
    q = robot.random_configuration(seed=4)
    Ad, _ = robot.linearize(q, np.zeros(robot.nv), robot.gravity_torques(q), dt=0.05)
    assert rel_err(Ad, _flow_jacobian(robot, q, np.zeros(robot.nv), robot.gravity_torques(q), 0.05)) < 1e-6
    v = np.random.default_rng(1).normal(size=robot.nv)
    v[:3] = (2.0, -1.5, 3.0)
    tau = np.random.default_rng(2).normal(size=robot.nv)
    errs = [np.abs(robot.linearize(q, v, tau, dt=dt)[0] - _flow_jacobian(robot, q, v, tau, dt)).max()
            for dt in (0.02, 0.01)]
    assert 3.0 < errs[0] / errs[1] < 5.0, errs


@pytest.mark.parametrize("mimic", ["dependent", "independent"])
def test_regressor_joint_terms_reproduce_inverse_dynamics(mimic):
    """Y @ parameters = inverse dynamics with friction and armature (damping, Coulomb friction and armature on
    each coordinate of a ball joint); the NumPy backend gives the same columns."""
    robot = cd.from_graph(mimic_graph(2), mimic=mimic)
    rng = np.random.default_rng(4)
    q = robot.random_configuration(size=3, seed=4)
    v, a = rng.normal(size=(2, 3, robot.nv))
    for offset in (False, True):
        Y = robot.regressor(q, v, a, joint_terms=True, offset=offset)
        p = robot.inertial_parameters(joint_terms=True, offset=offset)
        assert Y.shape[-1] == p.shape[0] == len(robot.parameter_names(joint_terms=True, offset=offset))
        assert rel_err(Y @ p, robot.inverse_dynamics(q, v, a)) < 1e-10
    with numpy_backend():
        assert rel_err(robot.regressor(q, v, a, joint_terms=True, offset=True), Y) < 1e-10
    bp = robot.base_parameters(joint_terms=True, samples=30)
    Y = robot.regressor(q, v, a, joint_terms=True)
    assert rel_err(bp.base_regressor(Y) @ bp.base(robot.inertial_parameters(joint_terms=True)),
                   robot.inverse_dynamics(q, v, a)) < 1e-8
