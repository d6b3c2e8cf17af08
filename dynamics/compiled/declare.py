"""Declarations of compiled quantities, and the one mechanism that makes their routes from them.

An algorithm module declares each quantity once, next to its kernel, as data::

    INVERSE_DYNAMICS = Quantity("inverse_dynamics", inverse_dynamics,
                                inputs=(("q", "nq"), ("v", "nv"), ("a", "nv")),
                                options=(("friction", 1),), results=(("nv",),),
                                scratch=(("nv+1", SCRATCH),))

The kernel takes, in this order: the packed model arrays (``im``, then ``fm`` for
``model="bodies"`` or ``fx`` for ``model="frames"``), the input vectors, the extras
(per-joint arrays such as external wrenches, (0, columns) when absent), the integer
options, the number (when ``number`` names one: a smoothing width), the result arrays
and the scratch arrays; it returns a status: 0 done, 1 an option out of range, 3 a
singular mass matrix, 4 a zero quaternion, 5 undefined for this model (no mass); 2, NaN
or inf in an input, is tested here before the kernel runs.
It overwrites every scratch number it reads, so results never depend on an earlier
call.  Sizes are symbols of the model: ``"nv"`` (the velocity count), ``"nq"`` (the
configuration size), ``"nv+1"``, ``"4nv"``, ``"10n"`` (ten per body: the inertial parameters; n
bodies, which differs from nv when joints have several coordinates), or plain integers
(:func:`.layout.model_dims` reads nq, nv and n from ``im``).

From a declaration this module makes, by generating their few lines of source:

* :func:`entry` -- the checked single-sample C function (``numba.cfunc``): finite
  inputs, then the kernel on the caller's scratch; compiled once per process (and
  kept in the package's disk cache); a second one takes the extras as more input
  vectors (:func:`takes_extras`);
* :func:`caller` -- that function's C caller (``_call.Caller``) over given model and
  scratch arrays (those of a robot's :class:`composedyn.dynamics.data.Data`): checks
  types and shapes in C and writes into a new array or ``out=``;
* :func:`loops` -- the batch loops, serial and parallel (``prange`` over blocks of
  samples, one set of scratch arrays per block): inputs (N, length), results
  (N, shape...), a status (N,) per sample (2 where an input is not finite);
  :func:`run_batch` calls one.
"""

from __future__ import annotations

import functools
import linecache
import os
import time
from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.compiled.finite import all_finite
from composedyn.dynamics.compiled.jit import cfunc, njit, prange, readonly
from composedyn.dynamics.compiled.layout import BLOCKS, FORM, IM_COLUMNS, IQ, IV, JTYPE, NCOL, NQ, NV, model_dims
from composedyn.dynamics.compiled.parallel import use_parallel
from composedyn.dynamics.joint_types import TreeForm, rigid_root

try:
    from composedyn.dynamics.compiled._call import Caller
except ImportError as exc:  # part of the package, built by pip install; no slower substitute
    raise ImportError(f"composedyn's C extension composedyn.dynamics.compiled._call is not built ({exc}): "
                      "install composedyn with pip (pip install .), which compiles it; a C compiler and "
                      "Python's headers are needed") from None

COMPILE_SECONDS: dict = {}  # entry or loop name -> seconds its compilation (or cache load) took
GENERATED: dict = {}  # loop name -> its numba dispatcher (their ``stats`` count cache loads and compilations)
GENERAL = int(TreeForm.GENERAL)
ON = np.ones(1, dtype=np.int64)  # the switch of callers that are always on (robot.fast)
ON.flags.writeable = False


