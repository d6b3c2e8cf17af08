"""Closed kinematic chains: loop closure, reduced dynamics, simulation.

Oracles: a Lagrange-multiplier formulation of the four-bar derived here with
SymPy (full coordinates, closure as constraint equations, solved for the
actuator torque and the multipliers); the slider-crank's one-coordinate
Lagrangian in the crank angle (SymPy); the power balance dE/dt = tau . qd
along simulated motion; and finite-difference identities for the closures.
"""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import simpson

import composedyn as cd


def rod(chain, link):
    """(mass, centre of mass along x, inertia about the plane normal y) of a bundled planar link."""
    d = chain.robot.graph.nodes[link]
    return float(d["mass"]), float(d["com"][0]), float(d["inertia"][1][1])


def e(a):
    return sp.Matrix([sp.cos(a), sp.sin(a)])  # unit vector at angle a in the (x, z) plane


def lagrange_equations(T, V, q, qd, qdd):
    """d/dt dL/dqd - dL/dq for L = T - V, with d/dt f(q, qd) = f_q qd + f_qd qdd."""
    out = []
    for i in range(len(q)):
        p = sp.diff(T, qd[i])
        ddt = sum(sp.diff(p, q[k]) * qd[k] + sp.diff(p, qd[k]) * qdd[k] for k in range(len(q)))
        out.append(ddt - sp.diff(T, q[i]) + sp.diff(V, q[i]))
    return sp.Matrix(out)


@pytest.fixture(scope="module")
def fourbar():
    return cd.load_closed_chain("fourbar")


def test_fourbar_matches_lagrange_multipliers(fourbar):
    """Full coordinates (crank, coupler relative, rocker), closure coupler tip = rocker tip,
    M qdd + h = B tau + Phi_q^T lambda with Phi_q qdd = -(dPhi_q/dt) qd: solve (qdd_dep, tau, lambda)."""
    ch, g = fourbar, 9.81
    q, qd, qdd = (sp.symbols(f"{s}1:4") for s in ("q", "qd", "qdd"))
    (m1, c1, I1), (m2, c2, I2), (m3, c3, I3) = (rod(ch, k) for k in ("crank", "coupler", "rocker"))
    a, D = 0.2, sp.Matrix([0.5, 0])  # crank length, rocker pivot (URDF joint origins)
    ang = [q[0], q[0] + q[1], q[2]]
    B = a * e(ang[0])
    coms = [c1 * e(ang[0]), B + c2 * e(ang[1]), D + c3 * e(ang[2])]
    Phi = (B + 0.6 * e(ang[1])) - (D + 0.4 * e(ang[2]))  # loop points from fourbar.loops.toml
    angv = [qd[0], qd[0] + qd[1], qd[2]]
    def sub_v(expr):
        return sum((sp.diff(expr, q[i]) * qd[i] for i in range(3)), sp.zeros(*expr.shape))
    T = sum(m * (sub_v(c).T * sub_v(c))[0] / 2 + I * w**2 / 2
            for m, c, I, w in zip((m1, m2, m3), coms, (I1, I2, I3), angv))
    V = sum(m * g * c[1] for m, c in zip((m1, m2, m3), coms))
    E = lagrange_equations(T, V, q, qd, qdd)  # = M qdd + h
    Phi_q = Phi.jacobian(q)
    bias = (Phi_q * sp.Matrix(qd)).jacobian(q) * sp.Matrix(qd)  # (dPhi_q/dt) qd
    fE, fPq, fb, fPhi = (sp.lambdify((q, qd, qdd), x, "numpy") for x in (E, Phi_q, bias, Phi))
    rng = np.random.default_rng(0)
    for th in (0.4, 1.0, 1.7, 2.9, -2.0):
        qa = ch.assemble([th])
        w, al = rng.uniform(-2, 2, 2)
        qda = ch.velocities([th], [w])
        def ev(acc):
            return np.array(fE(qa, qda, acc), float).ravel()
        Pq = np.array(fPq(qa, qda, qda), float)
        assert np.abs(np.array(fPhi(qa, qda, qda), float)).max() < 1e-12 and np.abs(Pq @ qda).max() < 1e-12
        # unknowns x = (qdd2, qdd3, tau, lam_x, lam_z); E is affine in qdd; tau acts on the crank only
        e0 = ev([al, 0, 0])
        A = np.zeros((5, 5))
        A[:3, 0], A[:3, 1] = ev([al, 1, 0]) - e0, ev([al, 0, 1]) - e0
        A[:3, 2] = [-1.0, 0.0, 0.0]
        A[:3, 3:] = -Pq.T
        A[3:, :2] = Pq[:, 1:]
        rhs = np.concatenate([-e0, -Pq[:, 0] * al - np.array(fb(qa, qda, qda), float).ravel()])
        x = np.linalg.solve(A, rhs)
        assert np.isclose(ch.inverse_dynamics([th], [w], [al])[0], x[2], rtol=1e-9, atol=1e-9)
        assert np.allclose(ch.constraint_forces([th], [w], [al]), x[3:], rtol=1e-9, atol=1e-9)
        assert np.allclose(ch.accelerations([th], [w], [al])[1:], x[:2], rtol=1e-9, atol=1e-9)


