"""Read a floating-base (legged) trajectory from CSV, with one-line errors naming file, line and column.

Format: a header row, then one row per sample (``#`` lines and blank lines skipped).

* ``time`` (or ``t``): seconds, strictly increasing;
* base pose: ``base_x, base_y, base_z`` (m, world) and ``base_qx, base_qy,
  base_qz, base_qw`` (orientation quaternion, scalar last; normalised when
  read) -- Pinocchio's free-flyer ``q[:7]``;
* one column per joint, named as in ``robot.joint_names`` (rad or m);
* optional velocities: ``base_vx, base_vy, base_vz, base_wx, base_wy,
  base_wz`` (linear and angular velocity of the base in *base* axes,
  Pinocchio's ``v[:6]``) with ``<joint>_vel`` for every joint; optional
  accelerations (with the velocities): ``base_ax, base_ay, base_az, base_dwx,
  base_dwy, base_dwz`` (time derivatives of those six, Pinocchio's ``a[:6]``)
  with ``<joint>_acc``.  Missing rates are differentiated on the Lie group
  (:mod:`composedyn.floating.base_motion`);
* stance flags ``<frame>_contact``: 1 when the frame is in contact with the
  ground at that sample, 0 when not, for frames of ``robot.frame_names``; at
  least one such column;
* ``<joint>_tau`` and ``<joint>_effort`` columns are ignored.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from composedyn.torque_check.trajectory_csv import diagnose, load_numbers, numbered_lines, read_header

POSE = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
TWIST = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
TWIST_RATE = ("base_ax", "base_ay", "base_az", "base_dwx", "base_dwy", "base_dwz")
CONTACT = "_contact"
IGNORED = ("_tau", "_effort")


@dataclass(frozen=True)
class LeggedTrajectory:
    """Samples of a floating-base trajectory: t (T,), q (T, nq), v and a (T, nv) or None,
    stance: frame -> (T,) bool."""

    path: str
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray | None
    a: np.ndarray | None
    stance: dict


def read_legged_csv(path, robot) -> LeggedTrajectory:
    """Parse ``path`` for the floating robot ``robot`` (whole file); ValueError (one line) on bad input."""
    path = str(path)
    if getattr(robot.base, "kind", None) != "free":
        raise ValueError(f"{path}: legged trajectory CSVs are for free-flyer bases; robot {robot.name!r} "
                         f"has a {robot.base.kind} base")
    header_line, header = read_header(path)
    where = {}
    for k, name in enumerate(header):
        if name in where:
            raise ValueError(f"{path}: line {header_line}: column {name!r} appears twice")
        where[name] = k
    joints = tuple(robot.joint_names)
    groups = {"pose": POSE + joints, "vel": TWIST + tuple(j + "_vel" for j in joints),
              "acc": TWIST_RATE + tuple(j + "_acc" for j in joints)}
    tcol = next((c for c in ("time", "t") if c in where), None)
    if tcol is None:
        raise ValueError(f"{path}: no time column (expected 'time' or 't' in the header)")
    missing = [c for c in groups["pose"] if c not in where]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (a floating-base trajectory gives "
                         "the base pose and every joint)")
    known = {tcol} | {c for g in groups.values() for c in g} | {j + s for j in joints for s in IGNORED}
    frames = []
    for name in header:
        if name in known:
            continue
        if name.endswith(CONTACT):
            frame = name[: -len(CONTACT)]
            if frame not in robot.frame_names:
                close = difflib.get_close_matches(frame, robot.frame_names, n=3, cutoff=0.5)
                hint = f" (close frames: {', '.join(close)})" if close else f" (frames: {', '.join(robot.frame_names)})"
                raise ValueError(f"{path}: column {name!r} names no frame of robot {robot.name!r}{hint}")
            frames.append(frame)
            continue
        raise ValueError(f"{path}: column {name!r} is neither time, base pose ({', '.join(POSE)}), a joint of the "
                         f"robot, a _vel/_acc column, nor <frame>_contact")
    present = {g: [c for c in cols if c in where] for g, cols in groups.items()}
    for g in ("vel", "acc"):
        if present[g] and len(present[g]) < len(groups[g]):
            lacking = [c for c in groups[g] if c not in where]
            raise ValueError(f"{path}: missing column(s) {', '.join(lacking)} (give all velocity or "
                             "acceleration columns, or none)")
    if present["acc"] and not present["vel"]:
        raise ValueError(f"{path}: acceleration columns need the velocity columns too")
    if not frames:
        raise ValueError(f"{path}: no <frame>_contact column: give the stance flags (0/1) of the contact frames")
    names = [tcol] + [c for g in ("pose", "vel", "acc") if present[g] for c in groups[g]]
    names += [f + CONTACT for f in frames]
    data = _load(path, header_line, header, [where[c] for c in names])
    nq, nv = robot.nq, robot.nv
    t, q = data[:, 0], data[:, 1:1 + nq].copy()
    k = 1 + nq
    v = a = None
    if present["vel"]:
        v, k = data[:, k:k + nv], k + nv
    if present["acc"]:
        a, k = data[:, k:k + nv], k + nv
    flags = data[:, k:]
    bad = np.argwhere((flags != 0) & (flags != 1))
    if bad.size:
        row, col = bad[0]
        raise ValueError(f"{path}: sample {row} (t = {t[row]:g} s), column {frames[col] + CONTACT!r}: "
                         f"stance flag {flags[row, col]:g} is not 0 or 1")
    norm = np.linalg.norm(q[:, 3:7], axis=1)
    zero = np.flatnonzero(norm < 1e-9)
    if zero.size:
        raise ValueError(f"{path}: sample {zero[0]} (t = {t[zero[0]]:g} s): base quaternion has zero norm")
    q[:, 3:7] /= norm[:, None]
    return LeggedTrajectory(path, t, q, v, a, {f: flags[:, i] == 1 for i, f in enumerate(frames)})


def _load(path: str, header_line: int, header: list, use: list) -> np.ndarray:
    """The numbers of the used columns (T, len(use)); ValueError naming the first bad line and column."""
    with open(path, encoding="utf-8-sig") as f:
        lines = (s for k, s in numbered_lines(f, path) if k > header_line)
        data = load_numbers(path, header, lines, use)
    if not np.isfinite(data).all() or np.any(np.diff(data[:, 0]) <= 0):
        diagnose(path, header)
    if len(data) < 2:
        raise ValueError(f"{path}: {len(data)} sample(s), a trajectory needs at least 2")
    return data