@dataclass(frozen=True, eq=False)
class Quantity:
    """One compiled quantity: its kernel and what the kernel takes and gives (module docstring).

    ``inputs``: (name, length) per input vector; ``extras``: (name, columns) per optional
    per-joint array (nv, columns) the kernel takes after the inputs ((0, columns) when
    absent: external wrenches; a second entry takes them, :func:`takes_extras`); ``options``: (name, default)
    per integer option; ``number``: the keyword of the one float argument, or None;
    ``results`` and ``scratch``: shapes; ``model``: ``"bodies"`` or ``"frames"``;
    ``fastmath``: compile the entry with numba's fastmath (as the kernel is);
    ``reference``: the NumPy reference, called as ``reference(model, *inputs, *extras,
    *options[, number])`` on (..., length) inputs (None for an extra that is absent),
    returning the result (a tuple for several); ``fallback``: the same for the samples the
    kernel refuses (status 3 and above; None: ``reference``), which it raises the named
    error for or computes; ``general``: the declaration (same inputs, options and results) whose
    kernel takes the trees of :attr:`composedyn.dynamics.joint_types.TreeForm.GENERAL` in this one's
    place (:func:`for_tree`), or None: this kernel takes every tree.  Compared and hashed by identity.
    """

    name: str
    kernel: object
    inputs: tuple
    results: tuple
    options: tuple = ()
    number: str | None = None
    scratch: tuple = ()
    model: str = "bodies"
    fastmath: bool = False
    extras: tuple = ()
    reference: object = None
    fallback: object = None
    general: Quantity | None = None

    def size(self, symbol, dims: tuple) -> int:
        """The length a size symbol (module docstring) stands for in a model of ``dims`` = (nq, nv, n)
        (coordinates and bodies, :func:`.layout.model_dims`)."""
        if isinstance(symbol, int):
            return symbol
        nq, nv, n = dims
        return {"nv": nv, "nq": nq, "nv+1": nv + 1, "4nv": 4 * nv, "10n": 10 * n}[symbol]

    def shape(self, symbols: tuple, dims: tuple) -> tuple:
        return tuple(self.size(s, dims) for s in symbols)


def for_tree(q: Quantity, im: np.ndarray) -> Quantity:
    """The declaration whose kernel takes the tree packed as ``im``: ``q``, or ``q.general`` when ``q``
    has one and the tree's form (:data:`.layout.FORM`) is ``TreeForm.GENERAL``, unless its joints are a
    rigid root and one-coordinate joints (:func:`composedyn.dynamics.joint_types.rigid_root`: a planar
    or spherical root, whose own form ``q``'s kernels have)."""
    if q.general is None or not im.shape[0] or im[0, FORM] != GENERAL or rigid_root(im[:, JTYPE]):
        return q
    return q.general


def signature():
    """The numba signature of every C entry: int64 (void **p, int64 *d, int64 *o, double s)."""
    from numba import types as nb

    return nb.int64(nb.CPointer(nb.voidptr), nb.CPointer(nb.int64), nb.CPointer(nb.int64), nb.float64)


MAX_ARRAYS = 4  # input vectors a C caller takes at most (MAXA in _call.c)


def takes_extras(q: Quantity) -> bool:
    """Whether ``q`` has an entry with its extras (:func:`entry`): it has extras, and its inputs and
    extras fit the C caller's vectors."""
    return bool(q.extras) and len(q.inputs) + len(q.extras) <= MAX_ARRAYS


