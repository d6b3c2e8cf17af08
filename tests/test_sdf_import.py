"""SDFormat import against Drake (libsdformat's reading of the same files) and against composedyn's
own URDF import of equivalent models.

Every model is compared at random states, joint by joint by name, on the mass matrix and the
inverse dynamics without joint damping and friction (Drake's ``CalcInverseDynamics`` has neither),
to 1e-9 relative; free models through Drake's quaternion floating joint.  The files cover the
1.7+ pose semantics (relative_to, frames, expressed_in, quaternion and degree poses, placement
frames, nested models with scoped names, includes) and the 1.4-1.6 ones (link poses in the model
frame, joint poses in the child link frame, axes in the joint frame or, with
use_parent_model_frame and always in 1.4, in the model frame).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from drake_oracle import DrakeModel, compare


def inertial(m, ixx, iyy, izz, pose="0 0 0 0 0 0", ixy=0.0):
    return (f"<inertial><pose>{pose}</pose><mass>{m}</mass><inertia><ixx>{ixx}</ixx><iyy>{iyy}</iyy>"
            f"<izz>{izz}</izz><ixy>{ixy}</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>")


RICH_17 = f"""<?xml version="1.0"?>
<sdf version="1.9">
<model name="arm" canonical_link="base">
  <pose>0.3 -0.2 0.5 0.1 0.2 0.3</pose>
  <frame name="mount"><pose>0 0 0.1 0 0 0.5</pose></frame>
  <link name="base">
    <pose relative_to="mount">0.05 0 0 0 0 0</pose>
    {inertial(3.0, 0.05, 0.06, 0.07, "0.01 0.02 0.03 0 0 0", 0.001)}
  </link>
  <joint name="shoulder" type="revolute">
    <parent>base</parent><child>upper</child>
    <pose relative_to="base">0 0 0.2 0.3 0 0</pose>
    <axis><xyz expressed_in="base">0 1 0.2</xyz>
      <limit><lower>-2</lower><upper>2</upper><effort>50</effort><velocity>3</velocity></limit>
      <dynamics><damping>0.5</damping><friction>0.1</friction></dynamics></axis>
  </joint>
  <link name="upper">
    <pose relative_to="shoulder">0.1 0 0.05 0 0.4 0</pose>
    {inertial(2.0, 0.02, 0.03, 0.025, "0.15 0 0 0.2 0.1 0")}
  </link>
  <frame name="elbow_site" attached_to="upper"><pose>0.3 0 0 0 0 0</pose></frame>
  <joint name="elbow" type="continuous">
    <parent>upper</parent><child>fore</child>
    <pose relative_to="elbow_site" rotation_format="quat_xyzw">0 0 0 0 0.3826834323650898 0 0.9238795325112867</pose>
    <axis><xyz expressed_in="__model__">1 0 0</xyz></axis>
  </joint>
  <link name="fore">
    <pose relative_to="elbow_site" degrees="true">0 0.02 0 10 20 30</pose>
    {inertial(1.2, 0.01, 0.012, 0.011)}
  </link>
  <joint name="slide" type="prismatic">
    <parent>fore</parent><child>tool</child>
    <axis><xyz>0 0 1</xyz><limit><lower>0</lower><upper>0.2</upper></limit></axis>
  </joint>
  <link name="tool">
    <pose relative_to="fore">0.2 0 0 0 0 0</pose>
    {inertial(0.5, 0.001, 0.001, 0.001)}
  </link>
  <joint name="side" type="revolute">
    <parent>base</parent><child>side_link</child>
    <pose>0.05 0.05 0 0 0 0</pose>
    <axis><xyz>1 1 0</xyz></axis>
  </joint>
  <link name="side_link">
    <pose relative_to="base">0 0.3 0 0 0.5 0</pose>
    {inertial(0.7, 0.004, 0.003, 0.002)}
  </link>
  <joint name="weld" type="fixed"><parent>tool</parent><child>tip</child></joint>
  <link name="tip"><pose relative_to="tool">0 0 0.1 0 0 0</pose>{inertial(0.2, 1e-4, 1e-4, 1e-4)}</link>
</model>
</sdf>
"""


def legacy(version: str, parent_frame: str = "") -> str:
    """A 1.4-1.6 model: joint poses in the child link frame, axes in the joint frame unless
    use_parent_model_frame (always the model frame in 1.4)."""
    upmf = f"<use_parent_model_frame>{parent_frame}</use_parent_model_frame>" if parent_frame else ""
    return f"""<?xml version="1.0"?>
