"""Reference motions for tracking and for trajectory checks.

A reference is a callable ``ref(t) -> (q, qd, qdd)``; ``t`` a scalar or (T,)
array, results (n,) or (T, n).
"""

from __future__ import annotations

import numpy as np

from composedyn.closed_chain import ClosedChain


class MinimumJerk:
    """Minimum-jerk point-to-point motion from ``q0`` to ``q1`` (n,) in ``duration`` s.

    q(t) = q0 + (q1 - q0) s(tau), s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t / duration
    clipped to [0, 1]: zero velocity and acceleration at both ends, at rest
    outside [0, duration].  Scaling ``duration`` by 1/k scales accelerations by k^2.
    """

    def __init__(self, q0, q1, duration: float):
        self.q0, self.q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
        if self.q0.shape != self.q1.shape or self.q0.ndim != 1:
            raise ValueError(f"q0 and q1 must be (n,) arrays of equal shape, got {self.q0.shape}, {self.q1.shape}")
        for name, x in (("q0", self.q0), ("q1", self.q1)):
            if not np.isfinite(x).all():
                raise ValueError(f"{name} contains NaN or infinite values")
        if not 0 < duration < np.inf:
            raise ValueError(f"duration must be positive and finite, got {duration}")
        self.duration = float(duration)

    def __call__(self, t):
        T = self.duration
        x = np.clip(np.asarray(t, dtype=float) / T, 0.0, 1.0)[..., None]
        s = x**3 * (10 - 15 * x + 6 * x**2)
        ds = 30 * x**2 * (1 - x) ** 2 / T
        dds = 60 * x * (1 - x) * (1 - 2 * x) / T**2
        d = self.q1 - self.q0
        return self.q0 + d * s, d * ds, d * dds


class SplineReference:
    """A reference interpolating sampled (t, q, qd, qdd) with cubic splines (held at the ends)."""

    def __init__(self, t, q, qd, qdd):
        from scipy.interpolate import CubicSpline

        self.t0, self.t1 = float(t[0]), float(t[-1])
        self._s = [CubicSpline(t, a, axis=0) for a in (q, qd, qdd)]

    def __call__(self, t):
        tc = np.clip(np.asarray(t, dtype=float), self.t0, self.t1)
        return tuple(s(tc) for s in self._s)


def demo_motion(robot, duration: float = 2.0, fraction: float = 0.25) -> MinimumJerk:
    """A minimum-jerk motion inside the position limits, for demos and tests.

    Starts at the middle of each joint's range (0 where unlimited) and moves
    each joint by ``fraction`` of its half-range (at most 1 rad or m),
    alternating in sign from joint to joint.
    """
    lo, hi = robot.limits["lower"], robot.limits["upper"]
    finite = np.isfinite(lo) & np.isfinite(hi)
    mid = np.where(finite, 0.5 * (lo + hi), 0.0)
    half = np.where(finite, 0.5 * (hi - lo), 1.0)
    sign = np.where(np.arange(robot.dof) % 2 == 0, 1.0, -1.0)
    return MinimumJerk(mid, mid + sign * fraction * np.minimum(half, 1.0), duration)


def demo_reference(model, duration: float = 2.0, amplitude: float = 0.2):
    """The ``simulate`` command's default motion: :func:`demo_motion` for a
    tree; for a closed chain a minimum-jerk motion of the actuated joints from the loaded
    assembly by +-``amplitude`` (rad or m, alternating in sign), which stays on its branch."""
    if not isinstance(model, ClosedChain):
        return demo_motion(model, duration)
    q0 = model.assembly[[model.all_joint_names.index(name) for name in model.joint_names]]
    sign = np.where(np.arange(model.dof) % 2 == 0, 1.0, -1.0)
    return MinimumJerk(q0, q0 + amplitude * sign, duration)
