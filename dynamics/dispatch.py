"""Choose the compiled (numba) or the NumPy implementation of each dynamics function.

The functions here have the signatures of the NumPy reference functions
(:func:`composedyn.dynamics.rnea.rnea`, ``crba.crba``,
``coriolis.coriolis_matrix``, ``forward.solve_mass``), so the ``Robot`` facade
imports them instead.  Backend:

* ``"numba"`` (the default, ``"auto"``): kernels of
  :mod:`composedyn.dynamics.compiled`.  numba is imported on the first call,
  never at ``import composedyn``.  Each kernel is compiled on its first call
  and cached on disk (``__pycache__``), so a later process only loads it;
  :func:`compile_times` reports the seconds each first call took.
* ``"numpy"``: the reference implementation (also used for robots without
  moving joints, n = 0).  Select it with the environment
  variable ``COMPOSEDYN_BACKEND=numpy`` (read at import) or
  :func:`set_backend`.

Batches (leading axes) run one compiled loop over the samples, spread over
the CPU cores (``numba.prange``) when samples x joints >=
:data:`composedyn.dynamics.compiled.parallel.PARALLEL_WORK`.
On idle cores this halves the time of a 10,000-sample UR5 batch on 2 cores;
when other processes hold the cores, starting the threads can cost
milliseconds instead of ~10 µs, so small batches stay serial (``bench/speed.py``).
"""

from __future__ import annotations

import logging
import os
import time
import weakref

import numpy as np

from composedyn.dynamics import coriolis as _np_coriolis
from composedyn.dynamics import crba as _np_crba
from composedyn.dynamics import forward as _np_forward
from composedyn.dynamics import rnea as _np_rnea
from composedyn.dynamics.compiled.layout import NO_FW3, pack
from composedyn.dynamics.compiled.layout import NO_FW as _NONE_FW
from composedyn.dynamics.compiled.parallel import use_parallel

_state = {"backend": os.environ.get("COMPOSEDYN_BACKEND", "auto").strip().lower() or "auto"}
_kernels: dict = {}
_compile_s: dict = {}
_packs: dict = {}


def set_backend(name: str) -> None:
    """Use ``"numba"``, ``"numpy"`` or ``"auto"`` (= ``"numba"``) from now on."""
    if name not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {name!r}")
    _state["backend"] = name
    _state.pop("resolved", None)
    _state.pop("numpy", None)
    entries.reset()


def backend() -> str:
    """The backend in effect: ``"numba"`` or ``"numpy"`` (imports numba if needed; ImportError,
    one line, if it does not import and the NumPy backend was not chosen)."""
    b = _state.get("resolved")
    if b is None:  # resolved once per set_backend(); the dynamics functions test _state["numpy"]
        b = _state["backend"]
        if b not in ("auto", "numba", "numpy"):
            raise ValueError(f"COMPOSEDYN_BACKEND must be 'auto', 'numba' or 'numpy', got {b!r}")
        if b != "numpy":  # numba is required: a failed import raises one line saying what to do
            from composedyn.dynamics.compiled import jit  # noqa: F401
            b = "numba"
        _state["resolved"], _state["numpy"] = b, b == "numpy"
    return b


def compile_times() -> dict:
    """Seconds taken by the first call of each compiled kernel in this process
    (compilation, or loading from the on-disk cache)."""
    return dict(_compile_s)


def _kernel(name: str):
    """The compiled kernel ``name``; the first call of each is timed into compile_times()."""
    k = _kernels.get(name)
    if k is None:
        from composedyn.dynamics.compiled import aba, coriolis, crba, forward, gravity, rnea

        real = {
            "rnea_one": rnea.rnea_one, "rnea_serial": rnea.rnea_serial, "rnea_parallel": rnea.rnea_parallel,
            "crba_one": crba.crba_one, "crba_serial": crba.crba_serial, "crba_parallel": crba.crba_parallel,
            "coriolis_one": coriolis.coriolis_one, "coriolis_serial": coriolis.coriolis_serial,
            "coriolis_parallel": coriolis.coriolis_parallel, "aba_one": aba.aba_one,
            "aba_serial": aba.aba_serial, "aba_parallel": aba.aba_parallel,
            "solve_serial": forward.solve_serial, "cholesky_solve": forward.cholesky_solve,
            "gravity_one": gravity.gravity_one, "gravity_serial": gravity.gravity_serial,
            "gravity_parallel": gravity.gravity_parallel,
        }[name]

        def first_call(*args):
            t0 = time.perf_counter()
            result = real(*args)
            _compile_s[name] = time.perf_counter() - t0
            _kernels[name] = real
            logging.getLogger(__name__).info("kernel %s: first call %.2f s (compilation or cache load)",
                                             name, _compile_s[name])
            return result

        k = _kernels[name] = first_call
    return k


