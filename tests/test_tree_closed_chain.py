"""Closed chains whose spanning tree has joints of several coordinates (``TreeClosedChain``): a spatial
mechanism with a ball joint closed by an MJCF ``<equality weld>``.

Oracles: MuJoCo on the same file: its weld residual and velocity (``efc_pos``, ``efc_vel``) are zero at
composedyn's closed configurations and velocities, and its tree inverse dynamics with the constraint
off (``mj_inverse``, joint damping included) projected onto the actuated joint is composedyn's actuator
torque; central finite differences of the position closure along a motion give its velocity and
acceleration closures; the identities forward(inverse) = qdd, bias = inverse at qdd = 0, and energy
conserved by ``cd.simulate`` without friction.  The reduced Coriolis matrix: on chains of one-coordinate
joints it is the ``ClosedChain``'s (whose dJ/dt comes from the compiled loop kinematics, an independent
route); on a spatial chain with a ball joint among the independent ones, C qd = bias - gravity and
dM/dt - 2C is skew-symmetric with dM/dt by central differences of the reduced inertia along the motion.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.constraints.loops import LoopClosure
from composedyn.tree_closed_chain import TreeClosedChain
from composedyn.tree_robot import TreeRobot
from pin_oracle import rel_err

XML = """<mujoco><option gravity="0 0 -9.81"/><worldbody>
<body name="L1"><joint name="crank" type="hinge" axis="0 0 1" damping="0.1"/>
 <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
 <body name="coupler" pos="0.3 0 0"><joint name="s" type="ball" damping="0.05"/>
  <geom type="capsule" fromto="0 0 0 0.396 -0.147 -0.254" size="0.02" mass="0.8"/></body></body>
<body name="L2" pos="0.025 -0.738 -0.587"><joint name="h2" type="hinge" axis="0 0 1"/>
 <geom type="capsule" fromto="0 0 0 0.304 0.25 0.134" size="0.02" mass="0.5"/>
 <body name="L3" pos="0.304 0.25 0.134"><joint name="h3" type="hinge" axis="1 0 0" damping="0.02"/>
  <geom type="capsule" fromto="0 0 0 0.367 0.341 0.199" size="0.02" mass="0.4"/>
  <body name="L4" pos="0.367 0.341 0.199"><joint name="h4" type="hinge" axis="0 1 0"/>
   <geom type="sphere" size="0.03" mass="0.2"/></body></body></body>
