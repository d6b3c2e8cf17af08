"""Torque-versus-limit plots of a TrajectoryReport.

Drawn on a bare ``matplotlib.figure.Figure`` rendered by the Agg canvas: no
pyplot, so the caller's interactive backend and figures are left alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from composedyn.writing import write_atomic


def require_matplotlib():
    """The ``matplotlib.figure.Figure`` class, or a clear ImportError."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'composedyn[plot]'") from None
    return Figure


def plot_format(path) -> str:
    """The image format of ``path`` from its suffix (png without one); ValueError naming the path."""
    Figure = require_matplotlib()
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"{path}: unknown plot format {fmt!r} (use one of {', '.join(sorted(supported))})")
    return fmt


def plot_report(report, path) -> None:
    """One panel per joint: tau(t), the +-effort band, effort violations shaded red,
    velocity violations as an orange strip along the bottom."""
    Figure = require_matplotlib()
    fmt = plot_format(path)
    n = len(report.joint_names)
    fig = Figure(figsize=(8, 1.6 * n + 1))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    t = report.t
    for i, (ax, name) in enumerate(zip(axes[:, 0], report.joint_names)):
        lim = report.effort[i]
        if np.isfinite(lim):
            ax.axhspan(-lim, lim, color="tab:green", alpha=0.12, lw=0)
            ax.axhline(lim, color="tab:green", lw=0.8)
            ax.axhline(-lim, color="tab:green", lw=0.8)
        ax.plot(t, report.tau[:, i], color="tab:blue", lw=1.2)
        for v in report.violations:
            if v.joint == name and v.quantity == "effort":
                ax.axvspan(v.start, v.end, color="tab:red", alpha=0.3, lw=0)
            elif v.joint == name:  # velocity: a strip along the bottom
                ax.axvspan(v.start, v.end, ymin=0.0, ymax=0.08, color="tab:orange", alpha=0.8, lw=0)
        ax.set_ylabel(f"{name}\n[N m]", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{report.robot}: {report.source} ({'ok' if report.ok else 'limits exceeded'})\n"
                 "torque (blue), effort band (green), effort exceeded (red), velocity exceeded (orange strip)",
                 fontsize=9)
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=90))
