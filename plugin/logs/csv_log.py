"""Joint logs from the project's trajectory CSV (see :mod:`composedyn.torque_check.trajectory_csv`),
with optional ``<joint>_effort`` columns (measured torque, N m, or force, N)."""

from __future__ import annotations

import numpy as np

from composedyn.logs.joint_log import JointLog
from composedyn.torque_check.trajectory_csv import (
    SUFFIXES,
    load_numbers,
    numbered_lines,
    read_header,
    read_trajectory_csv,
)

EFFORT = "_effort"
OTHER = ("_tau",) + SUFFIXES[1:] + (EFFORT,)


def read_csv_log(path, joint_names=None, dependent=()) -> JointLog:
    """A JointLog from a CSV file; ``joint_names`` None: the position columns in file order.

    Efforts: every joint's ``<joint>_effort`` column or none (ValueError naming the missing ones),
    finite (ValueError naming the column and sample of the first that is not).
    """
    skip, header = read_header(str(path))
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
        with open(path, encoding="utf-8-sig") as f:
            effort = load_numbers(str(path), header, (s for k, s in numbered_lines(f, str(path)) if k > skip), cols)
        bad = np.argwhere(~np.isfinite(effort))
        if bad.size:
            k, i = bad[0]
            raise ValueError(f"{path}: column {joint_names[i] + EFFORT!r} is {effort[k, i]} at sample {k} "
                             f"(t = {traj.t[k]:g} s): a measured effort must be finite")
    return JointLog(traj.t, joint_names, traj.q, traj.qd, effort, str(path),
                    qdd=traj.qdd, measured=effort is not None)