class _Entries:
    """The checked entries of :mod:`composedyn.dynamics.compiled.entry` as attributes.

    Each attribute starts as a stub: its first call compiles the entry (or loads
    it from the disk cache), times that into :func:`compile_times`, puts the
    compiled entry in its place and calls it.  Under the NumPy backend a stub
    returns 4 (entry not used) and stays.  ``set_backend`` resets the stubs.
    """

    NAMES = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "gravity_torques", "bias_torques",
             "forward_dynamics", "inverse_dynamics_rigid", "forward_dynamics_rigid")

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        for name in self.NAMES:
            setattr(self, name, self._stub(name))

    def _stub(self, name: str):
        def first_call(*args):
            if backend() == "numpy":
                return 4
            from composedyn.dynamics.compiled import entry

            t0 = time.perf_counter()
            k = entry.compiled(name)
            _compile_s["entry_" + name] = time.perf_counter() - t0
            setattr(self, name, k)
            return k(*args)
        return first_call


entries = _Entries()


def packed(model) -> tuple[np.ndarray, np.ndarray]:
    """The kernel arrays ``(im, fm)`` of ``model``, built once per model (see ``compiled.layout``)."""
    p = _packs.get(id(model))
    if p is None:
        p = _packs[id(model)] = pack(model)
        weakref.finalize(model, _packs.pop, id(model), None)
    return p


def _rows(x: np.ndarray, shape: tuple, n: int) -> np.ndarray:
    """x broadcast to ``shape`` as a writeable C-contiguous (N, n...) array."""
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    x = np.ascontiguousarray(x)
    if not x.flags.writeable:
        x = x.copy()
    return x.reshape((-1,) + shape[len(shape) - n:])


def _loop(name: str, Q: np.ndarray):
    """The serial or parallel loop kernel for samples Q (N, n), see :func:`use_parallel`."""
    return _kernel(f"{name}_parallel" if use_parallel(Q.shape[0] * Q.shape[1]) else f"{name}_serial")


def rnea(model, q, qd, qdd, f_world=None, gravity: bool = True, armature: bool = False,
         friction: bool = False) -> np.ndarray:
    """Rigid-body inverse dynamics; same contract as :func:`composedyn.dynamics.rnea.rnea`.

    ``armature=True`` adds armature * qdd and ``friction=True`` adds damping * qd +
    friction * sgn(qd) (:func:`composedyn.dynamics.friction.friction_torques`) inside the
    kernel: with both, the ``Robot``'s inverse dynamics in one call.
    """
    extra = (1 if armature else 0) + (2 if friction else 0)
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        tau = _np_rnea.rnea(model, q, qd, qdd, f_world=f_world, gravity=gravity)
        if armature:
            tau = tau + model.armature * np.asarray(qdd, float)
        if friction:
            from composedyn.dynamics.friction import friction_torques

            tau = tau + friction_torques(model, qd)
        return tau
    im, fm = _packs.get(id(model)) or packed(model)
    q, qd, qdd = np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float)
    fw = _NONE_FW if f_world is None else np.asarray(f_world, float)
    if q.ndim == 1 and q.shape == qd.shape == qdd.shape and fw.ndim == 2:
        out = np.empty(q.shape[0])
        (_kernels.get("rnea_one") or _kernel("rnea_one"))(im, fm, q, qd, qdd, fw, 1 if gravity else 0, extra, out)
        return out
    n = model.n
    shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape, fw.shape[:-2] + (n,) if f_world is not None else ())
    Q, QD, QDD = (_rows(x, shape, 1) for x in (q, qd, qdd))
    FW = _rows(fw, shape + (6,), 2) if f_world is not None else NO_FW3
    out = np.empty(Q.shape)
    _loop("rnea", Q)(im, fm, Q, QD, QDD, FW, int(gravity), extra, out)
    return out.reshape(shape)


