"""Inverse kinematics: reachable random targets (frame_pose at random in-limit q) are
solved to 1e-9 m / 1e-9 rad within the joint limits; the compiled solver and its
NumPy reference take the same iterates; restarts are reproducible from the seed.
(Success rates over 1000 targets and solve times: bench/task_space.py.)
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.ik import random_configurations
from pin_oracle import erd_urdf
from random_robots import random_urdf


def ur5():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(erd_urdf("ur5"))


def solve_all(robot, frame, count, seed, **kw):
    lim = robot.limits
    results = []
    for q in random_configurations(robot, count, np.random.default_rng(seed)):
        target = robot.frame_pose(q, frame)
        res = robot.inverse_kinematics(frame, target, **kw)
        T = robot.frame_pose(res.q, frame)
        results.append((res, T, target))
        assert np.all(res.q >= lim["lower"]) and np.all(res.q <= lim["upper"])
    return results


@pytest.mark.parametrize("make,frame", [(lambda: cd.load("panda"), "flange"), (ur5, "tool0")])
def test_reachable_targets_are_solved_within_limits(make, frame):
    robot = make()
    results = solve_all(robot, frame, 40, 0)
    assert sum(r.success for r, _, _ in results) >= 39
    for res, T, target in results:
        if res.success:
            assert np.linalg.norm(T[:3, 3] - target[:3, 3]) <= 1e-9
            dR = target[:3, :3] @ T[:3, :3].T
            sin_angle = 0.5 * np.linalg.norm(dR - dR.T) / np.sqrt(2)  # |sin| of the residual angle, small-angle exact
            assert np.trace(dR) > 2.9 and sin_angle <= 1e-9
            assert res.error[0] <= 1e-9 and res.error[1] <= 1e-9


def test_position_only_and_unreachable_targets():
    robot = cd.load("panda")
    q = np.random.default_rng(1).uniform(-0.5, 0.5, 7)
    p = robot.frame_pose(q, "flange")[:3, 3]
    res = robot.inverse_kinematics("flange", p, position_only=True)
    assert res.success and np.linalg.norm(robot.frame_pose(res.q, "flange")[:3, 3] - p) <= 1e-9
    far = np.eye(4)
    far[:3, 3] = [5.0, 0.0, 0.0]  # 5 m away: out of reach
    res = robot.inverse_kinematics("flange", far, max_iterations=300, restarts=4)
    assert not res.success and res.error[0] > 3.0 and res.iterations <= 300


def test_restarts_are_reproducible_from_the_seed():
    robot = ur5()
    target = robot.frame_pose(np.array([2.5, -2.0, 2.6, 1.0, -2.0, 3.0]), "tool0")
    start = np.array([-2.5, -0.5, -2.5, 0.0, 2.0, 0.0])  # far from the target: needs restarts
    a = robot.inverse_kinematics("tool0", target, q0=start, seed=7)
    b = robot.inverse_kinematics("tool0", target, q0=start, seed=7)
    assert a.success and np.array_equal(a.q, b.q) and a.iterations == b.iterations


def test_compiled_solver_equals_numpy_reference():
    robot = cd.load("panda")
    targets = [robot.frame_pose(q, "flange") for q in random_configurations(robot, 5, np.random.default_rng(2))]
    compiled = [robot.inverse_kinematics("flange", T, seed=3) for T in targets]
    dispatch.set_backend("numpy")
    try:
        numpy = [robot.inverse_kinematics("flange", T, seed=3) for T in targets]
    finally:
        dispatch.set_backend("auto")
    for a, b in zip(compiled, numpy):
        assert a.success == b.success and a.iterations == b.iterations
        assert np.abs(a.q - b.q).max() < 1e-9


def test_mimic_robot_is_solved_in_its_coordinates():
    root = ET.fromstring(random_urdf(3, 9, types=("revolute",), p_branch=0.0))
    js = [j for j in root.findall("joint") if j.get("type") == "revolute"]
    ET.SubElement(js[-1], "mimic", joint=js[-2].get("name"), multiplier="0.5")
    robot = cd.from_urdf(ET.tostring(root, encoding="unicode"))
    frame = js[-1].find("child").get("link")
    results = solve_all(robot, frame, 10, 4, position_only=True)
    assert sum(r.success for r, _, _ in results) >= 9


def test_bad_targets():
    robot = cd.load("panda")
    with pytest.raises(ValueError, match="4x4 transform"):
        robot.inverse_kinematics("flange", np.zeros(3))
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ValueError, match="not a rotation matrix"):
        robot.inverse_kinematics("flange", bad)
    with pytest.raises(ValueError, match="tol must be a positive number"):
        robot.inverse_kinematics("flange", np.eye(4), tol=-1.0)
    with pytest.raises(ValueError, match="restarts must be an integer >= 0"):
        robot.inverse_kinematics("flange", np.eye(4), restarts=-2)
    with pytest.raises(ValueError, match="q0 has shape"):
        robot.inverse_kinematics("flange", np.eye(4), q0=np.zeros(3))
    T = robot.frame_pose(np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7]), "flange")
    for wrong in (T.T, np.diag([1.0, 1.0, 1.0, 2.0])):  # a transposed transform puts the position in the last row
        with pytest.raises(ValueError, match=r"target: the last row is .* not \(0, 0, 0, 1\): not a rigid transform"):
            robot.inverse_kinematics("flange", wrong)
    with pytest.raises(ValueError, match="target contains NaN"):
        robot.inverse_kinematics("flange", np.where(np.eye(4) > 0, np.nan, 0.0))


def test_coordinates_held_at_a_limit_do_not_stall_the_solve():
    """Targets of the finger frames of the Panda (example-robot-data, the dependent finger joint), whose
    0.04 m finger travel sits at a limit whenever the target needs the hand moved instead: a step that
    pushes a coordinate beyond its limit leaves it frozen and the arm takes up the motion (every target
    solved, in few iterations); the same for positions on a tree with a ball joint (the NumPy path on the
    joint model)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        panda = cd.from_urdf(erd_urdf("panda"))
    for frame in ("panda_leftfinger", "panda_rightfinger"):
        results = solve_all(panda, frame, 20, 5)
        assert all(r.success for r, _, _ in results), [r.error for r, _, _ in results if not r.success]
        assert np.median([r.iterations for r, _, _ in results]) < 200
    mjcf = """<mujoco><worldbody><body name="a"><joint name="j0" type="hinge" axis="0 0 1" range="-1 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/><body name="b" pos="0.3 0 0"><joint name="ball"
      type="ball"/><geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/><body name="c" pos="0 0 -0.3">
      <joint name="s" type="slide" axis="1 0 0" range="0 0.02"/><geom type="sphere" size="0.05"/></body></body>
      </body></worldbody><compiler angle="radian"/></mujoco>"""
    tree = cd.from_mjcf(mjcf)
    rng = np.random.default_rng(6)
    iterations = []
    for k in range(20):  # positions: the slide's 2 cm at a limit while the hinge and the ball can reach
        target = tree.frame_pose(tree.random_configuration(seed=int(rng.integers(1 << 30))), "c")[:3, 3]
        res = tree.inverse_kinematics("c", target, q0=tree.neutral(), seed=k, position_only=True)
        assert res.success, (k, res)
        iterations.append(res.iterations)
    assert np.median(iterations) < 50
