"""The one-sample entries as C functions, called from Python through ``_call.Lean``.

The checked entries of :mod:`.entry` (``inverse_dynamics``, ``mass_matrix``,
...) are compiled here a second way: as numba ``cfunc`` s with one C
signature for all (:data:`SIGNATURE`: the packed model ``im``, ``fm``, the
joint count n, up to three input vectors, one float and the output, as raw
pointers; the status of :mod:`.entry` as the result).  ``_call.Lean`` (a C
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

import numpy as np
from numba import carray, cfunc, types

from composedyn.dynamics.compiled import entry
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.layout import NCOL

try:
    from composedyn.dynamics.compiled._call import Lean
except ImportError as exc:  # part of the package, built by pip install; no slower substitute
    raise ImportError(f"composedyn's C extension composedyn.dynamics.compiled._call is not built ({exc}): "
                      "install composedyn with pip (pip install .), which compiles it; a C compiler and "
                      "Python's headers are needed") from None

_P, _PI = types.CPointer(types.float64), types.CPointer(types.int64)
SIGNATURE = types.int64(_PI, _P, types.int64, _P, _P, _P, types.float64, _P)
IM_COLUMNS = 2  # im (n, 2): parent, joint type (see .layout)

_inline = functools.partial(njit, inline="always")
_id, _id_rigid = _inline(entry.inverse_dynamics), _inline(entry.inverse_dynamics_rigid)
_mass, _coriolis = _inline(entry.mass_matrix), _inline(entry.coriolis_matrix)
_gravity, _bias = _inline(entry.gravity_torques), _inline(entry.bias_torques)
_fd, _fd_rigid = _inline(entry.forward_dynamics), _inline(entry.forward_dynamics_rigid)


@njit(inline="always")
def _model(im, fm, n):
    return carray(im, (n, IM_COLUMNS)), carray(fm, (n, NCOL))


def inverse_dynamics(im, fm, n, q, qd, qdd, s, out):
    a, b = _model(im, fm, n)
    return _id(a, b, carray(q, n), carray(qd, n), carray(qdd, n), carray(out, n))


def inverse_dynamics_rigid(im, fm, n, q, qd, qdd, s, out):
    a, b = _model(im, fm, n)
    return _id_rigid(a, b, carray(q, n), carray(qd, n), carray(qdd, n), carray(out, n))


def mass_matrix(im, fm, n, q, x1, x2, s, out):
    a, b = _model(im, fm, n)
    return _mass(a, b, carray(q, n), carray(out, (n, n)))


def coriolis_matrix(im, fm, n, q, qd, x2, s, out):
    a, b = _model(im, fm, n)
    return _coriolis(a, b, carray(q, n), carray(qd, n), carray(out, (n, n)))


def gravity_torques(im, fm, n, q, x1, x2, s, out):
    a, b = _model(im, fm, n)
    return _gravity(a, b, carray(q, n), carray(out, n))


def bias_torques(im, fm, n, q, qd, x2, s, out):
    a, b = _model(im, fm, n)
    return _bias(a, b, carray(q, n), carray(qd, n), carray(out, n))


def forward_dynamics(im, fm, n, q, qd, tau, smooth, out):
    a, b = _model(im, fm, n)
    return _fd(a, b, carray(q, n), carray(qd, n), carray(tau, n), smooth, carray(out, n))


def forward_dynamics_rigid(im, fm, n, q, qd, tau, smooth, out):
    a, b = _model(im, fm, n)
    return _fd_rigid(a, b, carray(q, n), carray(qd, n), carray(tau, n), smooth, carray(out, n))


# name -> (C function, vector inputs, name of the float input or None, matrix result)
ENTRIES = {
    "inverse_dynamics": (inverse_dynamics, 3, None, False),
    "inverse_dynamics_rigid": (inverse_dynamics_rigid, 3, None, False),
    "mass_matrix": (mass_matrix, 1, None, True),
    "coriolis_matrix": (coriolis_matrix, 2, None, True),
    "gravity_torques": (gravity_torques, 1, None, False),
    "bias_torques": (bias_torques, 2, None, False),
    "forward_dynamics": (forward_dynamics, 3, "smooth_friction", False),
    "forward_dynamics_rigid": (forward_dynamics_rigid, 3, "smooth_friction", False),
}
COMPILE_SECONDS: dict = {}
ON = np.ones(1, dtype=np.int64)  # the switch of callers that are always on (robot.fast)
ON.flags.writeable = False


@functools.cache
def compiled(name: str):
    """The C function ``name`` (compiled now or loaded from the disk cache; once per process).
    The returned numba ``CFunc`` owns the machine code: it stays referenced here."""
    t0 = time.perf_counter()
    f = cfunc(SIGNATURE, cache=True)(ENTRIES[name][0])
    COMPILE_SECONDS[name] = time.perf_counter() - t0
    return f


def lean(name: str, im: np.ndarray, fm: np.ndarray, *, fallback=None, nan_fill: bool = False,
         switch: np.ndarray = ON) -> Lean:
    """The caller of entry ``name`` for the packed model ``(im, fm)`` (see ``_call.c``).

    ``fallback``: called with the original arguments when the call cannot serve them
    (None: the call returns None); ``nan_fill``: NaN or inf in an input gives an
    all-NaN result instead; ``switch``: int64 (1,) array, the entry is skipped while it
    reads 0."""
    if im.ndim != 2 or im.shape[1] != IM_COLUMNS or fm.ndim != 2 or fm.shape[1] != NCOL:
        raise ValueError(f"lean: packed model arrays of shape (n, {IM_COLUMNS}) and (n, {NCOL}) expected, "
                         f"got {im.shape} and {fm.shape}")
    _, inputs, scalar, matrix = ENTRIES[name]
    return Lean(compiled(name).address, im, fm, inputs, scalar, matrix, nan_fill, switch, fallback)
