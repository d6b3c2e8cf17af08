"""MJCF names against MuJoCo: unnamed bodies and joints, a site with a body's name, and MuJoCo's own
test model (``mujoco/testdata/model.xml``, shipped with the ``mujoco`` package: unnamed bodies and
joints, several free bodies, a ball joint, a weld to the world), compared with MuJoCo on the same
file (mass matrix, inverse dynamics, body and site poses, joint by joint by the documented names)."""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from mjcf_compare import compare, documented_name

TESTDATA = Path(mujoco.__file__).parent / "testdata" / "model.xml"
CAPSULE = '<geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/>'

UNNAMED = f"""<mujoco><worldbody>
  <body name="body2" pos="0 0 1"><joint name="joint1" axis="0 1 0"/>{CAPSULE}
    <body pos=".3 0 0"><joint axis="1 0 0"/><joint axis="0 0 1" pos=".1 0 0"/>{CAPSULE}
      <body pos=".3 0 0"><joint type="slide" axis="1 0 0"/>{CAPSULE}</body></body></body>
</worldbody></mujoco>"""

SITE_LIKE_BODY = f"""<mujoco><worldbody>
  <body name="arm" pos="0 0 1"><joint name="j1" axis="0 1 0"/>{CAPSULE}<site name="arm" pos=".3 0 0" euler="0 0 30"/>
  </body></worldbody></mujoco>"""

MOCAP = f"""<mujoco><worldbody>
  <body name="target" mocap="true" pos="1 0 0"><site name="goal"/></body>
  <body name="arm"><joint name="j1" axis="0 1 0"/>{CAPSULE}</body>
</worldbody><equality><weld body1="target" body2="arm"/></equality></mujoco>"""


def test_unnamed_elements_get_kind_and_id_never_a_name_of_the_file():
    robot = cd.from_mjcf(UNNAMED)
    model = mujoco.MjModel.from_xml_string(UNNAMED)
    # body 2 and joint 1 are named in the file: the unnamed body 2... and joint 1 take a "_"
    assert robot.joint_names == ("joint1", "joint1_", "joint2", "joint3")
    assert {"body2", "body2_", "body3", "body2_::joint1_"} <= set(robot.frame_names)
    assert [documented_name(model, "joint", j) for j in range(model.njnt)] == list(robot.joint_names)
    compare(robot, model, seed=3)


def test_a_site_with_a_body_name_is_its_own_frame():
    with pytest.warns(cd.ModelWarning, match=r"site 'arm' has the name of a body: its frame is 'arm::site'"):
        robot = cd.from_mjcf(SITE_LIKE_BODY)
    assert {"arm", "arm::site"} <= set(robot.frame_names)
    compare(robot, mujoco.MjModel.from_xml_string(SITE_LIKE_BODY), seed=4)  # the site pose under arm::site


def test_a_weld_to_a_mocap_body_is_not_a_closed_chain_for_the_cli(tmp_path, capsys):
    path = tmp_path / "mocap.xml"
    path.write_text(MOCAP)
    with pytest.warns(cd.ModelWarning, match="to mocap body 'target'"):
        robot = cd.load(str(path))
    assert robot.joint_names == ("j1",)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        assert main(["info", str(path)]) == 0
        assert main(["convert", str(path), str(tmp_path / "out.urdf")]) == 0
    assert "j1" in capsys.readouterr().out
    back = cd.load(str(tmp_path / "out.urdf"))
    q = np.array([0.4])
    assert np.allclose(back.mass_matrix(q), robot.mass_matrix(q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("root, floating", [("body9", False), ("tumbling", True)])
def test_mujoco_testdata_model_by_root(root, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)  # its tendons, sensors and the other bodies
        robot = cd.load(str(TESTDATA), root=root, mimic="independent")
    assert robot.floating == floating
    compare(robot, mujoco.MjModel.from_xml_path(str(TESTDATA)), seed=5)


def test_mujoco_testdata_model_refusals_name_the_bodies_and_joint(capsys, tmp_path):
    with pytest.raises(cd.ModelError, match=r"several moving bodies under <worldbody> \(head, body9, cylinder"):
        cd.load(str(TESTDATA))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        head = cd.load(str(TESTDATA), root="head", mimic="independent")  # its ball joint: a TreeRobot
    assert {j.name: j.kind for j in head.joints}["wheel_0"] == "spherical"
    for command in (["info"], ["convert"]):
        args = command + [str(TESTDATA)] + ([str(tmp_path / "out.urdf")] if command == ["convert"] else [])
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "several moving bodies" in err[0], err