def test_slider_crank_matches_closed_form():
    """Textbook slider-crank (zero offset): x = r cos th + sqrt(l^2 - r^2 sin^2 th), rod angle
    beta = -asin(r sin th / l); Lagrangian in the crank angle alone, tau = d/dt dL/dthd - dL/dth."""
    ch, g = cd.load_closed_chain("slider_crank"), 9.81
    (m1, c1, I1), (m2, c2, I2) = rod(ch, "crank"), rod(ch, "rod")
    m3 = float(ch.robot.graph.nodes["slider"]["mass"])
    r, l = 0.15, 0.5
    th, thd, thdd = sp.symbols("th thd thdd")
    beta = -sp.asin(r * sp.sin(th) / l)
    B = r * e(th)
    coms = [c1 * e(th), B + c2 * e(beta), sp.Matrix([r * sp.cos(th) + sp.sqrt(l**2 - r**2 * sp.sin(th) ** 2), 0])]
    vel = [sp.diff(c, th) * thd for c in coms]
    T = (sum(m * (v.T * v)[0] / 2 for m, v in zip((m1, m2, m3), vel)) + I1 * thd**2 / 2
         + I2 * (sp.diff(beta, th) * thd) ** 2 / 2)
    V = sum(m * g * c[1] for m, c in zip((m1, m2, m3), coms))
    tau = sp.lambdify((th, thd, thdd), lagrange_equations(T, V, [th], [thd], [thdd])[0], "numpy")
    x_s = sp.lambdify(th, coms[2][0], "numpy")
    rng = np.random.default_rng(2)
    for a in (0.5, 1.2, 2.5, 3.5, 5.0):  # a path once round the crank circle
        w, al = rng.uniform(-3, 3, 2)
        assert np.isclose(ch.assemble([a])[2], x_s(a), atol=1e-12)
        assert np.isclose(ch.inverse_dynamics([a], [w], [al])[0], tau(a, w, al), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["fourbar", "slider_crank", "fivebar"])
def test_closure_identities(name):
    """Velocity and acceleration closure against finite differences of the position closure;
    forward o inverse = identity; reduced M symmetric positive definite; bias = ID at qdd = 0."""
    ch = cd.load_closed_chain(name)
    rng = np.random.default_rng(3)
    q = ch.assemble(ch._last[ch._ind] + rng.uniform(-0.2, 0.2, ch.dof))[ch._ind]
    qd, qdd = rng.uniform(-1, 1, (2, ch.dof))
    eps = 1e-5
    qa_p, qa_m = ch.assemble(q + eps * qd), ch.assemble(q - eps * qd)
    assert np.allclose((qa_p - qa_m) / (2 * eps), ch.velocities(q, qd), atol=1e-7)
    def state(s):
        return (q + s * eps * qd + 0.5 * (s * eps) ** 2 * qdd, qd + s * eps * qdd)
    vp, vm = ch.velocities(*state(1)), ch.velocities(*state(-1))
    assert np.allclose((vp - vm) / (2 * eps), ch.accelerations(q, qd, qdd), atol=1e-6)
    tau = ch.inverse_dynamics(q, qd, qdd)
    assert np.allclose(ch.forward_dynamics(q, qd, tau), qdd, atol=1e-9)
    M = ch.mass_matrix(q)
    assert np.allclose(M, M.T) and np.all(np.linalg.eigvalsh(M) > 0)
    assert np.allclose(ch.bias_torques(q, qd), tau - M @ qdd, atol=1e-9)
    qa = ch.assemble(q)  # all-joint positions are accepted too
    assert np.allclose(ch.inverse_dynamics(qa, qd, qdd), tau)


