"""``FastDynamics``: the lean per-call entry for control loops (``robot.fast``).

No broadcasting, no mimic reduction, no per-element checks in Python: every
input must be a float64 array, (n,) for one sample or (N, n) for N samples,
with n = ``model.n`` joints in ``model.joint_names`` order (for a ``Robot``
with mimic joints that is ``robot.all_joint_names``).  The results equal the
``Robot`` methods (armature and friction included where the method includes
them).  Pass ``out=`` to reuse a result array: float64, C-contiguous, of the
result's shape.

A single sample is served by the C caller of its compiled entry
(:mod:`.lean`): the methods here *are* those callers, so a call goes from
Python to the kernel without Python code in between.  Safe without per-element
checks in Python:

* a shape, length or dtype that does not fit raises ``ValueError`` (the C
  caller compares them before the kernel runs; nothing is read past an array,
  nothing written past ``out``);
* NaN or inf in an input gives NaN out: the whole result of that sample
  (checked in compiled code, ~1 ns per number);
* a mass matrix that is not positive definite raises ``ModelError``
  (forward dynamics), as the ``Robot`` method does.

Batches, and single samples the C caller does not take (another dtype or
shape: an error; a singular mass matrix), go to the Python functions below,
which run the batch loops (one sample as a batch of one).

    fd = robot.fast                 # bind once, outside the loop
    fd.warm_up()                    # compile / load the kernels now
    tau = fd.inverse_dynamics(q, qd, qdd)
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled import lean
from composedyn.dynamics.compiled.aba import aba_parallel, aba_serial
from composedyn.dynamics.compiled.coriolis import coriolis_parallel, coriolis_serial
from composedyn.dynamics.compiled.crba import crba_parallel, crba_serial
from composedyn.dynamics.compiled.gravity import gravity_parallel, gravity_serial
from composedyn.dynamics.compiled.layout import NO_FW3, pack
from composedyn.dynamics.compiled.parallel import use_parallel
from composedyn.dynamics.compiled.rnea import rnea_parallel, rnea_serial
from composedyn.dynamics.reference import forward as _reference
from composedyn.dynamics.reference.friction import smooth_width

_F8 = np.dtype(np.float64)


def _bad_call(name: str, n: int, arrays: dict, out) -> ValueError:
    """The ValueError for a call of ``robot.fast.<name>`` whose arrays do not fit."""
    got = ", ".join(f"{k} {'' if type(a) is np.ndarray else type(a).__name__ + ' '}"
                    f"{getattr(a, 'dtype', '')} {_shape(a)}" for k, a in arrays.items())
    if out is not None:
        flags = getattr(out, "flags", None)
        layout = "" if flags is not None and flags.c_contiguous and flags.writeable else " not C-contiguous/writeable"
        got += f", out {getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}{layout}"
    return ValueError(f"robot.fast.{name}: expects float64 arrays of shape ({n},) or (N, {n}) and a float64 "
                      f"C-contiguous out= of the result's shape; got {got}")


def _shape(a) -> str:
    try:
        return str(np.shape(a))
    except Exception:  # an object NumPy cannot even measure
        return "(?)"


def _batch(name: str, n: int, arrays: dict, out, tail: tuple):
    """Check a batch call once: inputs float64 (N, n) of one shape (copied to C order if
    strided), out None or float64 C-contiguous writeable (N,) + tail.  Returns (inputs, out)."""
    xs = list(arrays.values())
    if any(type(x) is not np.ndarray for x in xs):  # subclasses (masked arrays, matrices) too: refused
        raise _bad_call(name, n, arrays, out)
    shape = xs[0].shape
    if len(shape) != 2 or shape[1] != n or any(x.shape != shape or x.dtype != _F8 for x in xs):
        raise _bad_call(name, n, arrays, out)
    want = (shape[0],) + tail
    if out is not None:
        if (type(out) is not np.ndarray or out.shape != want or out.dtype != _F8 or not out.flags.c_contiguous
                or not out.flags.writeable):
            raise _bad_call(name, n, arrays, out)
        if any(np.may_share_memory(out, x) for x in xs):
            raise _Overlap(f"robot.fast.{name}: out shares memory with an input array; pass a separate array")
    xs = [x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in xs]
    return xs, np.empty(want) if out is None else out


class _Overlap(ValueError):
    """out= shares memory with an input (raised as it is, not renamed as a shape error)."""


def _one(name: str, n: int, arrays: dict, out, tail: tuple):
    """A single sample as a batch of one (see :func:`_batch`): (inputs (1, n), out (1,) + tail)."""
    if any(type(x) is not np.ndarray or x.ndim != 1 for x in arrays.values()) or not (
            out is None or type(out) is np.ndarray):
        raise _bad_call(name, n, arrays, out)
    try:
        return _batch(name, n, {k: x[None] for k, x in arrays.items()}, None if out is None else out[None], tail)
    except _Overlap:
        raise
    except ValueError:  # named with the arrays as given
        raise _bad_call(name, n, arrays, out) from None


def _result(res: np.ndarray, single: bool, out) -> np.ndarray:
    """What a method returns: ``out`` itself when given, else one sample's row of ``res`` or ``res``."""
    if out is not None:
        return out
    return res[0] if single else res


