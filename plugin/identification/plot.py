"""Plot measured against predicted joint torques (identification reports), on a bare
``matplotlib.figure.Figure`` like :mod:`composedyn.torque_check.plotting` (no pyplot)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from composedyn.torque_check.plotting import plot_format, require_matplotlib
from composedyn.writing import write_atomic


def plot_torques(path, t: np.ndarray, measured: np.ndarray, predicted: np.ndarray, joint_names, title: str) -> Path:
    """One panel per joint: measured (T, n) and predicted (T, n) torque against time t (T,) s;
    the image format from the suffix of ``path``."""
    Figure = require_matplotlib()
    fmt = plot_format(path)
    n = measured.shape[1]
    fig = Figure(figsize=(8, 1.6 * n + 1))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t, measured[:, j], color="tab:blue", lw=1.2)
        ax.plot(t, predicted[:, j], color="tab:orange", lw=1.0, ls="--")
        rel = np.sqrt(np.mean((predicted[:, j] - measured[:, j]) ** 2) / max(np.mean(measured[:, j] ** 2), 1e-300))
        ax.set_ylabel(f"{joint_names[j]}\n[N m]", fontsize=8)
        ax.set_title(f"RMS error {100 * rel:.2f} %", fontsize=8, loc="right")
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{title}\nmeasured (blue), predicted (orange, dashed)", fontsize=9)
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=90))
    return Path(path)
