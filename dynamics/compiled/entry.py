"""Checked single-sample entries: the ``Robot`` methods' lean path into the kernels.

A ``Robot`` method called with plain vectors (numpy float64, shape (n,)), no
external wrench and no mimic projection calls one of these entries instead of
its general path.  Each entry does, in compiled code, the checks the general
path does in Python, and reports the outcome as its return value:

* 0 -- the result is in ``out``;
* 1 -- an argument (``out`` included) does not have n = ``fm.shape[0]`` entries
  (``out`` of a matrix: (n, n)); nothing is read or written;
* 2 -- an argument holds NaN or inf (``out`` not written);
* 3 -- (forward dynamics) M(q) is not positive definite.

The entries call the kernels' ``*_into`` functions with literal flags (the
kernels' ``Literal[int]`` specialisations): numba then compiles those
specialisations together with the entry and LLVM inlines them into it
(calling an overload that already exists would link it as an opaque call:
slower per call).  The price is compile time: each entry compiles its kernel
once more (``warm_up``).  On a non-zero status the method re-runs its general
path, which raises the error naming the argument (or the joints of a singular M).

All of them are compiled as C functions by :mod:`.lean` and called through
the C caller ``_call.Lean`` (``dispatch.lean_calls``), which checks the
arguments' types and shapes in C: the cost of the call matters here, a 6-joint
mass matrix takes a few hundred nanoseconds.  The floating-base entries are in
:mod:`.floating`, :mod:`.floating_derivatives` and :mod:`.floating_frames`.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.coriolis import coriolis_one
from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.gravity import gravity_one
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW
from composedyn.dynamics.compiled.loops import all_finite
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into


@njit(cache=True, inline="always")
def _square(n, out):
    """Whether the matrix ``out`` is (n, n)."""
    return out.shape[0] == n and out.shape[1] == n


def inverse_dynamics(im, fm, q, qd, qdd, out):
    """tau = M qdd + C qd + g + friction (armature in M) into out (n,)."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return 2
    rnea_into(im, fm, q, qd, qdd, _NO_FW, 1, 3, out, np.empty((n + 1, RNEA_SCRATCH)))
    return 0


def inverse_dynamics_rigid(im, fm, q, qd, qdd, out):
    """:func:`inverse_dynamics` without joint friction (damping, Coulomb); armature kept."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return 2
    rnea_into(im, fm, q, qd, qdd, _NO_FW, 1, 1, out, np.empty((n + 1, RNEA_SCRATCH)))
    return 0


def mass_matrix(im, fm, q, out):
    """M(q) with armature into out (n, n)."""
    n = fm.shape[0]
    if q.shape[0] != n or not _square(n, out):
        return 1
    if not all_finite(q):
        return 2
    crba_into(im, fm, q, 1, out, np.empty((n, CRBA_SCRATCH)))
    return 0


def coriolis_matrix(im, fm, q, qd, out):
    """C(q, qd) (Christoffel form) into out (n, n)."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or not _square(n, out):
        return 1
    if not (all_finite(q) and all_finite(qd)):
        return 2
    coriolis_one(im, fm, q, qd, out)
    return 0


def gravity_torques(im, fm, q, out):
    """g(q) into out (n,)."""
    n = fm.shape[0]
    if q.shape[0] != n or out.shape[0] != n:
        return 1
    if not all_finite(q):
        return 2
    gravity_one(im, fm, q, out)
    return 0


def bias_torques(im, fm, q, qd, out):
    """C(q, qd) qd + g(q), no friction, into out (n,)."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(qd)):
        return 2
    rnea_into(im, fm, q, qd, np.zeros(n), _NO_FW, 1, 0, out, np.empty((n + 1, RNEA_SCRATCH)))
    return 0


def forward_dynamics(im, fm, q, qd, tau, smooth, out):
    """qdd solving M qdd = tau - C qd - g - friction into out (n,); smooth > 0: tanh friction."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        return 2
    if aba_into(im, fm, q, qd, tau, _NO_FW, 1, smooth, out, np.empty((n + 1, ABA_SCRATCH))):
        return 3
    return 0


def forward_dynamics_rigid(im, fm, q, qd, tau, smooth, out):
    """:func:`forward_dynamics` without joint friction (``smooth`` unused)."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or out.shape[0] != n:
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        return 2
    if aba_into(im, fm, q, qd, tau, _NO_FW, 0, smooth, out, np.empty((n + 1, ABA_SCRATCH))):
        return 3
    return 0


# ---- derivatives ----
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH  # noqa: E402
from composedyn.dynamics.compiled.derivatives import derivatives_into  # noqa: E402
from composedyn.dynamics.compiled.fd_derivatives import fd_derivatives_one  # noqa: E402

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


def inverse_dynamics_derivatives(im, fm, q, qd, qdd, fric, smooth, dq, dqd):
    """d tau / d q, d tau / d qd (n, n) into dq, dqd; fric: 1 with friction (tanh Coulomb if smooth > 0)."""
    n = fm.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or not (_square(n, dq) and _square(n, dqd)):
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return 2
    derivatives_into(im, fm, q, qd, qdd, _NO_FW, _NO_P, 1, fric, smooth, dq, dqd, np.empty((n, DER_SCRATCH)))
    return 0


def forward_dynamics_derivatives(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into aq, aqd, minv; 3 when M is not positive definite."""
    n = fm.shape[0]
    if (q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n
            or not (_square(n, aq) and _square(n, aqd) and _square(n, minv))):
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        return 2
    if fd_derivatives_one(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
        return 3
    return 0




# ---- task space: one frame, given with its reference as code = 2 k + local (see .frames) ----
from composedyn.dynamics.compiled import frames as _frames  # noqa: E402


@njit(cache=True, inline="always")
def _frame_code(im, fx, code):
    """Whether ``code`` names a frame of ``fx`` (n body rows, then one row per frame)."""
    return 0 <= code < 2 * (fx.shape[0] - im.shape[0])


def frame_pose(im, fx, q, code, out):
    """World <- frame transform into out (4, 4)."""
    n = im.shape[0]
    if q.shape[0] != n or out.shape[0] != 4 or out.shape[1] != 4 or not _frame_code(im, fx, code):
        return 1
    if not all_finite(q):
        return 2
    _frames.pose_into(im, fx, q, code, out, np.empty((6, n)))
    return 0


def jacobian(im, fx, q, code, out):
    """Frame Jacobian into out (6, n), linear rows first."""
    n = im.shape[0]
    if q.shape[0] != n or out.shape[0] != 6 or out.shape[1] != n or not _frame_code(im, fx, code):
        return 1
    if not all_finite(q):
        return 2
    _frames.jacobian_into(im, fx, q, code, out)
    return 0


def frame_velocity(im, fx, q, qd, code, out):
    """Frame twist J qd into out (6,)."""
    n = im.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or out.shape[0] != 6 or not _frame_code(im, fx, code):
        return 1
    if not (all_finite(q) and all_finite(qd)):
        return 2
    _frames.velocity_into(im, fx, q, qd, code, out, np.empty((6, n)))
    return 0


def frame_acceleration(im, fx, q, qd, qdd, code, out):
    """Classical acceleration of the frame origin and angular acceleration into out (6,)."""
    n = im.shape[0]
    if (q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or out.shape[0] != 6
            or not _frame_code(im, fx, code)):
        return 1
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return 2
    _frames.acceleration_into(im, fx, q, qd, qdd, code, out, np.empty((6, n)))
    return 0
