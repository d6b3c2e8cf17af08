"""``FastDynamics``: the lean per-call entry for control loops (``robot.fast``).

Its methods are the declared quantities (:mod:`.quantities`), each by its
declaration's name (``rnea`` is another name for ``inverse_dynamics``): no general path,
no broadcasting, no mimic reduction, no per-element checks in Python.  Every input must
be a float64 array, (n,) for one sample or (N, n) for N samples, with n = ``model.n``
joints in ``model.joint_names`` order (for a ``Robot`` with mimic joints that is
``robot.all_joint_names``); after the arrays come the declaration's number
(``smooth_friction``) and its integer options (``friction``; a frame's index in
``model.link_names`` and ``local`` 0 or 1), positional or by keyword.  A floating
robot's or a ``TreeRobot``'s ``robot.fast`` has the quantities it computes on its tree and
the derivatives of inverse and forward dynamics (``tree_robot.FAST``): q has nq entries
(a quaternion for a free-flyer or spherical joint) and the rates nv, in the robot's
coordinates, a frame is its index in ``robot.frame_names``, and a sample the kernel refuses
(a zero quaternion, a singular mass matrix) raises its named error.  The results equal the
``Robot`` methods' (armature and friction included where the method includes them; a tuple
for several results).  Pass ``out=`` to reuse the result arrays: float64, C-contiguous,
writeable, of the result's shape (a tuple of such arrays, one per result, for
several results).

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
import operator

import numpy as np

from composedyn.dynamics.compiled import quantities
from composedyn.dynamics.compiled.declare import caller, for_tree, run, run_batch, warm
from composedyn.dynamics.compiled.layout import model_dims
from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.reference.friction import smooth_width

_F8 = np.dtype(np.float64)
_PUBLIC = {"v": "qd", "a": "qdd"}  # a declared input's name -> its name in the Robot methods


def _bad_call(name: str, lengths: tuple, arrays: dict, out, public: dict = _PUBLIC) -> ValueError:
    """The ValueError for a call of ``robot.fast.<name>`` whose arrays do not fit (``lengths``: each
    array's declared length): the first argument that does not fit and how (named as in the
    ``Robot`` method: ``public`` maps v, a to qd, qdd), then what is expected and every argument's
    type, dtype and shape."""
    arrays = {public.get(k, k): a for k, a in arrays.items()}
    got = ", ".join(f"{k} {'' if type(a) is np.ndarray else type(a).__name__ + ' '}"
                    f"{getattr(a, 'dtype', '')} {_shape(a)}" for k, a in arrays.items())
    if out is not None:
        flags = getattr(out, "flags", None)
        layout = "" if flags is not None and flags.c_contiguous and flags.writeable else " not C-contiguous/writeable"
        got += f", out {getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}{layout}"
    expected = ", ".join(f"{k} ({m},) or (N, {m})" for k, m in zip(arrays, lengths))
    return ValueError(f"robot.fast.{name}: {_fault(lengths, arrays, out)}; expects float64 arrays {expected} "
                      f"and a float64 C-contiguous out= of the result's shape; got {got}")


def _fault(lengths: tuple, arrays: dict, out) -> str:
    """The first argument of a refused call that does not fit, and how."""
    rows = None
    for (k, a), n in zip(arrays.items(), lengths):
        if type(a) is not np.ndarray:
            return f"{k} is {'None' if a is None else 'a ' + type(a).__name__}, not a plain numpy.ndarray"
        if a.dtype != _F8:
            return f"{k} has dtype {a.dtype.str if a.dtype.byteorder == '>' else a.dtype}, not float64"
        if a.ndim not in (1, 2) or a.shape[-1] != n:
            return f"{k} has shape {a.shape}, not ({n},) or (N, {n})"
        if rows is not None and a.shape[:-1] != rows:
            return (f"{k} has shape {a.shape} and {next(iter(arrays))} {next(iter(arrays.values())).shape}; "
                    "the arrays must have as many samples")
        rows = a.shape[:-1]
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


def _batch(name: str, lengths: tuple, arrays: dict, out, shapes: tuple, public: dict = _PUBLIC):
    """Check a batch call once: inputs float64 (N, length) (copied to C order if strided), out None
    or (one result) float64 C-contiguous writeable (N,) + shape.  Returns (inputs, results)."""
    xs = list(arrays.values())
    if any(type(x) is not np.ndarray for x in xs):  # subclasses (masked arrays, matrices) too: refused
        raise _bad_call(name, lengths, arrays, out, public)
    N = xs[0].shape[0] if xs[0].ndim == 2 else -1
    if any(x.shape != (N, m) or x.dtype != _F8 for x, m in zip(xs, lengths)):
        raise _bad_call(name, lengths, arrays, out, public)
    want = tuple((N,) + tail for tail in shapes)
    if out is not None and len(want) > 1:
        _check_outs(name, out, want)
    elif out is not None and (type(out) is not np.ndarray or out.shape != want[0] or out.dtype != _F8
                              or not out.flags.c_contiguous or not out.flags.writeable):
        raise _bad_call(name, lengths, arrays, out, public)
    outs = () if out is None else out if len(want) > 1 else (out,)
    if any(np.may_share_memory(o, x) for o in outs for x in xs):
        raise _OutError(f"robot.fast.{name}: out shares memory with an input array; pass a separate array")
    xs = [x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in xs]
    return xs, tuple(np.empty(w) for w in want) if out is None else outs


def _check_outs(name: str, out, want: tuple) -> None:
    """``out`` for a quantity of several results: a tuple of float64 C-contiguous writeable arrays of
    the shapes ``want``, sharing no memory; else the ValueError naming the first that does not fit."""
    fault = None
    if type(out) is not tuple or len(out) != len(want):
        fault = (f"out must be a tuple of {len(want)} arrays (one per result), got "
                 f"{type(out).__name__ if type(out) is not tuple else f'{len(out)} items'}")
    for k, (o, w) in enumerate(zip(out, want) if fault is None else ()):
        if type(o) is not np.ndarray:
            fault = f"out[{k}] is a {type(o).__name__}, not a plain numpy.ndarray"
        elif o.dtype != _F8:
            fault = f"out[{k}] has dtype {o.dtype}, not float64"
        elif not (o.flags.c_contiguous and o.flags.writeable):
            fault = f"out[{k}] is not C-contiguous and writeable"
        elif o.shape != w:
            fault = f"out[{k}] has shape {o.shape}, not the result's {w}"
        elif any(np.may_share_memory(o, p) for p in out[:k]):
            fault = f"out[{k}] shares memory with another out array"
        if fault:
            break
    if fault:
        raise _OutError(f"robot.fast.{name}: {fault}")


class _OutError(ValueError):
    """An out= that overlaps an input or, for several results, does not fit (raised as it is, not renamed
    as a shape error of the inputs)."""


def _one(name: str, lengths: tuple, arrays: dict, out, shapes: tuple, public: dict = _PUBLIC):
    """A single sample as a batch of one (see :func:`_batch`): (inputs (1, length), results (1,) + shape)."""
    if any(type(x) is not np.ndarray or x.ndim != 1 for x in arrays.values()) or not (
            out is None or type(out) is np.ndarray or len(shapes) > 1):
        raise _bad_call(name, lengths, arrays, out, public)
    if out is not None and len(shapes) > 1:
        _check_outs(name, out, shapes)  # named with the shapes of one sample
        out = tuple(o[None] for o in out)
    elif out is not None:
        out = out[None]
    try:
        return _batch(name, lengths, {k: x[None] for k, x in arrays.items()}, out, shapes, public)
    except _OutError:
        raise
    except ValueError:  # named with the arrays as given
        raise _bad_call(name, lengths, arrays, out, public) from None


def _result(results: tuple, single: bool, out):
    """What a method returns: ``out`` itself when given (the tuple for several results), else one
    sample's rows of the results or the results (a tuple for several)."""
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
    options = tuple(_option(name, o, given.get(o, default)) for o, default in q.options)
    number = smooth_width(given.get(q.number, 0.0) or 0.0) if q.number else None
    return args[:k], options, number


