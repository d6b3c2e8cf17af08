"""The one-sample entries as C functions, called from Python through ``_call.Lean``.

Every checked single-sample entry (:mod:`.entry`: ``inverse_dynamics``,
``mass_matrix``, ..., the derivatives, the task-space ones; :mod:`.floating`,
:mod:`.floating_derivatives` and :mod:`.floating_frames` for a floating base)
is compiled here as a numba ``cfunc`` with one C signature for all
(:data:`SIGNATURE`: the data pointers of the packed model arrays, the input
vectors and the results, their sizes, and one number -- the smoothing width
of Coulomb friction, or the frame's code; the entry's status as the result).  ``_call.Lean`` (a C
extension, ``_call.c``) calls one from Python: it checks the arguments' type,
dtype, shape and layout in C, passes the data pointers and returns the result
array, so a call costs the kernel and a few dozen nanoseconds, where numba's
dispatcher with its array unboxing costs more than a 6-joint kernel.

:func:`lean` builds the caller of one entry for one packed model; the ``Robot``
methods (through :func:`composedyn.dynamics.dispatch.lean_calls`) and
``robot.fast`` use them for single samples.  Each cfunc is compiled (or loaded
from the disk cache) on first use, once per process.
"""

from __future__ import annotations

import functools
import time
import types

import numpy as np
from numba import carray
from numba import types as nbtypes

from composedyn.dynamics.compiled import entry, floating, floating_derivatives, floating_frames
from composedyn.dynamics.compiled import frames as _frames_kernels
from composedyn.dynamics.compiled.jit import cfunc, njit
from composedyn.dynamics.compiled.layout import NCOL

try:
    from composedyn.dynamics.compiled._call import Lean
except ImportError as exc:  # part of the package, built by pip install; no slower substitute
    raise ImportError(f"composedyn's C extension composedyn.dynamics.compiled._call is not built ({exc}): "
                      "install composedyn with pip (pip install .), which compiles it; a C compiler and "
                      "Python's headers are needed") from None

SIGNATURE = nbtypes.int64(nbtypes.CPointer(nbtypes.voidptr), nbtypes.CPointer(nbtypes.int64), nbtypes.float64)
IM_COLUMNS = 2  # im (n, 2): parent, joint type (see .layout)
BF_LENGTH = 16  # bf (16,): a floating base (see .floating)

_inline = functools.partial(njit, inline="always")
_id, _id_rigid = _inline(entry.inverse_dynamics), _inline(entry.inverse_dynamics_rigid)
_mass, _coriolis = _inline(entry.mass_matrix), _inline(entry.coriolis_matrix)
_gravity, _bias = _inline(entry.gravity_torques), _inline(entry.bias_torques)
_fd, _fd_rigid = _inline(entry.forward_dynamics), _inline(entry.forward_dynamics_rigid)
_did, _dfd = _inline(entry.inverse_dynamics_derivatives), _inline(entry.forward_dynamics_derivatives)
_fl_id, _fl_mass = _inline(floating.inverse_dynamics), _inline(floating.mass_matrix)
_fl_fd = _inline(floating.forward_dynamics)
_fl_did = _inline(floating_derivatives.floating_inverse_dynamics_derivatives)
_fl_dfd = _inline(floating_derivatives.floating_forward_dynamics_derivatives)


# p: data pointers (model arrays, inputs, results); d: rows of each model array (d[0] = n), then the
# input lengths and result shapes (see _call.c)
@njit(inline="always")
def _model(p, d):
    n = d[0]
    return carray(p[0], (n, IM_COLUMNS), np.int64), carray(p[1], (n, NCOL), np.float64)


@njit(inline="always")
def _v(p, k, m):
    return carray(p[k], m, np.float64)


@njit(inline="always")
def _m(p, k, n):
    return carray(p[k], (n, n), np.float64)


def inverse_dynamics(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _id(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), _v(p, 5, n))


def inverse_dynamics_rigid(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _id_rigid(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), _v(p, 5, n))


def mass_matrix(p, d, s):
    im, fm = _model(p, d)
    return _mass(im, fm, _v(p, 2, d[0]), _m(p, 3, d[0]))


def coriolis_matrix(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _coriolis(im, fm, _v(p, 2, n), _v(p, 3, n), _m(p, 4, n))


def gravity_torques(p, d, s):
    im, fm = _model(p, d)
    return _gravity(im, fm, _v(p, 2, d[0]), _v(p, 3, d[0]))


def bias_torques(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _bias(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n))


def forward_dynamics(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _fd(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), s, _v(p, 5, n))


def forward_dynamics_rigid(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _fd_rigid(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), s, _v(p, 5, n))


@njit(inline="always")
def _derivatives(p, d, s, fric):
    im, fm = _model(p, d)
    n = d[0]
    return _did(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), fric, s, _m(p, 5, n), _m(p, 6, n))


