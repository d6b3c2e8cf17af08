"""Joint friction: viscous (URDF damping) and Coulomb (URDF friction).

Inverse and forward dynamics use the kinetic law below (sgn(0) = 0: no
friction torque at rest).  Simulation holds joints at rest by static friction
with the stick-slip model of ``composedyn.simulation.stick_slip``, which takes the
Coulomb levels and damping coefficients from the model directly.
"""

from __future__ import annotations

import math

import numpy as np

from composedyn.dynamics.model import Model


def smooth_width(x) -> float:
    """The ``smooth_friction`` argument as a float >= 0 (0: exact sign); ValueError naming it otherwise
    (also for a number too large for a float)."""
    try:
        w = float(x)
    except (TypeError, ValueError, OverflowError):
        w = float("nan")
    if not w >= 0:
        shown = repr(x) if len(repr(x)) <= 40 else repr(x)[:30] + "..."
        shown += " (an int too large for a float)" if isinstance(x, int) and not math.isfinite(w) else ""
        raise ValueError(f"smooth_friction must be None, 0 or a positive width (rad/s or m/s), got {shown}")
    return w


def friction_torques(model: Model, qd, smooth: float | None = None) -> np.ndarray:
    """Torque the joints lose to friction, tau_f = damping * qd + friction * sgn(qd).

    qd (..., n).  ``smooth``: if given, sgn(x) is replaced by tanh(x / smooth)
    (rad/s or m/s), which keeps simulations free of chattering; otherwise the
    exact sign is used (0 at rest).  Returns (..., n), to be *added* to the
    rigid-body torques in inverse dynamics.
    """
    qd = np.asarray(qd, dtype=float)
    if smooth is not None and not smooth >= 0:  # NaN or negative: NaN torques or friction feeding energy in
        raise ValueError(f"smooth_friction must be None, 0 or a positive width (rad/s or m/s), got {smooth!r}")
    sgn = np.sign(qd) if not smooth else np.tanh(qd / smooth)  # 0 = exact sign, as in the compiled kernels
    return model.damping * qd + model.friction * sgn
