"""Robots whose joints have configuration spaces of their own (``TreeRobot``): spherical, universal,
helical, free-flyer and planar joints anywhere in the tree, loaded from a kinematic graph, MJCF and
SDFormat.

Oracles: Pinocchio models built here from the same graph, edge by edge, with its own joint models
(``JointModelSpherical``, ``JointModelUniversal``, ``JointModelHelicalUnaligned``, ``JointModelFreeFlyer``,
``JointModelPlanar``; fixed joints as bodies appended to their joint) on every quantity, ``integrate`` and
``difference``; MuJoCo on an MJCF file with ball joints (``mj_fullM``, ``qfrc_bias``, ``mj_inverse`` with
joint damping, body poses); Drake on an SDFormat file with universal and screw joints (mass matrix, bias,
poses) and with a ball joint (poses, Drake's roll-pitch-yaw coordinates); the identities
tau = M a + h + friction, forward(inverse) = a, C v + g = h and dM/dt = C + C^T along ``integrate``.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.testing.pinocchio_trees import graph_pinocchio as pinocchio_of
from composedyn.testing.pinocchio_trees import random_joint_graph as random_graph
from composedyn.tree_robot import TreeRobot
from pin_oracle import pin

TOL = 1e-9


class Pair:
    """A TreeRobot and the Pinocchio model of the same graph, with the coordinate maps by joint name."""

    def __init__(self, g):
        self.robot = cd.from_graph(g)
        self.model, self.where = pinocchio_of(g)
        self.data = self.model.createData()
        iq, iv = [], []
        for j in self.robot.joints:
            jm = self.model.joints[self.model.getJointId(j.name)]
            iq += range(jm.idx_q, jm.idx_q + j.nq)
            iv += range(jm.idx_v, jm.idx_v + j.nv)
        self.iq, self.iv = np.array(iq), np.array(iv)

    def q(self, q):
        out = np.zeros(self.model.nq)
        out[self.iq] = q
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self.iv] = v
        return out

    def rows(self, x):  # a Pinocchio vector or matrix in composedyn's velocity order
        x = np.asarray(x)
        return x[self.iv] if x.ndim == 1 else x[np.ix_(self.iv, self.iv)] if x.shape[0] == x.shape[1] else x

    def link(self, q, link: str):
        """Pinocchio's world pose of ``link`` at composedyn's q."""
        jid, X = self.where[link]
        pin.forwardKinematics(self.model, self.data, self.q(q))
        return self.data.oMi[jid] * X


def _err(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


@pytest.fixture(scope="module", params=[0, 1, 2])
def pair(request):
    return Pair(random_graph(request.param))


def _state(robot, seed: int):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(seed=seed), rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def test_loads_as_a_tree_robot_with_every_kind(pair):
    r = pair.robot
    assert isinstance(r, TreeRobot)
    kinds = {j.kind for j in r.joints}
    assert {"spherical", "universal", "helical", "free_flyer", "planar", "revolute", "prismatic"} <= kinds
    assert r.nq == sum(j.nq for j in r.joints) == pair.model.nq
    assert r.nv == sum(j.nv for j in r.joints) == pair.model.nv
    assert r.nq != r.nv


def test_dynamics_equal_pinocchio(pair):
    r, m, d = pair.robot, pair.model, pair.data
    for seed in range(3):
        q, v, a = _state(r, seed)
        qp, vp, ap = pair.q(q), pair.v(v), pair.v(a)
        M = pin.crba(m, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        arm = r.array_model.armature
        assert _err(r.mass_matrix(q), pair.rows(M) + np.diag(arm)) < TOL
        tau_pin = pair.rows(pin.rnea(m, d, qp, vp, ap))
        assert _err(r.inverse_dynamics(q, v, a, friction=False), tau_pin + arm * a) < TOL
        assert _err(r.bias_torques(q, v), pair.rows(pin.nonLinearEffects(m, d, qp, vp))) < TOL
        assert _err(r.gravity_torques(q), pair.rows(pin.computeGeneralizedGravity(m, d, qp))) < TOL
        tau = np.random.default_rng(seed).normal(size=r.nv)
        Ma = pair.rows(M) + np.diag(arm)
        a_ref = np.linalg.solve(Ma, tau - pair.rows(pin.nonLinearEffects(m, d, qp, vp)))
        assert _err(r.forward_dynamics(q, v, tau, friction=False), a_ref) < TOL
        assert _err(r.center_of_mass(q), pin.centerOfMass(m, d, qp)) < TOL
        assert _err(r.com_jacobian(q), pin.jacobianCenterOfMass(m, d, qp)[:, pair.iv]) < TOL
        Y = pin.computeJointTorqueRegressor(m, d, qp, vp, ap)[pair.iv]  # 10 columns per joint, Pinocchio's order
        cols = np.concatenate([np.arange(10 * (m.getJointId(j.name) - 1), 10 * m.getJointId(j.name))
                               for j in r.joints])
        assert _err(r.regressor(q, v, a), Y[:, cols]) < TOL
        assert _err(r.regressor(q, v, a) @ r.inertial_parameters(), tau_pin) < TOL
        A = pin.computeCentroidalMap(m, d, qp)
        assert _err(r.centroidal_momentum_matrix(q), A[:, pair.iv]) < TOL


def test_frames_equal_pinocchio(pair):
    r, m = pair.robot, pair.model
    q, v, a = _state(r, 7)
    qp, vp, ap = pair.q(q), pair.v(v), pair.v(a)
    for link in r.frame_names:
        jid, X = pair.where[link]
        fid = m.addFrame(pin.Frame(f"f_{link}", jid, 0, X, pin.FrameType.OP_FRAME)) \
            if not m.existFrame(f"f_{link}") else m.getFrameId(f"f_{link}")
        data = m.createData()
        pin.forwardKinematics(m, data, qp, vp, ap)
        pin.updateFramePlacements(m, data)
        pin.computeJointJacobians(m, data, qp)
        assert _err(r.frame_pose(q, link), data.oMf[fid].homogeneous) < TOL
        for reference, rf in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
            J = pin.getFrameJacobian(m, data, fid, rf)[:, pair.iv]
            assert _err(r.jacobian(q, link, reference), J) < TOL, (link, reference)
            assert _err(r.frame_velocity(q, v, link, reference), pin.getFrameVelocity(m, data, fid, rf).vector) < TOL
            acc = pin.getFrameClassicalAcceleration(m, data, fid, rf).vector
            assert _err(r.frame_acceleration(q, v, a, link, reference), acc) < TOL, (link, reference)


def test_configuration_space_equals_pinocchio(pair):
    r, m = pair.robot, pair.model
    q0, v, _ = _state(r, 3)
    q1 = r.random_configuration(seed=4)
    assert _err(pair.q(r.integrate(q0, v, 0.3)), pin.integrate(m, pair.q(q0), 0.3 * pair.v(v))) < TOL
    assert _err(r.difference(q0, q1), pair.rows(pin.difference(m, pair.q(q0), pair.q(q1)))) < TOL
    assert _err(r.difference(q0, r.integrate(q0, v, 0.2)), 0.2 * v) < TOL
    assert _err(pair.q(r.neutral()), pin.neutral(m)) < TOL


def test_identities_batches_and_numpy_backend(pair):
    r = pair.robot
    qs = r.random_configuration(size=4, seed=11)
    rng = np.random.default_rng(11)
    v, a = rng.normal(size=(4, r.nv)), rng.normal(size=(4, r.nv))
    tau = r.inverse_dynamics(qs, v, a)
    am = r.array_model
    friction = am.damping * v + am.coulomb * np.sign(v)
    assert _err(tau, np.einsum("nij,nj->ni", r.mass_matrix(qs), a) + r.bias_torques(qs, v) + friction) < TOL
    assert _err(r.forward_dynamics(qs, v, tau), a) < TOL
    assert _err(np.einsum("nij,nj->ni", r.coriolis_matrix(qs, v), v) + r.gravity_torques(qs), r.bias_torques(qs, v)) \
        < TOL
    for k in range(4):  # one sample (the C caller) equals its row of the batch
        assert np.array_equal(r.inverse_dynamics(qs[k], v[k], a[k]), tau[k])
    # dM/dt = C + C^T along integrate, by central differences
    q, vk, h = qs[0], v[0], 1e-6
    dM = (r.mass_matrix(r.integrate(q, vk, h)) - r.mass_matrix(r.integrate(q, vk, -h))) / (2 * h)
    C = r.coriolis_matrix(q, vk)
    assert _err(dM, C + C.T) < 1e-6
    link = r.frame_names[-1]
    compiled = [r.inverse_dynamics(qs, v, a), r.mass_matrix(qs), r.jacobian(qs, link, "local"),
                r.frame_acceleration(qs, v, a, link), r.center_of_mass(qs), r.coriolis_matrix(qs, v)]
    dispatch.set_backend("numpy")
    try:
        numpy = [r.inverse_dynamics(qs, v, a), r.mass_matrix(qs), r.jacobian(qs, link, "local"),
                 r.frame_acceleration(qs, v, a, link), r.center_of_mass(qs), r.coriolis_matrix(qs, v)]
    finally:
        dispatch.set_backend("numba")
    for x, y in zip(compiled, numpy):
        assert _err(x, y) < TOL


def test_fast_and_external_wrenches(pair):
    r = pair.robot
    q, v, a = _state(r, 5)
    fast = r.fast
    assert np.array_equal(fast.inverse_dynamics(q, v, a), r.inverse_dynamics(q, v, a))
    k = len(r.frame_names) - 1
    assert np.array_equal(fast.jacobian(q, k, 1), r.jacobian(q, r.frame_names[k], "local"))
    # a wrench at a link's centre of mass enters as -J_c^T w (J_c: the Jacobian of that point)
    link = next(f for f in r.frame_names if r.array_model.frame_body[r.frame_names.index(f)] >= 0
                and r.graph.nodes[f]["mass"] > 0)
    w = np.random.default_rng(1).normal(size=6)
    com = r.graph.nodes[link]["com"]
    T = r.frame_pose(q, link)
    J = r.jacobian(q, link, "world")
    c = T[:3, :3] @ com
    Jc = J.copy()
    Jc[:3] -= np.cross(c, J[3:].T).T  # velocity of the centre of mass: v_o + w x c
    expected = r.inverse_dynamics(q, v, a) - Jc.T @ w
    assert _err(r.inverse_dynamics(q, v, a, f_ext={link: w}), expected) < TOL
    assert _err(r.forward_dynamics(q, v, expected, f_ext={link: w}), a) < TOL


MJCF = """<mujoco><option gravity="0.2 0 -9.81"/><worldbody>
<body name="a" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2"><joint name="ja" type="ball" pos="0.05 0 0.02" damping="0.3"
 armature="0.01"/><geom type="box" size="0.1 0.05 0.2" mass="1.3"/>
 <body name="b" pos="0 0 -0.4" euler="0.3 0.1 0.2"><joint name="jb" type="hinge" axis="0 1 1" pos="0 0 0.1"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="0.7"/>
  <body name="c" pos="0.1 0 -0.3"><joint name="jc" type="ball" damping="0.2"/><joint name="jd" type="slide"
   axis="1 0 0"/><geom type="sphere" size="0.05" pos="0.1 0.02 0" mass="0.4"/>
  </body></body></body></worldbody></mujoco>"""


def test_fast_derivatives_equal_the_methods(pair):
    # robot.fast offers the derivatives of every tree (the methods are checked against Pinocchio and
    # finite differences in test_tree_derivatives.py); one sample, a batch and out= arrays
    r = pair.robot
    fast = r.fast
    assert {"inverse_dynamics_derivatives", "forward_dynamics_derivatives"} <= set(dir(fast))
    Q = r.random_configuration(size=3, seed=21)
    V, X = np.random.default_rng(21).normal(size=(2, 3, r.nv))
    for name in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives"):
        method, call = getattr(r, name), getattr(fast, name)
        for friction in (0, 1):
            expected = method(Q, V, X, friction=bool(friction))
            got = call(Q, V, X, friction=friction)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.shape == e.shape == (3, r.nv, r.nv) and _err(g, e) < 1e-12, name
            one = call(Q[1], V[1], X[1], friction=friction)
            for g, e in zip(one, expected):
                assert g.shape == (r.nv, r.nv) and _err(g, e[1]) < 1e-12, name
    out = np.full((r.nv, r.nv), np.nan)
    with pytest.raises(ValueError, match="out"):  # several results: a tuple is not one out array
        fast.inverse_dynamics_derivatives(Q[0], V[0], X[0], out=out)
    with pytest.raises(ValueError, match=rf"q has shape \({r.nv},\)"):
        fast.forward_dynamics_derivatives(V[0], V[0], X[0])


def test_mjcf_ball_joints_equal_mujoco():
    import mujoco

    r = cd.from_mjcf(MJCF)
    assert isinstance(r, TreeRobot)
    assert [(j.name, j.kind) for j in r.joints] == [("ja", "spherical"), ("jb", "continuous"), ("jc", "spherical"),
                                                    ("jd", "prismatic")]
    m = mujoco.MjModel.from_xml_string(MJCF)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    for _ in range(3):
        qm = np.zeros(m.nq)
        q = np.zeros(r.nq)
        for j in r.joints:
            adr = int(m.joint(j.name).qposadr[0])
            if j.kind == "spherical":  # MuJoCo: (w, x, y, z); composedyn: (x, y, z, w)
                x = rng.normal(size=4)
                qm[adr:adr + 4] = x / np.linalg.norm(x)
                q[j.idx_q:j.idx_q + 4] = np.r_[qm[adr + 1:adr + 4], qm[adr]]
            else:
                qm[adr] = q[j.idx_q] = rng.normal()
        perm = np.concatenate([np.arange(m.joint(j.name).dofadr[0], m.joint(j.name).dofadr[0] + j.nv)
                               for j in r.joints])
        vm, am = rng.normal(size=m.nv), rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:] = qm, vm
        mujoco.mj_forward(m, d)
        d.qacc[:] = am
        mujoco.mj_inverse(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        v, a = vm[perm], am[perm]
        assert _err(r.mass_matrix(q), M[np.ix_(perm, perm)]) < TOL
        assert _err(r.bias_torques(q, v), d.qfrc_bias[perm]) < TOL
        assert _err(r.inverse_dynamics(q, v, a), d.qfrc_inverse[perm]) < TOL  # with the joints' damping
        for body in ("a", "b", "c"):
            T = r.frame_pose(q, body)
            assert _err(T[:3, 3], d.xpos[m.body(body).id]) < TOL
            assert _err(T[:3, :3], d.xmat[m.body(body).id].reshape(3, 3)) < TOL


SDF = """<sdf version="1.10"><model name="m">
<link name="a"><pose>0 0 1 0.1 0.2 0.3</pose><inertial><mass>1.2</mass><inertia><ixx>0.1</ixx><iyy>0.2</iyy>
 <izz>0.15</izz><ixy>0.01</ixy></inertia><pose>0.05 0 0 0 0 0</pose></inertial></link>
<joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>
<link name="b"><pose relative_to="a">0.2 0 -0.3 0 0.4 0</pose><inertial><mass>0.8</mass><inertia><ixx>0.05</ixx>
 <iyy>0.04</iyy><izz>0.03</izz></inertia><pose>0 0.1 0 0 0 0</pose></inertial></link>
<joint name="u" type="universal"><pose relative_to="b">0 0 0.1 0 0 0.2</pose><parent>a</parent><child>b</child>
 <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>
<link name="c"><pose relative_to="b">0 0 -0.4 0.3 0 0</pose><inertial><mass>0.5</mass><inertia><ixx>0.02</ixx>
 <iyy>0.02</iyy><izz>0.01</izz></inertia><pose>0.03 0 0.02 0 0 0</pose></inertial></link>
<joint name="s" type="screw"><parent>b</parent><child>c</child><axis><xyz>0 0.6 0.8</xyz></axis>
 <screw_thread_pitch>0.3</screw_thread_pitch></joint>
<link name="d"><pose relative_to="c">0.1 0.1 -0.2 0 0 0</pose><inertial><mass>0.3</mass><inertia><ixx>0.01</ixx>
 <iyy>0.02</iyy><izz>0.015</izz></inertia><pose>0 0 -0.05 0 0 0</pose></inertial></link>
