"""The compiled kernels called one sample at a time with their own scratch, and the batch loops
generated from their declarations (:mod:`composedyn.dynamics.compiled.declare`), for the kernel
tests: ``<name>_one`` runs the kernel's ``<name>_into`` on fresh scratch; ``<NAME>`` is the pair
(serial, parallel) of its declared quantity's loops, taking the arrays the loops of earlier
releases took (no status array where the quantity never refuses a sample), ``aba_one`` by the
declared quantity's entry; :func:`entry` runs a
declared quantity's C entry (the one the ``Robot`` methods' C callers run, compiled at install)
on given scratch and returns its status too."""

from __future__ import annotations

import ctypes

import numpy as np

from composedyn.dynamics.compiled import aba, coriolis, crba, declare, gravity, rnea
from composedyn.dynamics.compiled.layout import model_dims

_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
                          ctypes.POINTER(ctypes.c_int64), ctypes.c_double)


def entry(quantity, model: tuple, *inputs, options: tuple = (), number: float = 0.0, extras: tuple | None = None,
          fill: float = np.nan) -> tuple:
    """(status, results...) of the C entry of ``quantity`` (a declaration) on one sample: the packed
    ``model`` arrays (im, fm or fx), the input vectors, the integer ``options`` (all of them, in the
    declaration's order), the ``number`` and the ``extras`` (arrays (bodies, columns), or None: the entry
    without them); its scratch and results are new arrays full of ``fill`` (NaN: a number read before
    it is written shows in the results).  Status as the kernel returns it (2: an input not finite)."""
    dims = model_dims(model[0])
    scratch = [np.full(quantity.shape(s, dims), fill) for s in quantity.scratch]
    results = [np.full(quantity.shape(r, dims), fill) for r in quantity.results]
    vectors = [np.ascontiguousarray(x, dtype=float) for x in inputs]
    vectors += [np.ascontiguousarray(e, dtype=float).reshape(-1) for e in extras or ()]
    arrays = [np.ascontiguousarray(m) for m in model] + scratch + vectors + results
    d = [a.shape[0] for a in arrays[:2]]
    for a in scratch:
        d += [a.shape[0], a.shape[1] if a.ndim == 2 else 0]
    d += [v.shape[0] for v in vectors]
    for a in results:
        d += [a.shape[0], a.shape[1] if a.ndim == 2 else 0]
    p = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    d = np.array(d, dtype=np.int64)
    o = np.array(list(options) + [0], dtype=np.int64)
    fn = _ENTRY(declare.entry(quantity, extras is not None).address)
    status = fn(p, d.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), o.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                float(number))
    return (int(status), *results)


def rnea_one(im, fm, q, qd, qdd, fw, grav, extra, out):
    rnea.rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, np.empty((q.shape[0] + 1, rnea.SCRATCH)))


def crba_one(im, fm, q, arm, out):
    crba.crba_into(im, fm, q, arm, out, np.empty((q.shape[0], crba.SCRATCH)))


def _into(out, got: tuple) -> int:
    """Copy an :func:`entry`'s one result into ``out``; its status."""
    out[...] = got[1]
    return got[0]


def gravity_one(im, fm, q, out):
    gravity.gravity_into(im, fm, q, out, np.empty((q.shape[0], gravity.SCRATCH)))


def coriolis_one(im, fm, q, qd, out):
    coriolis.coriolis_into(im, fm, q, qd, out, np.empty((q.shape[0], coriolis.SCRATCH)))


def aba_one(im, fm, q, qd, tau, fw, fric, smooth, out) -> int:
    """Forward dynamics into out by the declared quantity's C entry (the kernel the methods run,
    compiled at install; ``aba_into`` alone takes minutes to compile): 0, 1 for a singular mass
    matrix (the kernel's status 3), 2 for an input not finite."""
    status = _into(out, entry(aba.FORWARD_DYNAMICS, (im, fm), q, qd, tau, options=(fric,), number=smooth,
                              extras=(fw,) if fw.shape[0] else None))
    return 1 if status == 3 else status


def _pair(quantity, adapt):
    def made(loop):
        def run(*args):
            inputs, out = adapt(*args)
            loop(*inputs, out, np.empty(out.shape[0], dtype=np.int64))
        return run
    return tuple(made(loop) for loop in declare.loops(quantity))


def _rnea(im, fm, Q, QD, QDD, FW, grav, extra, OUT):
    assert grav == 1 and extra & 1, "the declared inverse dynamics has gravity and armature"
    return (im, fm, Q, QD, QDD, FW, (extra >> 1) & 1), OUT


def _crba(im, fm, Q, arm, OUT):
    assert arm == 1, "the declared mass matrix has the armature"
    return (im, fm, Q), OUT


RNEA = _pair(rnea.INVERSE_DYNAMICS, _rnea)
CRBA = _pair(crba.MASS_MATRIX, _crba)
GRAVITY = _pair(gravity.GRAVITY_TORQUES, lambda im, fm, Q, OUT: ((im, fm, Q), OUT))
CORIOLIS = _pair(coriolis.CORIOLIS_MATRIX, lambda im, fm, Q, QD, OUT: ((im, fm, Q, QD), OUT))
ABA = declare.loops(aba.FORWARD_DYNAMICS)  # (im, fm, Q, QD, TAU, FW, friction, smooth, OUT, STATUS): 3 singular
