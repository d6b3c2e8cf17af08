"""SDFormat files shipped with installed packages, against Drake on the same file: the examples of
Drake itself (``pydrake/share/drake/examples``) and Cassie of example-robot-data (ball and gearbox
joints: refused, one line naming the joint).  Mass matrix, inverse dynamics and the poses of every
link and ``<frame>`` at random states, joint by joint by name, to 1e-9."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pydrake
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.testing.pinocchio_oracle import erd_robots_dir
from drake_oracle import DrakeModel, compare, random_state

EXAMPLES = Path(pydrake.__file__).parent / "share" / "drake" / "examples"
GRIPPER = EXAMPLES / "planar_gripper"


def frames_match(path, robot, weld=None, samples: int = 3) -> int:
    """Every frame Drake has under composedyn's name at the same pose (1e-9); returns how many."""
    oracle, rng, seen = DrakeModel(str(path), robot, weld=weld), np.random.default_rng(7), 0
    for _ in range(samples):
        worst, seen = oracle.frame_errors(random_state(robot, rng)[0])
        assert worst < 1e-9
    return seen


@pytest.mark.parametrize("name, floating, dof", [
    ("acrobot/Acrobot.sdf", False, 2),
    ("multibody/cart_pole/cart_pole.sdf", False, 2),
    ("kuka_iiwa_arm/models/desk/transcendesk55inch.sdf", True, 7),
    ("kuka_iiwa_arm/models/table/extra_heavy_duty_table_surface_only_collision.sdf", True, 6),
    ("kuka_iiwa_arm/models/table/extra_heavy_duty_table.sdf", False, 0),  # <static>
    ("quadrotor/warehouse.sdf", False, 0),  # <static>, eleven links
])
def test_drake_example_matches_drake(name, floating, dof):
    path = EXAMPLES / name
    robot = cd.load(str(path))
    assert (robot.floating, robot.dof) == (floating, dof)
    compare(str(path), robot, samples=3)
    assert frames_match(path, robot) >= len(robot.frame_names) - 1  # all but composedyn's world


def test_planar_gripper_fingers_are_welded_each_where_the_file_puts_them():
    """Three separate fingers, each free in Gazebo and Drake: floating=False welds every finger base."""
    path = GRIPPER / "planar_gripper.sdf"
    with pytest.raises(cd.ModelError, match=r"are not joined to the base link 'finger1_base'; .*"
                                            r"floating=False welds each part where the file puts it"):
        cd.load(str(path))
    robot = cd.load(str(path), floating=False)
    assert robot.joint_names == tuple(f"finger{k}_{j}Joint" for k in (1, 2, 3) for j in ("Base", "Mid"))
    bases = [f"finger{k}_base" for k in (1, 2, 3)]
    compare(str(path), robot, weld=bases, samples=3)
    assert frames_match(path, robot, weld=bases) == len(robot.frame_names) - 1


def test_planar_brick_has_a_massless_free_base_welded_by_floating_false(capsys):
    path = GRIPPER / "planar_brick.sdf"
    with pytest.raises(cd.ModelError, match=r"<link name='brick_base'> \(line 4\): link 'brick_base' has no "
                                            r"<inertial> but moves.*floating=False welds it"):
        cd.load(str(path))
    robot = cd.load(str(path), floating=False)
    compare(str(path), robot, weld="brick_base", samples=3)
    assert frames_match(path, robot, weld="brick_base") == 5 - 1


def test_brick_and_gripper_through_the_cli(tmp_path, capsys):
    import pinocchio as pin

    for name in ("planar_brick.sdf", "planar_gripper.sdf"):
        out = tmp_path / name.replace(".sdf", ".urdf")
        assert main(["convert", str(GRIPPER / name), str(out), "--floating", "fixed"]) == 0
        robot = cd.load(str(GRIPPER / name), floating=False)
        model = pin.buildModelFromUrdf(str(out))
        data = model.createData()
        q = np.random.default_rng(1).uniform(-1, 1, robot.nq)
        qp = np.zeros(model.nq)
        for k, joint in enumerate(robot.joint_names):  # revolute and prismatic joints: one coordinate each
            qp[model.joints[model.getJointId(joint)].idx_q] = q[k]
        order = [model.joints[model.getJointId(j)].idx_v for j in robot.joint_names]
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.abs(robot.mass_matrix(q) - M[np.ix_(order, order)]).max() < 1e-9


@pytest.mark.parametrize("name, joint, why", [
    ("cassie.sdf", "left-roll-joint", "gearbox joints"),
    ("cassie_v2.sdf", "right-achilles-spring-joint", "closes a kinematic loop"),  # after its ball joints
    ("cassie_simple.sdf", "right-achilles-spring-joint", "closes a kinematic loop"),
])
def test_cassie_is_refused_naming_the_joint(name, joint, why, capsys):
    path = erd_robots_dir() / "cassie_description" / "robots" / name
    with pytest.raises(cd.ModelError, match=rf"{name}: <joint name='{joint}'> \(line \d+\): {why}"):
        cd.load(str(path))
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"<joint name='{joint}'>" in err[0]


CASSIE_WORLD = erd_robots_dir() / "cassie_description" / "robots" / "cassie.world"
BOT = """<?xml version="1.0"?>
<sdf version="1.7"><model name="bot">
  <link name="a1"><inertial><mass>2</mass>
    <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
  <link name="a2"><pose>0.3 0 0 0 0.5 0</pose><inertial><pose>0.1 0 0 0 0 0</pose><mass>1</mass>
    <inertia><ixx>0.01</ixx><iyy>0.02</iyy><izz>0.03</izz></inertia></inertial></link>
  <joint name="ja" type="revolute"><parent>a1</parent><child>a2</child><axis><xyz>0 1 0</xyz></axis></joint>
</model></sdf>"""


def test_cassie_world_with_a_licence_above_its_xml_declaration_is_read():
    """libsdformat reads a file whose <?xml?> declaration follows a comment; so does composedyn."""
    assert CASSIE_WORLD.read_text().lstrip().startswith("<!--")
    with pytest.raises(cd.ModelError, match=r"cassie\.world: the world has 3 models \['<include model://sun>'"):
        cd.load(str(CASSIE_WORLD))


def test_a_world_model_is_chosen_although_gazebo_s_own_models_are_not_there(tmp_path):
    (tmp_path / "models" / "bot").mkdir(parents=True)
    (tmp_path / "models" / "bot" / "model.sdf").write_text(BOT)
    world = tmp_path / "lab.world"
    world.write_text('<!-- licence -->\n<?xml version="1.0" ?>\n<sdf version="1.6"><world name="default">\n'
                     "<include><uri>model://sun</uri></include>\n<include><uri>model://ground_plane</uri></include>\n"
                     "<include><uri>model://bot</uri></include>\n</world></sdf>\n")
    robot = cd.load(str(world), model="bot", package_dirs=[str(tmp_path / "models")])
    assert robot.joint_names == ("ja",) and robot.floating
    compare(str(tmp_path / "models" / "bot" / "model.sdf"), robot, samples=3)
    with pytest.raises(cd.ModelError, match=r"no model 'other' among the world's models that were found \(\['bot'\]\); "
                                            r"it may be one that was not: .*'model://sun' not found"):
        cd.load(str(world), model="other", package_dirs=[str(tmp_path / "models")])
