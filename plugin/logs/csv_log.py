"""Joint logs from the project's trajectory CSV (see :mod:`composedyn.trajectory_csv`),
with optional ``<joint>_effort`` columns (measured torque, N m, or force, N)."""

from __future__ import annotations

import csv

import numpy as np

from composedyn.logs.joint_log import JointLog
from composedyn.trajectory_csv import SUFFIXES, read_trajectory_csv

EFFORT = "_effort"
OTHER = ("_tau",) + SUFFIXES[1:] + (EFFORT,)


def read_csv_log(path, joint_names=None, dependent=()) -> JointLog:
    """A JointLog from a CSV file; ``joint_names`` None: the position columns in file order.

    Efforts: every joint's ``<joint>_effort`` column or none (ValueError naming the missing ones).
    """
    header, skip = _header(path)
    if joint_names is None:
        joint_names = [c for c in header if c not in ("time", "t") and not c.endswith(OTHER)]
    joint_names = tuple(joint_names)
    traj = read_trajectory_csv(path, joint_names, tuple(dependent))
    present = [j for j in joint_names if j + EFFORT in header]
    effort = None
    if present:
        missing = [j + EFFORT for j in joint_names if j + EFFORT not in header]
        if missing:
            raise ValueError(f"{path}: missing effort column(s) {', '.join(missing)} (give every joint's or none)")
        cols = [header.index(j + EFFORT) for j in joint_names]
        effort = np.loadtxt(path, delimiter=",", skiprows=skip, usecols=cols, comments="#",
                            encoding="utf-8-sig", ndmin=2)
    return JointLog(traj.t, joint_names, traj.q, traj.qd, effort, str(path),
                    qdd=traj.qdd, measured=effort is not None)


def _header(path) -> tuple[list, int]:
    """The stripped header cells and the number of lines up to and including it."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            for k, row in enumerate(csv.reader(f), start=1):
                if row and any(c.strip() for c in row) and not row[0].lstrip().startswith("#"):
                    return [c.strip() for c in row], k
    except (OSError, UnicodeDecodeError, csv.Error):
        pass  # read_trajectory_csv names the problem
    read_trajectory_csv(path, ())
    raise ValueError(f"{path}: empty file, expected a header row (time, joint names)")