def test_simulation_power_balance_and_drift():
    """Four-bar released off its hanging equilibrium, driven by a sinusoidal crank torque for 5 s:
    at every sample dE/dt (central difference along the simulated state derivative) = tau . qd;
    E(5) - E(0) = the work of tau; the loop stays closed to 1e-8 (positions and velocities)."""
    ch = cd.load_closed_chain("fourbar")
    t = np.linspace(0.0, 5.0, 251)
    sim = cd.simulate(ch, [-1.2], [0.0], t, torque=lambda tt, q, qd: np.array([0.5 * np.sin(2 * tt)]))
    assert np.ptp(sim.q) > 1.0  # it moved
    eps = 1e-5
    dE = (ch.energy(sim.q + eps * sim.qd, sim.qd + eps * sim.qdd)
          - ch.energy(sim.q - eps * sim.qd, sim.qd - eps * sim.qdd)) / (2 * eps)
    power = np.einsum("ti,ti->t", sim.tau, sim.qd)
    assert np.abs(dE - power).max() < 1e-6 * max(1.0, np.abs(power).max())
    E = ch.energy(sim.q, sim.qd)
    assert abs(E[-1] - E[0] - simpson(power, x=t)) < 1e-2 * np.abs(power).max()  # coarse samples
    qa = ch.assemble(sim.q)
    assert np.abs(ch.constraint(qa)).max() < 1e-8
    J = ch.constraint_jacobian(qa)
    assert np.abs(np.einsum("tij,tj->ti", J, ch.velocities(sim.q, sim.qd))).max() < 1e-8
    assert np.abs(np.diff(qa, axis=0)).max() < 0.5  # no jump between assembly branches


def test_fivebar_simulation_power_balance():
    """Five-bar held by gravity compensation and a PD law about q0, excited by sinusoids, for 1 s."""
    ch = cd.load_closed_chain("fivebar")
    q0 = np.array([2.0, 1.1])
    def torque(tt, q, qd):
        return (ch.bias_torques(q, 0 * qd) + 5.0 * (q0 - q) - 0.5 * qd
                                    + np.array([0.3 * np.sin(3 * tt), -0.3 * np.cos(2 * tt)]))
    sim = cd.simulate(ch, q0, [0.0, 0.0], np.linspace(0.0, 1.0, 21), torque=torque)
    assert np.ptp(sim.q) > 0.1
    eps = 1e-5
    dE = (ch.energy(sim.q + eps * sim.qd, sim.qd + eps * sim.qdd)
          - ch.energy(sim.q - eps * sim.qd, sim.qd - eps * sim.qdd)) / (2 * eps)
    power = np.einsum("ti,ti->t", sim.tau, sim.qd)
    assert np.abs(dE - power).max() < 1e-6 * max(1.0, np.abs(power).max())