@njit(inline="always")
def _fd_derivatives(p, d, s, fric):
    im, fm = _model(p, d)
    n = d[0]
    return _dfd(im, fm, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), fric, s, _m(p, 5, n), _m(p, 6, n), _m(p, 7, n))


# A floating robot (free-flyer coordinates): p = (im, fm, bf, q (n + 1), v (n), x (n), results (n) / (n, n))
@njit(inline="always")
def _floating(p, d):
    im, fm = _model(p, d)
    n = d[0]
    return im, fm, _v(p, 2, BF_LENGTH), _v(p, 3, n + 1), _v(p, 4, n), _v(p, 5, n)


@njit(inline="always")
def _floating_id(p, d, s, fric):
    im, fm, bf, q, v, a = _floating(p, d)
    return _fl_id(im, fm, bf, q, v, a, fric, _v(p, 6, d[0]))


def floating_mass_matrix(p, d, s):
    im, fm = _model(p, d)
    n = d[0]
    return _fl_mass(im, fm, _v(p, 2, BF_LENGTH), _v(p, 3, n + 1), _m(p, 4, n))


@njit(inline="always")
def _floating_fd(p, d, s, fric):
    im, fm, bf, q, v, tau = _floating(p, d)
    return _fl_fd(im, fm, bf, q, v, tau, fric, s, _v(p, 6, d[0]))


@njit(inline="always")
def _floating_derivatives(p, d, s, fric):
    im, fm, bf, q, v, a = _floating(p, d)
    return _fl_did(im, fm, bf, q, v, a, fric, s, _m(p, 6, d[0]), _m(p, 7, d[0]))


@njit(inline="always")
def _floating_fd_derivatives(p, d, s, fric):
    im, fm, bf, q, v, tau = _floating(p, d)
    n = d[0]
    return _fl_dfd(im, fm, bf, q, v, tau, fric, s, _m(p, 6, n), _m(p, 7, n), _m(p, 8, n))


def _with_friction(p, d, s):
    return _BODY(p, d, s, _FRIC)  # noqa: F821 (globals of each copy, see _friction_pair)


def _friction_pair(name: str, body) -> tuple:
    """The C functions ``name`` (joint friction on: ``body(p, d, s, 1)``) and ``name`` + "_rigid"
    (off: ``body(p, d, s, 0)``): copies of :func:`_with_friction` whose globals hold ``body``
    and the flag, so numba compiles the flag as a constant.  Globals, not a closure: numba's
    disk cache cannot match a closure over a compiled function in a later process.  Distinct
    names: the cache keys its entries by name."""
    def copy(fric: int, suffix: str):
        f = types.FunctionType(_with_friction.__code__, dict(globals(), _BODY=body, _FRIC=fric), name + suffix)
        f.__qualname__ = name + suffix
        return f
    return copy(1, ""), copy(0, "_rigid")


inverse_dynamics_derivatives, inverse_dynamics_derivatives_rigid = _friction_pair(
    "inverse_dynamics_derivatives", _derivatives)
forward_dynamics_derivatives, forward_dynamics_derivatives_rigid = _friction_pair(
    "forward_dynamics_derivatives", _fd_derivatives)
floating_inverse_dynamics, floating_inverse_dynamics_rigid = _friction_pair("floating_inverse_dynamics", _floating_id)
floating_forward_dynamics, floating_forward_dynamics_rigid = _friction_pair("floating_forward_dynamics", _floating_fd)
floating_inverse_dynamics_derivatives, floating_inverse_dynamics_derivatives_rigid = _friction_pair(
    "floating_inverse_dynamics_derivatives", _floating_derivatives)
floating_forward_dynamics_derivatives, floating_forward_dynamics_derivatives_rigid = _friction_pair(
    "floating_forward_dynamics_derivatives", _floating_fd_derivatives)


# Task space, one frame given by its code (2 k + local, see .frames) as the float argument:
# p = (im, fx[, bf], q, [qd, [qdd,]] result); d = (n, rows of fx[, 16], ...)
_pose, _jacobian = _inline(entry.frame_pose), _inline(entry.jacobian)
_velocity, _acceleration = _inline(entry.frame_velocity), _inline(entry.frame_acceleration)
_fl_pose, _fl_jacobian = _inline(floating_frames.frame_pose), _inline(floating_frames.jacobian)
_fl_velocity, _fl_acceleration = _inline(floating_frames.frame_velocity), _inline(floating_frames.frame_acceleration)