<sdf version="{version}">
<model name="old">
  <pose>1 2 0.5 0 0 0.7</pose>
  <link name="l0">{inertial(2.0, 0.02, 0.03, 0.04)}</link>
  <link name="l1"><pose>0 0 0.4 0.5 0 0</pose>{inertial(1.0, 0.01, 0.02, 0.015, "0.1 0 0 0 0.3 0")}</link>
  <link name="l2"><pose>0.3 0 0.6 0 0.8 0.2</pose>{inertial(0.8, 0.005, 0.006, 0.007, "0 0.1 0 0 0 0")}</link>
  <joint name="j1" type="revolute"><parent>l0</parent><child>l1</child><pose>0 0 -0.1 0 0 0</pose>
    <axis><xyz>0 1 0</xyz>{upmf}</axis></joint>
  <joint name="j2" type="prismatic"><parent>l1</parent><child>l2</child><pose>0.05 0 0 0.3 0 0</pose>
    <axis><xyz>1 0 1</xyz>{upmf}<limit><lower>-0.5</lower><upper>0.5</upper></limit></axis></joint>
</model>
</sdf>
"""


NESTED_18 = f"""<?xml version="1.0"?>
<sdf version="1.8">
<model name="outer">
  <link name="body"><pose>0 0 0.2 0 0 0</pose>{inertial(5.0, 0.1, 0.2, 0.3)}</link>
  <model name="arm">
    <pose relative_to="body">0.3 0 0.1 0 0 1.0</pose>
    <link name="link1">{inertial(1.0, 0.01, 0.01, 0.01)}</link>
    <link name="link2"><pose>0.2 0 0 0 0 0</pose>{inertial(0.5, 0.002, 0.003, 0.004)}</link>
    <frame name="j2_site" attached_to="link1"><pose>0.15 0 0 0 0.3 0</pose></frame>
    <joint name="j2" type="revolute"><parent>link1</parent><child>link2</child>
      <pose relative_to="j2_site"/><axis><xyz expressed_in="__model__">0 1 0</xyz></axis></joint>
    <model name="hand">
      <pose relative_to="link2">0.1 0 0 0 0 0</pose>
      <link name="palm">{inertial(0.3, 0.001, 0.001, 0.002)}</link>
    </model>
    <joint name="wrist" type="revolute"><parent>link2</parent><child>hand::palm</child>
      <axis><xyz expressed_in="hand">0 0 1</xyz></axis></joint>
  </model>
  <joint name="j1" type="revolute"><parent>body</parent><child>arm::link1</child>
    <pose relative_to="arm">0 0 0 0 0 0</pose><axis><xyz expressed_in="arm">1 0 0</xyz></axis></joint>
</model>
</sdf>
"""


def write(tmp_path, text: str, name: str = "model.sdf") -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


# ---- 1.7+ semantics ----------------------------------------------------------------------
def test_rich_17_model_free_and_welded_equal_drake(tmp_path):
    path = write(tmp_path, RICH_17)
    free = cd.load(path)
    assert free.floating and free.base.link == "base" and free.nq == 7 + 4
    assert compare(path, free, samples=6) < 1e-12
    fixed = cd.load(path, floating=False)
    assert not fixed.floating and fixed.joint_names == ("shoulder", "elbow", "slide", "side")
    assert compare(path, fixed, weld="base", samples=6) < 1e-12


def test_frames_links_and_limits_match_drake(tmp_path):
    path = write(tmp_path, RICH_17)
    robot = cd.load(path, floating=False)
    oracle = DrakeModel(path, robot, weld="base")
    plant, ctx = oracle.plant, oracle.context
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1, 1, robot.dof)
        oracle.set_state(q, np.zeros(robot.dof))
        for link in ("base", "upper", "fore", "tool", "tip", "side_link"):
            X = plant.GetBodyByName(link).EvalPoseInWorld(ctx).GetAsMatrix4()
            np.testing.assert_allclose(robot.frame_pose(q, link), X, atol=1e-12)
        for frame in ("elbow_site", "mount"):
            X = plant.GetFrameByName(frame).CalcPoseInWorld(ctx).GetAsMatrix4()
            np.testing.assert_allclose(robot.frame_pose(q, frame), X, atol=1e-12)
    for name in robot.joint_names:
        j = plant.GetJointByName(name)
        i = robot.joint_names.index(name)
        lo, hi = robot.model.lower[i], robot.model.upper[i]
        np.testing.assert_array_equal([lo, hi], [j.position_lower_limits()[0], j.position_upper_limits()[0]])
        assert robot.model.damping[i] == j.default_damping()
        assert robot.model.velocity[i] == j.velocity_upper_limits()[0]
    effort = plant.GetJointActuatorByName("shoulder").effort_limit()
    np.testing.assert_array_equal(robot.limits["effort"], [effort, np.inf, np.inf, np.inf])
    assert robot.model.friction[robot.joint_names.index("shoulder")] == 0.1


def test_damping_and_friction_enter_composedyn_torque(tmp_path):
    """Drake's inverse dynamics has no joint damping: composedyn's is the frictionless torque plus
    damping * qd + friction * sign(qd) on the joint that has them."""
    robot = cd.load(write(tmp_path, RICH_17), floating=False)
    q, qd, qdd = np.full(4, 0.2), np.array([0.7, -0.3, 0.1, 0.4]), np.zeros(4)
    extra = robot.inverse_dynamics(q, qd, qdd) - robot.inverse_dynamics(q, qd, qdd, friction=False)
    np.testing.assert_allclose(extra, [0.5 * 0.7 + 0.1, 0.0, 0.0, 0.0], atol=1e-12)


def test_placement_frame_and_world_frames(tmp_path):
    text = f"""<?xml version="1.0"?>