def dh_fourbar_toml(path, urdf_chain):
    """The four-bar as a serial DH chain crank-coupler-rocker-pin closed by a planar weld to the ground
    at the rocker pivot, in the x-y plane with gravity -y; same masses and inertias as the URDF."""
    rows = []
    for link, a, mass_link in (("crank", 0.2, "crank"), ("coupler", 0.6, "coupler"), ("rocker", 0.4, "rocker")):
        m, c, I = rod(urdf_chain, mass_link)
        rows.append(f"[[links]]\na = {a}\nalpha = 0.0\nd = 0.0\ntheta = 0.0\nmass = {m}\n"
                    f"com = [{-a / 2}, 0.0, 0.0]\ninertia = [1e-6, {I}, {I}]\n")
    rows.append("[[links]]\na = 0.0\nalpha = 0.0\nd = 0.0\ntheta = 0.0\nmass = 0.0\n"
                "com = [0.0, 0.0, 0.0]\ninertia = [0.0, 0.0, 0.0]\n")
    path.write_text('name = "fourbar_dh"\nconvention = "standard"\ngravity = [0.0, -9.81, 0.0]\n\n'
                    '[closure]\nindependent = ["joint1"]\n'
                    'guess = { joint1 = 1.0, joint2 = -0.68, joint3 = -2.35, joint4 = 2.03 }\n\n'
                    '[[loops]]\nname = "ground_weld"\nlink_a = "link4"\nlink_b = "link0"\n'
                    'point_b = [0.5, 0.0, 0.0]\nkind = "planar_pose"\nplane = "xy"\n\n' + "\n".join(rows))
    return path


def test_dh_serial_chain_with_weld_equals_urdf_tree_with_pin(tmp_path, fourbar):
    """Same mechanism, other spanning tree, other closure kind (planar_pose: 2 positions + 1 angle)."""
    dh = cd.load_closed_chain(dh_fourbar_toml(tmp_path / "fourbar_dh.toml", fourbar))
    assert dh.dof == 1 and dh.rows == ["ground_weld.x", "ground_weld.y", "ground_weld.rz"]
    rng = np.random.default_rng(5)
    for th in np.linspace(1.0, 7.0, 7):  # once round: both follow the crank on their branch
        w, al = rng.uniform(-2, 2, 2)
        assert np.isclose(dh.inverse_dynamics([th], [w], [al])[0], fourbar.inverse_dynamics([th], [w], [al])[0],
                          rtol=1e-9, atol=1e-9)
        assert np.isclose(dh.energy([th], [w]), fourbar.energy([th], [w]), rtol=1e-9)


def test_python_api_equals_bundled_file():
    robot = cd.load("fourbar")
    loop = cd.LoopClosure("coupler", "rocker", point_a=(0.6, 0, 0), point_b=(0.4, 0, 0), kind="planar", plane="xz")
    ch = cd.ClosedChain(robot, [loop], independent=["crank_joint"],
                        guess={"crank_joint": 1.0, "coupler_joint": -0.7, "rocker_joint": 1.1})
    ref = cd.load_closed_chain("fourbar")
    q, qd, qdd = [1.3], [0.7], [-0.4]
    assert np.isclose(ch.inverse_dynamics(q, qd, qdd)[0], ref.inverse_dynamics(q, qd, qdd)[0], rtol=1e-12)
    assert ch.joint_names == ("crank_joint",) and ch.dependent_names == ("coupler_joint", "rocker_joint")
    assert isinstance(ch, cd.DynamicsModel)  # usable by simulate, controllers, trajectory checks
    # gravity torques: the static actuator torque equals minus the derivative of V along the mechanism
    eps = 1e-6
    dV = (ch.potential_energy([1.3 + eps]) - ch.potential_energy([1.3 - eps])) / (2 * eps)
    assert np.isclose(ch.gravity_torques([1.3])[0], dV, rtol=1e-7)


def test_loops_on_a_robot_with_mimic_joints():
    """Five-bar whose right base joint mimics the left one (q_R = pi - q_L): one input carries
    both; its torque is tau_L - tau_R of the two-input five-bar moving symmetrically (G^T projection)."""
    two = cd.load_closed_chain("fivebar")
    text = open(two.robot.model.source).read().replace(
        '<joint name="right_base_joint" type="revolute">',
        '<joint name="right_base_joint" type="revolute">\n    <mimic joint="left_base_joint" multiplier="-1" '
        'offset="3.141592653589793"/>')
    robot = cd.from_urdf(text)
    assert robot.mimic_joint_names == ("right_base_joint",)
    one = cd.ClosedChain(robot, two.loops, independent=["left_base_joint"],
                         guess={"left_base_joint": 2.05, "left_elbow_joint": -1.34, "right_elbow_joint": 1.34})
    for qL, w, al in ((2.05, 0.3, -1.0), (1.9, -0.5, 2.0)):
        tau2 = two.inverse_dynamics([qL, np.pi - qL], [w, -w], [al, -al])
        assert np.isclose(one.inverse_dynamics([qL], [w], [al])[0], tau2[0] - tau2[1], rtol=1e-9)


