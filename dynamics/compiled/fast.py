"""``FastDynamics``: the lean per-call entry for control loops (``robot.fast``).

No argument checks, no broadcasting, no mimic reduction: every array must be
float64 and C-contiguous, (n,) for one sample or (N, n) for N samples, with
n = ``model.n`` joints in ``model.joint_names`` order (for a ``Robot`` with
mimic joints that is ``robot.all_joint_names``).  Wrong shapes or dtypes give
a numba ``TypeError`` or wrong numbers, not a ``ValueError``; NaN propagates.
The results equal the ``Robot`` methods (armature and friction included where
the method includes them).  Pass ``out=`` to reuse a result array.

    fd = robot.fast                 # bind once, outside the loop
    fd.warm_up()                    # compile / load the kernels now
    tau = fd.inverse_dynamics(q, qd, qdd)
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.coriolis import coriolis_one, coriolis_parallel, coriolis_serial
from composedyn.dynamics.compiled.crba import crba_one, crba_parallel, crba_serial
from composedyn.dynamics.compiled.aba import aba_one, aba_parallel, aba_serial
from composedyn.dynamics.compiled.gravity import gravity_one, gravity_parallel, gravity_serial
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW
from composedyn.dynamics.compiled.layout import NO_FW3 as _NO_FW3
from composedyn.dynamics.compiled.rnea import rnea_one, rnea_parallel, rnea_serial



class FastDynamics:
    """Compiled dynamics of one ``Model`` without per-call checks (see the module doc).

    The per-call methods are closures over the packed model arrays (set in
    ``__init__``), which saves the attribute look-ups of a bound method.  A
    single sample goes through the ``Robot``'s checked entry
    (:mod:`.entry`: its kernel compiled inline, faster than a call of the
    plain kernel); when the entry declines (NaN, inf, wrong length) the plain
    kernel runs, so NaN propagates as documented.
    """

    def __init__(self, model):
        self.model = model
        self.n = n = model.n
        self.shape1 = (n,)
        im, fm = dispatch.packed(model)
        empty, zeros = np.empty, np.zeros
        ent = dispatch.entries  # checked single-sample entries: inlined kernels, the fastest calls
        z = zeros(n)  # zero velocities / accelerations, never written

        def inverse_dynamics(q, qd, qdd, out=None):
            """tau = M qdd + C qd + g + damping qd + friction sgn(qd) (armature in M), (n,) or (N, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                if ent.inverse_dynamics(im, fm, q, qd, qdd, out):
                    rnea_one(im, fm, q, qd, qdd, _NO_FW, 1, 3, out)
                return out
            if out is None:
                out = empty(q.shape)
            (rnea_parallel if dispatch.use_parallel(q.size) else rnea_serial)(im, fm, q, qd, qdd, _NO_FW3, 1, 3, out)
            return out

        def mass_matrix(q, out=None):
            """M(q) with armature, (n, n) or (N, n, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty((n, n))
                if ent.mass_matrix(im, fm, q, out):
                    crba_one(im, fm, q, 1, out)
                return out
            if out is None:
                out = empty(q.shape + (n,))
            (crba_parallel if dispatch.use_parallel(q.size) else crba_serial)(im, fm, q, 1, out)
            return out

        def coriolis_matrix(q, qd, out=None):
            """C(q, qd) in Christoffel form, (n, n) or (N, n, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty((n, n))
                if ent.coriolis_matrix(im, fm, q, qd, out):
                    coriolis_one(im, fm, q, qd, out)
                return out
            if out is None:
                out = empty(q.shape + (n,))
            (coriolis_parallel if dispatch.use_parallel(q.size) else coriolis_serial)(im, fm, q, qd, out)
            return out

        def bias_torques(q, qd, out=None):
            """h = C qd + g (no friction), (n,) only."""
            if out is None:
                out = empty(n)
            if ent.bias_torques(im, fm, q, qd, out):
                rnea_one(im, fm, q, qd, z, _NO_FW, 1, 0, out)
            return out

        def gravity_torques(q, out=None):
            """g(q), (n,) or (N, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                if ent.gravity_torques(im, fm, q, out):
                    gravity_one(im, fm, q, out)
                return out
            if out is None:
                out = empty(q.shape)
            (gravity_parallel if dispatch.use_parallel(q.size) else gravity_serial)(im, fm, q, out)
            return out

        def forward_dynamics(q, qd, tau, out=None, smooth_friction: float = 0.0):
            """qdd solving M qdd = tau - C qd - g - friction, (n,) or (N, n); ModelError if M is singular."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                if (ent.forward_dynamics(im, fm, q, qd, tau, smooth_friction, out)
                        and aba_one(im, fm, q, qd, tau, _NO_FW, 1, smooth_friction, out)):
                    dispatch.forward_dynamics(model, q, qd, tau, smooth=smooth_friction or None)
                return out
            if out is None:
                out = empty(q.shape)
            status = zeros(q.shape[0], dtype=np.int64)
            k = aba_parallel if dispatch.use_parallel(q.size) else aba_serial
            k(im, fm, q, qd, tau, _NO_FW3, 1, smooth_friction, out, status)
            if status.any():
                dispatch.forward_dynamics(model, q, qd, tau, smooth=smooth_friction or None)
            return out

        self.inverse_dynamics = self.rnea = inverse_dynamics
        self.mass_matrix, self.coriolis_matrix = mass_matrix, coriolis_matrix
        self.bias_torques, self.gravity_torques = bias_torques, gravity_torques
        self.forward_dynamics = forward_dynamics

    def warm_up(self, batch: bool = False) -> None:
        """Compile (or load from the disk cache) the single-sample kernels now; ``batch=True`` also the loops."""
        z = np.zeros(self.n)
        self.inverse_dynamics(z, z, z)
        self.mass_matrix(z)
        self.coriolis_matrix(z, z)
        self.gravity_torques(z)
        self.bias_torques(z, z)
        im, fm = dispatch.packed(self.model)
        dispatch.entries.forward_dynamics(im, fm, z, z, z, 0.0, np.empty(self.n))  # status only: no error here
        aba_one(im, fm, z, z, z, _NO_FW, 1, 0.0, np.empty(self.n))
        if batch:
            Z = np.zeros((2, self.n))
            self.inverse_dynamics(Z, Z, Z)
            self.mass_matrix(Z)
            self.coriolis_matrix(Z, Z)
            self.gravity_torques(Z)
            aba_serial(im, fm, Z, Z, Z, _NO_FW3, 1, 0.0, np.empty((2, self.n)), np.zeros(2, np.int64))
