"""Limit checks of sampled joint quantities, block by block, in bounded memory.

For each joint i and quantity (position, velocity, acceleration, jerk,
effort) with bounds lo_i <= x_i <= hi_i the *excess*

    e_i(t) = max(x_i(t) - hi_i, lo_i - x_i(t))      (= |x_i| - limit for lo = -hi)

is positive exactly where the limit is exceeded.  A violation interval runs
from the time e crosses 0 upwards to the time it crosses 0 downwards, both
interpolated linearly between the samples on either side (an interval open at
the first or last sample starts or ends there).  Blocks are fed in time order;
the last sample of a block is kept so that a crossing between blocks is
found, and intervals open at a block's end continue into the next: the
intervals and peaks are the same however the samples are split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.torque_check.limits import QUANTITIES, JointLimits

MAX_INTERVALS = 100_000  # intervals kept per check; further ones are counted in ``omitted``


@dataclass(frozen=True)
class Interval:
    """One stretch [start, end] (s) where ``quantity`` of ``joint`` is beyond ``limit``;
    ``peak`` is the signed worst value and ``excess`` = its distance beyond the limit > 0
    (SI units of the quantity).  For position ``limit`` is the bound crossed (lower or upper)."""

    joint: str
    quantity: str
    start: float
    end: float
    peak: float
    limit: float
    excess: float


class LimitScan:
    """Accumulates peaks, worst margins and violation intervals over blocks of samples."""

    def __init__(self, limits: JointLimits, max_intervals: int = MAX_INTERVALS):
        self.limits, self.max_intervals = limits, max_intervals
        n = len(limits.joint_names)
        self.samples, self.t_first, self.t_last = 0, None, None
        self.intervals: list[Interval] = []
        self.omitted = 0
        self.seen: set = set()  # quantities that were given values
        self.peak = {q: np.zeros(n) for q in QUANTITIES}        # signed value of largest |x|
        self.peak_t = {q: np.zeros(n) for q in QUANTITIES}
        self.worst = {q: np.full(n, -np.inf) for q in QUANTITIES}  # max excess e (negative margin)
        self.low, self.high = np.full(n, np.inf), np.full(n, -np.inf)  # position range
        self._prev: tuple | None = None  # (t, {quantity: (e row, x row)}) of the last sample
        self._open: dict = {}  # (quantity, joint) -> [start, peak x, peak e]

    def add(self, t: np.ndarray, values: dict) -> None:
        """Samples t (T,), increasing and after every earlier block; ``values`` maps quantity -> (T, n)."""
        if len(t) == 0:
            return
        if self.t_first is None:
            self.t_first = float(t[0])
        prev = {}
        for quantity, x in values.items():
            self.seen.add(quantity)
            x = np.ascontiguousarray(np.asarray(x, dtype=float).T)  # (n, T): per-joint rows are contiguous
            lo, hi = (b[:, None] for b in self.limits.bounds(quantity))
            if not self.limits.checked(quantity).any():  # nothing to exceed: peaks only
                e = None
            else:
                e = np.maximum(x - hi, lo - x)  # -inf on joints without a limit (x is finite)
            self._peaks(quantity, t, x, e)
            if e is not None:
                self._intervals(quantity, t, x, e)
                prev[quantity] = (e[:, -1].copy(), x[:, -1].copy())
        self._prev = (float(t[-1]), prev)
        self.samples += len(t)
        self.t_last = float(t[-1])

    def finish(self) -> LimitScan:
        """Close intervals still open at the last sample; returns self."""
        for (quantity, i), (start, px, pe) in sorted(self._open.items(), key=lambda kv: kv[1][0]):
            self._close(quantity, i, start, self.t_last, px, pe)
        self._open = {}
        self.intervals.sort(key=lambda v: (v.start, v.joint, v.quantity))
        return self

    def _peaks(self, quantity: str, t, x, e) -> None:
        """x, e (n, T)."""
        high, low = x.max(axis=1), x.min(axis=1)
        for i in np.flatnonzero(np.maximum(high, -low) > np.abs(self.peak[quantity])):
            k = int(np.argmax(np.abs(x[i])))
            self.peak[quantity][i], self.peak_t[quantity][i] = x[i, k], t[k]
        if e is not None:
            self.worst[quantity] = np.maximum(self.worst[quantity], e.max(axis=1))
        if quantity == "position":
            self.low, self.high = np.minimum(self.low, low), np.maximum(self.high, high)

    def _intervals(self, quantity: str, t, x, e) -> None:
        """x, e (n, T)."""
        candidates = np.flatnonzero((e > 0).any(axis=1))
        opened = [i for (q, i) in self._open if q == quantity]
        prev = self._prev[1].get(quantity) if self._prev is not None else None
        for i in sorted(set(candidates.tolist()) | set(opened)):
            if prev is not None:
                tt, ee, xx = np.r_[self._prev[0], t], np.r_[prev[0][i], e[i]], np.r_[prev[1][i], x[i]]
            else:
                tt, ee, xx = t, e[i], x[i]
            self._runs(quantity, i, tt, ee, xx)

    def _runs(self, quantity: str, i: int, t, e, x) -> None:
        o = e > 0
        d = np.diff(o.astype(np.int8))
        starts = np.flatnonzero(d == 1) + 1
        ends = np.flatnonzero(d == -1)
        if o[0]:
            starts = np.r_[0, starts]
        if o[-1]:
            ends = np.r_[ends, len(o) - 1]
        key = (quantity, i)
        for a, b in zip(starts, ends):
            k = a + int(np.argmax(e[a:b + 1]))
            if a == 0 and key in self._open:  # continues from the previous block
                start, px, pe = self._open.pop(key)
                if e[k] > pe:
                    px, pe = x[k], e[k]
            else:
                start = t[0] if a == 0 else _crossing(t, e, a - 1, a)
                px, pe = x[k], e[k]
            if b == len(o) - 1:
                self._open[key] = [start, px, pe]
            else:
                self._close(quantity, i, start, _crossing(t, e, b, b + 1), px, pe)

    def _close(self, quantity: str, i: int, start, end, px, pe) -> None:
        if len(self.intervals) >= self.max_intervals:
            self.omitted += 1
            return
        lo, hi = self.limits.bounds(quantity)
        limit = lo[i] if quantity == "position" and px < lo[i] else hi[i]
        self.intervals.append(Interval(self.limits.joint_names[i], quantity, float(start), float(end),
                                       float(px), float(limit), float(pe)))


def _crossing(t, e, a: int, b: int) -> float:
    """Time where e crosses 0 between samples a and b (linear interpolation)."""
    return t[a] + (t[b] - t[a]) * (-e[a]) / (e[b] - e[a])
