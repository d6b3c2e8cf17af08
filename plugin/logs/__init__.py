"""Joint logs (CSV, ROS 1 and ROS 2 bags) and torque checks over many of them."""

from composedyn.logs.joint_log import JointLog, LogWarning
from composedyn.logs.read import read_log

__all__ = [
    "JointLog",
    "LogWarning",
    "read_log",
]
