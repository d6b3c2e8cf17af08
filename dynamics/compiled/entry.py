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

Two ways to call them, one per entry:

* the dynamics entries (``inverse_dynamics`` .. ``forward_dynamics_derivatives``,
  and those of :mod:`.floating` and :mod:`.floating_derivatives`;
  :data:`composedyn.dynamics.dispatch.LEAN_ENTRIES`) are compiled as C functions by
  :mod:`.lean` and called through the C caller ``_call.Lean`` (the cost of the call
  matters most there: a 6-joint mass matrix takes a few hundred nanoseconds);
* the task-space entries (below, and :mod:`.floating_frames`) through numba:
  ``SIGNATURES`` maps their names to (signature, Python function[, njit options]) and
  ``compiled(name)`` compiles one (or loads it from the disk cache) when first
  needed.  The explicit signatures (float64 vectors of any stride) keep numba
  from compiling variants: an int or float32 array or a 2-D batch raises
  ``TypeError`` at the call (slow: ~0.1 ms), which the method answers with its
  general path; the methods therefore send input whose first vector is not
  float64 to the general path before calling.
"""

from __future__ import annotations

import functools

import numpy as np

from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.coriolis import coriolis_one
from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.floating_frames import SIGNATURES as FLOATING_FRAME_SIGNATURES
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


_IM, _FM, _A = "int64[:, ::1]", "float64[:, ::1]", "float64[:, ::1]"
_V = "float64[:]"  # input vectors: any stride (a column of a state array goes in as it is)
_O = "float64[::1]"  # output vectors
# The entries above are called as C functions (.lean); these signatures hold the numba-called ones:
SIGNATURES = {}
SIGNATURES.update(FLOATING_FRAME_SIGNATURES)  # a floating robot's task space: see .floating_frames


@functools.cache
def compiled(name: str):
    """The compiled entry ``name`` (compiled now, or loaded from the disk cache; once per process)."""
    sig, func, *options = SIGNATURES[name]  # (signature, function[, njit options])
    return njit(sig, cache=True, **(options[0] if options else {}))(func)


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


UNDISPATCHED = frozenset({"frame_pose", "jacobian", "frame_velocity", "frame_acceleration"})
UNDISPATCHED |= {"floating_" + name for name in UNDISPATCHED}  # the same guarantee (FloatingRobot)


def undispatched(name: str):
    """The compiled entry ``name`` without numba's type dispatch: the machine-code wrapper of its
    one signature, which converts the arguments as that signature says without checking their
    types (~0.1 us less per call than the dispatcher, a fifth of a Jacobian call).

    Only for callers that pass exactly the signature's types: ``Robot._frame_path`` sends a
    task-space entry (:data:`UNDISPATCHED`) nothing but 1-D numpy float64 arrays (native byte
    order, class ``ndarray``), its own ``im``, ``fx`` and a new C-contiguous ``out``, and an int.
    Falls back to the dispatcher if numba no longer exposes the wrapper."""
    k = compiled(name)
    cres = k.overloads.get(k.signatures[0]) if k.signatures else None
    return getattr(cres, "entry_point", None) or k


_FRAMES = {"fastmath": _frames.FASTMATH}  # as the frame kernels
SIGNATURES["frame_pose"] = (f"int64({_IM}, {_FM}, {_V}, int64, {_A})", frame_pose, _FRAMES)
SIGNATURES["jacobian"] = (f"int64({_IM}, {_FM}, {_V}, int64, {_A})", jacobian, _FRAMES)
SIGNATURES["frame_velocity"] = (f"int64({_IM}, {_FM}, {_V}, {_V}, int64, {_O})", frame_velocity, _FRAMES)
SIGNATURES["frame_acceleration"] = (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, int64, {_O})", frame_acceleration,
                                    _FRAMES)
