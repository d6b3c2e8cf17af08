"""Public MJCF files: the MuJoCo environments of Gymnasium (``gymnasium/envs/mujoco/assets``),
loaded by composedyn and compared with MuJoCo on the same file: mass matrix, inverse dynamics,
body and site poses at random states, per joint by name, to 1e-9.

``gymnasium`` is imported at the top: without it these tests fail (it is a test dependency),
they never skip."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import mujoco
import pytest

import composedyn as cd
from mjcf_compare import compare

ASSETS = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
FILES = sorted(p.name for p in ASSETS.glob("*.xml"))
FLOATING = {"ant.xml", "humanoid.xml", "humanoidstandup.xml"}  # a <freejoint> on the root body


def test_the_assets_are_there():
    assert {"ant.xml", "humanoid.xml", "half_cheetah.xml", "hopper.xml", "walker2d.xml", "reacher.xml",
            "pusher.xml"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_gymnasium_model_matches_mujoco(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's own warnings go to MUJOCO_LOG.TXT in the working directory
    path = ASSETS / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load(str(path))
    model = mujoco.MjModel.from_xml_path(str(path))
    assert robot.floating == (name in FLOATING)
    assert robot.nv == model.nv  # every degree of freedom of the file is the robot's
    compare(robot, model, seed=len(name), samples=3)


def test_humanoid_warns_about_its_tendons_and_springs():
    with pytest.warns(cd.ModelWarning, match=r"humanoid\.xml: not mapped .*tendons \(left_hipknee, "
                                             r"right_hipknee\).*joint springs"):
        cd.load(str(ASSETS / "humanoid.xml"))


def test_humanoid_effort_limits_are_ctrlrange_times_gear():
    model = mujoco.MjModel.from_xml_path(str(ASSETS / "humanoid.xml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load(str(ASSETS / "humanoid.xml"))
    effort = dict(zip(robot.joint_names, robot.limits["effort"][robot.base.nv:]))  # base entries first
    for a in range(model.nu):
        joint = model.joint(int(model.actuator_trnid[a, 0])).name
        assert effort[joint] == pytest.approx(abs(model.actuator_ctrlrange[a]).max() * abs(model.actuator_gear[a, 0]))


def test_mujoco_compiler_warnings_become_one_model_warning(tmp_path, monkeypatch):
    """half_cheetah.xml uses a deprecated compiler attribute: MuJoCo's warning is a ModelWarning,
    and MuJoCo writes no MUJOCO_LOG.TXT into the working directory."""
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cd.load(str(ASSETS / "half_cheetah.xml"))
    messages = [str(w.message) for w in caught if issubclass(w.category, cd.ModelWarning)]
    assert len(messages) == 2  # MuJoCo's, and the features composedyn leaves out (joint springs)
    assert "half_cheetah.xml: MuJoCo's compiler warns: compiler attribute 'settotalmass' is deprecated" in messages[0]
    assert "ignored: joint springs" in messages[1]
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
