"""SDFormat rules checked against Drake (libsdformat): a static model with a moving joint is refused, a
world's default ``<physics>`` profile is read among several, and what a universal joint's two
coordinates cannot carry (per-axis damping, limits) is reported by a ModelWarning naming the joint."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import MultibodyForces

import composedyn as cd
from drake_oracle import compare


def body(name: str, pose: str, mass: float = 1.5) -> str:
    return (f'<link name="{name}"><pose>{pose}</pose><inertial><pose>0.05 0.02 -0.03 0.1 0.2 0.3</pose>'
            f"<mass>{mass}</mass><inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz><ixy>0.001</ixy>"
            "</inertia></inertial></link>")


TWO_LINKS = body("a", "0 0 1 0 0 0") + body("b", "0.5 0 1 0 0 0", 0.7)
HINGES = ('<joint name="w" type="revolute"><parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis>'
          '</joint><joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz>'
          "</axis></joint>")


def drake_plant(path: str) -> MultibodyPlant:
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(path)
    plant.Finalize()
    return plant


def write(tmp_path, text: str, name: str = "m.sdf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- <static> --------------------------------------------------------------------------------
def test_static_model_with_a_moving_joint_is_refused_as_by_libsdformat(tmp_path):
    path = write(tmp_path, f'<sdf version="1.9"><model name="m"><static>true</static>{TWO_LINKS}'
                           '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
                           "<axis><xyz>0 1 0</xyz></axis></joint></model></sdf>")
    with pytest.raises(Exception, match="Only fixed joints are permitted in static models"):
        drake_plant(path)
    with pytest.raises(cd.ModelError, match=r"^.*m\.sdf: <joint name='j'> \(line 1\): a revolute joint in static "
                                            r"model 'm' .*only fixed joints are permitted"):
        cd.load(path)


def test_static_model_with_fixed_joints_is_welded_where_it_is(tmp_path):
    path = write(tmp_path, f'<sdf version="1.9"><model name="m"><static>true</static>{TWO_LINKS}'
                           '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model></sdf>')
    robot = cd.load(path)
    assert robot.dof == 0 and not robot.floating
    np.testing.assert_allclose(robot.frame_pose(np.zeros(0), "b")[:3, 3], [0.5, 0, 1])
    assert drake_plant(path).num_velocities() == 0


# ---- several <physics> profiles ------------------------------------------------------------------
def world(version: str, physics: str, gravity: str = "") -> str:
    return (f'<sdf version="{version}"><world name="w">{gravity}{physics}<model name="m">{TWO_LINKS}{HINGES}'
            "</model></world></sdf>")


@pytest.mark.parametrize("version,gravity", [("1.6", None), ("1.9", None), ("1.9", -3.0)])
def test_world_with_several_physics_profiles_loads_as_in_drake(tmp_path, version, gravity):
    physics = '<physics name="ode" type="ode" default="true"/><physics name="bullet" type="bullet"/>'
    path = write(tmp_path, world(version, physics, "" if gravity is None else f"<gravity>0 0 {gravity}</gravity>"))
    robot = cd.load(path)
    assert robot.joint_names == ("w", "j")
    np.testing.assert_allclose(robot.model.gravity, [0, 0, -9.81 if gravity is None else gravity])
    assert compare(path, robot) < 1e-9


@pytest.mark.parametrize("marked,expected", [("first", -3.0), ("second", -5.0), ("none", -3.0)])
def test_sdformat_14_gravity_comes_from_the_default_physics_profile(tmp_path, marked, expected):
    """1.4 keeps gravity in <physics>: the profile with default="true", else the first, is the world's."""
    flags = {"first": ('default="true"', ""), "second": ("", 'default="true"'), "none": ("", "")}[marked]
    physics = (f'<physics name="ode" type="ode" {flags[0]}><gravity>0 0 -3</gravity></physics>'
               f'<physics name="bullet" type="bullet" {flags[1]}><gravity>0 0 -5</gravity></physics>')
    robot = cd.load(write(tmp_path, world("1.4", physics)))
    np.testing.assert_allclose(robot.model.gravity, [0, 0, expected])
    one = write(tmp_path, world("1.4", physics.split("</physics>")[0] + "</physics>"), "one.sdf")
    assert compare(one, robot) < 1e-9  # Drake reads a 1.4 world with one profile: the same robot