<joint name="ball" type="ball"><parent>c</parent><child>d</child></joint>
</model></sdf>"""


def _drake(path):
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(path))
    plant.Finalize()
    return plant, plant.CreateDefaultContext()


def test_sdf_universal_screw_and_ball_equal_drake(tmp_path):
    from scipy.spatial.transform import Rotation

    path = tmp_path / "m.sdf"
    path.write_text(SDF)
    r = cd.from_sdf(path)
    assert isinstance(r, TreeRobot)
    assert [(j.name, j.kind) for j in r.joints] == [("u", "universal"), ("s", "helical"), ("ball", "spherical")]
    assert r.joints[1].pitch == pytest.approx(0.3 / (2 * np.pi))
    plant, ctx = _drake(path)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = r.random_configuration(seed=int(rng.integers(1000)))
        qd = np.zeros(plant.num_positions())
        for j in r.joints[:2]:
            J = plant.GetJointByName(j.name)
            qd[J.position_start():J.position_start() + j.nq] = q[j.idx_q:j.idx_q + j.nq]
        ball = plant.GetJointByName("ball")  # Drake's BallRpyJoint: roll, pitch, yaw of the child frame
        qb = q[r.joints[2].idx_q:r.joints[2].idx_q + 4]
        qd[ball.position_start():ball.position_start() + 3] = Rotation.from_quat(qb).as_euler("xyz")
        plant.SetPositions(ctx, qd)
        for link in ("b", "c", "d"):
            X = plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName(link)).GetAsMatrix4()
            assert _err(r.frame_pose(q, link), X) < TOL, link
        # the mass matrix and bias of the universal and screw joints (the ball held still: Drake's
        # velocities of a ball are roll-pitch-yaw rates)
        vd = np.zeros(plant.num_velocities())
        v = np.zeros(r.nv)
        v[:3] = rng.normal(size=3)
        for j in r.joints[:2]:
            J = plant.GetJointByName(j.name)
            vd[J.velocity_start():J.velocity_start() + j.nv] = v[j.idx_v:j.idx_v + j.nv]
        plant.SetVelocities(ctx, vd)
        first = np.concatenate([np.arange(plant.GetJointByName(j.name).velocity_start(),
                                          plant.GetJointByName(j.name).velocity_start() + j.nv) for j in r.joints[:2]])
        M = plant.CalcMassMatrix(ctx)
        assert _err(r.mass_matrix(q)[:3, :3], M[np.ix_(first, first)]) < TOL
        h = plant.CalcBiasTerm(ctx) - plant.CalcGravityGeneralizedForces(ctx)
        assert _err(r.bias_torques(q, v)[:3], h[first]) < TOL


def test_errors_name_the_joint(tmp_path):
    g = random_graph(0)
    j = next(d["name"] for _, _, d in g.edges(data=True) if d["type"] == "revolute")
    s = next(d["name"] for _, _, d in g.edges(data=True) if d["type"] == "spherical")
    bad = g.copy()
    next(d for _, _, d in bad.edges(data=True) if d["name"] == j)["mimic"] = (s, 1.0, 0.0)
    assert cd.from_graph(bad, mimic="independent").nv == cd.from_graph(g).nv  # the relation ignored
    with pytest.raises(cd.ModelError, match=f"'{j}' mimics '{s}'.*not supported"):
        cd.from_graph(bad)
    bad = g.copy()
    next(d for _, _, d in bad.edges(data=True) if d["type"] == "universal")["axis2"] = (0.0, 0.0, 0.0)
    with pytest.raises(cd.ModelError, match="axis2"):
        cd.from_graph(bad)
    r = cd.from_graph(g)
    q = r.neutral()
    spherical = next(x for x in r.joints if x.kind == "spherical")
    q[spherical.idx_q:spherical.idx_q + 4] = 0.0
    for call in (lambda: r.mass_matrix(q), lambda: r.inverse_dynamics(q, np.zeros(r.nv), np.zeros(r.nv)),
                 lambda: r.integrate(q, np.zeros(r.nv))):
        with pytest.raises(ValueError, match=f"quaternion of joint '{spherical.name}'.*zero norm"):
            call()
    nan = r.neutral()
    nan[0] = np.nan
    with pytest.raises(ValueError, match="q contains NaN"):  # as for every robot: refused by name
        r.mass_matrix(nan)
    with pytest.raises(cd.ModelError, match=f"cannot be written as URDF: joints .*'{spherical.name}' \\(spherical\\)"):
        r.to_urdf("never_written.urdf")
    with pytest.raises(ValueError, match=f"quaternion of joint '{spherical.name}'.*zero norm"):
        r.composed_vectors(q)
    with pytest.raises(ValueError, match=r"q has shape \(22,\)|q has shape"):
        r.mass_matrix(np.zeros(r.nq + 1))
    with pytest.raises(ValueError, match="unknown frame|no frame|not a frame"):
        r.jacobian(q, "nope")
    # SDFormat: a ball joint met from its child side is refused by name
    rev = SDF.replace("<joint name=\"w\" type=\"fixed\"><parent>world</parent><child>a</child></joint>",
                      "<joint name=\"w\" type=\"fixed\"><parent>world</parent><child>d</child></joint>")
    path = tmp_path / "rev.sdf"
    path.write_text(rev)
    with pytest.raises(cd.ModelError, match="ball.*nearer the root|spherical joint is taken only"):
        cd.from_sdf(path)


def test_symbolic_and_cli_refuse_in_one_line(tmp_path, capsys):
    from composedyn.cli import main

    path = tmp_path / "ball.xml"
    path.write_text(MJCF)
    r = cd.load(path)
    with pytest.raises(cd.ModelError, match="symbolic equations take joints of one coordinate; joints 'ja'"):
        cd.symbolic.equations(r)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "joint ja (spherical): q[0:4], v[0:3], after the world" in out
    for command in (["torques", str(path), str(tmp_path / "x.csv")], ["simulate", str(path)],
                    ["convert", str(path), str(tmp_path / "out.urdf")]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and ("joints of several coordinates" in err or "joints 'ja' (spherical)" in err), err


def test_torch_and_jax_front_ends_equal_the_compiled_robot():
    import jax
    import torch

    r = Pair(random_graph(1)).robot
    q = r.random_configuration(size=3, seed=0)
    rng = np.random.default_rng(0)
    v, a = rng.normal(size=(3, r.nv)), rng.normal(size=(3, r.nv))
    t = r.to_torch()
    assert _err(t.inverse_dynamics(torch.tensor(q), torch.tensor(v), torch.tensor(a)).numpy(),
                r.inverse_dynamics(q, v, a)) < TOL
    assert _err(t.integrate(torch.tensor(q), torch.tensor(v), 0.1).numpy(), r.integrate(q, v, 0.1)) < TOL
    jax.config.update("jax_enable_x64", True)  # as tests/test_jax.py runs
    assert _err(np.asarray(r.to_jax().mass_matrix(q)), r.mass_matrix(q)) < TOL


def test_simulation_conserves_energy_and_momentum():
    g = random_graph(2)
    for _, _, d in g.edges(data=True):
        d["damping"] = d["friction"] = 0.0
    r = cd.from_graph(g)
    q0 = r.random_configuration(seed=3)
    v0 = np.random.default_rng(3).normal(size=r.nv)
    h = 1e-6  # the configuration rate is the derivative of integrate
    assert _err(r.configuration_rate(q0, v0), (r.integrate(q0, v0, h) - r.integrate(q0, v0, -h)) / (2 * h)) < 1e-8
    sim = cd.simulate(r, q0, v0, t=np.linspace(0.0, 0.5, 6))
    assert sim.energy_drift < 1e-6
    assert np.allclose(np.linalg.norm(sim.q[:, [j.idx_q + k for j in r.joints if j.kind == "spherical"
                                                for k in range(4)]].reshape(6, -1, 4), axis=-1), 1.0)
    g.graph["gravity"] = np.zeros(3)  # a free robot in zero gravity: its centroidal momentum is constant
    free = cd.from_graph(g, floating=True)
    assert free.floating and free.joints[0].kind == "free_flyer" and free.joint_names[0] != "root_joint"
    q0 = free.random_configuration(seed=4)
    v0 = np.random.default_rng(4).normal(size=free.nv)
    sim = cd.simulate(free, q0, v0, t=np.linspace(0.0, 0.5, 6))
    h = np.einsum("tij,tj->ti", free.centroidal_momentum_matrix(sim.q), sim.qd)
    assert np.abs(h - h[0]).max() < 1e-6 * max(1.0, np.abs(h[0]).max())
    assert sim.energy_drift < 1e-6


def test_urdf_floating_and_planar_joints_below_the_root(tmp_path):
    """URDF's floating and planar joints below the root are free-flyer and planar joints of the tree."""
    inertial = ('<inertial><mass value="1.0"/><origin xyz="0.1 0 0.05"/>'
                '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>')
    urdf = f"""<robot name="r"><link name="base"/><link name="a">{inertial}</link><link name="b">{inertial}</link>
      <link name="c">{inertial}</link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
      <joint name="f" type="floating"><parent link="a"/><child link="b"/><origin xyz="0 0 0.3" rpy="0.1 0 0"/></joint>
      <joint name="p" type="planar"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>
      </joint></robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    r = cd.load(path)
    assert isinstance(r, TreeRobot) and not r.floating
    assert [(j.name, j.kind, j.nq, j.nv) for j in r.joints] == [("j1", "revolute", 1, 1), ("f", "free_flyer", 7, 6),
                                                                ("p", "planar", 4, 3)]
    assert r.limits["upper"][0] == 1.0 and np.isinf(r.limits["upper"][1:]).all()
    pair = _urdf_pair(r, pin.buildModelFromUrdf(str(path)))
    q, v, a = _state(r, 1)
    tau = pin.rnea(pair.model, pair.data, pair.q(q), pair.v(v), pair.v(a))
    assert _err(r.inverse_dynamics(q, v, a), pair.rows(tau)) < TOL


def _urdf_pair(r, model) -> Pair:
    """A Pair of a loaded robot and Pinocchio's model of the same URDF (coordinates mapped by joint name)."""
    pair = Pair.__new__(Pair)
    pair.robot, pair.model, pair.data = r, model, model.createData()
    pair.iq = np.concatenate([np.arange(model.joints[model.getJointId(j.name)].idx_q,
                                        model.joints[model.getJointId(j.name)].idx_q + j.nq) for j in r.joints])
    pair.iv = np.concatenate([np.arange(model.joints[model.getJointId(j.name)].idx_v,
                                        model.joints[model.getJointId(j.name)].idx_v + j.nv) for j in r.joints])
    return pair