def test_bad_input_gives_one_clear_error(fourbar):
    robot = fourbar.robot
    with pytest.raises(cd.ModelError, match="'crankshaft', which does not exist"):
        cd.ClosedChain(robot, [cd.LoopClosure("crankshaft", "rocker")], independent=["crank_joint"])
    with pytest.raises(cd.ModelError, match="not one of"):
        cd.LoopClosure("coupler", "rocker", kind="spherical")
    # loop equations that a planar mechanism cannot make independent: 3-D position on the five-bar
    fb = cd.load("fivebar")
    pos = cd.LoopClosure("left_distal", "right_distal", (0.35, 0, 0), (0.35, 0, 0), kind="position")
    with pytest.raises(cd.ModelError, match=r"redundant.*right_distal\.y"):
        cd.ClosedChain(fb, [pos], independent=["left_base_joint"])
    # a dependent joint that does not enter the loop: its Jacobian column is zero
    flag = open(robot.model.source).read().replace("</robot>", (
        '<link name="flag"><inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" '
        'izz="1e-4"/></inertial></link><joint name="flag_joint" type="continuous"><parent link="rocker"/>'
        '<child link="flag"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/></joint></robot>'))
    with pytest.raises(cd.ModelError, match=r"\['flag_joint'\] are linearly dependent"):
        cd.ClosedChain(cd.from_urdf(flag), fourbar.loops, independent=["coupler_joint", "rocker_joint"],
                       guess={"crank_joint": 1.0, "coupler_joint": -0.68, "rocker_joint": 1.11})
    with pytest.raises(cd.ModelError, match="2 equations but 3 joints are dependent"):
        cd.ClosedChain(robot, fourbar.loops, independent=[])
    # outside the assembly range: with the rocker as input, pointing back at the crank pivot
    rk = cd.ClosedChain(robot, fourbar.loops, independent=["rocker_joint"],
                        guess={"crank_joint": 1.0, "coupler_joint": -0.68, "rocker_joint": 1.11})
    with pytest.raises(cd.ModelError, match="cannot close.*outside the assembly range"):
        rk.assemble([3.1])
    with pytest.raises(ValueError, match="does not close the loops"):
        fourbar.inverse_dynamics([0.0, 0.0, 0.0], [1.0], [0.0])


def test_loops_side_file_errors(tmp_path):
    from composedyn.importers.loops import read_loops

    p = tmp_path / "x.loops.toml"
    p.write_text('[closure]\nindependent = ["a"]\n[[loops]]\nlink_a = "l1"\nlink_b = "l2"\ncolour = "red"\n')
    with pytest.raises(cd.ModelError, match=r"loops\[0\]: unknown key 'colour'"):
        read_loops(p)
    p.write_text('[[loops]]\nlink_a = "l1"\nlink_b = "l2"\n')
    with pytest.raises(cd.ModelError, match=r"missing \[closure\]"):
        read_loops(p)


def test_bundled_chains_load_as_trees():
    from composedyn.robots import names

    for name in ("fourbar", "slider_crank", "fivebar"):
        assert name in names() and cd.load(name).dof in (3, 4)


