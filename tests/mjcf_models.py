"""MJCF models written for the import tests (each exercises features MuJoCo's compiler resolves)."""

from __future__ import annotations

from pathlib import Path

# An irregular octahedron (convex): MuJoCo computes the hand's inertia from it.
HULL_OBJ = """\
v 0.05 0 0
v -0.03 0 0
v 0 0.04 0
v 0 -0.02 0
v 0 0 0.03
v 0.01 0.01 -0.05
f 1 3 5
f 3 2 5
f 2 4 5
f 4 1 5
f 3 1 6
f 2 3 6
f 4 2 6
f 1 4 6
"""

# Fixed base, two branches; degrees with a zyx Euler sequence; defaults with classes and childclass;
# two joints per body with anchors off the body origin and non-zero ref; fromto capsules; inertias
# from geoms (a mesh among them) and one explicit full inertia; sites; motor, position servo and
# force-limited actuators; a tilted gravity.  {frictionloss} is filled in by the tests.
ARM = """\
<mujoco model="arm">
  <compiler angle="degree" eulerseq="zyx" autolimits="true" inertiafromgeom="true"/>
  <option gravity="0.3 -0.2 -9.7"/>
  <default>
    <joint damping="0.3" armature="0.02" frictionloss="{frictionloss}"/>
    <geom density="800"/>
    <default class="limb">
      <geom type="capsule" size="0.035"/>
      <joint range="-120 120" armature="0.05"/>
    </default>
    <default class="wrist">
      <joint axis="1 0 0" damping="0.1"/>
    </default>
  </default>
  <asset><mesh name="hull" file="hull.obj"/></asset>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <site name="mark" pos="0.5 0.5 0" euler="0 0 45"/>
    <body name="base" pos="0.1 0 0.2" euler="30 0 0">
      <geom type="cylinder" size="0.08 0.05"/>
      <body name="upper" pos="0 0 0.07" euler="10 20 -15" childclass="limb">
        <joint name="yaw" axis="0 0 1" ref="20" actuatorfrcrange="-60 60"/>
        <joint name="pitch" axis="0 1 0" pos="0 0 0.02"/>
        <geom fromto="0 0 0 0.35 0 0.05"/>
        <site name="elbow_site" pos="0.35 0 0.05" euler="0 90 0"/>
        <body name="fore" pos="0.35 0 0.05">
          <joint name="elbow" axis="0 1 0" pos="0.01 0.02 0" ref="-10"/>
          <joint name="extend" type="slide" axis="1 0 0" range="-0.05 0.1" ref="0.03"/>
          <geom fromto="0 0 0 0.3 0 0" size="0.03"/>
          <body name="hand" pos="0.3 0 0" childclass="wrist">
            <joint name="roll" pos="0.02 0 0.01" axis="1 0.2 0"/>
            <geom type="mesh" mesh="hull"/>
            <geom type="box" size="0.02 0.03 0.01" pos="0.05 0 0" euler="0 0 30"/>
            <site name="tool" pos="0.1 0 0" quat="0.9 0.1 0.3 0.2"/>
          </body>
        </body>
      </body>
      <body name="side" pos="0 0.1 0">
        <joint name="side_slide" type="slide" axis="0 0.6 0.8"/>
        <inertial pos="0.01 0.02 0.03" mass="0.4" fullinertia="0.003 0.002 0.004 0.0005 -0.0002 0.0001"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="yaw" ctrlrange="-2 2" gear="40"/>
    <position joint="pitch" kp="500" forcerange="-30 25"/>
    <motor joint="elbow" gear="20" ctrlrange="-1 1" forcerange="-0.5 0.5"/>
    <motor joint="roll" gear="5" ctrlrange="-1 1" armature="0.001" damping="0.01"/>
  </actuator>
  <contact><exclude body1="base" body2="upper"/></contact>
  <sensor><jointpos joint="yaw"/></sensor>
</mujoco>
"""

