"""Joint logs (CSV, ROS 1 and ROS 2 bags) and torque checks over many of them."""

from composedyn.logs.check import LogReport, check_log
from composedyn.logs.findings import LogFinding
from composedyn.logs.fleet import check_many
from composedyn.logs.joint_log import JointLog, LogWarning
from composedyn.logs.read import read_log
from composedyn.logs.rows import LogRow

__all__ = [
    "JointLog",
    "LogFinding",
    "LogReport",
    "LogRow",
    "LogWarning",
    "check_log",
    "check_many",
    "read_log",
]