_INERTIAL = ('<inertial><mass value="1.0"/><origin xyz="0.1 0 0.05"/>'
             '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>')


@pytest.mark.parametrize("root_mass,sibling", [(True, "revolute"), (False, "revolute"), (False, "planar"),
                                               (True, None)])
def test_urdf_floating_joint_of_a_root_with_a_mass_or_other_children(root_mass, sibling):
    """A floating joint from a root link that has a mass or other children is a free-flyer joint of the tree
    (Pinocchio's reading of such a URDF: the root link is the world), for ``floating`` None and False; a
    planar sibling is a planar joint (no axis: the xy plane, as Pinocchio)."""
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if sibling == "revolute" else ""
    axis = "" if sibling == "planar" else '<axis xyz="0 0 1"/>'
    other = "" if sibling is None else (
        f'<link name="b">{_INERTIAL}</link><joint name="js" type="{sibling}"><parent link="base"/><child link="b"/>'
        f'<origin xyz="0 0.3 0"/>{limit}{axis}</joint>')
    xml = (f'<robot name="r"><link name="base">{_INERTIAL if root_mass else ""}</link><link name="a">{_INERTIAL}'
           f'</link><joint name="ff" type="floating"><parent link="base"/><child link="a"/><origin xyz="0 0 1"/>'
           f'</joint>{other}</robot>')
    model = pin.buildModelFromXML(xml)
    for floating in (None, False):
        r = cd.from_urdf(xml, floating=floating)
        assert isinstance(r, TreeRobot) and r.floating == (sibling is None)
        assert [(j.name, j.kind) for j in r.joints] == [("ff", "free_flyer")] + (
            [] if sibling is None else [("js", "planar" if sibling == "planar" else "revolute")])
        assert (r.nq, r.nv) == (model.nq, model.nv)
        pair = _urdf_pair(r, model)
        for seed in range(2):
            q, v, a = _state(r, seed)
            qp, vp, ap = pair.q(q), pair.v(v), pair.v(a)
            assert _err(r.inverse_dynamics(q, v, a), pair.rows(pin.rnea(model, pair.data, qp, vp, ap))) < TOL
            M = pin.crba(model, pair.data, qp)
            assert _err(r.mass_matrix(q), pair.rows(np.triu(M) + np.triu(M, 1).T)) < TOL
            if sibling is not None:
                pin.framesForwardKinematics(model, pair.data, qp)
                assert _err(r.frame_pose(q, "b"), pair.data.oMf[model.getFrameId("b")].homogeneous) < TOL


