"""Integrity rules of a joint log: what makes :func:`composedyn.read_log` attach a
:class:`~composedyn.logs.findings.LogFinding` to the log it returns.

"damaged" (the container or the samples were corrupted or lost):

- **message count**: the bag's own record of the topic (ROS 1 connection
  counts, ROS 2 ``metadata`` ``message_count``, MCAP summary statistics) names
  more messages than were read;
- **stamps**: a publisher's header stamp that does not increase (backwards
  or repeated), or a step longer than ``gap_factor`` (default 10) times the
  publisher's median step;
- **sequence numbers** (ROS 1 ``header.seq``, when not all equal): a step
  that is not positive, or larger than ``gap_factor``;
- **publishers covering different spans**: joints of several publishers are
  checked on the interval every joint covers (:mod:`composedyn.logs.merge`);
  when a joint has samples before or after that interval over more than
  ``gap_factor`` times the coarsest publisher's median step (a publisher that
  stopped early or started late, or clocks skewed between two drivers), those
  samples are not checked, and the finding names the joints, the samples and
  the seconds dropped;
- **single-sample spikes**: a sample that leaves both of its neighbours and
  comes back, by more than :data:`SPIKE_FACTOR` times the channel's typical
  deviation from its neighbours (a robust scale: 1.4826 × median absolute
  deviation) and by more than a physical floor: for positions the jump a
  constant acceleration of :data:`SPIKE_ACCELERATION` (1000 rad/s² or m/s²)
  makes in one sample step h (``SPIKE_ACCELERATION`` · h² / 2; 0.05 rad at
  100 Hz, 2 mm at 500 Hz); for velocities and efforts :data:`SPIKE_FRACTION`
  (10 %) of the channel's peak magnitude, at least :data:`SPIKE_FLOOR`.
  "Leaves and comes back": the two neighbours differ from each other by less
  than half the sample's deviation.  The first and last sample are compared
  with the line through the next two, at twice the thresholds.  Spikes are
  looked for in logs of at least :data:`MIN_SAMPLES` (8) samples: fewer give
  no robust scale.

"inconsistent" (the data reads, but does not describe one motion):

- **logged velocities against positions**: over consecutive windows of
  :data:`WINDOW` seconds (at least 5 samples), the position change
  q(t_b) - q(t_a) is compared with the trapezoidal integral of the logged
  velocity.  Integrating rather than differentiating keeps position noise
  from being amplified (1e-4 rad of noise changes a window by ~1.4e-4 rad at
  any rate).  A window is inconsistent when the two differ by more than
  ``VELOCITY_ABS + 6 σ + VELOCITY_REL · s`` where σ is the joint's position
  noise (robust scale of its second differences / √6), s the larger of
  \\|q(t_b) - q(t_a)\\| and the integral of \\|velocity\\|, ``VELOCITY_ABS`` =
  1e-3 rad (or m) and ``VELOCITY_REL`` = 0.3 (a velocity filter lag of up to
  ~10 ms on a 0.1 s window stays inside).
- **logged accelerations against velocities** (CSV ``_acc`` columns): the same rule
  one derivative up, the velocity change against the integral of the logged
  acceleration (``VELOCITY_ABS`` then in rad/s or m/s).

Both run on logs of 2 samples or more (one window spans a log shorter than a
window; σ is 0 below 3 samples).
"""

from __future__ import annotations

import numpy as np

from composedyn.logs.findings import LogFinding

SPIKE_FACTOR = 20.0
SPIKE_ACCELERATION = 1000.0  # rad/s^2 or m/s^2
SPIKE_FRACTION = 0.1
SPIKE_FLOOR = 0.05  # rad/s, m/s, N m or N
WINDOW = 0.1  # s
VELOCITY_ABS = 1e-3  # rad or m
VELOCITY_REL = 0.3
MIN_SAMPLES = 8  # fewer samples: no spike rule (no robust scale)


def damaged(message: str) -> LogFinding:
    return LogFinding("damaged", message)


def count_finding(where: str, recorded: int, read: int) -> list[LogFinding]:
    """A finding when the container records more messages on the topic than were read."""
    if recorded > read:
        return [damaged(f"{where}: the bag records {recorded} messages on the topic, {read} could be read "
                        f"({recorded - read} lost: truncated or damaged)")]
    return []


