"""Which spline differentiates a log's positions when no ``smoothing`` is given.

Planner output (a CSV of positions, with or without velocities, and no
measured efforts) is exact: the interpolating quintic spline
(``smoothing=0``) reproduces its derivatives.  A measured log (any bag, a CSV
with ``<joint>_effort`` columns: ``JointLog.measured``) carries sensor noise,
which the interpolating spline amplifies by 1/h² into the accelerations
(1e-4 rad of noise at 500 Hz: tens of rad/s², thousands of N m at a heavy
joint); it is differentiated by the cubic smoothing spline with lambda chosen
by generalised cross-validation (``smoothing="gcv"``, see
:mod:`composedyn.trajectory`).
"""

from __future__ import annotations

MEASURED = "gcv"
PLANNED = 0.0


def choose_smoothing(measured: bool, smoothing=None) -> tuple[float | str, str]:
    """(smoothing to pass to the check, one line naming the spline and why it was chosen).

    ``smoothing`` None: by the kind of input (``measured``); else the caller's value.
    """
    given = smoothing is not None
    if not given:
        smoothing = MEASURED if measured else PLANNED
    if smoothing == "gcv":
        what = "smoothing spline, lambda by generalised cross-validation"
    elif isinstance(smoothing, (int, float)) and not isinstance(smoothing, bool) and smoothing == 0:
        what = "interpolating quintic spline"
    else:
        what = f"smoothing spline, lambda = {smoothing:g}" if isinstance(smoothing, (int, float)) else str(smoothing)
    why = "as given" if given else ("default for a measured log" if measured else "default for planner output")
    return smoothing, f"derivatives: {what} ({why})"