# ---- universal joints ----------------------------------------------------------------------------
def universal(axis: str, axis2: str) -> str:
    return (f'<sdf version="1.9"><model name="m">{body("a", "0 0 1 0 0 0")}{body("b", "0.2 0.1 1 0.4 0 0")}'
            '<joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>'
            '<joint name="u" type="universal"><pose>0.05 0 0 0 0 0</pose><parent>a</parent><child>b</child>'
            f"<axis><xyz>1 0 0</xyz>{axis}</axis><axis2><xyz>0 1 0</xyz>{axis2}</axis2></joint></model></sdf>")


def loaded(path: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = cd.load(path)
    return robot, [str(w.message) for w in caught if issubclass(w.category, cd.ModelWarning)]


def test_universal_joint_damping_as_drake_and_axis2_damping_reported(tmp_path):
    path = write(tmp_path, universal("<dynamics><damping>0.3</damping></dynamics>",
                                     "<dynamics><damping>0.7</damping></dynamics>"))
    robot, said = loaded(path)
    assert len(said) == 1 and said[0].startswith(f"{path}: <joint name='u'> (line 1): universal joint with damping "
                                                 "0.3 (<axis>) and 0.7 (<axis2>)"), said
    plant = drake_plant(path)
    damping = plant.GetJointByName("u").default_damping_vector()
    np.testing.assert_allclose(damping, [0.3, 0.3])  # Drake: <axis>'s damping on both coordinates
    q, v, a = np.array([0.2, -0.4]), np.array([0.7, -1.1]), np.zeros(2)
    viscous = robot.inverse_dynamics(q, v, a) - robot.inverse_dynamics(q, v, a, friction=False)
    np.testing.assert_allclose(viscous, damping * v, rtol=1e-12)
    plant.mutable_gravity_field().set_gravity_vector(robot.graph.graph["gravity"])
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    np.testing.assert_allclose(robot.mass_matrix(q), plant.CalcMassMatrix(context), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(robot.inverse_dynamics(q, v, a, friction=False),
                               plant.CalcInverseDynamics(context, a, MultibodyForces(plant))
                               - plant.CalcGravityGeneralizedForces(context), rtol=1e-9, atol=1e-12)
    same, said = loaded(write(tmp_path, universal("<dynamics><damping>0.3</damping></dynamics>",
                                                  "<dynamics><damping>0.3</damping></dynamics>"), "same.sdf"))
    assert said == []


def test_universal_joint_limits_are_reported_not_dropped_silently(tmp_path):
    limit = "<limit><lower>{}</lower><upper>{}</upper><effort>4</effort></limit>"
    path = write(tmp_path, universal(limit.format(-0.5, 0.5), limit.format(-0.2, 0.2)))
    robot, said = loaded(path)
    assert said == [f"{path}: <joint name='u'> (line 1): universal joint limits are ignored (<axis><limit> lower "
                    "-0.5, upper 0.5, effort 4; <axis2><limit> lower -0.2, upper 0.2, effort 4): composedyn holds "
                    "no limits for a joint of several coordinates"]
    assert np.isinf(robot.limits["lower"]).all() and np.isinf(robot.limits["effort"]).all()
    joint = drake_plant(path).GetJointByName("u")  # Drake drops them too (with a warning about the effort)
    assert np.isinf(joint.position_lower_limits()).all()


def test_one_coordinate_joint_numbers_unchanged(tmp_path):
    """A revolute joint's limits and damping are still the file's."""
    path = write(tmp_path, f'<sdf version="1.9"><model name="m">{TWO_LINKS}<joint name="w" type="fixed">'
                           "<parent>world</parent><child>a</child></joint><joint name=\"j\" type=\"revolute\">"
                           "<parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz><limit><lower>-0.5</lower>"
                           "<upper>0.4</upper></limit><dynamics><damping>0.3</damping></dynamics></axis></joint>"
                           "</model></sdf>")
    robot, said = loaded(path)
    assert said == [] and robot.limits["lower"][0] == -0.5 and robot.limits["upper"][0] == 0.4
    assert robot.model.damping[0] == 0.3
