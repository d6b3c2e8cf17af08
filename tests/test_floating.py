"""Floating-base dynamics against Pinocchio's free flyer, and identities on random floating trees.

Vendor robots (example-robot-data): Talos, Solo12, HyQ, A1, every quantity
against ``pinocchio.buildModelFromUrdf(path, JointModelFreeFlyer())``.  Random
trees: the same against Pinocchio, plus forward ∘ inverse = identity, a free
body needs no base wrench, Ṁ - 2C skew-symmetric (Ṁ by central differences on
the group), C v + g = bias forces, momentum balance in flight, batches equal
single samples.
"""

import warnings

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import FreeFlyerPair, erd_urdf, pin, rel_err
from random_robots import random_urdf
from test_dynamics_pinocchio import link_coms, pin_fext

TOL = 1e-9
VENDOR = ("talos", "solo12", "hyq", "a1")


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cd.load(path, floating=True, **kw)


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(seed=seed), rng.normal(size=robot.nv), rng.normal(size=robot.nv)


def _mass(pp, qp):
    M = pin.crba(pp.model, pp.data, qp)
    return np.triu(M) + np.triu(M, 1).T


def _compare_dynamics(robot, pp, seed):
    q, v, a = _state(robot, seed)
    qp, vp, ap = pp.q(q), pp.v(v), pp.v(a)
    tau = robot.inverse_dynamics(q, v, a, friction=False)
    assert rel_err(pp.v(tau), pin.rnea(pp.model, pp.data, qp, vp, ap)) < TOL
    assert rel_err(pp.mat(robot.mass_matrix(q)), _mass(pp, qp)) < TOL
    assert rel_err(pp.v(robot.forward_dynamics(q, v, tau, friction=False)), ap) < 1e-8
    assert rel_err(pp.v(robot.forward_dynamics(q, v, tau, friction=False)),
                   pin.aba(pp.model, pp.data, qp, vp, pp.v(tau))) < 1e-8
    assert rel_err(pp.v(robot.gravity_torques(q)), pin.computeGeneralizedGravity(pp.model, pp.data, qp)) < TOL
    assert rel_err(pp.v(robot.bias_torques(q, v)), pin.nonLinearEffects(pp.model, pp.data, qp, vp)) < TOL
    assert rel_err(pp.mat(robot.coriolis_matrix(q, v)), pin.computeCoriolisMatrix(pp.model, pp.data, qp, vp)) < TOL
    assert rel_err(robot.center_of_mass(q), pin.centerOfMass(pp.model, pp.data, qp)) < TOL
    assert rel_err(pp.cols(robot.com_jacobian(q)), pin.jacobianCenterOfMass(pp.model, pp.data, qp)) < TOL
    assert rel_err(pp.cols(robot.centroidal_momentum_matrix(q)), pin.computeCentroidalMap(pp.model, pp.data, qp)) < TOL
    h = pin.computeCentroidalMomentum(pp.model, pp.data, qp, vp)
    assert rel_err(robot.centroidal_momentum(q, v), np.r_[h.linear, h.angular]) < TOL
    assert rel_err(robot.kinetic_energy(q, v), pin.computeKineticEnergy(pp.model, pp.data, qp, vp)) < TOL
    assert rel_err(robot.potential_energy(q), pin.computePotentialEnergy(pp.model, pp.data, qp)) < TOL
    return q, v, a


def _compare_frames(robot, pp, q, v, a, frames):
    qp, vp, ap = pp.q(q), pp.v(v), pp.v(a)
    pin.forwardKinematics(pp.model, pp.data, qp, vp, ap)
    pin.computeJointJacobians(pp.model, pp.data, qp)
    pin.updateFramePlacements(pp.model, pp.data)
    for frame in frames:
        fid = pp.model.getFrameId(frame)
        assert rel_err(robot.frame_pose(q, frame), pp.data.oMf[fid].homogeneous) < TOL
        for ref, pref in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
            J = pin.getFrameJacobian(pp.model, pp.data, fid, pref)
            assert rel_err(pp.cols(robot.jacobian(q, frame, ref)), J) < TOL, (frame, ref)
            assert rel_err(robot.frame_velocity(q, v, frame, ref), J @ vp) < TOL
            acc = pin.getFrameClassicalAcceleration(pp.model, pp.data, fid, pref).vector
            assert rel_err(robot.frame_acceleration(q, v, a, frame, ref), acc) < TOL, (frame, ref)