def gravity(model, q) -> np.ndarray:
    """Gravity torques g(q) (..., n): ``rnea(model, q, 0, 0)``, by the compiled gravity
    kernel (:mod:`composedyn.dynamics.compiled.gravity`) or the NumPy RNEA."""
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        z = np.zeros(np.shape(q))
        return _np_rnea.rnea(model, q, z, z)
    im, fm = _packs.get(id(model)) or packed(model)
    q = np.asarray(q, float)
    if q.ndim == 1:
        out = np.empty(q.shape[0])
        (_kernels.get("gravity_one") or _kernel("gravity_one"))(im, fm, q, out)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty(Q.shape)
    _loop("gravity", Q)(im, fm, Q, out)
    return out.reshape(q.shape)


def crba(model, q, armature: bool = False) -> np.ndarray:
    """Mass matrix; same contract as :func:`composedyn.dynamics.crba.crba` (no armature),
    or with the armature on the diagonal when ``armature=True`` (the ``Robot``'s M)."""
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        M = _np_crba.crba(model, q)
        return M + np.diag(model.armature) if armature else M
    im, fm = _packs.get(id(model)) or packed(model)
    q = np.asarray(q, float)
    n = q.shape[-1]
    arm = 1 if armature else 0
    if q.ndim == 1:
        out = np.empty((n, n))
        (_kernels.get("crba_one") or _kernel("crba_one"))(im, fm, q, arm, out)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty((Q.shape[0], n, n))
    _loop("crba", Q)(im, fm, Q, arm, out)
    return out.reshape(q.shape + (n,))


def coriolis_matrix(model, q, qd) -> np.ndarray:
    """Christoffel Coriolis matrix; same contract as :func:`composedyn.dynamics.coriolis.coriolis_matrix`."""
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        return _np_coriolis.coriolis_matrix(model, q, qd)
    im, fm = packed(model)
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    n = model.n
    if q.ndim == 1 and q.shape == qd.shape:
        out = np.empty((n, n))
        _kernel("coriolis_one")(im, fm, q, qd, out)
        return out
    shape = np.broadcast_shapes(q.shape, qd.shape)
    Q, QD = _rows(q, shape, 1), _rows(qd, shape, 1)
    out = np.empty((Q.shape[0], n, n))
    _loop("coriolis", Q)(im, fm, Q, QD, out)
    return out.reshape(shape + (n,))


def solve_mass(model, M, rhs) -> np.ndarray:
    """Solve M x = rhs by Cholesky; same contract (and ModelError) as
    :func:`composedyn.dynamics.forward.solve_mass`.  ``model`` only names the joints."""
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        return _np_forward.solve_mass(model, M, rhs)
    M, rhs = np.asarray(M, float), np.asarray(rhs, float)
    n = M.shape[-1]
    if M.ndim == 2 and rhs.ndim == 1:
        L, x = M.copy(), np.empty(n)
        if _kernel("cholesky_solve")(L, rhs.copy() if not rhs.flags.c_contiguous else rhs, x):
            return _np_forward.solve_mass(model, M, rhs)  # raises the reference ModelError
        return x
    batch = np.broadcast_shapes(M.shape[:-2], rhs.shape[:-1])
    Ms, B = _rows(M, batch + (n, n), 2), _rows(rhs, batch + (n,), 1)
    x, status = np.empty(B.shape), np.zeros(B.shape[0], dtype=np.int64)
    _kernel("solve_serial")(Ms, B, x, status)
    if status.any():
        return _np_forward.solve_mass(model, M, rhs)
    return x.reshape(batch + (n,))


