"""The general path of the declared quantities: batches, and what the C callers decline.

A ``Robot`` method first tries its quantity's C caller (:mod:`composedyn.dynamics.data`,
made from the quantity's declaration, :mod:`composedyn.dynamics.compiled.declare`); for
anything else (batches, lists, NaN, external wrenches, mimic joints) it calls
:func:`call` with the quantity's name.  :func:`call` is the one general route, derived
from the declaration alone:

* backend ``"numpy"`` (chosen with the environment variable ``COMPOSEDYN_BACKEND=numpy``,
  read at import, or :func:`set_backend`), or a model without moving joints: the
  declaration's NumPy reference;
* backend ``"numba"`` (the default): the inputs broadcast over their leading batch axes and
  run through the declaration's compiled batch loop (one sample as a batch of one), spread
  over the CPU cores (``numba.prange``) when samples x joints >=
  :data:`composedyn.dynamics.compiled.parallel.PARALLEL_WORK`; a sample with NaN or inf
  gives NaN, one whose mass matrix is not positive definite goes to the reference (which
  raises the ``ModelError`` naming the joints, or solves at the edge).

numba is imported on the first call, never at ``import composedyn``; each kernel is compiled
on its first call and cached on disk, so a later process only loads it
(:func:`compile_times` reports the seconds each first call took).  numba is a required
dependency: if it does not import, the first compiled call raises ``ImportError`` saying
so (no silent fallback to the slow path).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from composedyn.dynamics.compiled.layout import Arrays, model_dims, packed

_state = {"backend": os.environ.get("COMPOSEDYN_BACKEND", "auto").strip().lower() or "auto"}

# Read by every C caller (composedyn.dynamics.data) before it calls its entry: 0 under the NumPy backend
SWITCH = np.array([_state["backend"] != "numpy"], dtype=np.int64)


def set_backend(name: str) -> None:
    """Use ``"numba"`` (``"auto"`` is the same) or ``"numpy"`` from now on."""
    if name not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {name!r}")
    _state["backend"] = name
    _state.pop("resolved", None)
    SWITCH[0] = name != "numpy"


def backend() -> str:
    """The backend in effect: ``"numba"`` or ``"numpy"`` (imports numba if needed; ImportError,
    one line, if it does not import and the NumPy backend was not chosen)."""
    b = _state.get("resolved")
    if b is None:  # resolved once per set_backend()
        b = _state["backend"]
        if b not in ("auto", "numba", "numpy"):
            raise ValueError(f"COMPOSEDYN_BACKEND must be 'auto', 'numba' or 'numpy', got {b!r}")
        if b != "numpy":  # numba is required: a failed import raises one line saying what to do
            from composedyn.dynamics.compiled import jit

            if jit.MISSING is not None:
                raise jit.MISSING
            b = "numba"
        _state["resolved"] = b
    return b


def compile_times() -> dict:
    """Seconds taken by the first call of each compiled entry and batch loop in this process
    (compilation, or loading from the on-disk cache), by name."""
    declare = sys.modules.get("composedyn.dynamics.compiled.declare")
    return {} if declare is None else dict(declare.COMPILE_SECONDS)


def reference(model) -> bool:
    """Whether ``model`` is computed by the NumPy references (backend "numpy", or no moving joint)."""
    return not model.joint_names or backend() == "numpy"


def quantity(name: str):
    """The declaration of quantity ``name`` (:mod:`composedyn.dynamics.compiled.quantities`)."""
    q = _declared.get(name)
    if q is None:
        from composedyn.dynamics.compiled import quantities

        q = _declared[name] = quantities.DECLARED[name]
    return q


_declared: dict = {}  # name -> declaration, looked up once


def deliver(result, out):
    """``result`` (an array, or a tuple of them), copied into ``out`` (the same) when the caller gave one."""
    if out is None:
        return result
    if isinstance(out, tuple):
        for o, r in zip(out, result):
            o[...] = r
        return out
    out[...] = result
    return out


def _rows(x: np.ndarray, shape: tuple) -> np.ndarray:
    """The float64 array x broadcast to ``shape`` as a C-contiguous (N, last axis) array (new unless
    x already is one: native byte order, aligned, writeable, as the loops take it)."""
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    f = x.flags
    if not (f.c_contiguous and f.aligned and f.writeable and x.dtype.isnative):
        x = np.array(x, float, order="C")
    return x.reshape((-1,) + shape[-1:])


def _integer(value) -> int:
    """An option as the kernels take it: an integer as it is, anything else (a flag) by its truth value."""
    return value if type(value) is int else int(value) if isinstance(value, (int, np.integer)) else int(bool(value))


def call(name: str, model, arrays: Arrays | None, *inputs, out: np.ndarray | tuple | None = None,
         data=None, refuse: bool = False, **arguments):
    """The declared quantity ``name`` of ``model`` at the inputs (..., length), broadcast over
    their leading axes: the NumPy reference or the compiled batch loop (module docstring).

    ``model``: the ``Model`` (None: a tree of joint models, which has no NumPy reference: the
    compiled loop with ``refuse``); ``arrays``: the robot's packed model arrays
    (:func:`.compiled.layout.packed`, made once per robot; None packs them for this call);
    ``arguments``: the declaration's options (ints; a flag may be any truth value), its number
    and its extras ((..., nv, columns) arrays, or None) by keyword, defaults for the rest;
    ``out``: C-contiguous float64 of the result's shape (one result; several: a tuple, one per
    result), written and returned.
    Returns the result, a tuple for several; ``refuse``: None instead of the declaration's
    fallback for a sample the loop refuses (the caller names the input); ``data``: this
    thread's :class:`composedyn.dynamics.data.Data` over ``arrays``, whose C caller serves one
    sample of vectors without extras (what it declines takes the batch loop).
    """
    q = _declared.get(name) or quantity(name)
    extras = tuple([arguments.pop(e, None) for e, _ in q.extras]) if q.extras else ()
    several = type(out) is tuple  # the C caller writes one result: it serves these calls with a new one
    if data is not None and not several and not any([e is not None for e in extras]):  # the C caller: options
        res = data[name](*inputs, **arguments) if out is None else data[name](*inputs, out=out, **arguments)
        if res is not None:  # None: declined (a list, NaN or inf, a refused sample, the NumPy backend...)
            return res
    if arguments:
        options = tuple([_integer(arguments.pop(o, d)) for o, d in q.options])
        number = arguments.pop(q.number, None) if q.number else None
        if arguments:
            raise TypeError(f"{name}: unexpected arguments {sorted(arguments)}")
    else:
        options, number = tuple(d for _, d in q.options), None
    if model is not None and reference(model):
        return deliver(q.reference(model, *inputs, *extras, *options, *((number,) if q.number else ())), out)
    inputs = [np.asarray(x, float) for x in inputs]
    single = all([x.ndim == 1 for x in inputs])
    if single and data is not None and not several and not any([e is not None for e in extras]):  # converted
        res = data[name](*inputs, *((float(number or 0.0),) if q.number else ()), *options,
                         **({} if out is None else {"out": out}))
        if res is not None:
            return res
    model_arrays = (arrays or packed(model)).of(q)
    if q.general is not None:  # the kernel of this tree's form
        from composedyn.dynamics.compiled.declare import for_tree

        q = for_tree(q, model_arrays[0])
    n, dims = model_arrays[0].shape[0], model_dims(model_arrays[0])  # bodies; (nq, nv, bodies)
    extras = [None if e is None else np.asarray(e, float) for e in extras]
    lengths, shapes = _sizes.get((q, dims)) or _size(q, dims)
    if single and all([e is None or e.shape[:-1] == (n,) for e in extras]):  # one sample: a batch of one
        lead = ()  # (a view where the array is as the loops take it: C-contiguous, aligned, writeable)
        rows = tuple([x[None] if x.flags.carray else np.array(x, float, ndmin=2) for x in inputs])
        ext = tuple([None if e is None else e[None] if e.flags.carray else np.array(e, float, ndmin=3)
                     for e in extras])
    else:
        lead = np.broadcast_shapes(*(x.shape[:-1] for x in inputs), *(e.shape[:-2] for e in extras if e is not None))
        rows = tuple(_rows(x, lead + x.shape[-1:]) for x in inputs)
        ext = tuple(None if e is None else _rows(e, lead + (n, e.shape[-1])).reshape(-1, n, e.shape[-1])
                    for e in extras)
    if tuple([x.shape[-1] for x in rows]) != lengths:  # the loops read this many numbers per sample
        label, length, got = next((label, m, x.shape[-1]) for (label, _), m, x in zip(q.inputs, lengths, rows)
                                  if x.shape[-1] != m)
        raise ValueError(f"{name}: {label} must have {length} entries per sample, got {got}")
    N = rows[0].shape[0]
    results = tuple([np.empty((N,) + s) for s in shapes]) if out is None else \
        tuple([o.reshape((N,) + s) for o, s in zip(out, shapes)]) if several else (out.reshape((N,) + shapes[0]),)
    if _runner()(q, model, model_arrays, rows, options, number, results, ext, refuse) is None:
        return None  # the floating robot's general path names the input it refuses
    if out is not None:
        return out
    if not lead:
        return tuple(r[0] for r in results) if len(results) > 1 else results[0][0]
    shaped = tuple(r.reshape(lead + s) for r, s in zip(results, shapes))
    return shaped if len(shaped) > 1 else shaped[0]


def _size(q, n: tuple) -> tuple:
    """(input lengths, result shapes) of declaration ``q`` on a model of ``n`` = (nq, nv, bodies) (kept)."""
    got = _sizes[q, n] = tuple(q.size(length, n) for _, length in q.inputs), tuple(q.shape(r, n) for r in q.results)
    return got


_sizes: dict = {}  # (declaration, (nq, nv, bodies)) -> _size(...)


def _runner():
    """:func:`composedyn.dynamics.compiled.declare.run` (imported on first use: numba)."""
    from composedyn.dynamics.compiled.declare import run

    globals()["_runner"] = lambda: run
    return run


def warm_up(model, batch: bool = False, entries_too: bool = True, parallel: bool = False) -> dict:
    """Compile (or load from the disk cache) what a controller calls (every fixed-base declared
    quantity's batch loop, on one sample; ``entries_too``: their C functions too, which the
    ``Robot`` methods' C callers run); ``batch=True`` also the loops on batches; ``parallel``
    their parallel copies too (where this thread may run them).  Returns :func:`compile_times`."""
    if reference(model):
        return {}
    from composedyn.dynamics.compiled import declare, quantities
    from composedyn.dynamics.compiled.parallel import parallel_safe

    arrays = packed(model)
    for q in quantities.DECLARED.values():
        q = declare.for_tree(q, arrays.of(q)[0])
        if entries_too:
            declare.entry(q)
            if declare.takes_extras(q):  # the one taking external wrenches
                declare.entry(q, True)
        for samples in (1, 2) if batch else (1,):
            declare.warm(q, arrays.of(q), samples)
        if parallel and parallel_safe():
            declare.warm(q, arrays.of(q), 2, parallel=True)
    return compile_times()