class FastDynamics:
    """Compiled dynamics of one ``Model`` with checks of shapes only (see the module doc).

    Each method is, after its first look-up, the C caller (``_call.Lean``) of its
    one-sample entry, with the Python function of the same name (batches, and what the
    caller does not take) as its fallback.
    """

    def __init__(self, model):
        if model.n == 0:
            raise ValueError(f"robot.fast: robot {model.name!r} ({model.source}) has no moving joint, so there "
                             "is nothing to compute per joint; its Robot methods return the empty results")
        self.model = model
        self.n = model.n
        self._packed = pack(model)

    def __getattr__(self, name: str):
        fallback = getattr(self, "_" + name, None) if name in _METHODS else None
        if fallback is None:
            raise AttributeError(f"FastDynamics has no attribute {name!r}")
        im, fm = self._packed
        call = lean.lean(_METHODS[name], (im, fm), fallback=fallback, nan_fill=True)
        call.__doc__ = fallback.__doc__
        setattr(self, name, call)
        return call

    def _inverse_dynamics(self, q, qd, qdd, out=None):
        """tau = M qdd + C qd + g + damping qd + friction sgn(qd) (armature in M), (n,) or (N, n)."""
        n, im, fm = self.n, *self._packed
        arrays = {"q": q, "qd": qd, "qdd": qdd}
        (q, qd, qdd), res = (_one if np.ndim(q) == 1 else _batch)("inverse_dynamics", n, arrays, out, (n,))
        (rnea_parallel if use_parallel(q.size) else rnea_serial)(im, fm, q, qd, qdd, NO_FW3, 1, 3, res)
        return _result(res, np.ndim(arrays["q"]) == 1, out)

    _rnea = _inverse_dynamics

    def _mass_matrix(self, q, out=None):
        """M(q) with armature, (n, n) or (N, n, n)."""
        n, im, fm = self.n, *self._packed
        (x,), res = (_one if np.ndim(q) == 1 else _batch)("mass_matrix", n, {"q": q}, out, (n, n))
        (crba_parallel if use_parallel(x.size) else crba_serial)(im, fm, x, 1, res)
        return _result(res, np.ndim(q) == 1, out)

    def _coriolis_matrix(self, q, qd, out=None):
        """C(q, qd) in Christoffel form, (n, n) or (N, n, n)."""
        n, im, fm = self.n, *self._packed
        (x, xd), res = (_one if np.ndim(q) == 1 else _batch)("coriolis_matrix", n, {"q": q, "qd": qd}, out, (n, n))
        (coriolis_parallel if use_parallel(x.size) else coriolis_serial)(im, fm, x, xd, res)
        return _result(res, np.ndim(q) == 1, out)

    def _bias_torques(self, q, qd, out=None):
        """h = C qd + g (no friction), (n,) only."""
        n, im, fm = self.n, *self._packed
        (x, xd), res = _one("bias_torques", n, {"q": q, "qd": qd}, out, (n,))
        rnea_serial(im, fm, x, xd, np.zeros_like(x), NO_FW3, 1, 0, res)
        return _result(res, True, out)

    def _gravity_torques(self, q, out=None):
        """g(q), (n,) or (N, n)."""
        n, im, fm = self.n, *self._packed
        (x,), res = (_one if np.ndim(q) == 1 else _batch)("gravity_torques", n, {"q": q}, out, (n,))
        (gravity_parallel if use_parallel(x.size) else gravity_serial)(im, fm, x, res)
        return _result(res, np.ndim(q) == 1, out)

    def _forward_dynamics(self, q, qd, tau, smooth_friction: float = 0.0, out=None):
        """qdd solving M qdd = tau - C qd - g - friction, (n,) or (N, n); ModelError if M is singular."""
        n, im, fm = self.n, *self._packed
        smooth_friction = smooth_width(smooth_friction)
        arrays = {"q": q, "qd": qd, "tau": tau}
        (x, xd, t), res = (_one if np.ndim(q) == 1 else _batch)("forward_dynamics", n, arrays, out, (n,))
        st = np.zeros(x.shape[0], dtype=np.int64)
        k = aba_parallel if use_parallel(x.size) else aba_serial
        k(im, fm, x, xd, t, NO_FW3, 1, float(smooth_friction), res, st)
        if st.any():  # no positive pivot: the reference raises ModelError, or solves at the edge
            b = np.nonzero(st)[0]
            res[b] = _reference.forward_dynamics(self.model, x[b], xd[b], t[b], smooth=smooth_friction or None)
        return _result(res, np.ndim(q) == 1, out)

    def warm_up(self, batch: bool = False) -> None:
        """Compile (or load from the disk cache) the single-sample entries now; ``batch=True`` also the loops."""
        for name in _METHODS:
            getattr(self, name)
        if batch:
            Z = np.zeros((2, self.n))
            self.inverse_dynamics(Z, Z, Z)
            self.mass_matrix(Z)
            self.coriolis_matrix(Z, Z)
            self.gravity_torques(Z)
            im, fm = self._packed
            aba_serial(im, fm, Z, Z, Z, NO_FW3, 1, 0.0, np.empty((2, self.n)), np.zeros(2, np.int64))


# method -> its entry (.lean)
_METHODS = {"inverse_dynamics": "inverse_dynamics", "rnea": "inverse_dynamics", "mass_matrix": "mass_matrix",
            "coriolis_matrix": "coriolis_matrix", "bias_torques": "bias_torques",
            "gravity_torques": "gravity_torques", "forward_dynamics": "forward_dynamics"}