def test_urdf_planar_root_stays_planar_and_planar_axes_other_than_z_are_refused():
    """``floating=True`` keeps a URDF planar root planar whatever joints hang below it; a planar joint whose
    axis is not z (the plane of Pinocchio's JointModelPlanar) is refused by name, at the root and below it."""
    def urdf(root_axis, below, below_axis=""):
        return (f'<robot name="r"><link name="w"/><link name="a">{_INERTIAL}</link><link name="b">{_INERTIAL}</link>'
                f'<joint name="rj" type="planar"><parent link="w"/><child link="a"/>{root_axis}</joint>'
                f'<joint name="j2" type="{below}"><parent link="a"/><child link="b"/><origin xyz="0 0 0.3"/>'
                f'{below_axis}</joint></robot>')
    z = '<axis xyz="0 0 1"/>'
    for below in ("continuous", "floating"):
        r = cd.from_urdf(urdf(z, below), floating=True)
        assert [j.kind for j in r.joints][0] == "planar" and r.floating
    with pytest.raises(cd.ModelError, match="planar joint 'rj' has axis"):
        cd.from_urdf(urdf('<axis xyz="1 0 0"/>', "continuous"))
    with pytest.raises(cd.ModelError, match="planar joint 'j2' has axis .*xy plane"):
        cd.from_urdf(urdf(z, "planar", '<axis xyz="0 1 0"/>'))