</worldbody><equality><weld body1="coupler" body2="L4"/></equality>
<actuator><motor joint="crank"/></actuator></mujoco>"""

# four velocity coordinates free (crank and ball independent): a point of the coupler joined to L4 off h4's axis
CONNECT = XML.replace('<weld body1="coupler" body2="L4"/>',
                      '<connect body1="coupler" body2="L4" anchor="0.396 -0.147 -0.404"/>')

TOL = 1e-9


@pytest.fixture(scope="module")
def chain():
    return cd.load_closed_chain(XML)


def _mujoco_state(m, robot, q, v=None, a=None):
    """MuJoCo's qpos (ball quaternions (w, x, y, z)) and qvel, qacc from composedyn's q, v, a."""
    qm, vm, am = np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)
    for j in robot.joints:
        adr, dof = int(m.joint(j.name).qposadr[0]), int(m.joint(j.name).dofadr[0])
        x = q[j.idx_q:j.idx_q + j.nq]
        qm[adr:adr + j.nq] = np.r_[x[3], x[:3]] if j.kind == "spherical" else x
        for src, dst in ((v, vm), (a, am)):
            if src is not None:
                dst[dof:dof + j.nv] = src[j.idx_v:j.idx_v + j.nv]
    return qm, vm, am


def test_loads_as_a_tree_closed_chain(chain):
    assert isinstance(chain, TreeClosedChain)
    assert chain.joint_names == ("crank",) and chain.dependent_names == ("s", "h2", "h3", "h4")
    assert chain.dof == chain.nq == 1 and [lp.kind for lp in chain.loops] == ["pose"] and len(chain.rows) == 6
    assert [j.kind for j in chain.robot.joints].count("spherical") == 1


def test_closure_and_actuator_torques_equal_mujoco(chain):
    robot = chain.robot
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    tree = mujoco.MjModel.from_xml_string(XML)
    tree.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    dt = mujoco.MjData(tree)
    rng = np.random.default_rng(1)
    for crank in (0.4, -0.5, 0.9):
        q, qd, qdd = np.array([crank]), rng.uniform(-1, 1, 1), rng.uniform(-1, 1, 1)
        qa, qda, qdda = chain.assemble(q), chain.velocities(q, qd), chain.accelerations(q, qd, qdd)
        qm, vm, am = _mujoco_state(m, robot, qa, qda, qdda)
        d.qpos[:], d.qvel[:] = qm, vm
        mujoco.mj_forward(m, d)
        eq = d.efc_type == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        assert eq.sum() == 6
        assert np.abs(d.efc_pos[eq]).max() < 1e-10 and np.abs(d.efc_vel[eq]).max() < 1e-10
        dt.qpos[:], dt.qvel[:], dt.qacc[:] = qm, vm, am
        mujoco.mj_forward(tree, dt)
        dt.qacc[:] = am
        mujoco.mj_inverse(tree, dt)
        tau_tree = np.zeros(robot.nv)
        for j in robot.joints:
            dof = int(m.joint(j.name).dofadr[0])
            tau_tree[j.idx_v:j.idx_v + j.nv] = dt.qfrc_inverse[dof:dof + j.nv]
        W = chain.velocities(q, np.ones(1))[:, None]  # qd_all = W qd
        assert rel_err(chain.inverse_dynamics(q, qd, qdd), W.T @ tau_tree) < TOL
        assert rel_err(robot.inverse_dynamics(qa, qda, qdda), tau_tree) < TOL


def test_velocity_and_acceleration_closures_equal_finite_differences(chain):
    robot = chain.robot
    q0, qd, qdd, h = np.array([0.3]), np.array([0.8]), np.array([-0.6]), 1e-4
    path = chain.assemble(np.stack([q0 + qd * t + 0.5 * qdd * t * t for t in (-h, 0.0, h)]))
    back, fwd = robot.difference(path[1], path[0]), robot.difference(path[1], path[2])
    assert rel_err(chain.velocities(q0, qd), (fwd - back) / (2 * h)) < 1e-7
    assert rel_err(chain.accelerations(q0, qd, qdd), (fwd + back) / h ** 2) < 1e-5


def test_identities_batches_and_energy(chain):
    rng = np.random.default_rng(2)
    Q = np.array([[0.2], [0.5], [-0.3]])
    QD, QDD = rng.uniform(-1, 1, (2, 3, 1))
    tau = chain.inverse_dynamics(Q, QD, QDD)
    assert rel_err(chain.forward_dynamics(Q, QD, tau), QDD) < 1e-10
    assert rel_err(chain.bias_torques(Q, QD), chain.inverse_dynamics(Q, QD, 0 * QDD, friction=False)) < 1e-12
    M = chain.mass_matrix(Q)
    assert M.shape == (3, 1, 1) and np.all(M > 0)
    one = [chain.inverse_dynamics(Q[k], QD[k], QDD[k]) for k in range(3)]
    assert rel_err(np.stack(one), tau) < 1e-12  # batch = loop
    qa = chain.assemble(Q[0])
    assert rel_err(chain.inverse_dynamics(qa, QD[0], QDD[0]), tau[0]) < 1e-10  # every joint's closed q
    sim = cd.simulate(chain, np.array([0.2]), np.array([0.5]), np.linspace(0.0, 0.5, 11), friction=False,
                      rtol=1e-10, atol=1e-12)
    E = chain.energy(sim.q, sim.qd)
    assert np.ptp(E) < 1e-6 * max(1.0, np.abs(E).max())


@pytest.mark.parametrize("name", ["fourbar", "slider_crank", "fivebar"])
def test_coriolis_matrix_equals_the_closed_chain_of_one_coordinate_joints(name):
    closed = cd.load_closed_chain(name)
    robot = closed.robot
    tree = cd.ClosedChain(TreeRobot(robot.graph), closed.loops, closed.joint_names,
                          guess=dict(zip(robot.joint_names, closed.assembly)))
    assert isinstance(tree, TreeClosedChain)
    ind = [robot.joint_names.index(j) for j in closed.joint_names]
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd = closed.assembly[ind] + rng.uniform(-0.05, 0.05, closed.dof), rng.uniform(-1, 1, closed.dof)
        C = closed.coriolis_matrix(q, qd)
        assert np.abs(C).max() > 1e-4 and rel_err(tree.coriolis_matrix(q, qd), C) < 1e-10


def _solo12_feet_joined():
    """Solo12 (floating) with its front feet joined by a rod at a crouched guess: the free flyer, one front
    leg and the hind legs independent."""
    import warnings

    from composedyn.testing.pinocchio_oracle import erd_urdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load(erd_urdf("solo12"), floating=True)
    guess = {"FL_HFE": 0.8, "FL_KFE": -1.6, "FR_HFE": 0.8, "FR_KFE": -1.6}
    q = robot.neutral()
    for j in robot.joints:
        q[j.idx_q] = guess.get(j.name, q[j.idx_q]) if j.nq == 1 else q[j.idx_q]
    Ta, Tb = robot.frame_pose(q, "FL_FOOT"), robot.frame_pose(q, "FR_FOOT")
    loop = LoopClosure("FL_FOOT", "FR_FOOT", kind="position", point_b=Tb[:3, :3].T @ (Ta[:3, 3] - Tb[:3, 3]))
    independent = [j.name for j in robot.joints if not j.name.startswith("FR_")]
    return cd.ClosedChain(robot, [loop], independent, guess=guess)


@pytest.mark.parametrize("which", ["ball", "floating"])
def test_coriolis_matrix_with_several_coordinates_independent(which):
    chain = cd.load_closed_chain(CONNECT, independent=("crank", "s")) if which == "ball" else _solo12_feet_joined()
    robot = chain.robot
    assert isinstance(chain, TreeClosedChain) and len(chain.rows) == 3
    assert (chain.dof, chain.nq) == ((4, 5) if which == "ball" else (15, 16))
    rng = np.random.default_rng(5)
    ind = [k for j in robot.joints if j.name in chain.joint_names for k in range(j.idx_v, j.idx_v + j.nv)]
    ind_q = [k for j in robot.joints if j.name in chain.joint_names for k in range(j.idx_q, j.idx_q + j.nq)]
    Q, QD = [], []
    for _ in range(3):
        move = np.zeros(robot.nv)
        move[ind] = rng.uniform(-0.05, 0.05, chain.dof)
        q, qd = robot.integrate(chain.assembly, move)[ind_q], rng.uniform(-1, 1, chain.dof)
        C = chain.coriolis_matrix(q, qd)
        assert rel_err(C @ qd, chain.bias_torques(q, qd) - chain.gravity_torques(q)) < 1e-12
        tau = chain.inverse_dynamics(q, qd, qd[::-1])
        assert rel_err(chain.forward_dynamics(q, qd, tau), qd[::-1]) < 1e-9
        qa, h, M = chain.assemble(q), 1e-5, []
        for t in (h, -h):  # the reduced inertia along q ⊕ t qd (the ball's angular velocity in its frame)
            move[:] = 0.0
            move[ind] = t * qd
            chain.assembly = qa
            M.append(chain.mass_matrix(robot.integrate(qa, move)[ind_q]))
        S = (M[0] - M[1]) / (2 * h) - 2 * C
        assert np.abs(C).max() > 0.1 and np.abs(S + S.T).max() < 1e-6 * np.abs(C).max()
        chain.assembly = qa
        Q.append(q)
        QD.append(qd)
    Cb = chain.coriolis_matrix(np.array(Q), np.array(QD))
    assert rel_err(Cb[2], chain.coriolis_matrix(Q[2], QD[2])) < 1e-12  # batch = loop


@pytest.mark.parametrize("which", ["fivebar", "ball"])
def test_one_configuration_with_a_batch_of_rates(which):
    chain = cd.load_closed_chain("fivebar") if which == "fivebar" else \
        cd.load_closed_chain(CONNECT, independent=("crank", "s"))
    robot = chain.robot
    q = chain.assembly[[k for j in robot.joints if j.name in chain.joint_names for k in range(j.idx_q, j.idx_q + j.nq)]]
    QD, QDD = np.random.default_rng(6).uniform(-1, 1, (2, 3, chain.dof))
    for method in ("coriolis_matrix", "bias_torques", "velocities", "inverse_dynamics", "forward_dynamics"):
        f = getattr(chain, method)
        args = (QD,) if method in ("coriolis_matrix", "bias_torques", "velocities") else (QD, QDD)
        batch = f(q, *args)
        assert batch.shape[0] == 3, method
        assert rel_err(batch, np.stack([f(q, *(x[k] for x in args)) for k in range(3)])) < 1e-12, method


def test_perturbed_keeps_the_mechanism(chain):
    q = np.array([0.4])
    other = chain.perturbed(0.1, seed=3)
    assert isinstance(other, TreeClosedChain) and other.joint_names == chain.joint_names
    assert rel_err(other.assemble(q), chain.assemble(q)) < 1e-10  # the loops, partition and branch kept
    assert other.robot.mass == pytest.approx(chain.robot.perturbed(0.1, seed=3).mass, rel=1e-15)
    assert abs(other.robot.mass / chain.robot.mass - 1) > 1e-4
    assert rel_err(other.mass_matrix(q), chain.perturbed(0.1, seed=3).mass_matrix(q)) < 1e-15
    assert rel_err(other.mass_matrix(q), chain.mass_matrix(q)) > 1e-4


def test_errors_name_the_joints(chain):
    robot = chain.robot
    loop = chain.loops[0]
    with pytest.raises(cd.ModelError, match="6 equations but the dependent joints"):
        cd.ClosedChain(robot, [loop], ["crank", "h2"])
    with pytest.raises(cd.ModelError, match="link 'nowhere'"):
        cd.ClosedChain(robot, [LoopClosure("coupler", "nowhere", kind="pose")], ["crank"])
    with pytest.raises(ValueError, match="does not close the loops"):
        chain.inverse_dynamics(robot.neutral() + 0.1, np.ones(1), np.ones(1))


def test_cli_info_lists_the_loop_and_the_joints(tmp_path, capsys):
    from composedyn.cli import main

    path = tmp_path / "mechanism.xml"
    path.write_text(XML)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "joint s (spherical)" in out and "actuated (independent): crank" in out
    assert "dependent: s, h2, h3, h4" in out and "[pose; rows x, y, z, rx, ry, rz]" in out


def _wrapped(robot, q):
    """q with the angles of revolute joints reduced to [-pi, pi)."""
    q = q.copy()
    for j in robot.joints:
        if j.kind in ("revolute", "continuous"):
            q[j.idx_q] = np.remainder(q[j.idx_q] + np.pi, 2 * np.pi) - np.pi
    return q


@pytest.mark.parametrize("name", ["fourbar", "slider_crank", "fivebar"])
def test_independent_angles_whole_turns_away_close_the_short_way(name, monkeypatch):
    """Independent angles 1000 (and -3) turns away close as at the nearby angles, in a few steps (each step and
    Newton update one ``robot.integrate``; the long way round would take 31 000 steps), with the residual
    within ``tol`` at the far angles themselves."""
    closed = cd.load_closed_chain(name)
    robot = TreeRobot(closed.robot.graph)
    chain = cd.ClosedChain(robot, closed.loops, closed.joint_names,
                           guess=dict(zip(closed.robot.joint_names, closed.assembly)))
    assert {j.kind for j in robot.joints if j.name in chain.joint_names} <= {"revolute", "continuous"}
    ind = [j.idx_q for j in robot.joints if j.name in chain.joint_names]
    start = chain.assembly
    near_q = start[ind] + np.array([0.3, -0.1])[:chain.nq]
    near = chain.assemble(near_q)
    far_q = near_q + 2 * np.pi * np.array([1000, -3])[:chain.nq]
    chain.assembly = start
    calls = []
    integrate = robot.integrate

    def counted(q, v):  # the continuation steps and Newton's updates, each through robot.integrate
        calls.append(1)
        assert len(calls) <= 100, "the closure walks the long way round"
        return integrate(q, v)

    monkeypatch.setattr(robot, "integrate", counted)
    far = chain.assemble(far_q)
    assert np.array_equal(far[ind], far_q)
    assert np.abs(_wrapped(robot, far) - _wrapped(robot, near)).max() < 1e-9
    assert np.abs(chain.constraint(far)).max() <= chain.tol  # at the float far_q's own angle (not near_q's)
    dep = [j.idx_q for j in robot.joints if j.name not in chain.joint_names]
    assert np.abs(far[dep] - start[dep]).max() < np.pi  # the dependent joints continue start's angles
    assert len(calls) < 30


def test_helical_prismatic_and_mimic_followed_coordinates_are_not_wrapped():
    """A nut on a screw (helical, pitch 0.5 m/rad) on a slide, pinned in the xz plane to a point carried by
    two dependent slides behind a slide that mimics a revolute crank (0.1 m/rad): none of these coordinates
    is periodic in the loop equations, so the closure moves them the whole way."""
    from composedyn.dynamics.schema import add_joint, add_link, new_graph

    g = new_graph("screw_slides")
    add_link(g, "ground")
    for link in ("arm", "carriage", "nut", "pusher", "u_link", "s_link"):
        add_link(g, link, mass=1.0, inertia=0.01 * np.eye(3))
    add_joint(g, "crank", "ground", "arm", type="revolute", axis=(0, 0, 1), limits=(-1e3, 1e3, 10.0, 10.0))
    add_joint(g, "slide", "ground", "carriage", type="prismatic", axis=(1, 0, 0))
    add_joint(g, "screw", "carriage", "nut", type="helical", axis=(0, 0, 1), pitch=0.5)
    add_joint(g, "push", "ground", "pusher", type="prismatic", axis=(1, 0, 0), mimic=("crank", 0.1, 0.0))
    add_joint(g, "u", "pusher", "u_link", type="prismatic", axis=(1, 0, 0))
    add_joint(g, "s", "u_link", "s_link", type="prismatic", axis=(0, 0, 1))
    robot = cd.from_graph(g)
    assert isinstance(robot, TreeRobot) and robot.mimic_joint_names == ("push",)
    assert {j.name: j.kind for j in robot.joints}["crank"] in ("revolute", "continuous")
    chain = cd.ClosedChain(robot, [LoopClosure("nut", "s_link", kind="planar", plane="xz")],
                           ["crank", "slide", "screw"])
    assert isinstance(chain, TreeClosedChain)
    at = {j.name: j.idx_q for j in robot.joints}
    for crank, slide, screw in ((2 * np.pi + 0.3, 4.0, 2 * np.pi + 0.3), (-0.2, -3.5, -4 * np.pi + 0.1)):
        q = chain.assemble(np.array([crank, slide, screw]))
        assert np.abs(chain.constraint(q)).max() <= chain.tol
        assert q[at["u"]] == pytest.approx(slide - 0.1 * crank, abs=1e-12)
        assert q[at["s"]] == pytest.approx(0.5 * screw, abs=1e-12)


def test_rotation_vectors_of_the_orientation_error_at_every_angle():
    # the orientation rows of a pose loop: exact to rounding near the identity (where Newton closes the loops),
    # and right near a half turn (where the skew part loses the axis); any batch shape
    from scipy.spatial.transform import Rotation

    from composedyn.tree_closed_chain import _rotvec

    rng = np.random.default_rng(5)
    angles = np.concatenate([[0.0, 1e-15, 1e-9, 1e-5, 0.2], rng.uniform(0.0, np.pi, 21),
                             np.pi - np.array([0.3, 0.15, 0.14, 0.1, 1e-3, 1e-8, 0.0])])
    axes = rng.normal(size=(len(angles), 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    rv = axes * angles[:, None]
    R = Rotation.from_rotvec(rv).as_matrix()
    got = _rotvec(R.reshape(3, 11, 3, 3)).reshape(-1, 3)
    assert np.allclose(np.linalg.norm(got, axis=1), angles, rtol=0, atol=1e-12)
    assert np.abs(Rotation.from_rotvec(got).as_matrix() - R).max() < 1e-12
    one = _rotvec(R[-2])  # a single matrix near a half turn
    assert one.shape == (3,) and np.abs(Rotation.from_rotvec(one).as_matrix() - R[-2]).max() < 1e-12
    small = angles < 0.5
    assert np.abs(got[small] - rv[small]).max() < 1e-16 + 1e-15 * angles[small].max()