@njit(inline="always")
def _code(s):
    """The frame code given as the number argument; -1 (refused by the entry) unless 0 <= s < 2**62."""
    return int(s) if 0.0 <= s < 4.6e18 else -1


@njit(inline="always")
def _frames(p, d):
    return carray(p[0], (d[0], IM_COLUMNS), np.int64), carray(p[1], (d[1], NCOL), np.float64)


def frame_pose(p, d, s):
    im, fx = _frames(p, d)
    return _pose(im, fx, _v(p, 2, d[0]), _code(s), _m(p, 3, 4))


def jacobian(p, d, s):
    im, fx = _frames(p, d)
    n = d[0]
    return _jacobian(im, fx, _v(p, 2, n), _code(s), carray(p[3], (6, n), np.float64))


def frame_velocity(p, d, s):
    im, fx = _frames(p, d)
    return _velocity(im, fx, _v(p, 2, d[0]), _v(p, 3, d[0]), _code(s), _v(p, 4, 6))


def frame_acceleration(p, d, s):
    im, fx = _frames(p, d)
    n = d[0]
    return _acceleration(im, fx, _v(p, 2, n), _v(p, 3, n), _v(p, 4, n), _code(s), _v(p, 5, 6))


def floating_frame_pose(p, d, s):
    im, fx = _frames(p, d)
    return _fl_pose(im, fx, _v(p, 2, BF_LENGTH), _v(p, 3, d[0] + 1), _code(s), _m(p, 4, 4))


def floating_jacobian(p, d, s):
    im, fx = _frames(p, d)
    n = d[0]
    return _fl_jacobian(im, fx, _v(p, 2, BF_LENGTH), _v(p, 3, n + 1), _code(s), carray(p[4], (6, n), np.float64))


def floating_frame_velocity(p, d, s):
    im, fx = _frames(p, d)
    n = d[0]
    return _fl_velocity(im, fx, _v(p, 2, BF_LENGTH), _v(p, 3, n + 1), _v(p, 4, n), _code(s), _v(p, 5, 6))


def floating_frame_acceleration(p, d, s):
    im, fx = _frames(p, d)
    n = d[0]
    return _fl_acceleration(im, fx, _v(p, 2, BF_LENGTH), _v(p, 3, n + 1), _v(p, 4, n), _v(p, 5, n), _code(s),
                            _v(p, 6, 6))


# name -> (C function, input lengths, result shapes, name of the float argument or None); in the
# lengths "n" is the joint (velocity) count, "q" a floating base's configuration size n + 1
_V3, _SMOOTH = ("n", "n", "n"), "smooth_friction"
ENTRIES = {
    "inverse_dynamics": (inverse_dynamics, _V3, ("n",), None),
    "inverse_dynamics_rigid": (inverse_dynamics_rigid, _V3, ("n",), None),
    "mass_matrix": (mass_matrix, ("n",), ("nn",), None),
    "coriolis_matrix": (coriolis_matrix, ("n", "n"), ("nn",), None),
    "gravity_torques": (gravity_torques, ("n",), ("n",), None),
    "bias_torques": (bias_torques, ("n", "n"), ("n",), None),
    "forward_dynamics": (forward_dynamics, _V3, ("n",), _SMOOTH),
    "forward_dynamics_rigid": (forward_dynamics_rigid, _V3, ("n",), _SMOOTH),
    "inverse_dynamics_derivatives": (inverse_dynamics_derivatives, _V3, ("nn", "nn"), _SMOOTH),
    "inverse_dynamics_derivatives_rigid": (inverse_dynamics_derivatives_rigid, _V3, ("nn", "nn"), _SMOOTH),
    "forward_dynamics_derivatives": (forward_dynamics_derivatives, _V3, ("nn", "nn", "nn"), _SMOOTH),
    "forward_dynamics_derivatives_rigid": (forward_dynamics_derivatives_rigid, _V3, ("nn", "nn", "nn"), _SMOOTH),
}
_Q3 = ("q", "n", "n")
ENTRIES.update({
    "floating_inverse_dynamics": (floating_inverse_dynamics, _Q3, ("n",), None),
    "floating_inverse_dynamics_rigid": (floating_inverse_dynamics_rigid, _Q3, ("n",), None),
    "floating_mass_matrix": (floating_mass_matrix, ("q",), ("nn",), None),
    "floating_forward_dynamics": (floating_forward_dynamics, _Q3, ("n",), _SMOOTH),
    "floating_forward_dynamics_rigid": (floating_forward_dynamics_rigid, _Q3, ("n",), _SMOOTH),
    "floating_inverse_dynamics_derivatives": (floating_inverse_dynamics_derivatives, _Q3, ("nn", "nn"), _SMOOTH),
    "floating_inverse_dynamics_derivatives_rigid": (floating_inverse_dynamics_derivatives_rigid, _Q3,
                                                    ("nn", "nn"), _SMOOTH),
    "floating_forward_dynamics_derivatives": (floating_forward_dynamics_derivatives, _Q3, ("nn", "nn", "nn"),
                                              _SMOOTH),
    "floating_forward_dynamics_derivatives_rigid": (floating_forward_dynamics_derivatives_rigid, _Q3,
                                                    ("nn", "nn", "nn"), _SMOOTH),
})
# task space: the model is (im, fx[, bf]) (.layout.pack_frames), the float argument the frame's code
ENTRIES.update({
    "frame_pose": (frame_pose, ("n",), ("44",), "code"),
    "jacobian": (jacobian, ("n",), ("6n",), "code"),
    "frame_velocity": (frame_velocity, ("n", "n"), ("6",), "code"),
    "frame_acceleration": (frame_acceleration, _V3, ("6",), "code"),
    "floating_frame_pose": (floating_frame_pose, ("q",), ("44",), "code"),
    "floating_jacobian": (floating_jacobian, ("q",), ("6n",), "code"),
    "floating_frame_velocity": (floating_frame_velocity, ("q", "n"), ("6",), "code"),
    "floating_frame_acceleration": (floating_frame_acceleration, _Q3, ("6",), "code"),
})
TASK_SPACE = frozenset(k for k in ENTRIES if k.endswith(("frame_pose", "jacobian", "frame_velocity",
                                                           "frame_acceleration")))