def forward_dynamics(model, q, qd, tau, f_world=None, friction: bool = True, smooth: float | None = None) -> np.ndarray:
    """qdd = M^-1 (tau - rnea(q, qd, 0, f_world) - friction) in one compiled call (M with armature).

    All-joint coordinates of ``model`` (no mimic reduction); q, qd, tau (..., n),
    f_world (..., n, 6); same contract as ``composedyn.dynamics.forward.forward_dynamics``.
    Raises ModelError like ``solve_mass``.
    """
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        if hasattr(_np_forward, "forward_dynamics"):
            return _np_forward.forward_dynamics(model, q, qd, tau, f_world=f_world, friction=friction, smooth=smooth)
        q, qd, tau = np.broadcast_arrays(*(np.asarray(x, float) for x in (q, qd, tau)))
        return _reference_forward(model, q, qd, tau, f_world, friction, smooth)
    im, fm = packed(model)
    q, qd, tau = np.asarray(q, float), np.asarray(qd, float), np.asarray(tau, float)
    fw = _NONE_FW if f_world is None else np.asarray(f_world, float)
    fric, sm = int(friction), float(smooth or 0.0)
    if q.ndim == 1 and q.shape == qd.shape == tau.shape and fw.ndim == 2:
        out = np.empty(q.shape[0])
        if _kernel("aba_one")(im, fm, q, qd, tau, fw, fric, sm, out):
            out = _reference_forward(model, q[None], qd[None], tau[None], fw[None] if f_world is not None else None,
                                     friction, smooth)[0]
        return out
    n = model.n
    shape = np.broadcast_shapes(q.shape, qd.shape, tau.shape, fw.shape[:-2] + (n,) if f_world is not None else ())
    Q, QD, TAU = (_rows(x, shape, 1) for x in (q, qd, tau))
    FW = _rows(fw, shape + (6,), 2) if f_world is not None else NO_FW3
    out, status = np.empty(Q.shape), np.zeros(Q.shape[0], dtype=np.int64)
    _loop("aba", Q)(im, fm, Q, QD, TAU, FW, fric, sm, out, status)
    if status.any():
        b = np.nonzero(status)[0]
        fwb = FW[b] if f_world is not None else None
        out[b] = _reference_forward(model, Q[b], QD[b], TAU[b], fwb, friction, smooth)
    return out.reshape(shape)


def _reference_forward(model, Q, QD, TAU, FW, friction, smooth):
    """CRBA + Cholesky in NumPy on samples (N, n): where the compiled Cholesky failed, the
    reference solve raises its ModelError (or, at the edge of positive definiteness, solves)."""
    from composedyn.dynamics.friction import friction_torques

    h = _np_rnea.rnea(model, Q, QD, np.zeros_like(Q), f_world=FW)
    if friction:
        h = h + friction_torques(model, QD, smooth=smooth)
    M = _np_crba.crba(model, Q) + np.diag(model.armature)
    return _np_forward.solve_mass(model, M, TAU - h)


def warm_up(model, batch: bool = False, entries_too: bool = True) -> dict:
    """Compile (or load from the disk cache) the kernels a controller calls, before
    the control loop starts; ``batch=True`` also the trajectory loops;
    ``entries_too`` also the checked entries of the ``Robot`` methods' lean path.
    Returns :func:`compile_times`."""
    if _state.get("numpy", True) and backend() == "numpy" or not model.joint_names:
        return {}
    n = model.n
    z, Z = np.zeros(n), np.zeros((2, n))
    rnea(model, z, z, z)
    rnea(model, z, z, z, f_world=np.zeros((n, 6)))
    gravity(model, z)
    M = crba(model, z) + np.diag(model.armature)
    coriolis_matrix(model, z, z)
    if n and np.all(np.linalg.eigvalsh(M) > 0):  # a singular M would raise ModelError
        solve_mass(model, M, z)
        forward_dynamics(model, z, z, z)
    if entries_too:
        im, fm = packed(model)
        v, A = np.empty(n), np.empty((n, n))
        entries.inverse_dynamics(im, fm, z, z, z, v)
        entries.mass_matrix(im, fm, z, A)
        entries.coriolis_matrix(im, fm, z, z, A)
        entries.gravity_torques(im, fm, z, v)
        entries.bias_torques(im, fm, z, z, v)
        entries.forward_dynamics(im, fm, z, z, z, 0.0, v)  # status 3 on a singular M: no error here
        entries.inverse_dynamics_rigid(im, fm, z, z, z, v)  # friction=False
        entries.forward_dynamics_rigid(im, fm, z, z, z, 0.0, v)
    if batch:
        rnea(model, Z, Z, Z)
        gravity(model, Z)
        crba(model, Z)
        coriolis_matrix(model, Z, Z)
    return compile_times()