HUMANOID = """<mujoco><option gravity="0 0 -9.81"/><worldbody>
<body name="torso" pos="0 0 1.2"><freejoint name="root"/>
 <geom type="capsule" fromto="0 -.07 0 0 .07 0" size=".07" mass="8"/>
 <body name="thigh" pos="0 -0.1 -0.1"><joint name="hip" type="ball" pos="0 0 0.02" damping="0.5"/>
  <geom type="capsule" fromto="0 0 0 0 0.01 -.34" size=".06" mass="4"/>
  <body name="shin" pos="0 0.01 -0.4"><joint name="knee" type="hinge" axis="0 -1 0" damping="0.2"/>
   <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".049" mass="2.5"/>
   <body name="foot" pos="0 0 -0.35"><joint name="ankle" type="ball"/><geom type="box" size=".1 .05 .02" mass="1"/>
   </body></body></body>
 <body name="arm" pos="0 0.15 0.1"><joint name="shoulder" type="ball"/>
  <geom type="capsule" fromto="0 0 0 0 .2 -.2" size=".04" mass="1.5"/></body>
</body></worldbody></mujoco>"""


def test_free_humanoid_with_ball_joints_equals_mujoco_through_convert_floating():
    import mujoco

    r = cd.from_mjcf(HUMANOID)
    assert r.floating and [j.kind for j in r.joints] == ["free_flyer", "spherical", "continuous", "spherical",
                                                         "spherical"]
    m = mujoco.MjModel.from_xml_string(HUMANOID)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    order_q = np.concatenate([np.arange(m.joint(j.name).qposadr[0], m.joint(j.name).qposadr[0] + j.nq)
                              for j in r.joints])
    order_v = np.concatenate([np.arange(m.joint(j.name).dofadr[0], m.joint(j.name).dofadr[0] + j.nv)
                              for j in r.joints])
    for _ in range(3):
        qm = rng.normal(size=m.nq)
        for j in range(m.njnt):  # unit quaternions of the free and ball joints (w, x, y, z)
            start = int(m.jnt_qposadr[j]) + (3 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
            if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
                qm[start:start + 4] /= np.linalg.norm(qm[start:start + 4])
        vm, am = rng.normal(size=m.nv), rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:] = qm, vm
        mujoco.mj_forward(m, d)
        d.qacc[:] = am
        mujoco.mj_inverse(m, d)
        q, v, a = cd.convert_floating(qm[order_q], vm[order_v], am[order_v], source="mujoco", target="pinocchio",
                                      joints=r.joints)
        tau = cd.convert_floating_forces(q, r.inverse_dynamics(q, v, a), source="pinocchio", target="mujoco",
                                         joints=r.joints)
        assert _err(tau, d.qfrc_inverse[order_v]) < TOL
        assert _err(r.center_of_mass(q), d.subtree_com[0]) < TOL
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        assert abs(r.kinetic_energy(q, v) - 0.5 * vm @ M @ vm) < TOL * max(1.0, 0.5 * vm @ M @ vm)
        back = cd.convert_floating(q, v, a, source="pinocchio", target="mujoco", joints=r.joints)
        assert np.array_equal(back[0], qm[order_q]) and _err(back[1], vm[order_v]) < 1e-14
    with pytest.raises(ValueError, match="'hip' is spherical: Drake's ball joint has roll-pitch-yaw"):
        cd.convert_floating(q, v, source="pinocchio", target="drake", joints=r.joints)


