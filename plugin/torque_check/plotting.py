"""Torque-versus-limit plots of a TrajectoryReport.

Drawn on a bare ``matplotlib.figure.Figure`` rendered by the Agg canvas: no
pyplot, so the caller's interactive backend and figures are left alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from composedyn.dynamics.extras import require
from composedyn.torque_check.limits import MEASURED_EFFORT
from composedyn.writing import write_atomic


def require_matplotlib():
    """The ``matplotlib.figure.Figure`` class; MissingExtra (an ImportError naming ``[plot]``) without matplotlib."""
    return require("matplotlib.figure", "plotting").Figure


def plot_format(path) -> str:
    """The image format of ``path`` from its suffix (png without one); ValueError naming the path."""
    Figure = require_matplotlib()
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"{path}: unknown plot format {fmt!r} (use one of {', '.join(sorted(supported))})")
    return fmt


STRIPS = {"position": ("tab:purple", 0.00), "velocity": ("tab:orange", 0.08), "acceleration": ("tab:brown", 0.16),
          "jerk": ("tab:gray", 0.24), MEASURED_EFFORT: ("tab:red", 0.32)}  # violations of quantities other
# than the predicted effort: strips along the bottom


def plot_report(report, path) -> None:
    """One panel per joint: tau(t) (or its min/max envelope for a streamed check), the
    +-effort band, effort violations shaded red, other violations as coloured strips
    along the bottom (position purple, velocity orange, acceleration brown, jerk grey,
    a log's measured effort red);
    a joint without an effort limit is labelled "effort unchecked"."""
    Figure = require_matplotlib()
    fmt = plot_format(path)
    if report.tau is None and report.envelope is None:
        raise ValueError(f"{report.source}: the report keeps neither samples nor a torque envelope to plot")
    n = len(report.joint_names)
    fig = Figure(figsize=(8, 1.6 * n + 1))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    env = None if report.tau is not None else report.envelope.arrays()
    for i, (ax, name) in enumerate(zip(axes[:, 0], report.joint_names)):
        lim = report.effort[i]
        if np.isfinite(lim):
            ax.axhspan(-lim, lim, color="tab:green", alpha=0.12, lw=0)
            ax.axhline(lim, color="tab:green", lw=0.8)
            ax.axhline(-lim, color="tab:green", lw=0.8)
        else:
            ax.text(0.99, 0.95, "effort unchecked (no limit)", transform=ax.transAxes, ha="right", va="top",
                    fontsize=7, color="tab:red")
        if env is None:
            ax.plot(report.t, report.tau[:, i], color="tab:blue", lw=1.2)
        else:
            tm = 0.5 * (env[0] + env[1])
            ax.fill_between(tm, env[2][:, i], env[3][:, i], color="tab:blue", lw=0.8, alpha=0.8)
        for v in report.violations:
            if v.joint != name:
                continue
            if v.quantity == "effort":
                ax.axvspan(v.start, v.end, color="tab:red", alpha=0.3, lw=0)
            else:
                color, y0 = STRIPS[v.quantity]
                ax.axvspan(v.start, v.end, ymin=y0, ymax=y0 + 0.07, color=color, alpha=0.8, lw=0)
        ax.set_ylabel(f"{name}\n[{report.limits.unit('effort', i)}]", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{report.robot}: {report.source} ({report.verdict()})\n"
                 "torque (blue), effort band (green), effort exceeded (red); strips: position (purple), "
                 "velocity (orange),\nacceleration (brown), jerk (grey), measured effort (red) exceeded", fontsize=8)
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=90))