def stamp_findings(stamps: np.ndarray, seq: np.ndarray | None, t0: int, where: str,
                   gap_factor: float) -> list[LogFinding]:
    """Stamps (T,) int64 ns in recorded order of one publisher, its sequence numbers (T,) or None."""
    out = []
    if len(stamps) < 2:
        return out
    step = np.diff(stamps)
    bad = np.flatnonzero(step <= 0)
    if bad.size:
        k = int(bad[0]) + 1
        what = "repeats" if step[k - 1] == 0 else "goes backwards"
        out.append(damaged(f"{where}: header stamp {what} at message {k} (t = {_s(stamps[k] - t0)} s; "
                           f"{bad.size} time(s))"))
    ordered = np.diff(np.sort(stamps))
    ordered = ordered[ordered > 0]
    if len(ordered) >= 2:
        median = float(np.median(ordered))
        gaps = np.flatnonzero(step > gap_factor * median)
        if gaps.size:
            k = int(gaps[0])
            out.append(damaged(f"{where}: gap of {_s(step[k])} s after message {k} (t = {_s(stamps[k] - t0)} s; "
                               f"median step {_s(median)} s; {gaps.size} gap(s) longer than {gap_factor:g} steps)"))
    if seq is not None and len(seq) == len(stamps) and np.any(seq != seq[0]):
        jump = np.diff(seq.astype(np.int64))
        bad = np.flatnonzero((jump <= 0) | (jump > gap_factor))
        if bad.size:
            k = int(bad[0]) + 1
            out.append(damaged(f"{where}: sequence number jumps from {int(seq[k - 1])} to {int(seq[k])} at message "
                               f"{k} (t = {_s(stamps[k] - t0)} s; {bad.size} time(s))"))
    return out


def crop_findings(stamps: dict, lo: int, hi: int, t0: int, where: str, gap_factor: float) -> list[LogFinding]:
    """A finding when cutting the joints' samples ``stamps`` (joint -> (T,) int64 ns, sorted) to the
    interval [lo, hi] every joint covers drops more than ``gap_factor`` times the coarsest
    publisher's median step of some joint (module docstring); times in s from ``t0``."""
    steps = [np.median(np.diff(s)) for s in stamps.values() if len(s) > 1]
    if not steps:
        return []
    step = max(steps)
    groups: dict = {}  # what one joint loses -> the joints that lose it (one publisher's)
    for joint, s in stamps.items():
        before, after = int(np.count_nonzero(s < lo)), int(np.count_nonzero(s > hi))
        lost = (before, int(lo - s[0]) if before else 0, after, int(s[-1] - hi) if after else 0)
        if max(lost[1], lost[3]) > gap_factor * step:
            groups.setdefault(lost, []).append(joint)
    if not groups:
        return []
    parts = []
    for (before, early, after, late), joints in groups.items():
        ends = [f"{n} samples, {_s(ns)} s {side}" for n, ns, side in ((before, early, "before"), (after, late, "after"))
                if n]
        parts.append(f"{', '.join(joints)}: {' and '.join(ends)}")
    return [damaged(f"{where}: the joints' publishers cover different spans; the log is cut to the interval every "
                    f"joint covers, t = {_s(lo - t0)} s to {_s(hi - t0)} s, dropping {'; '.join(parts)} "
                    f"(more than {gap_factor:g} steps of {_s(step)} s; a publisher stopped or started late, or "
                    "the clocks of its drivers differ)")]


def sample_findings(t: np.ndarray, names, q: np.ndarray, qd: np.ndarray | None, effort: np.ndarray | None,
                    where: str, first: int = 0, qdd: np.ndarray | None = None) -> list[LogFinding]:
    """Spikes in positions, velocities, efforts (T, n) (from :data:`MIN_SAMPLES` samples), logged
    velocities against positions and logged accelerations ``qdd`` (T, n) against velocities (from
    2 samples); samples are numbered from ``first``."""
    if len(t) < 2:
        return []
    with np.errstate(over="ignore", invalid="ignore"):  # a flipped exponent: 1e308 - (-1e308)
        return _sample_findings(t, names, q, qd, effort, where, first, qdd)


def _sample_findings(t, names, q, qd, effort, where: str, first: int, qdd=None) -> list[LogFinding]:
    if len(t) < MIN_SAMPLES:
        return _rates(t, names, q, qd, qdd, where)
    out: list[LogFinding] = []
    h = np.diff(t)
    step = 0.5 * (h[:-1] + h[1:])  # (T-2,) spacing around each interior sample
    floor_q = (0.5 * SPIKE_ACCELERATION * step ** 2)[:, None]
    for label, x, floor, unit in (("position", q, floor_q, "rad or m"), ("velocity", qd, None, "rad/s or m/s"),
                                  ("effort", effort, None, "N m or N")):
        if x is None:
            continue
        if floor is None:
            floor = np.maximum(SPIKE_FRACTION * np.abs(x).max(axis=0), SPIKE_FLOOR)[None, :]
        spike = _spike(t, x, floor)
        if spike is not None:
            k, i, dev, count = spike
            out.append(damaged(f"{where}: joint {names[i]!r} {label} spikes by {dev:.3g} {unit} at sample {k + first} "
                               f"(t = {t[k]:.6g} s) away from its neighbours ({count} spike(s))"))
    return out + _rates(t, names, q, qd, qdd, where)


def _rates(t, names, q, qd, qdd, where: str) -> list[LogFinding]:
    """Logged velocities against positions, logged accelerations against velocities."""
    out = []
    if qd is not None:
        out += velocity_findings(t, names, q, qd, where)
    if qd is not None and qdd is not None:
        out += velocity_findings(t, names, qd, qdd, where, ("acceleration", "velocities", "velocity changed"))
    return out