# A free root body with two legs (two joints in one body), a site, and a static table in the scene.
CRAWLER = """\
<mujoco model="crawler">
  <worldbody>
    <geom type="plane" size="3 3 .1"/>
    <body name="table" pos="1 1 0"><geom type="box" size=".2 .2 .2"/></body>
    <body name="torso" pos="0 0 0.5" quat="0.9 0.1 0.2 0.3">
      <freejoint name="root"/>
      <geom type="ellipsoid" size="0.2 0.15 0.1"/>
      <site name="imu" pos="0.05 0 0.05"/>
      <body name="leg1" pos="0.2 0 0">
        <joint name="hip1_z" axis="0 0 1" range="-40 40"/>
        <joint name="hip1_y" axis="0 1 0" pos="0.01 0 0" range="-30 60"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 -0.1" size="0.03"/>
        <body name="shin1" pos="0.2 0 -0.1">
          <joint name="knee1" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.025"/>
        </body>
      </body>
      <body name="leg2" pos="-0.2 0 0" euler="0 0 180">
        <joint name="hip2" axis="0 1 0" armature="0.01"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 -0.1" size="0.03"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# Joint couplings: right = -left + 0.002 (about the refs), thumb = 0.5 wrist + 0.1.
GRIPPER = """\
<mujoco model="gripper">
  <worldbody>
    <body name="palm">
      <joint name="wrist" axis="0 0 1"/>
      <geom type="box" size=".05 .05 .02"/>
      <body name="left" pos="0 0.03 0.05">
        <joint name="left" type="slide" axis="0 1 0" ref="0.01" range="0 0.04"/>
        <geom type="box" size=".01 .01 .03"/>
      </body>
      <body name="right" pos="0 -0.03 0.05">
        <joint name="right" type="slide" axis="0 1 0" ref="-0.005"/>
        <geom type="box" size=".01 .012 .03"/>
      </body>
      <body name="thumb" pos="0.03 0 0.05">
        <geom type="capsule" fromto="0 0 0 0.04 0 0.03" size="0.01"/><joint name="thumb" axis="1 0 0" ref="10"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint name="couple" joint1="right" joint2="left" polycoef="0.002 -1 0 0 0"/>
    <joint name="couple2" joint1="thumb" joint2="wrist" polycoef="0.1 0.5 0 0 0"/>
  </equality>
</mujoco>
"""

# Two free bodies under the world: the robot must be chosen with root=.
SCENE = """\
<mujoco model="scene">
  <worldbody>
    <body name="box" pos="1 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
    <body name="robot" pos="0 0 0.3">
      <freejoint name="base"/>
      <geom type="sphere" size=".1"/>
      <body name="arm" pos="0.1 0 0">
        <joint name="a1" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size=".02"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def write_arm(folder: Path, frictionloss: float = 0.1) -> Path:
    """The ARM model and its mesh in ``folder``; returns the MJCF path."""
    (folder / "hull.obj").write_text(HULL_OBJ)
    path = folder / "arm.xml"
    path.write_text(ARM.format(frictionloss=frictionloss))
    return path

# A planar four-bar closed by <equality connect> (MuJoCo's three equations, one redundant), and the
# same linkage with the rocker welded to an extra coupler link (<equality weld>).
FOURBAR = """\
<mujoco model="fourbar">
  <worldbody>
    <body name="crank">
      <joint name="crank_joint" axis="0 1 0" ref="60"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
      <body name="coupler" pos="0.2 0 0" euler="0 -60 0">
        <joint name="coupler_joint" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02"/>
        {extra}
      </body>
    </body>
    <body name="rocker" pos="0.5 0 0">
      <joint name="rocker_joint" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.02"/>
    </body>
  </worldbody>
  <equality>{equality}</equality>
  <actuator><motor joint="crank_joint" ctrlrange="-1 1" gear="10"/></actuator>
</mujoco>
"""
CONNECTED = FOURBAR.format(extra="", equality='<connect name="pin" body1="coupler" body2="rocker" anchor="0.5 0 0"/>')
WELDED = FOURBAR.format(
    extra='<body name="link3" pos="0.5 0 0"><joint name="pin_joint" axis="0 1 0"/>'
          '<geom type="box" size="0.05 0.01 0.01" pos="0.05 0 0"/></body>',
    equality='<weld name="glue" body1="link3" body2="rocker"/>')

# The four-bar's pin as two sites that coincide at the reference configuration.
SITED = FOURBAR.replace('<geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.02"/>',
                        '<geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.02"/>'
                        '<site name="rocker_pin" pos="-0.05 0 0.4330127018922193"/>').format(
    extra='<site name="coupler_pin" pos="0.5 0 0"/>',
    equality='<connect name="pin" site1="coupler_pin" site2="rocker_pin"/>')
