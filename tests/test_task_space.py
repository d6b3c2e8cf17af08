"""Task-space kinematics: compiled kernels against the NumPy reference, identities,
finite differences, broadcasting, mimic joints, task inertia and bad input.

Oracles: the NumPy reference (``composedyn.dynamics.reference.frames``; compiled equals it
to 1e-12), central finite differences of ``frame_pose`` and ``center_of_mass``
against the Jacobians, and of ``frame_velocity`` along a path against
``frame_acceleration``; the mimic Jacobian identity J = J_all G.
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import parallel
from composedyn.dynamics.reference import frames as ref
from pin_oracle import erd_urdf
from random_robots import FIXED_SEEDS, random_urdf
from test_compiled import rel

TOL = 1e-12


def puma():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)  # its published inertias fail the triangle check
        return cd.load("puma560")


def skew_part(A: np.ndarray) -> np.ndarray:
    """w with skew(w) = (A - A^T) / 2."""
    return 0.5 * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])


def general(name: str, m, *inputs, **arguments):
    """The general path of the declared quantity ``name`` (the model packed for the call)."""
    return dispatch.call(name, m, None, *inputs, **arguments)


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_compiled_kernels_equal_numpy_reference(seed, n):
    robot = cd.from_urdf(random_urdf(seed, n))
    m = robot.model
    rng = np.random.default_rng(seed)
    Q, QD, QDD = rng.uniform(-2, 2, (3, 4, n))
    for k in range(len(m.link_names)):
        for q, qd, qdd in ((Q, QD, QDD), (Q[0], QD[0], QDD[0])):
            assert rel(general("frame_pose", m, q, frame=k), ref.frame_pose(m, q, k)) < TOL
            for local in (False, True):
                assert rel(general("jacobian", m, q, frame=k, local=local), ref.jacobian(m, q, k, local)) < TOL
                assert rel(general("frame_velocity", m, q, qd, frame=k, local=local),
                           ref.frame_velocity(m, q, qd, k, local)) < TOL
                assert rel(general("frame_acceleration", m, q, qd, qdd, frame=k, local=local),
                           ref.frame_acceleration(m, q, qd, qdd, k, local)) < TOL
    for q in (Q, Q[0]):
        assert rel(general("center_of_mass", m, q), ref.center_of_mass(m, q)) < TOL
        assert rel(general("com_jacobian", m, q), ref.com_jacobian(m, q)) < TOL


def test_parallel_loops_equal_numpy_reference(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_WORK", 1)
    monkeypatch.setattr(parallel, "PARALLEL_IDLE", -math.inf)  # whatever the load
    robot = cd.from_urdf(random_urdf(4, 7))
    m, k = robot.model, len(robot.model.link_names) - 1
    Q, QD, QDD = np.random.default_rng(0).uniform(-2, 2, (3, 200, 7))
    assert rel(general("jacobian", m, Q, frame=k, local=True), ref.jacobian(m, Q, k, True)) < TOL
    assert rel(general("frame_pose", m, Q, frame=k), ref.frame_pose(m, Q, k)) < TOL
    assert rel(general("frame_acceleration", m, Q, QD, QDD, frame=k),
               ref.frame_acceleration(m, Q, QD, QDD, k)) < TOL
    assert rel(general("com_jacobian", m, Q), ref.com_jacobian(m, Q)) < TOL


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[3:7])
def test_jacobians_are_finite_differences_of_pose_and_com(seed, n):
    robot = cd.from_urdf(random_urdf(seed, n))
    q = np.random.default_rng(seed).uniform(-2, 2, n)
    h = 1e-6
    Jc = robot.com_jacobian(q)
    for frame in robot.frame_names:
        J, JL = robot.jacobian(q, frame), robot.jacobian(q, frame, "local")
        R = robot.frame_pose(q, frame)[:3, :3]
        for j in range(n):
            dq = np.zeros(n)
            dq[j] = h
            Tp, Tm = robot.frame_pose(q + dq, frame), robot.frame_pose(q - dq, frame)
            dT = (Tp - Tm) / (2 * h)
            assert np.abs(J[:3, j] - dT[:3, 3]).max() < 1e-7
            assert np.abs(J[3:, j] - skew_part(dT[:3, :3] @ R.T)).max() < 1e-7
            assert np.abs(JL[:, j] - np.concatenate([R.T @ J[:3, j], R.T @ J[3:, j]])).max() < 1e-12
    for j in range(n):
        dq = np.zeros(n)
        dq[j] = h
        fd = (robot.center_of_mass(q + dq) - robot.center_of_mass(q - dq)) / (2 * h)
        assert np.abs(Jc[:, j] - fd).max() < 1e-7


def test_classical_acceleration_is_derivative_of_velocity():
    """Along q(t) = q0 + qd0 t + qdd t^2 / 2: d/dt frame_velocity = frame_acceleration (world)."""
    robot = cd.from_urdf(random_urdf(6, 13))
    n = robot.dof
    rng = np.random.default_rng(1)
    q0, qd0, qdd = rng.uniform(-1, 1, (3, n))
    h = 1e-5
    for frame in robot.frame_names[::2]:
        def v(t):
            return robot.frame_velocity(q0 + qd0 * t + 0.5 * qdd * t * t, qd0 + qdd * t, frame)
        fd = (v(h) - v(-h)) / (2 * h)
        assert np.abs(robot.frame_acceleration(q0, qd0, qdd, frame) - fd).max() < 1e-6


def test_numpy_backend_gives_the_same_robot_results():
    robot = cd.load("panda")
    q, qd, qdd = np.random.default_rng(2).uniform(-1, 1, (3, 7))
    dispatch.set_backend("numpy")
    try:
        got = (robot.jacobian(q, "flange"), robot.frame_acceleration(q, qd, qdd, "flange", "local"),
               robot.center_of_mass(q), robot.frame_pose(q, "link4"))
    finally:
        dispatch.set_backend("auto")
    want = (robot.jacobian(q, "flange"), robot.frame_acceleration(q, qd, qdd, "flange", "local"),
            robot.center_of_mass(q), robot.frame_pose(q, "link4"))
    for a, b in zip(got, want):
        assert rel(a, b) < TOL


def test_shapes_broadcast_over_batch_axes():
    robot = puma()
    n = robot.dof
    Q = np.random.default_rng(0).uniform(-1, 1, (2, 3, n))
    frame = robot.frame_names[-1]
    assert robot.frame_pose(Q, frame).shape == (2, 3, 4, 4)
    assert robot.jacobian(Q, frame).shape == (2, 3, 6, n)
    assert robot.frame_velocity(Q, np.ones(n), frame).shape == (2, 3, 6)
    assert robot.frame_acceleration(Q, np.ones(n), np.zeros((3, n)), frame).shape == (2, 3, 6)
    assert robot.center_of_mass(Q).shape == (2, 3, 3)
    assert robot.com_jacobian(Q).shape == (2, 3, 3, n)
    assert robot.task_inertia(Q, frame).shape == (2, 3, 6, 6)
    J = robot.jacobian(Q, frame)
    assert rel(J[1, 2], robot.jacobian(Q[1, 2], frame)) < TOL


def test_frame_names_cover_every_link_and_fixed_links_ride_their_body():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(erd_urdf("ur5"))
    names = robot.frame_names
    assert set(names) == set(robot.graph.nodes)
    q = np.random.default_rng(3).uniform(-1, 1, robot.dof)
    # tool0 is welded to wrist_3_link: same Jacobian up to the lever arm
    T3, Tt = robot.frame_pose(q, "wrist_3_link"), robot.frame_pose(q, "tool0")
    J3, Jt = robot.jacobian(q, "wrist_3_link"), robot.jacobian(q, "tool0")
    r = Tt[:3, 3] - T3[:3, 3]
    assert np.abs(Jt[3:] - J3[3:]).max() < 1e-14
    assert np.abs(Jt[:3] - (J3[:3] - np.cross(r, J3[3:].T).T)).max() < 1e-14
    # links welded to the base: constant pose, zero Jacobian
    assert np.all(robot.jacobian(q, "world") == 0) and np.all(robot.frame_acceleration(q, q, q, "base") == 0)
    assert rel(robot.frame_pose(q, "base"), robot.link_poses(q)["base"]) < TOL


def test_dh_robot_frames_are_named_as_in_the_table():
    robot = puma()
    assert robot.frame_names == robot.model.link_names
    q = np.random.default_rng(4).uniform(-1, 1, robot.dof)
    poses = robot.link_poses(q)
    for frame in robot.frame_names:
        assert rel(robot.frame_pose(q, frame), poses[frame]) < TOL


def mimic_robot():
    root = ET.fromstring(random_urdf(5, 10))
    js = [j for j in root.findall("joint") if j.get("type") in ("revolute", "prismatic", "continuous")]
    ET.SubElement(js[-1], "mimic", joint=js[0].get("name"), multiplier="0.7", offset="0.2")
    xml = ET.tostring(root, encoding="unicode")
    return cd.from_urdf(xml), cd.from_urdf(xml, mimic="independent")


def test_mimic_jacobians_are_all_joint_jacobians_times_G():
    dep, ind = mimic_robot()
    assert dep.dof == ind.dof - 1
    G = dep.mimic_jacobian
    q, qd, qdd = np.random.default_rng(5).uniform(-1, 1, (3, dep.dof))
    qa, qda, qdda = dep.full_positions(q), G @ qd, G @ qdd
    for frame in dep.frame_names:
        assert rel(dep.jacobian(q, frame), ind.jacobian(qa, frame) @ G) < TOL
        assert rel(dep.frame_pose(q, frame), ind.frame_pose(qa, frame)) < TOL
        assert rel(dep.frame_acceleration(q, qd, qdd, frame), ind.frame_acceleration(qa, qda, qdda, frame)) < TOL
    assert rel(dep.com_jacobian(q), ind.com_jacobian(qa) @ G) < TOL


def test_task_inertia_singular_and_underactuated_errors_and_damped_form():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        ur5 = cd.from_urdf(erd_urdf("ur5"))
    q = np.zeros(6)  # arm stretched out: shoulder/elbow singularity
    with pytest.raises(ValueError, match=r"frame 'tool0' is at a singular configuration.*smallest singular value"):
        ur5.task_inertia(q, "tool0")
    lam = ur5.task_inertia(q, "tool0", damping=1e-3)
    assert np.all(np.isfinite(lam)) and np.allclose(lam, lam.T)
    q = np.array([0.3, -1.0, 1.2, -0.5, 0.8, 0.1])  # regular: damped -> exact as damping -> 0
    exact = ur5.task_inertia(q, "tool0")
    assert rel(ur5.task_inertia(q, "tool0", damping=1e-7), exact) < 1e-8
    two = cd.load("two_link")
    frame = two.frame_names[-1]
    with pytest.raises(ValueError, match=r"6-row task but the robot only 2 joints.*translational=True"):
        two.task_inertia(np.zeros(2) + 0.3, frame)
    with pytest.raises(ValueError, match="damping"):
        ur5.task_inertia(q, "tool0", damping=-1.0)
    three = two.task_inertia  # a 3-row task on 2 joints: damping is the only remedy named
    with pytest.raises(ValueError, match=r"3-row task but the robot only 2 joints.*use damping > 0$"):
        three(np.zeros(2) + 0.3, frame, translational=True)
    for rows, hint in ((False, r"use position_only=True \(3 rows\) or damping > 0$"), (True, r"use damping > 0$")):
        osc = cd.OperationalSpaceController(two, frame, kp=1.0, kd=1.0, position_only=rows)
        with pytest.raises(ValueError, match=hint):  # the controller's own option, not task_inertia's
            r = 3 if rows else 6
            osc(np.zeros(2) + 0.3, np.zeros(2), two.frame_pose(np.zeros(2), frame), np.zeros(r), np.zeros(r))


def test_unknown_frame_is_a_one_line_error_with_close_names():
    robot = cd.load("panda")
    for call in (lambda: robot.jacobian(np.zeros(7), "flang"), lambda: robot.frame_pose(np.zeros(7), "flang"),
                 lambda: robot.inverse_kinematics("flang", np.eye(4))):
        with pytest.raises(ValueError) as err:
            call()
        msg = str(err.value)
        assert "\n" not in msg and "unknown frame 'flang'" in msg and "flange" in msg
    with pytest.raises(ValueError, match="reference must be 'world' or 'local'"):
        robot.jacobian(np.zeros(7), "flange", reference="WORLD_ALIGNED")
    with pytest.raises(ValueError, match="q has shape"):
        robot.jacobian(np.zeros(6), "flange")
    with pytest.raises(ValueError, match="NaN"):
        robot.frame_pose(np.full(7, np.nan), "flange")


def test_non_finite_input_propagates_nan_below_the_robot_checks():
    """dispatch (no argument checks) returns NaN for NaN q rather than a stale buffer."""
    m = cd.load("panda").model
    q = np.full(7, np.nan)
    assert np.isnan(general("jacobian", m, q, frame=8)).any() and np.isnan(general("frame_pose", m, q, frame=8)).any()
    assert np.isnan(general("frame_acceleration", m, q, q, q, frame=8)).any()
    assert np.isnan(general("frame_velocity", m, q, q, frame=8)).any()
