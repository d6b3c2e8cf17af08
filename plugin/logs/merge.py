"""Merge per-publisher joint samples onto one time base.

Joints not in ``joint_names`` are dropped first (with publishers left
without joints): nothing they send counts.  Each publisher's samples are then
checked: a position that is not finite raises ValueError; backwards or
repeated stamps, gaps longer than ``gap_factor`` times the publisher's median
step and jumping sequence numbers are "damaged" findings of the log
(:mod:`composedyn.logs.integrity`; the samples are sorted by stamp and the
later of two at one stamp dropped); non-finite velocities (the field dropped
for the whole log) are reported as :class:`LogWarning`.  Efforts are kept per
joint and sample: a message without efforts, or a non-finite effort, leaves
NaN at those samples (a joint whose publisher sends none has NaN throughout),
and one :class:`LogWarning` names the joints and samples whose measured effort
is missing (those joints' measured efforts are then unchecked, see
:mod:`composedyn.logs.check`).  Every message names the topic and the time
(s from ``stamp0``).

Joints published by one publisher keep its stamps; when several publishers
carry different joints, the time base is the stamps of the joint with the
most samples, cut to the interval every joint covers (no extrapolation), and
the other joints are interpolated onto it with a cubic spline (not-a-knot;
:func:`scipy.interpolate.make_interp_spline`) through their own samples.  When
the cut drops more than ``gap_factor`` times the coarsest publisher's median
step of some joint's samples (a publisher that stopped early, or two drivers'
clocks apart), the log has a "damaged" finding naming the joints, samples and
seconds dropped (:func:`composedyn.logs.integrity.crop_findings`).
"""

from __future__ import annotations

import difflib

import numpy as np

from composedyn.logs.bag import Publisher
from composedyn.logs.integrity import crop_findings, stamp_findings
from composedyn.logs.joint_log import JointLog, warn_log

FIELDS = ("q", "qd", "effort")


def merge_publishers(publishers: list[Publisher], where: str, joint_names=None,
                     gap_factor: float = 10.0) -> JointLog:
    """One JointLog from the samples of several publishers of one topic (``where`` = "file:topic")."""
    publishers = _kept(publishers, joint_names)
    if not publishers:
        raise ValueError(f"{where}: no JointState message with joints")
    stamp0 = int(min(min(p.stamps) for p in publishers))
    findings = []
    for p in publishers:
        label = where if len(publishers) == 1 else f"{where} (joints {', '.join(p.names)})"
        findings += stamp_findings(p.arrays()[0], p.sequence(), stamp0, label, gap_factor)
    series = [_publisher(p, stamp0, where) for p in publishers]
    per_joint = _per_joint(series, where)
    names = tuple(per_joint) if joint_names is None else tuple(joint_names)
    for j in names:
        if j not in per_joint:
            close = difflib.get_close_matches(j, list(per_joint), n=3)
            hint = f"close: {', '.join(close)}" if close else f"joints: {', '.join(per_joint)}"
            raise ValueError(f"{where}: joint {j!r} is in no message ({hint})")
    base = _time_base([per_joint[j][0] for j in names], where)
    findings += crop_findings({j: per_joint[j][0] for j in names}, base[0], base[-1], stamp0, where, gap_factor)
    fields = {f: [] for f in FIELDS}
    for j in names:
        stamps, values = per_joint[j]
        for f in FIELDS:
            fields[f].append(None if values[f] is None else _resample(stamps, values[f], base))
    if any(c is not None for c in fields["effort"]):  # a joint without efforts: not measured
        fields["effort"] = [np.full(len(base), np.nan) if c is None else c for c in fields["effort"]]
    out = {f: None if any(c is None for c in cols) else np.column_stack(cols) for f, cols in fields.items()}
    if out["qd"] is None and any(c is not None for c in fields["qd"]):
        warn_log(f"{where}: velocity of some joints only; ignored for all", stacklevel=3)
    if out["effort"] is not None:
        _missing_effort(out["effort"], names, (base - stamp0) * 1e-9, where)
    return JointLog((base - stamp0) * 1e-9, names, out["q"], out["qd"], out["effort"], where, stamp0=stamp0,
                    findings=tuple(findings))


def _kept(publishers: list[Publisher], joint_names) -> list[Publisher]:
    """The publishers with samples, cut to the joints of ``joint_names`` (all for None)."""
    publishers = [p for p in publishers if len(p.stamps)]
    if joint_names is None:
        return publishers
    wanted = set(joint_names)
    out = []
    for p in publishers:
        names = [j for j in p.names if j in wanted]
        if names:
            out.append(p if len(names) == len(p.names) else p.select(names))
    return out