def _option(method: str, option: str, value) -> int:
    """An integer option of ``robot.fast.<method>``; ValueError naming it otherwise (a frame is its index in
    ``robot.frame_names``, a reference 0 for world axes and 1 for local ones)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    try:  # an integer (Python, NumPy); a float such as 1.9 is refused, never rounded
        return operator.index(value)
    except TypeError:
        pass
    hint = {"frame": ": the frame's index in robot.frame_names (robot.frame_names.index(name))",
            "local": ": 0 for world axes, 1 for local ones"}.get(option, "")
    raise ValueError(f"robot.fast.{method}: {option} must be an integer{hint}, got {value!r}")


class FastDynamics:
    """Compiled dynamics of one robot with checks of shapes only (see the module doc).

    Its methods are the declared quantities (:mod:`.quantities`; those in ``names``
    when given), ``rnea`` another name for ``inverse_dynamics``.  Each is, after its first
    look-up, the C caller (``_call.Caller``) of its quantity, with :meth:`_general` for that
    quantity (batches, and what the caller does not take) as its fallback, also reachable as
    ``_<method>``.  ``data``: the robot's packed arrays and this object's scratch
    (:class:`composedyn.dynamics.data.Data`; a robot has one per thread).  ``model``: the
    ``Model`` whose NumPy reference serves a sample the kernel refuses, or None (a floating
    robot on its tree): such a sample raises its named error.  ``name``: the robot's name
    (default ``model.name``).
    """

    def __init__(self, model, data, names: frozenset | None = None, name: str | None = None):
        if model is not None and model.n == 0:
            raise ValueError(f"robot.fast: robot {model.name!r} ({model.source}) has no moving joint, so there "
                             "is nothing to compute per joint; its Robot methods return the empty results")
        self.model = model
        self.name = model.name if name is None else name
        self.arrays = data.arrays  # the packed model arrays (read only)
        self.dims = model_dims(self.arrays.bodies[0])  # (nq, nv, bodies)
        self.n = self.dims[1]
        self.names = frozenset(quantities.DECLARED) if names is None else frozenset(names)
        self._data = data

    def __getattr__(self, name: str):
        method = name[1:] if name.startswith("_") else name
        key = ALIASES.get(method, method)
        q = quantities.DECLARED.get(key) if key in self.__dict__.get("names", ()) else None
        if q is None or method.startswith("_"):
            raise AttributeError(f"FastDynamics has no attribute {name!r}")
        q = for_tree(q, self.arrays.of(q)[0])  # the kernel of this tree's form
        general = functools.partial(self._general, q, method)
        public = _PUBLIC if self.model is not None else {}  # a floating robot's methods name them v, a
        general.__doc__ = (f"robot.fast.{method}: arrays {[public.get(i, i) for i, _ in q.inputs]} (length,) or "
                           "(N, length); out= optional" + (f" (a tuple of {len(q.results)} arrays)"
                                                           if len(q.results) > 1 else ""))
        if name.startswith("_"):
            return general
        call = caller(q, self.arrays.of(q), self._data.scratch_of(q), fallback=general, nan_fill=True)
        call.__doc__ = general.__doc__
        setattr(self, name, call)
        return call

    def __dir__(self):
        return sorted({*super().__dir__(), *self.names, *(a for a, k in ALIASES.items() if k in self.names)})

    def _general(self, q, name: str, *args, out=None, **kwargs):
        """Quantity ``q`` for one sample (as a batch of one) or a batch (N, length), through its
        batch loop (:func:`.declare.run`): NaN or inf in a sample gives NaN in its results; a
        sample the kernel refuses (a singular mass matrix, a zero quaternion) raises the
        reference's named error (:class:`ModelError` or ``ValueError``)."""
        arrays, options, number = _arguments(q, name, args, kwargs)
        lengths = tuple(q.size(length, self.dims) for _, length in q.inputs)
        single = type(arrays[0]) is not np.ndarray or arrays[0].ndim != 2  # else a batch; _one refuses the rest
        xs, results = (_one if single else _batch)(name, lengths, dict(zip((i for i, _ in q.inputs), arrays)), out,
                                                   tuple(q.shape(r, self.dims) for r in q.results),
                                                   _PUBLIC if self.model is not None else {})
        if self.model is not None:
            run(q, self.model, self.arrays.of(q), tuple(xs), options, number, results)
            return _result(results, single, out)
        results, status = run_batch(q, self.arrays.of(q), tuple(xs), options, number, results)
        for r in results:
            r[status == 2] = np.nan
        if np.any(status != 0) and not np.all((status == 0) | (status == 2)):
            raise _refusal(self.name, name, status)
        return _result(results, single, out)

    def warm_up(self, batch: bool = False) -> None:
        """Compile (or load from the disk cache) the single-sample entries now; ``batch=True`` also the loops."""
        for name in sorted(self.names):
            getattr(self, name)
        for name in sorted(self.names) if batch else ():
            q = quantities.DECLARED[name]
            warm(for_tree(q, self.arrays.of(q)[0]), self.arrays.of(q), 2)


def _refusal(robot: str, name: str, status: np.ndarray) -> ValueError:
    """The named error of the first sample (of a batch) the kernel of ``name`` refused."""
    k = int(np.nonzero((status != 0) & (status != 2))[0][0])
    at = f"robot.fast.{name} on robot {robot!r}, sample {k}"
    code = int(status[k])
    if code == 1:
        return ValueError(f"{at}: an option is out of range (a frame index past the last frame?)")
    if code == 3:
        return ModelError(f"{at}: the mass matrix is not positive definite")
    if code == 4:
        return ValueError(f"{at}: q holds a zero quaternion (or planar (cos, sin)); it has no orientation")
    return ModelError(f"{at}: undefined for this robot (status {code}: no mass)")


ALIASES = {"rnea": "inverse_dynamics"}  # method -> the quantity it is another name for