def _entry_source(q: Quantity, name: str, extras: bool = False) -> str:
    """Source of the C function of ``q`` (see the module docstring and ``_call.c`` for p, d, o, s);
    ``extras``: each extra (bodies, columns) is one more input vector, its rows one after the other."""
    lines = [f"def {name}(p, d, o, s):",
             f"    m0 = readonly(carray(p[0], (d[0], {IM_COLUMNS}), np.int64))",
             f"    m1 = readonly(carray(p[1], (d[1], {NCOL}), np.float64))"]
    k, j = 2, 2  # the first pointer and dimension after the model arrays
    scratch, inputs, results = [], [], []
    for i, shape in enumerate(q.scratch):
        dims = f"(d[{j}], d[{j + 1}])" if len(shape) == 2 else f"(d[{j}],)"
        lines.append(f"    w{i} = carray(p[{k}], {dims}, np.float64)")
        scratch.append(f"w{i}")
        k, j = k + 1, j + 2
    given = []  # the extras as (bodies, columns) views of their input vectors
    for i in range(len(q.inputs) + (len(q.extras) if extras else 0)):
        lines.append(f"    x{i} = carray(p[{k}], (d[{j}],), np.float64)")
        if i < len(q.inputs):
            inputs.append(f"x{i}")
        else:
            columns = q.extras[i - len(q.inputs)][1]
            given.append(f"readonly(x{i}.reshape((d[{j}] // {columns}, {columns})))")
        k, j = k + 1, j + 1
    lines.append(f"    if not ({' and '.join(f'all_finite(x{i})' for i in range(len(inputs) + len(given)))}):")
    lines.append("        return 2")
    inputs += given or [f"E{i}" for i in range(len(q.extras))]  # absent: the read-only (0, columns) constants
    for i, shape in enumerate(q.results):
        dims = f"(d[{j}], d[{j + 1}])" if len(shape) == 2 else f"(d[{j}],)"
        lines.append(f"    r{i} = carray(p[{k}], {dims}, np.float64)")
        results.append(f"r{i}")
        k, j = k + 1, j + 2
    args = ["m0", "m1"] + inputs + [f"o[{i}]" for i in range(len(q.options))]
    args += ["s"] * (q.number is not None) + results + scratch
    lines.append(f"    return kernel({', '.join(args)})")
    return "\n".join(lines) + "\n"


def generated(source: str, name: str, q: Quantity) -> object:
    """The function ``name`` defined by ``source``, calling the kernel of ``q``; its file is named
    inside this package (so that the package's disk cache keeps its machine code) and registered
    with ``linecache`` (tracebacks show the generated lines)."""
    from numba import carray

    from composedyn.dynamics.compiled.cache import PACKAGE_DIR

    filename = os.path.join(PACKAGE_DIR, f"generated_{name}")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"__name__": __name__, "np": np, "carray": carray, "readonly": readonly, "all_finite": all_finite,
             "kernel": q.kernel, "prange": prange, "BLOCKS": BLOCKS, "IQ": IQ, "NQ": NQ, "IV": IV, "NV": NV}
    for i, (_, columns) in enumerate(q.extras):
        scope[f"E{i}"] = absent = np.empty((0, columns))
        absent.flags.writeable = False
    exec(compile(source, filename, "exec"), scope)
    return scope[name]


def caller(q: Quantity, model: tuple, scratch: tuple, switch: np.ndarray = ON, fallback=None,
           nan_fill: bool = False, extras: bool = False) -> Caller:
    """A C caller of ``q`` over the packed ``model`` arrays and ``scratch`` arrays (see ``_call.c``):
    ``fallback`` gets the arguments it does not take (None: it returns None); ``nan_fill``: NaN or
    inf in an input gives all-NaN results; ``switch``: int64 (1,), declines while it reads 0;
    ``extras``: the entry with the extras (:func:`takes_extras`), each passed after the inputs as
    one vector of (bodies x columns) numbers, C order."""
    n = model_dims(model[0])
    lengths = tuple(q.size(length, n) for _, length in q.inputs)
    lengths += tuple(n[2] * columns for _, columns in q.extras) if extras else ()
    return Caller(entry(q, extras).address, model, scratch, lengths,
                  tuple((q.shape(r, n) + (0,))[:2] for r in q.results), tuple(name for name, _ in q.options),
                  tuple(default for _, default in q.options), q.number, nan_fill, switch, fallback)


@functools.cache
def entry(q: Quantity, extras: bool = False):
    """The C function of ``q`` (compiled now or loaded from the disk cache; once per process);
    ``extras``: the one that takes the extras as input vectors (:func:`caller`).  The returned
    numba ``CFunc`` owns the machine code: it stays referenced here."""
    name = q.name + ("_entry_with_extras" if extras else "_entry")
    t0 = time.perf_counter()
    f = cfunc(signature(), cache=True, fastmath=q.fastmath)(generated(_entry_source(q, name, extras), name, q))
    COMPILE_SECONDS[name] = time.perf_counter() - t0
    return f


