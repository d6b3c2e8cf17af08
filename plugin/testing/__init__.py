"""Helpers for testing robot-dynamics code, shared by composedyn's tests and benchmarks.

* :mod:`composedyn.testing.random_robots`: random fixed-base robots as URDF
  strings (branched trees, revolute / continuous / prismatic / fixed joints,
  physically valid inertias) and a Hypothesis strategy over them;
* :mod:`composedyn.testing.log_bags`: JointState logs of a known motion written
  with ``rosbags`` itself (ROS 1 and ROS 2 bags, MCAP), for tests of log readers;
* :mod:`composedyn.testing.pinocchio_oracle`: Pinocchio models of the same
  URDF with the joint-order map, and the example-robot-data vendor URDFs
  (needs the test extra: ``pip install "composedyn[test]"``);
* :mod:`composedyn.testing.legged_motion`: a legged robot swaying on planted
  feet with exact q, v, a, and the floating-base trajectory CSV writer.
"""