<sdf version="1.9">
<world name="w">
  <gravity>0.5 0 -9.7</gravity>
  <frame name="table"><pose>1 0 0.8 0 0 0.3</pose></frame>
  <model name="robot" placement_frame="foot">
    <pose relative_to="table">0 0 0 0 0 0</pose>
    <link name="torso"><pose>0 0 1 0 0 0</pose>{inertial(4.0, 0.1, 0.1, 0.05)}</link>
    <link name="leg"><pose>0 0 0.5 0 0 0</pose>{inertial(1.0, 0.02, 0.02, 0.005)}</link>
    <joint name="hip" type="revolute"><parent>torso</parent><child>leg</child>
      <pose>0 0 0.5 0 0 0</pose><axis><xyz>0 1 0</xyz></axis></joint>
    <frame name="foot" attached_to="leg"><pose>0 0 -0.5 0 0 0</pose></frame>
  </model>
</world>
</sdf>
"""
    path = write(tmp_path, text, "w.sdf")
    robot = cd.load(path, floating=False)
    np.testing.assert_allclose(robot.model.gravity, [0.5, 0, -9.7])
    # the foot lands on the table frame
    X_table = np.eye(4)
    X_table[:3, 3] = (1, 0, 0.8)
    c, s = np.cos(0.3), np.sin(0.3)
    X_table[:2, :2] = [[c, -s], [s, c]]
    np.testing.assert_allclose(robot.frame_pose(np.zeros(1), "foot"), X_table, atol=1e-12)
    assert compare(path, robot, weld="torso") < 1e-12


# ---- 1.4-1.6 semantics -------------------------------------------------------------------
@pytest.mark.parametrize("version,flag", [("1.4", ""), ("1.5", ""), ("1.5", "true"), ("1.6", "0"), ("1.6", "1")])
def test_legacy_semantics_equal_drake(tmp_path, version, flag):
    path = write(tmp_path, legacy(version, flag))
    assert compare(path, cd.load(path)) < 1e-12
    assert compare(path, cd.load(path, floating=False), weld="l0") < 1e-12


def test_legacy_axis_frame_changes_the_robot(tmp_path):
    """The flag matters (the test above would not notice an ignored flag otherwise)."""
    a = cd.load(write(tmp_path, legacy("1.6", "0"), "a.sdf"), floating=False)
    b = cd.load(write(tmp_path, legacy("1.6", "1"), "b.sdf"), floating=False)
    c = cd.load(write(tmp_path, legacy("1.4"), "c.sdf"), floating=False)
    q = np.array([0.3, 0.1])
    assert np.abs(a.mass_matrix(q) - b.mass_matrix(q)).max() > 1e-3
    np.testing.assert_allclose(b.mass_matrix(q), c.mass_matrix(q), atol=1e-14)


# ---- nested models and includes ----------------------------------------------------------
def test_nested_models_scoped_names_equal_drake(tmp_path):
    path = write(tmp_path, NESTED_18)
    robot = cd.load(path)
    assert robot.joint_names == ("j1", "arm::j2", "arm::wrist")
    assert {"arm::link1", "arm::hand::palm", "arm::j2_site"} <= set(robot.frame_names)
    assert compare(path, robot) < 1e-12
    assert compare(path, cd.load(path, floating=False), weld="body") < 1e-12


GRIPPER = f"""<?xml version="1.0"?>
<sdf version="1.6">
<model name="gripper">
  <pose>0 0 0.05 0 0 0</pose>
  <link name="palm">{inertial(0.4, 0.001, 0.002, 0.003)}</link>
  <link name="finger"><pose>0 0.02 0.05 0 0 0</pose>{inertial(0.05, 1e-5, 1e-5, 2e-5)}</link>
  <joint name="finger_joint" type="prismatic"><parent>palm</parent><child>finger</child>
    <axis><xyz>0 1 0</xyz><use_parent_model_frame>true</use_parent_model_frame>
      <limit><lower>0</lower><upper>0.04</upper></limit></axis></joint>
</model>
</sdf>
"""


def host(uri: str) -> str:
    return f"""<?xml version="1.0"?>
