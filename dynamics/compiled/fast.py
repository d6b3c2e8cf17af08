"""``FastDynamics``: the lean per-call entry for control loops (``robot.fast``).

Its methods are the fixed-base declared quantities (:mod:`.quantities`), each by its
declaration's name (``rnea`` is another name for ``inverse_dynamics``): no general path,
no broadcasting, no mimic reduction, no per-element checks in Python.  Every input must
be a float64 array, (n,) for one sample or (N, n) for N samples, with n = ``model.n``
joints in ``model.joint_names`` order (for a ``Robot`` with mimic joints that is
``robot.all_joint_names``); after the arrays come the declaration's number
(``smooth_friction``) and its integer options (``friction``; a frame's index in
``model.link_names`` and ``local`` 0 or 1), positional or by keyword.  The results
equal the ``Robot`` methods' (armature and friction included where the method includes
them; a tuple for several results).  Pass ``out=`` to reuse a result array (one
result): float64, C-contiguous, of the result's shape.

A single sample is served by the C caller of its declared quantity
(:mod:`.declare`): the methods here *are* those callers, so a call goes from
Python to the kernel without Python code in between.  Safe without per-element
checks in Python:

* a shape, length or dtype that does not fit raises ``ValueError`` (the C
  caller compares them before the kernel runs; nothing is read past an array,
  nothing written past ``out``);
* NaN or inf in an input gives NaN out: the whole result of that sample
  (checked in compiled code, ~1 ns per number); finite inputs so large that
  the result overflows float64 (rates beyond about 1e150, whose squares pass
  the largest float) give inf or NaN too, as on every route of the ``Robot``;
* a mass matrix that is not positive definite raises ``ModelError``
  (forward dynamics), as the ``Robot`` method does; an option out of range
  (a frame index) raises ``ValueError``.

Batches, and single samples the C caller does not take (another dtype or
shape: an error; a singular mass matrix), go to the Python functions below,
which run the batch loops (one sample as a batch of one, :func:`.declare.run`).

    fd = robot.fast                 # bind once, outside the loop
    fd.warm_up()                    # compile / load the kernels now
    tau = fd.inverse_dynamics(q, qd, qdd)
"""

from __future__ import annotations

import functools

import numpy as np

from composedyn.dynamics.compiled import quantities
from composedyn.dynamics.compiled.declare import caller, run, warm
from composedyn.dynamics.compiled.layout import model_dims
from composedyn.dynamics.reference.friction import smooth_width

_F8 = np.dtype(np.float64)
_PUBLIC = {"v": "qd", "a": "qdd"}  # a declared input's name -> its name in the Robot methods


def _bad_call(name: str, n: int, arrays: dict, out) -> ValueError:
    """The ValueError for a call of ``robot.fast.<name>`` whose arrays do not fit: the first
    argument that does not fit and how (named as in the ``Robot`` method: qd, qdd), then what
    is expected and every argument's type, dtype and shape."""
    arrays = {_PUBLIC.get(k, k): a for k, a in arrays.items()}
    got = ", ".join(f"{k} {'' if type(a) is np.ndarray else type(a).__name__ + ' '}"
                    f"{getattr(a, 'dtype', '')} {_shape(a)}" for k, a in arrays.items())
    if out is not None:
        flags = getattr(out, "flags", None)
        layout = "" if flags is not None and flags.c_contiguous and flags.writeable else " not C-contiguous/writeable"
        got += f", out {getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}{layout}"
    return ValueError(f"robot.fast.{name}: {_fault(n, arrays, out)}; expects float64 arrays of shape ({n},) or "
                      f"(N, {n}) and a float64 C-contiguous out= of the result's shape; got {got}")


def _fault(n: int, arrays: dict, out) -> str:
    """The first argument of a refused call that does not fit, and how."""
    shape = None
    for k, a in arrays.items():
        if type(a) is not np.ndarray:
            return f"{k} is {'None' if a is None else 'a ' + type(a).__name__}, not a plain numpy.ndarray"
        if a.dtype != _F8:
            return f"{k} has dtype {a.dtype.str if a.dtype.byteorder == '>' else a.dtype}, not float64"
        if a.ndim not in (1, 2) or a.shape[-1] != n:
            return f"{k} has shape {a.shape}, not ({n},) or (N, {n})"
        if shape is not None and a.shape != shape:
            return f"{k} has shape {a.shape} and {next(iter(arrays))} {shape}; the arrays must have one shape"
        shape = a.shape
    if out is None:
        return "the arrays do not fit"
    if type(out) is not np.ndarray:
        return f"out is a {type(out).__name__}, not a plain numpy.ndarray"
    if out.dtype != _F8:
        return f"out has dtype {out.dtype}, not float64"
    if not (out.flags.c_contiguous and out.flags.writeable):
        return "out is not C-contiguous and writeable"
    return f"out has shape {out.shape}, not the result's"


def _shape(a) -> str:
    try:
        return str(np.shape(a))
    except Exception:  # an object NumPy cannot even measure
        return "(?)"


def _batch(name: str, n: int, arrays: dict, out, shapes: tuple):
    """Check a batch call once: inputs float64 (N, n) of one shape (copied to C order if strided),
    out None or (one result) float64 C-contiguous writeable (N,) + shape.  Returns (inputs, results)."""
    xs = list(arrays.values())
    if any(type(x) is not np.ndarray for x in xs):  # subclasses (masked arrays, matrices) too: refused
        raise _bad_call(name, n, arrays, out)
    shape = xs[0].shape
    if len(shape) != 2 or shape[1] != n or any(x.shape != shape or x.dtype != _F8 for x in xs):
        raise _bad_call(name, n, arrays, out)
    want = tuple((shape[0],) + tail for tail in shapes)
    if out is not None:
        if (len(want) > 1 or type(out) is not np.ndarray or out.shape != want[0] or out.dtype != _F8
                or not out.flags.c_contiguous or not out.flags.writeable):
            raise _bad_call(name, n, arrays, out)
        if any(np.may_share_memory(out, x) for x in xs):
            raise _Overlap(f"robot.fast.{name}: out shares memory with an input array; pass a separate array")
    xs = [x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in xs]
    return xs, tuple(np.empty(w) for w in want) if out is None else (out,)