def test_inverse_kinematics_on_the_configuration_space():
    r = cd.from_graph(random_graph(1))
    frame = r.frame_names[-1]
    goal = r.random_configuration(seed=8)
    target = r.frame_pose(goal, frame)
    res = r.inverse_kinematics(frame, target)
    assert res.success and res.q.shape == (r.nq,)
    assert _err(r.frame_pose(res.q, frame), target) < 1e-8
    for j in r.joints:  # unit quaternions, one-coordinate joints within their limits
        if j.kind == "spherical":
            assert abs(np.linalg.norm(res.q[j.idx_q:j.idx_q + 4]) - 1.0) < 1e-12
        if j.nq == 1:
            assert r.limits["lower"][j.idx_v] <= res.q[j.idx_q] <= r.limits["upper"][j.idx_v]
    far = r.inverse_kinematics(frame, np.r_[100.0, 0, 0], position_only=True, max_iterations=50)
    assert not far.success and far.error[0] > 1.0
    with pytest.raises(ValueError, match="unknown frame|close names"):
        r.inverse_kinematics("nope", target)


def test_controllers_track_on_the_configuration_space():
    r = cd.from_mjcf(MJCF)
    ctrl = cd.ComputedTorqueController(r, kp=100.0, kd=20.0)
    q, v, _ = _state(r, 2)
    q_des = r.integrate(q, np.random.default_rng(5).normal(size=r.nv), 0.1)
    qd_des, qdd_des = np.zeros(r.nv), np.zeros(r.nv)
    tau = ctrl(q, v, q_des, qd_des, qdd_des)
    a = r.forward_dynamics(q, v, tau)  # the closed loop: a = Kd (qd_des - v) + Kp difference(q, q_des)
    assert _err(a, 20.0 * (qd_des - v) + 100.0 * r.difference(q, q_des)) < TOL
    with pytest.raises(ValueError, match="q_des"):
        ctrl(q, v, q_des[:-1], qd_des, qdd_des)
    osc = cd.OperationalSpaceController(r, "c", kp=50.0, kd=10.0, posture=r.neutral())
    T = r.frame_pose(q, "c")
    tau = osc(q, v, T, np.zeros(6), np.zeros(6))
    assert tau.shape == (r.nv,) and np.isfinite(tau).all()