def _compare_group(robot, pp, seed):
    q0, v, _ = _state(robot, seed)
    q1 = robot.random_configuration(seed=seed + 100)
    out = robot.integrate(q0, v, 0.7)
    ref = pin.integrate(pp.model, pp.q(q0), pp.v(v) * 0.7)
    nqb = robot.base.nq
    assert rel_err(out[:nqb], ref[:nqb]) < TOL
    d, ref = pp.v(robot.difference(q0, q1)), pin.difference(pp.model, pp.q(q0), pp.q(q1))
    assert rel_err(d[:robot.base.nv], ref[:robot.base.nv]) < TOL
    gap = d - ref  # joints: q1 - q0 here; Pinocchio wraps continuous joints (cos, sin) into [-pi, pi]
    assert np.abs(np.angle(np.exp(1j * gap))).max() < TOL
    back = robot.integrate(q0, robot.difference(q0, q1))
    if robot.base.kind == "free" and back[3:7] @ q1[3:7] < 0:  # the same rotation as -quaternion
        back[3:7] *= -1.0
    assert rel_err(back, q1) < TOL


@pytest.mark.parametrize("key", VENDOR)
def test_vendor_robots_equal_pinocchio_free_flyer(key):
    path = erd_urdf(key)
    robot = _load(path)
    assert robot.nq == 7 + len(robot.joint_names) and robot.nv == 6 + len(robot.joint_names)
    pp = FreeFlyerPair(robot, path, pin.JointModelFreeFlyer())
    assert abs(robot.mass - sum(i.mass for i in pp.model.inertias)) < 1e-9
    for seed in range(3):
        q, v, a = _compare_dynamics(robot, pp, seed)
    feet = [f for f in robot.frame_names if "foot" in f.lower() or "sole" in f.lower()]
    assert len(feet) >= 2, robot.frame_names
    _compare_frames(robot, pp, q, v, a, feet[:4] + [robot.frame_names[0]])
    _compare_group(robot, pp, 7)


def _floating_xml(xml: str, kind: str = "floating") -> str:
    """The random tree's URDF with a world link and a floating (or planar) root joint."""
    joint = (f'<link name="world"/><joint name="base_joint" type="{kind}"><parent link="world"/>'
             '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint>')
    return xml.replace("</robot>", joint + "</robot>")


@pytest.mark.parametrize("seed", range(6))
def test_random_floating_trees_equal_pinocchio(seed):
    xml = random_urdf(seed, 2 + 3 * seed, p_fixed=0.3)
    robot = cd.from_urdf(xml, floating=True)
    pp = FreeFlyerPair(robot, xml, pin.JointModelFreeFlyer())
    q, v, a = _compare_dynamics(robot, pp, seed)
    _compare_frames(robot, pp, q, v, a, robot.frame_names[-2:])
    _compare_group(robot, pp, seed)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_urdf_root_joint_floating_or_planar_loads_as_floating(kind):
    xml = _floating_xml(random_urdf(3, 6, p_fixed=0.3), kind)
    robot = cd.from_urdf(xml)
    assert robot.floating and robot.base.kind == ("free" if kind == "floating" else "planar")
    assert robot.base.joint == "base_joint" and "world" not in robot.frame_names
    assert (robot.nq, robot.nv) == ((13, 12) if kind == "floating" else (10, 9))
    pp = FreeFlyerPair(robot, xml)  # Pinocchio reads the same root joint (its origin included)
    q, v, a = _compare_dynamics(robot, pp, 1)
    _compare_frames(robot, pp, q, v, a, robot.frame_names[-2:])
    _compare_group(robot, pp, 2)
    fixed = cd.from_urdf(xml, floating=False)
    assert not fixed.floating and fixed.dof == 6