class _Overlap(ValueError):
    """out= shares memory with an input (raised as it is, not renamed as a shape error)."""


def _one(name: str, n: int, arrays: dict, out, shapes: tuple):
    """A single sample as a batch of one (see :func:`_batch`): (inputs (1, n), results (1,) + shape)."""
    if any(type(x) is not np.ndarray or x.ndim != 1 for x in arrays.values()) or not (
            out is None or type(out) is np.ndarray):
        raise _bad_call(name, n, arrays, out)
    try:
        return _batch(name, n, {k: x[None] for k, x in arrays.items()}, None if out is None else out[None], shapes)
    except _Overlap:
        raise
    except ValueError:  # named with the arrays as given
        raise _bad_call(name, n, arrays, out) from None


def _result(results: tuple, single: bool, out):
    """What a method returns: ``out`` itself when given, else one sample's rows of the results or
    the results (a tuple for several)."""
    if out is not None:
        return out
    got = tuple(r[0] for r in results) if single else results
    return got if len(got) > 1 else got[0]


def _arguments(q, name: str, args: tuple, kwargs: dict) -> tuple:
    """(arrays, options, number) of a call ``robot.fast.<name>(*args, **kwargs)`` of quantity
    ``q``: its input arrays, then its number and its integer options, positional or by keyword."""
    k = len(q.inputs)
    names = ([q.number] if q.number else []) + [o for o, _ in q.options]
    if len(args) < k or len(args) > k + len(names):
        raise TypeError(f"robot.fast.{name}() takes {k} arrays then at most {names}, got {len(args)} positional")
    given = dict(zip(names, args[k:]))
    for key, value in kwargs.items():
        if key not in names or key in given:
            raise TypeError(f"robot.fast.{name}() got an unexpected or repeated keyword argument {key!r}")
        given[key] = value
    options = tuple(int(given.get(o, default)) for o, default in q.options)
    number = smooth_width(given.get(q.number, 0.0) or 0.0) if q.number else None
    return args[:k], options, number


class FastDynamics:
    """Compiled dynamics of one ``Model`` with checks of shapes only (see the module doc).

    Its methods are the fixed-base declared quantities (:mod:`.quantities`), ``rnea`` another
    name for ``inverse_dynamics``.  Each is, after its first look-up, the C caller
    (``_call.Caller``) of its quantity, with :meth:`_general` for that quantity (batches, and
    what the caller does not take) as its fallback, also reachable as ``_<method>``.  ``data``:
    the robot's packed arrays and this object's scratch (:class:`composedyn.dynamics.data.Data`;
    a robot has one per thread).
    """

    def __init__(self, model, data):
        if model.n == 0:
            raise ValueError(f"robot.fast: robot {model.name!r} ({model.source}) has no moving joint, so there "
                             "is nothing to compute per joint; its Robot methods return the empty results")
        self.model = model
        self.n = model.n
        self.arrays = data.arrays  # the packed model arrays (read only)
        self._data = data

    def __getattr__(self, name: str):
        method = name[1:] if name.startswith("_") else name
        q = quantities.FIXED.get(ALIASES.get(method, method))
        if q is None or method.startswith("_"):
            raise AttributeError(f"FastDynamics has no attribute {name!r}")
        general = functools.partial(self._general, q, method)
        general.__doc__ = (f"robot.fast.{method}: arrays {[_PUBLIC.get(i, i) for i, _ in q.inputs]} (n,) or (N, n); "
                           "out= optional")
        if name.startswith("_"):
            return general
        call = caller(q, self.arrays.of(q), self._data.scratch_of(q), fallback=general, nan_fill=True)
        call.__doc__ = general.__doc__
        setattr(self, name, call)
        return call

    def __dir__(self):
        return sorted({*super().__dir__(), *quantities.FIXED, *ALIASES})

    def _general(self, q, name: str, *args, out=None, **kwargs):
        """Quantity ``q`` for one sample (as a batch of one) or a batch (N, n), through its batch
        loop (:func:`.declare.run`): NaN or inf in a sample gives NaN in its results; a sample the
        kernel refuses (a singular mass matrix) raises the reference's ModelError."""
        arrays, options, number = _arguments(q, name, args, kwargs)
        n = self.n
        dims = model_dims(self.arrays.bodies[0])
        single = type(arrays[0]) is not np.ndarray or arrays[0].ndim != 2  # else a batch; _one refuses the rest
        xs, results = (_one if single else _batch)(name, n, dict(zip((i for i, _ in q.inputs), arrays)), out,
                                                   tuple(q.shape(r, dims) for r in q.results))
        run(q, self.model, self.arrays.of(q), tuple(xs), options, number, results)
        return _result(results, single, out)

    def warm_up(self, batch: bool = False) -> None:
        """Compile (or load from the disk cache) the single-sample entries now; ``batch=True`` also the loops."""
        for name in quantities.FIXED:
            getattr(self, name)
        for q in quantities.FIXED.values() if batch else ():
            warm(q, self.arrays.of(q), 2)


ALIASES = {"rnea": "inverse_dynamics"}  # method -> the quantity it is another name for
