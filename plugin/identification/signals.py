"""Velocities and accelerations from logged positions: zero-phase filtering, differentiation,
sample selection (Gautier's "parallel filtering and decimation").

Defaults: a Butterworth low-pass of order :data:`ORDER` with cut-off
``cutoff`` = :data:`CUTOFF` Hz (at most 0.8 x Nyquist), applied forward and
backward (``scipy.signal.filtfilt``: zero phase, squared magnitude) to the
positions (and to logged velocities), then central differences
(``numpy.gradient``) give qd = d q_f/dt and qdd = d qd/dt.  The regressor
is evaluated at every sample; then the measured efforts and the regressor's
columns go through the same filter (parallel filtering), so that both sides
of tau = Y pi see the same distortion, also where Coulomb friction jumps.
Then :data:`TRIM_PERIODS` cut-off periods are dropped at each end (filter
transients) and every ``decimate``-th sample is kept (default: the largest
step that still samples 4x the cut-off frequency).  The log's samples must
be (nearly) uniformly spaced; the mean step is used.

References
----------
M. Gautier, "Dynamic identification of robots with power model", ICRA 1997
(parallel filtering and decimation of the identification equations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ORDER = 4
CUTOFF = 10.0  # Hz
TRIM_PERIODS = 2.0


@dataclass(frozen=True)
class FilteredLog:
    """One log after differentiation: t (T,), q, qd, qdd, effort (T, dof) at the log's rate
    (untrimmed); ``ba`` the filter, ``keep`` the slice of samples that enter the fit."""

    source: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    effort: np.ndarray
    ba: tuple
    keep: slice

    def parallel(self, x: np.ndarray) -> np.ndarray:
        """Filter samples x (T, ...) along time (zero phase), then trim and decimate: both sides of
        tau = Y pi go through this, so that the filter's effect on Coulomb friction's steps (and
        any other nonlinearity in time) is the same on both."""
        from scipy.signal import filtfilt

        return filtfilt(*self.ba, x, axis=0)[self.keep]

    @property
    def times(self) -> np.ndarray:
        """Time stamps (N,) of the samples that enter the fit."""
        return self.t[self.keep]


def filter_log(log, cutoff: float = CUTOFF, order: int = ORDER, decimate: int | None = None) -> FilteredLog:
    """Filtered q, qd, qdd of a :class:`composedyn.identification.logs.IdentificationLog` and the fit's
    sample selection."""
    from scipy.signal import butter, filtfilt

    t = log.t
    T = t.shape[0]
    dt = float(t[-1] - t[0]) / (T - 1)
    steps = np.diff(t)
    if np.abs(steps - dt).max() > 0.1 * dt:
        raise ValueError(f"{log.source}: time steps vary by more than 10 % (from {steps.min():.3g} to "
                         f"{steps.max():.3g} s); resample the log uniformly first")
    nyq = 0.5 / dt
    if not float(cutoff) > 0:
        raise ValueError(f"cutoff must be a positive frequency in Hz, got {cutoff!r}")
    fc = min(float(cutoff), 0.8 * nyq)
    b, a = butter(order, fc / nyq)
    q = filtfilt(b, a, log.q, axis=0)
    qd = np.gradient(q, dt, axis=0) if log.qd is None else filtfilt(b, a, log.qd, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    trim = int(np.ceil(TRIM_PERIODS / (fc * dt)))
    step = decimate if decimate is not None else max(1, int(nyq / (2.0 * fc)))  # fs / step >= 4 fc
    if int(step) < 1:
        raise ValueError(f"decimate must be a positive integer, got {decimate!r}")
    keep = slice(trim, T - trim, int(step))
    if len(range(*keep.indices(T))) < 2:
        raise ValueError(f"{log.source}: {T} samples leave nothing after trimming {trim} filter-transient "
                         "samples at each end; log longer or raise the cut-off")
    return FilteredLog(log.source, t, q, qd, qdd, log.effort, (b, a), keep)
