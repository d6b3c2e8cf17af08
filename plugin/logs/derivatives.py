"""Which spline differentiates a log's positions when no ``smoothing`` is given.

Planner output (a CSV of positions, with or without velocities, and no
measured efforts) is exact: the interpolating quintic spline
(``smoothing=0``) reproduces its derivatives.  A measured log (any bag, a CSV
with ``<joint>_effort`` columns: ``JointLog.measured``) carries sensor noise,
which the interpolating spline amplifies by 1/h² into the accelerations
(1e-4 rad of noise at 500 Hz: tens of rad/s², thousands of N m at a heavy
joint).  It is differentiated by the cubic smoothing spline
(:func:`scipy.interpolate.make_smoothing_spline`) with one lambda for the
log, chosen by the discrepancy principle: for each joint, the lambda whose
residual RMS equals the joint's position noise σ, on at most
:data:`SEGMENT` samples from the middle of the log; the median over the
joints.  σ is a robust scale of the third differences of the positions
(1.4826 × median absolute deviation / √20), which a smooth motion barely
reaches (h³ q''').  A log without noise (σ = 0 at every joint) is
interpolated.  ``smoothing="gcv"`` (generalised cross-validation per joint)
remains available; it costs ~0.3 s per 100 samples and joint.
"""

from __future__ import annotations

import numpy as np

PLANNED = 0.0
SEGMENT = 500  # samples used to choose lambda
_DECADES = (-24.0, 6.0)  # log10 lambda searched (q^2 s^3)


def noise_level(q: np.ndarray) -> np.ndarray:
    """(n,) robust position noise σ of q (T, n) from third differences (0 with fewer than 8 samples)."""
    if len(q) < 8:
        return np.zeros(q.shape[1])
    d3 = np.diff(q, 3, axis=0)
    return 1.4826 * np.median(np.abs(d3 - np.median(d3, axis=0)), axis=0) / np.sqrt(20.0)


def measured_lambda(t: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """(lambda, median σ) for the smoothing spline of a measured log (module docstring); lambda 0: no noise."""
    from scipy.interpolate import make_smoothing_spline

    start = max(0, len(t) // 2 - SEGMENT // 2)
    ts, qs = t[start:start + SEGMENT] - t[start], q[start:start + SEGMENT]
    sigma = noise_level(qs)
    lams = []
    for j in np.flatnonzero(sigma > 0):
        lo, hi = _DECADES
        for _ in range(12):  # bisection in log10 lambda: the residual grows with lambda
            mid = 0.5 * (lo + hi)
            rms = np.sqrt(np.mean((make_smoothing_spline(ts, qs[:, j], lam=10.0 ** mid)(ts) - qs[:, j]) ** 2))
            lo, hi = (lo, mid) if rms > sigma[j] else (mid, hi)
        lams.append(10.0 ** (0.5 * (lo + hi)))
    return (float(np.median(lams)) if lams else 0.0), float(np.median(sigma))


def parse_smoothing(text: str | None) -> float | str | None:
    """A ``--smoothing`` option: None (by the kind of input), "gcv" or a number >= 0 (ValueError
    naming the option otherwise), checked before any log is read."""
    if text is None or text == "gcv":
        return text
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value < np.inf:
        raise ValueError(f'--smoothing must be 0, a positive finite lambda or "gcv", got {text!r}')
    return value


def choose_smoothing(measured: bool, smoothing=None, t=None, q=None) -> tuple[float | str, str]:
    """(smoothing to pass to the check, one line naming the spline and why it was chosen).

    ``smoothing`` None: by the kind of input (``measured``; then ``t`` (T,) and ``q`` (T, n)
    choose lambda); else the caller's value.
    """
    given = smoothing is not None
    note = ""
    if not given:
        smoothing = PLANNED
        if measured:
            smoothing, sigma = measured_lambda(np.asarray(t, float), np.asarray(q, float))
            note = f" matched to the position noise ({sigma:.2g} rad or m)" if smoothing else ""
    if isinstance(smoothing, str):
        what = "smoothing spline, lambda by generalised cross-validation" if smoothing == "gcv" else smoothing
    elif smoothing == 0:
        what = "interpolating quintic spline"
    else:
        what = f"smoothing spline, lambda = {smoothing:.3g}{note}"
    why = "as given" if given else ("default for a measured log" if measured else "default for planner output")
    return smoothing, f"derivatives: {what} ({why})"
