"""Every declared compiled quantity (:mod:`.declare`), by name: fixed base and floating base.

The ``Robot`` and ``FloatingRobot`` methods reach a quantity through their per-thread
:class:`composedyn.dynamics.data.Data` by its name here; this is the only list.
"""

from __future__ import annotations

from composedyn.dynamics.compiled import (
    aba,
    coriolis,
    crba,
    fd_derivatives,
    floating,
    floating_derivatives,
    floating_frames,
    frames,
    gravity,
    rnea,
)

FIXED = {q.name: q for q in (
    rnea.INVERSE_DYNAMICS, rnea.BIAS_TORQUES, gravity.GRAVITY_TORQUES, crba.MASS_MATRIX, coriolis.CORIOLIS_MATRIX,
    aba.FORWARD_DYNAMICS, fd_derivatives.INVERSE_DYNAMICS_DERIVATIVES, fd_derivatives.FORWARD_DYNAMICS_DERIVATIVES,
    frames.FRAME_POSE, frames.JACOBIAN, frames.FRAME_VELOCITY, frames.FRAME_ACCELERATION)}
FLOATING = {q.name: q for q in (
    floating.INVERSE_DYNAMICS, floating.MASS_MATRIX, floating.FORWARD_DYNAMICS,
    floating_derivatives.INVERSE_DYNAMICS_DERIVATIVES, floating_derivatives.FORWARD_DYNAMICS_DERIVATIVES,
    floating_frames.FRAME_POSE, floating_frames.JACOBIAN, floating_frames.FRAME_VELOCITY,
    floating_frames.FRAME_ACCELERATION)}