def _missing_effort(effort: np.ndarray, names: tuple, t: np.ndarray, where: str) -> None:
    """One LogWarning naming the joints whose measured effort (T, n) is missing or not finite at some samples."""
    bad = ~np.isfinite(effort)
    if not bad.any():
        return
    parts = []
    for i in np.flatnonzero(bad.any(axis=0)):
        k = np.flatnonzero(bad[:, i])
        parts.append(f"{names[i]} ({len(k)} of {len(t)} samples, first at t = {t[k[0]]:.6g} s)")
    warn_log(f"{where}: measured effort missing or not finite for {', '.join(parts)}; "
             "the measured effort of these joints is unchecked", stacklevel=4)


def _publisher(p: Publisher, t0: int, where: str) -> tuple:
    """(stamps (T,) int64 sorted unique, names, {field: (T, n) or None}) of one publisher, checked."""
    stamps, q, qd, effort = p.arrays()
    if len(stamps) > 1 and stamps[0] == stamps[-1] and np.all(stamps == stamps[0]):
        raise ValueError(f"{where}: every header stamp of joints {', '.join(p.names)} is {_s(stamps[0])} s "
                         '(not stamped by the driver?); read with stamps="receive" (CLI --stamps receive)')
    order = np.argsort(stamps, kind="stable")  # backwards and repeated stamps are findings
    stamps = stamps[order]
    keep = np.concatenate([[True], np.diff(stamps) > 0])
    idx = order[keep]
    values = {"q": q[idx], "qd": None if qd is None else qd[idx], "effort": None if effort is None else effort[idx]}
    for f, label in (("q", "position"), ("qd", "velocity"), ("effort", "effort")):
        x = values[f]
        if x is None:
            continue
        bad = ~np.isfinite(x)
        if bad.any():
            k, i = np.argwhere(bad)[0]
            msg = f"{where}: joint {p.names[i]!r} {label} is {x[k, i]} at t = {_s(stamps[idx][k] - t0)} s"
            if f == "q":
                raise ValueError(msg)
            if f == "qd":
                warn_log(msg + f"; {label} ignored", stacklevel=4)
                values[f] = None
    return stamps[keep], p.names, values


def _per_joint(series: list, where: str) -> dict:
    """joint name -> (stamps, {field: (T,) or None}); a joint of several publishers is merged in time."""
    pieces: dict[str, list] = {}
    for stamps, names, values in series:
        for i, j in enumerate(names):
            pieces.setdefault(j, []).append((stamps, {f: None if v is None else v[:, i] for f, v in values.items()}))
    out = {}
    for j, parts in pieces.items():
        if len(parts) == 1:
            out[j] = parts[0]
            continue
        stamps = np.concatenate([s for s, _ in parts])
        order = np.argsort(stamps, kind="stable")
        keep = np.concatenate([[True], np.diff(stamps[order]) > 0])
        if not keep.all():
            warn_log(f"{where}: joint {j!r} published twice at one stamp; first sample kept", stacklevel=4)
        idx = order[keep]
        merged = {f: None if any(v[f] is None for _, v in parts) else np.concatenate([v[f] for _, v in parts])[idx]
                  for f in FIELDS}
        if merged["effort"] is None and any(v["effort"] is not None for _, v in parts):
            merged["effort"] = np.concatenate([np.full(len(s), np.nan) if v["effort"] is None else v["effort"]
                                               for s, v in parts])[idx]
        out[j] = (stamps[idx], merged)
    return out


def _time_base(stamps: list, where: str) -> np.ndarray:
    """The densest joint's stamps inside the interval every joint covers."""
    base = max(stamps, key=len)
    if all(s is base or np.array_equal(s, base) for s in stamps):
        return base
    lo, hi = max(s[0] for s in stamps), min(s[-1] for s in stamps)
    base = base[(base >= lo) & (base <= hi)]
    if len(base) < 2:
        raise ValueError(f"{where}: the publishers of different joints do not overlap in time")
    return base


def _resample(stamps: np.ndarray, x: np.ndarray, base: np.ndarray) -> np.ndarray:
    """x (T,) sampled at stamps, evaluated at base (cubic spline; exact copy when the stamps agree).
    Non-finite samples are left out of the spline; a base time next to one (at it, or between it
    and its neighbour) is NaN."""
    if stamps is base or np.array_equal(stamps, base):
        return x
    from scipy.interpolate import make_interp_spline

    bad = ~np.isfinite(x)
    good = ~bad
    if good.sum() < 2:
        return np.full(len(base), np.nan)
    t, tb = (stamps[good] - stamps[0]) * 1e-9, (base - stamps[0]) * 1e-9
    y = make_interp_spline(t, x[good], k=min(3, len(t) - 1))(tb)
    if bad.any():
        hi = np.clip(np.searchsorted(stamps, base), 0, len(stamps) - 1)
        lo = np.clip(hi - 1, 0, len(stamps) - 1)
        y[np.where(stamps[hi] == base, bad[hi], bad[lo] | bad[hi])] = np.nan
    return y


def _s(ns) -> str:
    return f"{float(ns) * 1e-9:.6g}"