<sdf version="1.9">
<model name="host">
  <link name="base">{inertial(2.0, 0.02, 0.02, 0.02)}</link>
  <link name="arm"><pose>0 0 0.3 0 0 0</pose>{inertial(1.0, 0.01, 0.01, 0.01)}</link>
  <joint name="lift" type="prismatic"><parent>base</parent><child>arm</child><axis><xyz>0 0 1</xyz></axis></joint>
  <include>
    <uri>{uri}</uri>
    <name>tool</name>
    <pose relative_to="arm">0.1 0 0 0 0.5 0</pose>
  </include>
  <joint name="mount" type="revolute"><parent>arm</parent><child>tool::palm</child>
    <axis><xyz>1 0 0</xyz></axis></joint>
</model>
</sdf>
"""


def test_include_through_package_dirs_equals_drake(tmp_path):
    write(tmp_path, GRIPPER, "models/gripper/model.sdf")
    path = write(tmp_path, host("model://gripper/model.sdf"), "host.sdf")
    robot = cd.load(path, package_dirs=[tmp_path / "models"])
    assert robot.joint_names == ("lift", "mount", "tool::finger_joint")
    assert cd.load(path, package_dirs=str(tmp_path / "models")).joint_names == robot.joint_names  # one folder
    assert compare(path, robot, packages={"gripper": tmp_path / "models" / "gripper"}) < 1e-12


def test_include_of_a_model_folder_through_gz_sim_resource_path(tmp_path, monkeypatch):
    """``model://gripper`` names a folder whose model.config names the file (Gazebo's layout);
    the same robot as the explicit file path, which Drake reads."""
    write(tmp_path, GRIPPER, "res/gripper/gripper-1.6.sdf")
    write(tmp_path, '<?xml version="1.0"?><model><name>gripper</name><sdf version="1.5">nope.sdf</sdf>'
                    '<sdf version="1.6">gripper-1.6.sdf</sdf></model>', "res/gripper/model.config")
    folder = write(tmp_path, host("model://gripper"), "folder.sdf")
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "nothing_here") + ":" + str(tmp_path / "res"))
    robot = cd.load(folder)
    explicit = write(tmp_path, host("model://gripper/gripper-1.6.sdf"), "explicit.sdf")
    assert compare(explicit, robot, packages={"gripper": tmp_path / "res" / "gripper"}) < 1e-12


def test_world_with_one_model_and_gravity(tmp_path):
    text = RICH_17.replace('<sdf version="1.9">', '<sdf version="1.9"><world name="w"><gravity>0 0 -3</gravity>')
    text = text.replace("</sdf>", "</world></sdf>")
    path = write(tmp_path, text)
    robot = cd.load(path)
    np.testing.assert_allclose(robot.base.gravity, [0, 0, -3])
    assert compare(path, robot) < 1e-12


def test_world_with_several_models_needs_a_choice(tmp_path):
    text = NESTED_18.replace('<sdf version="1.8">', '<sdf version="1.8"><world name="w">')
    text = text.replace("</sdf>", RICH_17.split("?>", 1)[1].replace('<sdf version="1.9">', "")
                        .replace("</sdf>", "") + "</world></sdf>")
    path = write(tmp_path, text)
    with pytest.raises(cd.ModelError, match=r"the world has 2 models \['outer', 'arm'\]; choose one with model="):
        cd.load(path)
    robot = cd.from_sdf(path, model="arm")
    assert robot.joint_names == ("shoulder", "elbow", "slide", "side")
    assert compare(write(tmp_path, RICH_17, "arm.sdf"), robot) < 1e-12  # Drake would load both models


# ---- attachment to the world ---------------------------------------------------------------
def test_world_joint_fixes_the_model(tmp_path):
    text = RICH_17.replace('<joint name="side"', '<joint name="to_world" type="revolute"><parent>world</parent>'
                           '<child>base</child><axis><xyz>0 0 1</xyz></axis></joint>\n  <joint name="side"')
    path = write(tmp_path, text)
    robot = cd.load(path)
    assert not robot.floating and robot.joint_names[0] == "to_world"
    assert compare(path, robot) < 1e-12
    with pytest.raises(cd.ModelError, match=r"attached to the world by joint\(s\) \['to_world'\]"):
        cd.load(path, floating=True)


def test_fixed_world_joint_is_freed_by_floating_true(tmp_path):
    text = RICH_17.replace('<joint name="side"', '<joint name="to_world" type="fixed"><parent>world</parent>'
                           '<child>base</child></joint>\n  <joint name="side"')
    path = write(tmp_path, text)
    fixed, free = cd.load(path), cd.load(path, floating=True)
    assert not fixed.floating and free.floating and free.base.link == "base"
    assert compare(path, fixed) < 1e-12
    free_path = write(tmp_path, RICH_17, "free.sdf")
    assert compare(free_path, free) < 1e-12


def test_static_model_is_fixed(tmp_path):
    static = RICH_17.replace("<model name=\"arm\" canonical_link=\"base\">",
                             "<model name=\"arm\" canonical_link=\"base\"><static>true</static>")
    path = write(tmp_path, static)
    with pytest.raises(cd.ModelError, match=r"<joint name='shoulder'> .*revolute joint in static model 'arm'"):
        cd.load(path)  # libsdformat: "Only fixed joints are permitted in static models"
    for kind in ("revolute", "continuous", "prismatic"):
        static = static.replace(f'type="{kind}"', 'type="fixed"')
    robot = cd.load(write(tmp_path, static, "welded.sdf"))
    assert not robot.floating and robot.dof == 0
    with pytest.raises(cd.ModelError, match="is <static>; it cannot be loaded floating"):
        cd.load(path, floating=True)


def test_canonical_link_not_the_root_reverses_joints(tmp_path):
    """floating=False welds the canonical link; joints between it and the tree's root are walked
    backwards (axis negated, same coordinate): Drake welding the same link agrees."""
    path = write(tmp_path, RICH_17.replace('canonical_link="base"', 'canonical_link="fore"'))
    robot = cd.load(path, floating=False)
    assert set(robot.joint_names) == {"shoulder", "elbow", "slide", "side"}
    assert compare(path, robot, weld="fore") < 1e-12
    free = cd.load(path)  # free: the base is the tree's root, as in Drake
    assert free.base.link == "base" and compare(path, free) < 1e-12


# ---- Drake's rotor inertia, SDFormat 1.11 mimic ------------------------------------------
@pytest.mark.parametrize("declared", [True, False])
def test_drake_rotor_inertia_is_armature(tmp_path, declared):
    """Drake's reflected rotor inertia, with the drake namespace declared or (as libsdformat
    allows) not."""
    xmlns = ' xmlns:drake="http://drake.mit.edu"' if declared else ""
    text = RICH_17.replace('<sdf version="1.9">', f'<sdf version="1.9"{xmlns}>')
    text = text.replace('<parent>base</parent><child>upper</child>',
                        '<parent>base</parent><child>upper</child><drake:rotor_inertia>0.002</drake:rotor_inertia>'
                        '<drake:gear_ratio>10</drake:gear_ratio>')
    path = write(tmp_path, text)
    robot = cd.load(path, floating=False)
    assert robot.model.armature[0] == pytest.approx(0.2)
    assert compare(path, robot, weld="base") < 1e-12


def test_mimic_equals_the_urdf_mimic(tmp_path):
    sdf = f"""<?xml version="1.0"?>