_OPTIONS = {k: {"fastmath": _frames_kernels.FASTMATH} for k in TASK_SPACE}  # as the frame kernels
COMPILE_SECONDS: dict = {}
ON = np.ones(1, dtype=np.int64)  # the switch of callers that are always on (robot.fast)
ON.flags.writeable = False


@functools.cache
def compiled(name: str):
    """The C function ``name`` (compiled now or loaded from the disk cache; once per process).
    The returned numba ``CFunc`` owns the machine code: it stays referenced here."""
    t0 = time.perf_counter()
    f = cfunc(SIGNATURE, cache=True, **_OPTIONS.get(name, {}))(ENTRIES[name][0])
    COMPILE_SECONDS[name] = time.perf_counter() - t0
    return f


def lean(name: str, model: tuple, *, fallback=None, nan_fill: bool = False, switch: np.ndarray = ON) -> Lean:
    """The caller of entry ``name`` for the packed model ``model``: ``(im, fm)``
    (``dispatch.packed``), ``(im, fx)`` for the task-space entries (``dispatch.packed_frames``),
    with the base ``bf`` appended for the ``floating_`` entries; see ``_call.c``.

    ``fallback``: called with the original arguments when the call cannot serve them
    (None: the call returns None); ``nan_fill``: NaN or inf in an input gives all-NaN
    results instead; ``switch``: int64 (1,) array, the entry is skipped while it reads 0."""
    func, inputs, outputs, scalar = ENTRIES[name]
    n = model[0].shape[0] if model else 0
    rows = (lambda r: r >= n) if name in TASK_SPACE else (lambda r: r == n)  # fx: the bodies, then frames
    want = [(np.int64, (n, IM_COLUMNS)), (np.float64, NCOL)]
    want += [(np.float64, (BF_LENGTH,))] if name.startswith("floating_") else []
    if (len(model) != len(want) or any(a.dtype != t for a, (t, _) in zip(model, want))
            or model[0].shape != want[0][1] or model[1].ndim != 2 or model[1].shape[1] != NCOL
            or not rows(model[1].shape[0]) or (len(want) > 2 and model[2].shape != want[2][1])):
        raise ValueError(f"lean: entry {name!r} takes packed model arrays (im (n, {IM_COLUMNS}), "
                         f"{'fx (n + frames' if name in TASK_SPACE else 'fm (n'}, {NCOL})"
                         f"{', bf (16,)' if len(want) > 2 else ''}), got {[np.shape(a) for a in model]}")
    size = {"n": n, "q": n + 1}
    shape = {"n": (n, 0), "nn": (n, n), "44": (4, 4), "6n": (6, n), "6": (6, 0)}
    return Lean(compiled(name).address, tuple(model), tuple(size[k] for k in inputs),
                tuple(shape[o] for o in outputs), scalar, nan_fill, switch, fallback)
