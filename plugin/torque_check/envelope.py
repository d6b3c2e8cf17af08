"""A bounded min/max envelope of a long signal, for plots of streamed checks.

Samples are reduced into buckets of ``width`` consecutive samples (per block,
so a bucket never spans two blocks); when more than ``2 * buckets`` buckets
accumulate, neighbours are merged pairwise and the width doubles.  Memory is
O(buckets * n) whatever the length of the signal; each bucket keeps its first
and last time and the per-column minimum and maximum, so peaks are never lost.
"""

from __future__ import annotations

import numpy as np


class Envelope:
    """Min/max envelope of a (T, n) signal fed in time-ordered blocks."""

    def __init__(self, buckets: int = 2000):
        self.buckets, self.width = buckets, 1
        self.t0: list = []
        self.t1: list = []
        self.lo: list = []
        self.hi: list = []

    def add(self, t: np.ndarray, x: np.ndarray) -> None:
        edges = np.arange(0, len(t), self.width)
        self.t0.append(t[edges])
        self.t1.append(t[np.minimum(edges + self.width, len(t)) - 1])
        self.lo.append(np.minimum.reduceat(x, edges, axis=0))
        self.hi.append(np.maximum.reduceat(x, edges, axis=0))
        if sum(len(a) for a in self.t0) > 2 * self.buckets:
            self._halve()

    def _halve(self) -> None:
        t0, t1, lo, hi = self.arrays()
        m = len(t0) // 2 * 2
        out_t0, out_t1 = t0[:m:2], t1[1:m:2]
        out_lo, out_hi = np.minimum(lo[:m:2], lo[1:m:2]), np.maximum(hi[:m:2], hi[1:m:2])
        if m < len(t0):
            out_t0, out_t1 = np.r_[out_t0, t0[-1:]], np.r_[out_t1, t1[-1:]]
            out_lo, out_hi = np.vstack([out_lo, lo[-1:]]), np.vstack([out_hi, hi[-1:]])
        self.t0, self.t1, self.lo, self.hi = [out_t0], [out_t1], [out_lo], [out_hi]
        self.width *= 2

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t_start (B,), t_end (B,), minimum (B, n), maximum (B, n)) of the buckets so far."""
        return (np.concatenate(self.t0), np.concatenate(self.t1), np.vstack(self.lo), np.vstack(self.hi))