@pytest.mark.parametrize("seed", range(5))
def test_random_floating_tree_identities(seed):
    robot = cd.from_urdf(random_urdf(seed, 3 + 2 * seed, p_fixed=0.3, damping=True), floating=True)
    q, v, a = _state(robot, seed)
    # forward ∘ inverse = identity; a free body in flight needs no base wrench
    tau = robot.inverse_dynamics(q, v, a)
    assert rel_err(robot.forward_dynamics(q, v, tau), a) < 1e-9
    joints = np.r_[np.zeros(6), np.random.default_rng(seed).normal(size=robot.nv - 6)]
    free = robot.forward_dynamics(q, v, joints)
    assert np.abs(robot.inverse_dynamics(q, v, free)[:6]).max() < 1e-9 * max(1.0, np.abs(joints).max())
    # C v + g = bias forces, and M(q) depends on the joints only (not on the base pose)
    C = robot.coriolis_matrix(q, v)
    assert rel_err(C @ v + robot.gravity_torques(q), robot.bias_torques(q, v)) < 1e-10
    moved = q.copy()
    moved[:7] = robot.random_configuration(seed=seed + 50)[:7]
    assert rel_err(robot.mass_matrix(moved), robot.mass_matrix(q)) < 1e-12
    # Ṁ - 2C skew-symmetric, Ṁ by central differences along q(t) = q ⊕ t v
    h = 1e-6
    Md = (robot.mass_matrix(robot.integrate(q, v, h)) - robot.mass_matrix(robot.integrate(q, v, -h))) / (2 * h)
    N = Md - 2 * C
    assert np.abs(N + N.T).max() < 1e-6 * max(1.0, np.abs(Md).max())
    # batches equal single samples
    Q = np.stack([q, robot.random_configuration(seed=seed + 1)])
    V, A = np.stack([v, -v]), np.stack([a, 2 * a])
    batch = robot.inverse_dynamics(Q, V, A)
    for k in range(2):
        assert rel_err(batch[k], robot.inverse_dynamics(Q[k], V[k], A[k])) < 1e-14
        assert rel_err(robot.mass_matrix(Q)[k], robot.mass_matrix(Q[k])) < 1e-14
        assert rel_err(robot.jacobian(Q, robot.frame_names[-1])[k], robot.jacobian(Q[k], robot.frame_names[-1])) < 1e-14
    f = robot.frame_names[-1]
    for name, args in (("frame_pose", (f,)), ("jacobian", (f, "local")), ("frame_velocity", (f, "local")),
                       ("frame_acceleration", (f, "world")), ("frame_acceleration", (f, "local"))):
        inputs = (Q, V, A)[:{"frame_pose": 1, "jacobian": 1, "frame_velocity": 2}.get(name, 3)]
        batch = getattr(robot, name)(*inputs, *args)
        for k in range(2):
            assert rel_err(batch[k], getattr(robot, name)(*(x[k] for x in inputs), *args)) < 1e-14, (name, args)


def test_flight_conserves_momentum_and_energy():
    robot = cd.from_urdf(random_urdf(11, 6, p_fixed=0.2), floating=True)
    q0, v0, _ = _state(robot, 3)
    t = np.linspace(0.0, 0.5, 6)
    sim = cd.simulate(robot, q0, v0, t, friction=False, progress=None)
    assert sim.q.shape == (6, robot.nq)
    assert np.allclose(np.linalg.norm(sim.q[:, 3:7], axis=1), 1.0, atol=1e-14)
    h = robot.centroidal_momentum(sim.q, sim.qd)
    scale = max(1.0, np.abs(h).max())
    lin = h[:, :3] - h[0, :3] - robot.mass * np.outer(t - t[0], robot.base.gravity)
    assert np.abs(lin).max() < 1e-7 * scale  # d(linear momentum)/dt = m g
    assert np.abs(h[:, 3:] - h[0, 3:]).max() < 1e-7 * scale  # angular momentum about the COM constant
    assert sim.energy_drift < 1e-7


def test_bad_input_one_clear_line():
    robot = cd.from_urdf(random_urdf(2, 4), floating=True)
    q, v, a = _state(robot, 0)
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion.*zero norm"):
        robot.inverse_dynamics(bad, v, a)
    with pytest.raises(ValueError, match=r"q has shape \(10,\), expected \(\.\.\., 11\).*nq = 7 base"):
        robot.mass_matrix(q[:-1])
    with pytest.raises(ValueError, match=r"v has shape \(11,\), expected \(\.\.\., 10\).*nv = 6 base"):
        robot.inverse_dynamics(q, q, a)  # q passed where v belongs: nq instead of nv
    with pytest.raises(ValueError, match="unknown frame 'l9'.*close names"):
        robot.jacobian(q, "l9")
    assert robot.mimic_torques(q, v, a).shape == (0,)  # no mimic joints: nothing to carry
    with pytest.raises(ValueError, match="floating must be"):
        cd.from_urdf(random_urdf(2, 4), floating="yes")