def _dim(q: Quantity, symbol) -> str:
    """A size symbol as an expression of the loop's ``nq``, ``nv`` and ``n`` (bodies)."""
    if isinstance(symbol, int):
        return str(symbol)
    return {"nv": "nv", "nq": "nq", "nv+1": "nv + 1", "4nv": "4 * nv", "10n": "10 * n"}[symbol]


def _loop_source(q: Quantity, name: str) -> str:
    """Source of the batch loop of ``q`` (see :func:`loops`)."""
    model = ["m0", "m1"]
    inputs = [f"X{i}" for i in range(len(q.inputs))]
    extras = [f"Y{i}" for i in range(len(q.extras))]  # (N, n, columns), or (0, n, columns): absent
    options = [f"o{i}" for i in range(len(q.options))] + ["s"] * (q.number is not None)
    results = [f"R{i}" for i in range(len(q.results))]
    scratch = [f"w{i}" for i in range(len(q.scratch))]
    held = [f"readonly({m})" for m in model]  # one type for the kernels, whoever calls (jit.readonly)
    lines = [f"def {name}({', '.join(model + inputs + extras + options + results)}, STATUS):",
             "    N, n = X0.shape[0], m0.shape[0]",
             "    nq = m0[n - 1, IQ] + m0[n - 1, NQ] if n else 0",
             "    nv = m0[n - 1, IV] + m0[n - 1, NV] if n else 0",
             "    blocks = min(N, BLOCKS)",
             "    for b in prange(blocks):"]
    for w, shape in zip(scratch, q.scratch):
        lines.append(f"        {w} = np.empty(({', '.join(_dim(q, d) for d in shape)},))")
    for y, (_, columns) in zip(extras, q.extras):
        lines.append(f"        {y.lower()} = np.empty((0, {columns}))")
    lines += ["        for k in range(b * N // blocks, (b + 1) * N // blocks):",
              f"            if not ({' and '.join(f'all_finite({x}[k])' for x in inputs)}):",
              "                STATUS[k] = 2",
              "                continue",
              f"            STATUS[k] = kernel({', '.join(held + [x + '[k]' for x in inputs])}, "
              f"{''.join(f'readonly({y}[k] if {y}.shape[0] else {y.lower()}), ' for y in extras)}"
              f"{''.join(o + ', ' for o in options)}"
              f"{', '.join([r + '[k]' for r in results] + scratch)})"]
    return "\n".join(lines) + "\n"


@functools.cache
def loops(q: Quantity) -> tuple:
    """(serial, parallel) batch loops of ``q``, compiled on first call and kept in the disk cache.
    Arguments: the model arrays, the inputs (N, length), the extras (N, nv, columns) or (0, nv,
    columns), the options, the number, the results (N, shape...), the status (N,) int64
    (written for every sample)."""
    base = q.name + "_loop"
    made = []
    for suffix, parallel in (("_serial", False), ("_parallel", True)):
        name = base + suffix
        f = generated(_loop_source(q, name), name, q)
        made.append(njit(cache=True, parallel=parallel, fastmath=q.fastmath)(f) if parallel else
                    njit(cache=True, fastmath=q.fastmath)(f))
        GENERATED[name] = made[-1]
    return tuple(made)


