"""Measured minus predicted joint torque: the first sign of a wrong model or a fault."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EffortResidual:
    """r(t) = effort_measured(t) - tau_predicted(t) per joint (N m or N).

    ``rms`` (n,) root mean square over the samples, ``worst`` (n,) the signed
    value of largest magnitude, ``worst_time`` (n,) when it occurs (s).
    """

    joint_names: tuple
    rms: np.ndarray
    worst: np.ndarray
    worst_time: np.ndarray

    @property
    def worst_joint(self) -> str:
        """The joint with the largest RMS residual."""
        return self.joint_names[int(np.argmax(self.rms))]

    def lines(self) -> list[str]:
        """One human-readable line per joint."""
        return [f"  {j}: measured - predicted torque RMS {r:.4g}, worst {w:+.4g} N m at {s:.4g} s"
                for j, r, w, s in zip(self.joint_names, self.rms, self.worst, self.worst_time)]

    def to_dict(self) -> dict:
        return {j: {"rms": float(r), "worst": float(w), "worst_time": float(s)}
                for j, r, w, s in zip(self.joint_names, self.rms, self.worst, self.worst_time)}


def effort_residual(t: np.ndarray, effort: np.ndarray, tau: np.ndarray, joint_names) -> EffortResidual | None:
    """Residual statistics of measured ``effort`` and predicted ``tau`` (T, n) sampled at ``t`` (T,),
    over the samples where the effort was measured (not NaN); joints with none are left out (None
    when no joint has one)."""
    effort, tau = np.asarray(effort, float), np.asarray(tau, float)
    measured = np.isfinite(effort)
    cols = np.flatnonzero(measured.any(axis=0))
    if not len(cols):
        return None
    r = np.where(measured, effort - tau, 0.0)[:, cols]
    count = measured[:, cols].sum(axis=0)
    k = np.argmax(np.abs(r), axis=0)
    rms = np.sqrt((r * r).sum(axis=0) / count)
    if not np.all(np.isfinite(rms)):
        raise ValueError("measured - predicted torque is not finite")
    return EffortResidual(tuple(joint_names[i] for i in cols), rms, r[k, np.arange(len(cols))], np.asarray(t)[k])