def test_info_tells_floating_and_legged_robots(tmp_path, capsys):
    from composedyn.cli import main

    anymal = erd_urdf("anymal")
    assert main(["info", anymal]) == 0
    out = capsys.readouterr().out
    assert "looks legged or humanoid (4 limbs" in out and "--floating" in out
    assert main(["info", anymal, "--floating"]) == 0
    out = capsys.readouterr().out
    assert "floating base (free flyer, joint root_joint on link base): nq = 19, nv = 18" in out
    assert "looks legged" not in out and "gravity [0.0, 0.0, -9.81]" in out
    path = tmp_path / "flying.urdf"
    path.write_text(_floating_xml(random_urdf(3, 6, p_fixed=0.3)))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "floating base (free flyer, joint base_joint on link base)" in out and "world" not in out
    assert main(["info", "panda"]) == 0
    assert "looks legged" not in capsys.readouterr().out


def test_fixed_base_commands_refuse_a_floating_urdf_in_one_line(tmp_path, capsys):
    from composedyn.cli import main

    path = tmp_path / "flying.urdf"
    path.write_text(_floating_xml(random_urdf(3, 6, p_fixed=0.3)))
    for argv in (["simulate", str(path)], ["demo", str(path)], ["equations", str(path)],
                 ["excite", str(path), "--duration", "2", "--out", str(tmp_path / "x.csv")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "floating base (root joint 'base_joint')" in err[0], (argv, err)
    assert not (tmp_path / "x.csv").exists()


def test_check_many_refuses_a_floating_robot(tmp_path):
    robot = cd.from_urdf(random_urdf(2, 4), floating=True)
    with pytest.raises(ValueError, match="floating base; joint-state logs carry no base motion"):
        cd.check_many(robot, [str(tmp_path / "x.mcap")])


def test_joint_space_and_task_space_controllers_refuse_a_floating_robot():
    robot = cd.from_urdf(random_urdf(2, 4), floating=True)
    with pytest.raises(ValueError, match="computed-torque controller drives the joints of a fixed-base robot"):
        cd.ComputedTorqueController(robot, kp=10.0, kd=5.0)
    with pytest.raises(ValueError, match="operational-space controller drives the joints of a fixed-base robot"):
        cd.OperationalSpaceController(robot, robot.frame_names[-1], kp=10.0, kd=5.0)


def test_singular_floating_mass_matrix_is_reported_at_load_naming_the_motion():
    # two_link: a massless base link, point masses on one line, joint1 turning about z.
    with pytest.warns(cd.ModelWarning, match=r"mass matrix is singular.*'base rz', 'joint1'.*base link 'link0'"):
        robot = cd.load("two_link", floating=True)
    assert np.linalg.eigvalsh(robot.mass_matrix(robot.random_configuration(seed=3)))[0] < 1e-12
    with pytest.raises(cd.ModelError, match="strict"):
        cd.load("two_link", floating=True, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cd.ModelWarning)
        cd.from_urdf(random_urdf(2, 5), floating=True)  # bodies with mass and inertia: no report


def test_task_space_lean_path_equals_the_general_path_and_refuses_bad_input():
    robot = cd.from_urdf(random_urdf(4, 7, p_fixed=0.3), floating=True)
    times = robot.warm_up()
    assert {"frame_pose", "jacobian", "frame_velocity", "frame_acceleration"} <= set(times)
    q, v, a = _state(robot, 3)
    for frame in robot.frame_names:
        for ref in ("world", "local"):
            calls = {robot.jacobian: (q, frame, ref), robot.frame_velocity: (q, v, frame, ref),
                     robot.frame_acceleration: (q, v, a, frame, ref)}
            if ref == "world":
                calls[robot.frame_pose] = (q, frame)
            for method, args in calls.items():  # one sample (compiled entry) vs a batch of one (NumPy)
                batch = [x[None] if isinstance(x, np.ndarray) else x for x in args]
                assert rel_err(method(*args), method(*batch)[0]) < 1e-12, (method.__name__, frame, ref)
    frame = robot.frame_names[-1]
    zero, nan = q.copy(), q.copy()
    zero[3:7], nan[-1] = 0.0, np.nan
    for bad, match in ((zero, "zero norm"), (nan, "NaN"), (q[:-1], r"nq = 7 base")):
        for call in (lambda x: robot.frame_pose(x, frame), lambda x: robot.jacobian(x, frame),
                     lambda x: robot.frame_velocity(x, v, frame), lambda x: robot.frame_acceleration(x, v, a, frame)):
            with pytest.raises(ValueError, match=match):
                call(bad)
    for name in (f"{robot.base.joint}::world", "nope"):  # the tree's world link is not a frame of the robot
        with pytest.raises(ValueError, match="unknown frame"):
            robot.jacobian(q, name)


def _check_external_wrenches(robot, pp, urdf, seed, k=3):
    """Inverse and forward dynamics of a floating robot with world wrenches at link COMs on a few
    links (the base link among them), batched over k states, against Pinocchio's rnea/aba with
    the same forces in joint frames."""
    rng = np.random.default_rng(seed)
    coms = link_coms(urdf)
    links = [robot.frame_names[0]] + list(rng.choice(sorted(set(coms) & set(robot.frame_names[1:])),
                                                        size=min(3, len(coms) - 1), replace=False))
    F = {lk: rng.normal(size=(k, 6)) * 5 for lk in links}
    Q = np.stack([robot.random_configuration(seed=seed + s) for s in range(k)])
    V, A = rng.normal(size=(2, k, robot.nv))
    tau = robot.inverse_dynamics(Q, V, A, f_ext=F, friction=False)
    acc = robot.forward_dynamics(Q, V, tau, f_ext=F, friction=False)
    for s in range(k):
        qp, vp, ap = pp.q(Q[s]), pp.v(V[s]), pp.v(A[s])
        fext = pin_fext(pp, qp, coms, {lk: F[lk][s] for lk in links})
        assert rel_err(pp.v(tau[s]), pin.rnea(pp.model, pp.data, qp, vp, ap, fext)) < TOL, (links, s)
        assert rel_err(pp.v(acc[s]), pin.aba(pp.model, pp.data, qp, vp, pp.v(tau[s]), fext)) < 1e-8, (links, s)
        assert rel_err(acc[s], A[s]) < 1e-8
        one = robot.inverse_dynamics(Q[s], V[s], A[s], f_ext={lk: F[lk][s] for lk in links}, friction=False)
        assert rel_err(one, tau[s]) < 1e-12  # a single sample equals the batch's row


@pytest.mark.parametrize("seed", range(3))
def test_random_floating_trees_with_external_wrenches_equal_pinocchio(seed):
    xml = random_urdf(seed + 20, 4 + 3 * seed, p_fixed=0.4)
    robot = cd.from_urdf(xml, floating=True)
    _check_external_wrenches(robot, FreeFlyerPair(robot, xml, pin.JointModelFreeFlyer()), xml, seed)


def test_vendor_floating_robot_with_external_wrenches_equals_pinocchio():
    path = erd_urdf("solo12")
    robot = _load(path)
    _check_external_wrenches(robot, FreeFlyerPair(robot, path, pin.JointModelFreeFlyer()), open(path).read(), 5)


@pytest.mark.parametrize("planar", [False, True])
def test_inverse_kinematics_moves_the_base_and_the_joints(planar):
    xml = random_urdf(4, 6, p_fixed=0.2)
    robot = cd.from_urdf(xml, floating="planar" if planar else True)
    frame = robot.frame_names[-1]
    goal = robot.random_configuration(seed=2)
    target = robot.frame_pose(goal, frame)
    res = robot.inverse_kinematics(frame, target)
    assert res.success and res.q.shape == (robot.nq,)
    assert np.abs(robot.frame_pose(res.q, frame) - target).max() < 1e-8
    nb = robot.base.nq
    k = slice(3, 7) if not planar else slice(2, 4)
    assert abs(np.linalg.norm(res.q[k]) - 1.0) < 1e-12
    lo, hi = robot.limits["lower"][robot.base.nv:], robot.limits["upper"][robot.base.nv:]
    assert np.all(res.q[nb:] >= lo) and np.all(res.q[nb:] <= hi)
