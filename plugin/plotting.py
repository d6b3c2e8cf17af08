"""Torque-versus-limit plots of a TrajectoryReport (matplotlib, Agg backend)."""

from __future__ import annotations

import numpy as np

from composedyn.writing import write_atomic


def require_matplotlib():
    """Import matplotlib with the non-interactive Agg backend, or raise a clear ImportError."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'composedyn[plot]'") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_report(report, path) -> None:
    """One panel per joint: tau(t), the +-effort band, effort violations shaded red."""
    plt = require_matplotlib()
    n = len(report.joint_names)
    fig, axes = plt.subplots(n, 1, sharex=True, figsize=(8, 1.6 * n + 1), squeeze=False)
    t = report.t
    for i, (ax, name) in enumerate(zip(axes[:, 0], report.joint_names)):
        lim = report.effort[i]
        if np.isfinite(lim):
            ax.axhspan(-lim, lim, color="tab:green", alpha=0.12, lw=0)
            ax.axhline(lim, color="tab:green", lw=0.8)
            ax.axhline(-lim, color="tab:green", lw=0.8)
        ax.plot(t, report.tau[:, i], color="tab:blue", lw=1.2)
        for v in report.violations:
            if v.joint == name:
                ax.axvspan(v.start, v.end, color="tab:red" if v.quantity == "effort" else "tab:orange",
                           alpha=0.3, lw=0)
        ax.set_ylabel(f"{name}\n[N m]", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{report.robot}: {report.source} ({'ok' if report.ok else 'limits exceeded'})")
    fig.tight_layout()
    try:
        fmt = str(path).rsplit(".", 1)[-1] if "." in str(path) else "png"
        write_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=90))
    finally:
        plt.close(fig)