def test_derivatives_of_a_spherical_root_equal_pinocchio():
    import networkx as nx

    from composedyn.dynamics.schema import add_joint, add_link

    rng = np.random.default_rng(0)
    g = nx.DiGraph(name="ball arm", gravity=np.array([0.0, 0.0, -9.81]))
    add_link(g, "base")
    parent = "base"
    for k, kind in enumerate(["spherical", "revolute", "prismatic", "revolute", "revolute"]):
        add_link(g, f"l{k}", mass=1.0 + k, com=0.1 * rng.normal(size=3), inertia=np.diag([0.1, 0.2, 0.15]))
        T = np.eye(4)
        T[:3, 3] = 0.3 * rng.normal(size=3)
        add_joint(g, f"j{k}", parent, f"l{k}", type=kind, origin=T, axis=rng.normal(size=3), damping=0.1)
        parent = f"l{k}"
    pair = Pair(g)
    r, m, d = pair.robot, pair.model, pair.data
    for seed in range(3):
        q, v, a = _state(r, seed)
        dq, dv = r.inverse_dynamics_derivatives(q, v, a, friction=False)
        pin.computeRNEADerivatives(m, d, pair.q(q), pair.v(v), pair.v(a))
        assert _err(dq, pair.rows(d.dtau_dq)) < TOL and _err(dv, pair.rows(d.dtau_dv)) < TOL
        tau = r.inverse_dynamics(q, v, a, friction=False)
        da, dva, Minv = r.forward_dynamics_derivatives(q, v, tau, friction=False)
        pin.computeABADerivatives(m, d, pair.q(q), pair.v(v), pair.v(tau))
        assert _err(da, pair.rows(d.ddq_dq)) < TOL and _err(dva, pair.rows(d.ddq_dv)) < TOL
        assert _err(Minv, np.linalg.inv(r.mass_matrix(q))) < TOL
        # with friction: the damping enters d tau / d v on the diagonal
        assert _err(r.inverse_dynamics_derivatives(q, v, a)[1] - dv, np.diag(r.array_model.damping)) < TOL
    batch = r.inverse_dynamics_derivatives(r.random_configuration(size=3, seed=1), np.zeros(r.nv), np.zeros(r.nv))
    assert batch[0].shape == (3, r.nv, r.nv)


def test_joint_log_jobs_refuse_in_one_line():
    r = cd.from_mjcf(MJCF)
    t = np.linspace(0.0, 1.0, 5)
    for call, what in ((lambda: cd.check_trajectory(r, t, np.tile(r.neutral(), (5, 1))), "check_trajectory"),
                       (lambda: cd.check_many(r, []), "check_many"),
                       (lambda: cd.excitation_trajectory(r, 1.0), "excitation_trajectory")):
        with pytest.raises(cd.ModelError, match=rf"^{what}: robot .* has joints of several coordinates \('ja' "
                                                r"\(spherical\)"):
            call()


def test_base_parameters_and_a_perturbed_copy():
    r = cd.from_graph(random_graph(2))
    bp = r.base_parameters(samples=40)
    assert len(bp.names) == 10 * len(r.joints) == r.regressor(r.neutral(), np.zeros(r.nv), np.zeros(r.nv)).shape[1]
    assert 0 < bp.rank < len(bp.names)
    q = r.random_configuration(size=5, seed=9)
    v, a = np.random.default_rng(9).normal(size=(2, 5, r.nv))
    # the base regressor times the base parameters is the inverse dynamics without friction and armature
    tau = r.inverse_dynamics(q, v, a, friction=False) - r.array_model.armature * a
    assert _err(bp.base_regressor(r.regressor(q, v, a)) @ bp.base(r.inertial_parameters()), tau) < 1e-8
    p = r.perturbed(0.2, seed=1)
    assert isinstance(p, TreeRobot) and [j.kind for j in p.joints] == [j.kind for j in r.joints]
    ratio = p.inertial_parameters()[::10] / r.inertial_parameters()[::10]
    assert np.all((ratio >= 0.8 - 1e-12) & (ratio <= 1.2 + 1e-12)) and not np.allclose(ratio, 1.0)
