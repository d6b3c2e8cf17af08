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

Sensor noise: :func:`acceleration_noise` estimates the white noise on the
logged positions (or velocities, when logged) from what a low-pass at twice
the cut-off removes from them, and carries it through the filter, the
differentiation and the parallel filter to the accelerations that enter the
regressor.  Where the accelerations are not well above that noise, the
regressor's errors bias the least-squares fit (errors in variables), which
the fit's residual does not show.

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
    cutoff: float = CUTOFF
    derived_velocity: bool = True

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
    if not 0 < float(cutoff) < np.inf:
        raise ValueError(f"cutoff must be a positive, finite frequency in Hz, got {cutoff!r}")
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
    return FilteredLog(log.source, t, q, qd, qdd, log.effort, (b, a), keep, fc, log.qd is None)


def acceleration_noise(log, s: FilteredLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(signal, noise, sigma), each (dof,): the summed squares of the accelerations over the fit
    samples of ``s`` (``filter_log(log)``), the expected summed squares of the part that white
    sensor noise contributes to them as they enter the regressor (filtered, differentiated, filtered
    again), and the estimated noise standard deviation of the logged positions (or velocities).

    The noise is what a Butterworth low-pass of the same order at twice the cut-off (at most 0.8 x
    Nyquist) removes from the logged signal (its standard deviation from the median absolute
    deviation, so that a few spikes do not count), divided by the share of white noise that
    low-pass removes; motion faster than twice the cut-off counts as noise."""
    from scipy.signal import butter, filtfilt, freqz

    T = s.t.shape[0]
    dt = float(s.t[-1] - s.t[0]) / (T - 1)
    nyq = 0.5 / dt
    b, a = s.ba
    order = max(len(a) - 1, 1)
    x = log.q if s.derived_velocity else log.qd
    bn, an = butter(order, min(2.0 * s.cutoff, 0.8 * nyq) / nyq)
    fit = slice(s.keep.start, s.keep.stop)
    residual = (x - filtfilt(bn, an, x, axis=0))[fit]
    grid = max(2 ** 14, min(2 ** 20, int(64 * nyq / s.cutoff)))
    w, h = freqz(b, a, worN=grid)
    _, hn = freqz(bn, an, worN=w)
    removed = np.mean((1.0 - np.abs(hn) ** 2) ** 2)  # white noise's share in the residual (power)
    spread = 1.4826 * np.median(np.abs(residual - np.median(residual, axis=0)), axis=0)  # robust to spikes
    sigma = spread / np.sqrt(removed)
    derivatives = 2 if s.derived_velocity else 1  # central differences: |sin w| / dt each
    gain = np.mean(np.abs(h) ** 8 * (np.sin(w) / dt) ** (2 * derivatives))  # filtfilt twice: |H|^8
    kept = s.qdd[s.keep]
    return np.sum(kept ** 2, axis=0), kept.shape[0] * gain * sigma ** 2, sigma