def run_batch(q: Quantity, model: tuple, inputs: tuple, options: tuple = (), number: float | None = None,
              results: tuple | None = None, extras: tuple = (), parallel: bool | None = None) -> tuple:
    """Run the batch loop of ``q`` (serial or parallel by :func:`.parallel.use_parallel`, one
    sample serial; ``parallel``: that copy) on the inputs (N, length), each float64 C-contiguous of its declared length,
    and the ``extras`` (N, nv, columns) or None (absent); returns (results, status): the results
    (N, shape...) (new, or ``results`` as given), status (N,) int64 per sample (0 done, 2 NaN or
    inf in, else the kernel's).  A loop's first call is timed into :data:`COMPILE_SECONDS`."""
    n, N = model_dims(model[0]), inputs[0].shape[0]
    plan = _PLANS.get((q, n)) or _plan(q, n)
    if results is None:
        results = tuple([np.empty((N,) + shape) for shape in plan[0]])
    status = np.empty(N, dtype=np.int64)
    if q.extras:
        extras = tuple([a if e is None else e for e, a in zip(extras or plan[1], plan[1])])
    number = (float(number or 0.0),) if q.number is not None else ()
    if parallel is None:
        parallel = None if N == 1 else use_parallel(N * n[1])
    loop = plan[2] if parallel is None else loops(q)[parallel]
    if loop in _TIMED:
        loop(*model, *inputs, *extras, *options, *number, *results, status)
        return results, status
    t0 = time.perf_counter()
    loop(*model, *inputs, *extras, *options, *number, *results, status)
    COMPILE_SECONDS.setdefault(loop.py_func.__name__, time.perf_counter() - t0)
    _TIMED.add(loop)
    return results, status


def run(q: Quantity, model, arrays: tuple, inputs: tuple, options: tuple = (), number: float | None = None,
        results: tuple | None = None, extras: tuple = (), refuse: bool = False) -> tuple | None:
    """Quantity ``q`` of ``model`` (the ``Model``; ``arrays`` its packed arrays) through
    :func:`run_batch`, and what the loop leaves to Python: NaN or inf in a sample gives NaN in
    its results, a sample the kernel refuses (status 3 and above: a singular mass matrix, no
    mass) goes to the declaration's fallback (which raises its named error, or solves), an
    option out of range raises ValueError.  Returns the results (N, shape...); ``refuse``:
    None instead when any sample was not computed (the caller names the input)."""
    results, status = run_batch(q, arrays, inputs, options, number, results, extras)
    if not np.count_nonzero(status):
        return results
    if refuse:
        return None
    for r in results:
        r[status == 2] = np.nan
    if np.any(status > 2):
        b = np.nonzero(status > 2)[0]
        got = (q.fallback or q.reference)(model, *(x[b] for x in inputs),
                                          *(None if e is None else e[b] for e in extras or (None,) * len(q.extras)),
                                          *options, *((number,) if q.number else ()))
        for r, g in zip(results, got if len(results) > 1 else (got,)):
            r[b] = g
    if np.any(status == 1):
        raise ValueError(f"{q.name}: an option is out of range ({dict(zip((o for o, _ in q.options), options))})")
    return results


def warm(q: Quantity, model: tuple, samples: int = 1, parallel: bool | None = None) -> None:
    """Compile (or load from the disk cache) the batch loop of ``q`` that ``samples`` samples take
    (``parallel``: that copy) by running it on zeros, with the default options."""
    n = model_dims(model[0])
    run_batch(q, model, tuple(np.zeros((samples, q.size(length, n))) for _, length in q.inputs),
              tuple(d for _, d in q.options), parallel=parallel)


def _plan(q: Quantity, n: tuple) -> tuple:
    """What :func:`run_batch` needs of ``q`` on a model of ``n`` = (nq, nv, bodies), made once:
    (the result shapes, the absent extras as the loops take them ((0, nv, columns), writeable as a
    given one is: one compiled type; never written), the serial loop)."""
    plan = _PLANS[q, n] = (tuple(q.shape(r, n) for r in q.results),
                           tuple(np.empty((0, n[1], columns)) for _, columns in q.extras), loops(q)[0])
    return plan


_PLANS: dict = {}  # (declaration, (nq, nv, bodies)) -> _plan(...)
_TIMED: set = set()  # the loops whose first call was timed