@pytest.mark.parametrize("kind,seed", [("position", 11), ("pose", 12)])
def test_spatial_loops_on_random_chains(kind, seed):
    """3-D closures: a random serial chain of 8 joints whose tip is tied to the ground (a point,
    or a whole frame) where it is at a random q0.  Velocity/acceleration closure against finite
    differences, forward o inverse, Kolev's projection against the closure forces."""
    from scipy.spatial.transform import Rotation

    from random_robots import random_urdf

    robot = cd.from_urdf(random_urdf(seed, 8, p_fixed=0.0, p_branch=0.0, damping=True))
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-1, 1, robot.dof)
    T = robot.link_poses(q0)["l7"]
    pa = np.array([0.1, -0.05, 0.02])
    loop = cd.LoopClosure("l7", "base", point_a=tuple(pa), point_b=tuple(T[:3, :3] @ pa + T[:3, 3]), kind=kind,
                          rpy_b=tuple(Rotation.from_matrix(T[:3, :3]).as_euler("xyz")))
    k = robot.dof - loop.n_eq
    ch = cd.ClosedChain(robot, [loop], independent=list(robot.joint_names[:k]),
                        guess=dict(zip(robot.joint_names, q0)))
    q = q0[:k] + rng.uniform(-0.05, 0.05, k)
    qd, qdd = rng.uniform(-1, 1, (2, k))
    assert np.abs(ch.constraint(ch.assemble(q))).max() < 1e-12
    eps = 1e-5
    assert np.allclose((ch.assemble(q + eps * qd) - ch.assemble(q - eps * qd)) / (2 * eps), ch.velocities(q, qd),
                       atol=1e-7)
    def state(s):
        return (q + s * eps * qd + 0.5 * (s * eps) ** 2 * qdd, qd + s * eps * qdd)
    fd = (ch.velocities(*state(1)) - ch.velocities(*state(-1))) / (2 * eps)
    assert np.allclose(fd, ch.accelerations(q, qd, qdd), atol=1e-6)
    tau = ch.inverse_dynamics(q, qd, qdd)
    assert np.allclose(ch.forward_dynamics(q, qd, tau), qdd, atol=1e-8)
    # the tree equations hold with the actuator torques and the closure forces
    qa, qda, qdda = ch.assemble(q), ch.velocities(q, qd), ch.accelerations(q, qd, qdd)
    applied = np.zeros(robot.dof)
    applied[:k] = tau
    lam = ch.constraint_forces(q, qd, qdd)
    J = ch.constraint_jacobian(qa)
    assert np.allclose(robot.inverse_dynamics(qa, qda, qdda), applied + J.T @ lam, atol=1e-9)


@pytest.mark.parametrize("name", ["fourbar", "slider_crank", "fivebar"])
def test_forward_dynamics_and_forces_match_pinocchio_constraint_dynamics(name):
    """Pinocchio's constraintDynamics with a 3-D point constraint between the same two link points
    (its z row is redundant for these planar mechanisms; the proximal solver copes): the tree
    accelerations and the closure force (world axes) equal ours."""
    from pin_oracle import PinPair, pin

    ch = cd.load_closed_chain(name)
    robot, (loop,) = ch.robot, ch.loops
    pp = PinPair(robot, robot.model.source)
    joint_of = {v: d["name"] for u, v, d in robot.graph.edges(data=True)}  # link -> its joint (= frame)
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pp.model,
                                  pp.model.getJointId(joint_of[loop.link_a]),
                                  pin.SE3(np.eye(3), np.array(loop.point_a)),
                                  pp.model.getJointId(joint_of[loop.link_b]),
                                  pin.SE3(np.eye(3), np.array(loop.point_b)),
                                  pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    cms.append(cm), cds.append(cm.createData())
    pin.initConstraintDynamics(pp.model, pp.data, cms, cds)
    rng = np.random.default_rng(4)
    q = ch.assemble(ch._last[ch._ind] + rng.uniform(-0.1, 0.1, ch.dof))[ch._ind]
    qd, tau = rng.uniform(-1, 1, (2, ch.dof))
    qdd = ch.forward_dynamics(q, qd, tau)
    tau_tree = np.zeros(robot.dof)
    tau_tree[ch._ind] = tau
    a = pin.constraintDynamics(pp.model, pp.data, pp.q(ch.assemble(q)), pp.v(ch.velocities(q, qd)), pp.v(tau_tree),
                               cms, cds, pin.ProximalSettings(1e-14, 1e-8, 200))
    assert np.allclose(a, pp.v(ch.accelerations(q, qd, qdd)), rtol=1e-9, atol=1e-9)
    assert np.allclose(cds[0].contact_force.vector[[0, 2]], ch.constraint_forces(q, qd, qdd), rtol=1e-8, atol=1e-8)