<sdf version="1.11">
<model name="m">
  <link name="a">{inertial(1, 0.01, 0.01, 0.01)}</link>
  <link name="b"><pose>0.2 0 0 0 0 0</pose>{inertial(0.5, 0.004, 0.005, 0.006, "0.1 0 0 0 0 0")}</link>
  <link name="c"><pose>0.4 0 0 0 0 0</pose>{inertial(0.3, 0.002, 0.002, 0.003, "0.1 0 0 0 0 0")}</link>
  <joint name="world_weld" type="fixed"><parent>world</parent><child>a</child></joint>
  <joint name="j1" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>
  <joint name="j2" type="revolute"><parent>b</parent><child>c</child><axis><xyz>0 0 1</xyz>
    <mimic joint="j1"><multiplier>2</multiplier><offset>0.1</offset><reference>0.3</reference></mimic></axis></joint>
</model>
</sdf>
"""
    urdf = f"""<robot name="m"><link name="world"/>
  <link name="a">{inertial(1, 0.01, 0.01, 0.01).replace("<pose>0 0 0 0 0 0</pose>", "")}</link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.004" iyy="0.005" izz="0.006" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.1 0 0"/><mass value="0.3"/>
    <inertia ixx="0.002" iyy="0.002" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="world_weld" type="fixed"><parent link="world"/><child link="a"/></joint>
  <joint name="j1" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>
    <mimic joint="j1" multiplier="2" offset="-0.5"/></joint>