def watch_blocks(blocks, names, where: str):
    """(blocks passed through unchanged, list filled with the findings of :func:`sample_findings`
    as the blocks ``(t, q[, qd[, qdd]])`` of a streamed CSV go by).  Each block is examined with the
    last samples of the one before, so a spike or a velocity window across a block boundary is seen."""
    found: list[LogFinding] = []

    def scan():
        tail, first = None, 0
        for block in blocks:
            yield block
            t, q, qd, qdd = block[0], block[1], *(tuple(block[2:4]) + (None, None))[:2]
            keep = 0 if tail is None else min(len(tail[0]), 2 * MIN_SAMPLES)
            if keep:
                t, q = np.r_[tail[0][-keep:], t], np.r_[tail[1][-keep:], q]
                qd = None if qd is None else np.r_[tail[2][-keep:], qd]
                qdd = None if qdd is None else np.r_[tail[3][-keep:], qdd]
            if not found:  # the first finding names the place; later blocks are not examined
                found.extend(sample_findings(t, names, q, qd, None, where, first - keep, qdd))
            tail, first = (t, q, qd, qdd), first + len(block[0])

    return scan(), found


def _spike(t: np.ndarray, x: np.ndarray, floor: np.ndarray):
    """(sample, joint, deviation, count) of the first isolated spike of x (T, n), or None.

    Interior samples against the line through their two neighbours; the first and last sample
    against the line through the next two (twice the thresholds: an extrapolation)."""
    w = ((t[1:-1] - t[:-2]) / (t[2:] - t[:-2]))[:, None]
    across = x[2:] - x[:-2]
    dev = x[1:-1] - (x[:-2] + w * across)
    scale = 1.4826 * np.median(np.abs(dev - np.median(dev, axis=0)), axis=0)
    mag = np.abs(dev)
    hit = (mag > SPIKE_FACTOR * scale) & (mag > floor) & (np.abs(across) < 0.5 * mag)
    hits = [(int(k) + 1, int(i), float(dev[k, i])) for k, i in np.argwhere(hit)]
    for end, a, b in ((0, 1, 2), (len(t) - 1, -2, -3)):
        step = x[a] - x[b]
        e = x[end] - (x[a] + step * (t[end] - t[a]) / (t[a] - t[b]))
        f = floor[0] if end == 0 else floor[-1]
        bad = (np.abs(e) > 2 * SPIKE_FACTOR * scale) & (np.abs(e) > 2 * f) & (np.abs(step) < 0.5 * np.abs(e))
        hits += [(end, int(i), float(e[i])) for i in np.flatnonzero(bad)]
    if not hits:
        return None
    k, i, d = min(hits)
    return k, i, d, len(hits)


def velocity_findings(t: np.ndarray, names, q: np.ndarray, qd: np.ndarray, where: str,
                      words=("velocity", "positions", "moved")) -> list[LogFinding]:
    """Windows where the logged velocity's integral and the position change disagree (module docstring);
    with ``words`` = ("acceleration", "velocities", "velocity changed"), q is velocities and qd accelerations."""
    T = len(t)
    span = float(t[-1] - t[0])
    per = max(5, int(round(WINDOW / (span / (T - 1))))) if span > 0 else 5
    edges = np.arange(0, T, per - 1)
    if edges[-1] != T - 1:
        edges = np.r_[edges, T - 1]
    if len(edges) < 2:
        return []
    area, absarea = _cumulative_trapezoid(t, qd), _cumulative_trapezoid(t, np.abs(qd))
    d2 = q[2:] - 2 * q[1:-1] + q[:-2]
    if len(d2):
        noise = 1.4826 * np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0) / np.sqrt(6.0)
    else:  # 2 samples: no second difference
        noise = np.zeros(q.shape[1])
    a, b = edges[:-1], edges[1:]
    moved = q[b] - q[a]
    integral = area[b] - area[a]
    scale = np.maximum(np.abs(moved), absarea[b] - absarea[a])
    tol = VELOCITY_ABS + 6.0 * noise[None, :] + VELOCITY_REL * scale
    miss = np.abs(moved - integral)
    bad = miss > tol
    if not bad.any():
        return []
    k, i = np.argwhere(bad)[0]
    rate, of, change = words
    return [LogFinding("inconsistent", f"{where}: joint {names[i]!r} logged {rate} disagrees with its {of} "
                                       f"from t = {t[a[k]]:.6g} s to {t[b[k]]:.6g} s ({change} {moved[k, i]:.4g}, "
                                       f"{rate} integrates to {integral[k, i]:.4g}; {int(bad.sum())} window(s))")]


def _cumulative_trapezoid(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(T, n) integral of y (T, n) from t[0] to each t, trapezoidal rule."""
    h = np.diff(t)[:, None]
    return np.concatenate([np.zeros((1, y.shape[1])), np.cumsum(0.5 * h * (y[1:] + y[:-1]), axis=0)])


def _s(ns) -> str:
    return f"{float(ns) * 1e-9:.6g}"