</robot>"""
    urdf = urdf.replace(inertial(1, 0.01, 0.01, 0.01).replace("<pose>0 0 0 0 0 0</pose>", ""),
                        '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" '
                        'iyz="0"/></inertial>')
    a, b = cd.load(write(tmp_path, sdf)), cd.from_urdf(urdf)
    assert a.joint_names == b.joint_names == ("j1",)
    q, qd, qdd = np.array([0.4]), np.array([0.3]), np.array([-0.2])
    np.testing.assert_allclose(a.mass_matrix(q), b.mass_matrix(q), atol=1e-14)
    np.testing.assert_allclose(a.inverse_dynamics(q, qd, qdd), b.inverse_dynamics(q, qd, qdd), atol=1e-14)


# ---- against composedyn's URDF import ------------------------------------------------------
def test_equivalent_urdf_and_sdf_give_the_same_robot(tmp_path):
    """The same robot written as URDF and as SDFormat 1.6 (joint frames = child link frames)."""
    rng = np.random.default_rng(7)
    links, joints, sdf_links, sdf_joints = [], [], [], []
    X = np.eye(4)
    for k in range(4):
        xyz, rpy = rng.uniform(-0.3, 0.3, 3), rng.uniform(-1, 1, 3)
        com, m = rng.uniform(-0.1, 0.1, 3), float(rng.uniform(0.5, 2))
        d = rng.uniform(0.01, 0.02, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        f = tuple(" ".join(repr(float(x)) for x in v) for v in (xyz, rpy, com, axis))
        links.append(f'<link name="l{k}"><inertial><origin xyz="{f[2]}"/><mass value="{m}"/><inertia ixx="{d[0]}" '
                     f'iyy="{d[1]}" izz="{d[2]}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        from composedyn.importers.dh import rpy_matrix

        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rpy_matrix(rpy), xyz
        X = X @ T if k else X  # l0 is welded at the world origin in both files
        from composedyn.importers.urdf_export import rpy_from_matrix

        pose = " ".join(repr(float(x)) for x in list(X[:3, 3]) + list(rpy_from_matrix(X[:3, :3])))
        sdf_links.append(f'<link name="l{k}"><pose>{pose}</pose>{inertial(m, *d, f[2] + " 0 0 0")}</link>')
        if k:
            joints.append(f'<joint name="j{k}" type="revolute"><parent link="l{k - 1}"/><child link="l{k}"/>'
                          f'<origin xyz="{f[0]}" rpy="{f[1]}"/><axis xyz="{f[3]}"/>'
                          f'<limit lower="-1" upper="1" effort="5" velocity="2"/><dynamics damping="0.1"/></joint>')
            sdf_joints.append(f'<joint name="j{k}" type="revolute"><parent>l{k - 1}</parent><child>l{k}</child>'
                              f'<axis><xyz>{f[3]}</xyz><limit><lower>-1</lower><upper>1</upper><effort>5</effort>'
                              f'<velocity>2</velocity></limit><dynamics><damping>0.1</damping></dynamics></axis></joint>')
    urdf = (f'<robot name="r"><link name="world"/>{"".join(links)}'
            '<joint name="w" type="fixed"><parent link="world"/><child link="l0"/></joint>'
            + "".join(joints) + "</robot>")
    sdf = (f'<sdf version="1.6"><model name="r">{"".join(sdf_links)}'
           '<joint name="w" type="fixed"><parent>world</parent><child>l0</child></joint>'
           f'{"".join(sdf_joints)}</model></sdf>')
    a, b = cd.from_urdf(urdf), cd.from_sdf(sdf)
    assert a.joint_names == b.joint_names
    for key in ("lower", "upper", "velocity", "effort"):
        np.testing.assert_array_equal(a.limits[key], b.limits[key])
    np.testing.assert_array_equal(a.model.damping, b.model.damping)
    for _ in range(3):
        q, qd, qdd = (rng.uniform(-1, 1, 3) for _ in range(3))
        np.testing.assert_allclose(a.mass_matrix(q), b.mass_matrix(q), atol=1e-13)
        np.testing.assert_allclose(a.inverse_dynamics(q, qd, qdd), b.inverse_dynamics(q, qd, qdd), atol=1e-13)
    assert compare(sdf, b) < 1e-12


def test_world_include_with_pose_and_an_unresolvable_neighbour(tmp_path):
    """A Gazebo-style world: the robot included with a new name and pose, next to models that are
    not installed (``model://sun``): they are listed, not resolved, and model= skips them."""
    write(tmp_path, GRIPPER, "models/gripper/model.sdf")
    world = """<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <include><uri>model://sun</uri></include>
  <include><uri>model://gripper/model.sdf</uri><name>g</name><pose>0.1 0.2 0.3 0.4 0.5 0.6</pose></include>
</world></sdf>
"""
    path = write(tmp_path, world, "w.sdf")
    with pytest.raises(cd.ModelError, match=r"the world has 2 models \['<include model://sun>', 'g'\]"):
        cd.load(path, package_dirs=[tmp_path / "models"])
    robot = cd.from_sdf(path, package_dirs=[tmp_path / "models"], model="g", floating=False)
    alone = write(tmp_path, world.replace("<include><uri>model://sun</uri></include>", ""), "alone.sdf")
    assert compare(alone, robot, packages={"gripper": tmp_path / "models" / "gripper"}, weld="palm") < 1e-12


def test_legacy_nested_model_equals_drake(tmp_path):
    """SDFormat 1.6 nested model: its links relative to its own model frame, the outer joint's pose
    relative to the nested child link, an axis in the outer model frame."""
    text = f"""<?xml version="1.0"?>
<sdf version="1.6">
<model name="outer">
  <pose>0 0 1 0 0 0.4</pose>
  <link name="body"><pose>0 0 0.2 0 0.1 0</pose>{inertial(5.0, 0.1, 0.2, 0.3)}</link>
  <model name="arm">
    <pose>0.3 0 0.1 0 0 1.0</pose>
    <link name="l1"><pose>0 0.1 0 0.2 0 0</pose>{inertial(1.0, 0.01, 0.02, 0.03, "0.05 0 0 0 0 0")}</link>
    <link name="l2"><pose>0.2 0 0 0 0.3 0</pose>{inertial(0.5, 0.002, 0.003, 0.004, "0 0.05 0 0 0 0")}</link>
    <joint name="j2" type="revolute"><parent>l1</parent><child>l2</child><pose>-0.05 0 0 0 0 0</pose>
      <axis><xyz>0 1 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis></joint>
  </model>
  <joint name="j1" type="revolute"><parent>body</parent><child>arm::l1</child><pose>0 0 0.03 0 0 0</pose>
    <axis><xyz>1 0 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis></joint>
</model>
</sdf>
"""
    path = write(tmp_path, text)
    robot = cd.load(path)
    assert robot.joint_names == ("j1", "arm::j2")
    assert compare(path, robot) < 1e-12
    assert compare(path, cd.load(path, floating=False), weld="body") < 1e-12


def test_added_joints_do_not_take_the_files_names():
    from test_sdf_bad_input import two_links

    joint = '<joint name="{}" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>'
    free = cd.from_sdf(two_links(joint.format("root_joint")))
    assert free.base.joint == "_root_joint" and free.joint_names == ("root_joint",)
    fixed = cd.from_sdf(two_links(joint.format("world_joint")), floating=False)
    assert fixed.joint_names == ("world_joint",)
    assert [d["name"] for *_, d in fixed.graph.edges(data=True)] == ["_world_joint", "world_joint"]


# ---- vendor files shipped with the oracles -------------------------------------------------
DRAKE_EXAMPLES = {  # file -> (floating, link Drake welds)
    "drake/examples/acrobot/Acrobot.sdf": (None, None),
    "drake/examples/multibody/cart_pole/cart_pole.sdf": (None, None),
    "drake/examples/kuka_iiwa_arm/models/desk/transcendesk55inch.sdf": (None, None),
    "drake/examples/kuka_iiwa_arm/models/table/extra_heavy_duty_table_surface_only_collision.sdf": (None, None),
    "drake/examples/planar_gripper/planar_brick.sdf": (False, "brick_base"),
}


@pytest.mark.parametrize("resource", sorted(DRAKE_EXAMPLES))
def test_drake_example_models_equal_drake(resource):
    from pydrake.common import FindResourceOrThrow

    path = FindResourceOrThrow(resource)
    floating, weld = DRAKE_EXAMPLES[resource]
    robot = cd.load(path, floating=floating)
    assert compare(path, robot, weld=weld) < 1e-12


@pytest.mark.parametrize("name,pattern", [
    ("cassie.sdf", r"<joint name='left-roll-joint'> \(line \d+\): gearbox joints"),
    ("cassie_v2.sdf", r"<joint name='right-achilles-spring-joint'> \(line \d+\): closes a kinematic loop"),
])
def test_example_robot_data_cassie_is_refused_clearly(name, pattern):
    from pin_oracle import erd_robots_dir

    path = erd_robots_dir() / "cassie_description" / "robots" / name
    with pytest.raises(cd.ModelError, match=f"^{path}: {pattern}"):
        cd.load(path)


def test_legacy_link_and_nested_model_may_share_a_name(tmp_path):
    """Before 1.7 names were unique per kind (the specification's rule; libsdformat, hence Drake,
    refuses this file): a link ``arm`` next to a nested model ``arm``, the joint names the link."""
    text = f"""<?xml version="1.0"?>
<sdf version="1.6"><model name="m">
  <link name="arm">{inertial(1.0, 0.01, 0.01, 0.01)}</link>
  <model name="arm"><pose>0.2 0 0 0 0 0</pose><link name="l">{inertial(0.5, 0.01, 0.02, 0.01)}</link></model>
  <joint name="j" type="revolute"><parent>arm</parent><child>arm::l</child><axis><xyz>0 1 0</xyz></axis></joint>
</model></sdf>"""
    path = write(tmp_path, text)
    robot = cd.load(path, floating=False)
    assert [(u, v) for u, v in robot.graph.edges] == [("world", "arm"), ("arm", "arm::l")]
    np.testing.assert_allclose(robot.frame_pose([0.0], "arm::l")[:3, 3], [0.2, 0, 0], atol=1e-15)


def test_merged_include_equals_drake(tmp_path):
    """``<include merge="true">`` (1.9): the gripper's links and joints join the host's scope, its
    model frame becomes ``_merged__tool__model__``."""
    write(tmp_path, GRIPPER.replace('version="1.6"', 'version="1.9"').replace(
        "<use_parent_model_frame>true</use_parent_model_frame>", "").replace(
        "<xyz>0 1 0</xyz>", '<xyz expressed_in="__model__">0 1 0</xyz>'), "models/gripper/model.sdf")
    text = host("model://gripper/model.sdf").replace("<include>", '<include merge="true">').replace(
        "<child>tool::palm</child>", "<child>palm</child>")
    path = write(tmp_path, text, "host.sdf")
    robot = cd.load(path, package_dirs=[tmp_path / "models"])
    assert robot.joint_names == ("lift", "mount", "finger_joint")
    assert compare(path, robot, packages={"gripper": tmp_path / "models" / "gripper"}) < 1e-12


def test_load_recognises_sdformat_by_content(tmp_path):
    """An XML string, and an ``.xml`` file, with an ``<sdf>`` root (after a declaration and a
    comment) load as SDFormat; a URDF string still loads as URDF."""
    text = '<?xml version="1.0"?>\n<!-- a <robot> in a comment -->\n' + RICH_17.split("?>", 1)[1]
    from_string = cd.load(text, floating=False)
    from_file = cd.load(write(tmp_path, text, "arm.xml"), floating=False)
    assert from_string.joint_names == from_file.joint_names == ("shoulder", "elbow", "slide", "side")
    assert cd.load('<robot name="r"><link name="a"/></robot>').name == "r"


# ---- random models ------------------------------------------------------------------------
def random_sdf(seed: int, n: int, version: str) -> str:
    """A random tree of ``n`` links: random link, joint, inertial and frame poses, with (1.7+)
    relative_to, attached_to and expressed_in naming random earlier frames, or (1.6)
    use_parent_model_frame at random."""
    rng = np.random.default_rng(seed)
    new = version >= "1.7"

    def pose(rel=""):
        v = " ".join(f"{x:.6f}" for x in np.r_[rng.uniform(-0.4, 0.4, 3), rng.uniform(-np.pi, np.pi, 3)])
        return f'<pose relative_to="{rel}">{v}</pose>' if rel else f"<pose>{v}</pose>"

    def pick(options):
        return options[int(rng.integers(len(options)))]

    parts = []
    for k in range(n):
        m = rng.uniform(0.2, 2.0)
        d = rng.uniform(0.005, 0.02, 3)
        inert = (f"<inertial>{pose()}<mass>{m:.6f}</mass><inertia><ixx>{d[0] + d[1]:.6f}</ixx><iyy>{d[1] + d[2]:.6f}"
                 f"</iyy><izz>{d[0] + d[2]:.6f}</izz></inertia></inertial>")
        earlier = [f"l{i}" for i in range(k)] + [f"j{i}" for i in range(1, k)] + [f"f{i}" for i in range(k)]
        rel = pick([""] + earlier) if new else ""
        parts.append(f'<link name="l{k}">{pose(rel)}{inert}</link>')
        if k:
            jtype = pick(["revolute", "prismatic", "continuous", "fixed", "revolute"])
            parent = f"l{int(rng.integers(k))}"
            jrel = pick(["", parent] + earlier) if new else ""
            axis = rng.normal(size=3)
            xyz = " ".join(f"{x:.6f}" for x in axis)
            if new:
                frame = pick(["", "__model__", f"l{k}", parent] + [f"f{i}" for i in range(k)])
                xyz_el = f'<xyz expressed_in="{frame}">{xyz}</xyz>' if frame else f"<xyz>{xyz}</xyz>"
            else:
                flag = pick(["", "<use_parent_model_frame>true</use_parent_model_frame>"])
                xyz_el = f"<xyz>{xyz}</xyz>{flag}"
            parts.append(f'<joint name="j{k}" type="{jtype}"><parent>{parent}</parent><child>l{k}</child>'
                         f'{pose(jrel)}<axis>{xyz_el}</axis></joint>')
        if new:
            parts.append(f'<frame name="f{k}" attached_to="l{int(rng.integers(k + 1))}">{pose()}</frame>')
    return (f'<?xml version="1.0"?>\n<sdf version="{version}"><model name="r">{pose()}'
            + "\n".join(parts) + "</model></sdf>")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("version", ["1.4", "1.6", "1.9"])
def test_random_models_equal_drake(tmp_path, seed, version):
    """Free, and welded at the canonical link (1.9: a random one, so joints between it and the
    tree's root are reversed)."""
    text, canonical = random_sdf(seed, 6, version), "l0"
    if version >= "1.7":
        canonical = f"l{seed % 6}"
        text = text.replace('<model name="r">', f'<model name="r" canonical_link="{canonical}">')
    path = write(tmp_path, text)
    assert compare(path, cd.load(path), samples=3, seed=seed) < 1e-11
    assert compare(path, cd.load(path, floating=False), samples=3, seed=seed, weld=canonical) < 1e-11


def test_joint_springs_are_reported_not_modelled(tmp_path):
    text = RICH_17.replace("<damping>0.5</damping>", "<damping>0.5</damping><spring_stiffness>3</spring_stiffness>")
    path = write(tmp_path, text)
    with pytest.warns(cd.ModelWarning, match=r"joint springs \(<spring_stiffness>\) are ignored on joints "
                                              r"\['shoulder'\]"):
        cd.load(path)
