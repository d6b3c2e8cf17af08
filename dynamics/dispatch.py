"""The general path of the dynamics quantities: batches, and what the C callers decline.

A ``Robot`` method first tries its quantity's C caller (:mod:`composedyn.dynamics.data`,
made from the quantity's declaration, :mod:`composedyn.dynamics.compiled.declare`); for
anything else (batches, lists, NaN, external wrenches, mimic joints) it comes here.
:data:`ROUTES` lists, per quantity, the compiled kernels (single sample and batch
loop).  The functions here (:func:`rnea`, :func:`gravity`, :func:`crba`,
:func:`coriolis_matrix`, :func:`forward_dynamics`) have the signatures of the
NumPy reference functions and follow that table:

* backend ``"numba"`` (the default): kernels of :mod:`composedyn.dynamics.compiled`.
  numba is imported on the first call, never at ``import composedyn``; each
  kernel is compiled on its first call and cached on disk, so a later process
  only loads it (:func:`compile_times` reports the seconds each first call took).
  numba is a required dependency: if it does not import, the first dynamics
  call raises ``ImportError`` saying so (no silent fallback to the slow path).
* backend ``"numpy"``: the reference implementation, chosen explicitly with
  the environment variable ``COMPOSEDYN_BACKEND=numpy`` (read at import) or
  :func:`set_backend`; also used for robots without moving joints (n = 0).

Batches (leading axes) run one compiled loop over the samples, spread over
the CPU cores (``numba.prange``) when samples x joints >=
:data:`composedyn.dynamics.compiled.parallel.PARALLEL_WORK`;
smaller batches stay serial, since starting the threads on a loaded machine can
cost more than the work.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from typing import NamedTuple

import numpy as np

from composedyn.dynamics.compiled.layout import NO_FW as _NONE_FW
from composedyn.dynamics.compiled.layout import NO_FW3, pack, pack_frames
from composedyn.dynamics.compiled.parallel import parallel_safe, use_parallel
from composedyn.dynamics.reference import coriolis as _np_coriolis
from composedyn.dynamics.reference import crba as _np_crba
from composedyn.dynamics.reference import forward as _np_forward
from composedyn.dynamics.reference import rnea as _np_rnea

_state = {"backend": os.environ.get("COMPOSEDYN_BACKEND", "auto").strip().lower() or "auto"}
_kernels: dict = {}
_compile_s: dict = {}
_packs: dict = {}


def set_backend(name: str) -> None:
    """Use ``"numba"`` (``"auto"`` is the same) or ``"numpy"`` from now on."""
    if name not in ("auto", "numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {name!r}")
    _state["backend"] = name
    _state.pop("resolved", None)
    _state.pop("numpy", None)
    SWITCH[0] = name != "numpy"


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


# Read by every C caller (composedyn.dynamics.data) before it calls its entry: 0 under the NumPy backend
SWITCH = np.array([_state["backend"] != "numpy"], dtype=np.int64)


class Route(NamedTuple):
    """How one quantity is computed in batches and by the general path: the module of
    :mod:`composedyn.dynamics.compiled`, its single-sample kernel and its batch loop (compiled
    as ``<loop>_serial`` and ``<loop>_parallel``)."""

    module: str
    one: str
    loop: str


# The functions below follow this table: the NumPy reference when the NumPy backend is chosen
# (or the model has no moving joint), else the single-sample kernel for (n,) input and the
# batch loop for (..., n) input.
ROUTES = {
    "inverse_dynamics": Route("rnea", "rnea_one", "rnea"),
    "gravity_torques": Route("gravity", "gravity_one", "gravity"),
    "mass_matrix": Route("crba", "crba_one", "crba"),
    "coriolis_matrix": Route("coriolis", "coriolis_one", "coriolis"),
    "forward_dynamics": Route("aba", "aba_one", "aba"),
    "regressor": Route("regressor", "regressor_one", "regressor"),
    "inverse_dynamics_derivatives": Route("derivatives", "derivatives_one", "derivatives"),
    "forward_dynamics_derivatives": Route("fd_derivatives", "fd_derivatives_one", "fd_derivatives"),
}
_MODULE_OF = {k: r.module for r in ROUTES.values() for k in (r.one, r.loop + "_serial", r.loop + "_parallel")}


def _kernel(name: str):
    """The compiled kernel ``name``: a kernel named in ``ROUTES``, or ``"module.function"`` of
    :mod:`composedyn.dynamics.compiled` for one outside the table (the inverse-kinematics
    solve); its first call is timed into :func:`compile_times`."""
    k = _kernels.get(name)
    if k is None:
        import importlib

        module, attr = name.split(".", 1) if "." in name else (_MODULE_OF[name], name)
        real = getattr(importlib.import_module(f"composedyn.dynamics.compiled.{module}"), attr)

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


def _reference(model) -> bool:
    """Whether ``model`` is computed by the NumPy reference (backend "numpy", or no moving joint)."""
    return _state.get("numpy", True) and backend() == "numpy" or not model.joint_names


def packed(model) -> tuple[np.ndarray, np.ndarray]:
    """The kernel arrays ``(im, fm)`` of ``model``, built once per model (see ``compiled.layout``)."""
    p = _packs.get(id(model))
    if p is None:
        p = _packs[id(model)] = pack(model)
        weakref.finalize(model, _packs.pop, id(model), None)
    return p


def _plain(x) -> np.ndarray:
    """``x`` as the float64 array every compiled kernel takes with one specialisation: native byte
    order, aligned, C-contiguous and writeable (a read-only or strided array is copied; numba would
    otherwise compile the kernel again for its type)."""
    a = np.asarray(x, float)
    f = a.flags
    return a if f.c_contiguous and f.writeable and f.aligned else np.array(a, order="C")


def _rows(x: np.ndarray, shape: tuple, n: int) -> np.ndarray:
    """x broadcast to ``shape`` as a writeable C-contiguous (N, n...) array."""
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    x = np.ascontiguousarray(x)
    if not x.flags.writeable:
        x = x.copy()
    return x.reshape((-1,) + shape[len(shape) - n:])


def _target(out: np.ndarray | None, shape: tuple) -> np.ndarray:
    """Where a compiled route writes its result: a new array of ``shape``, or the caller's
    ``out`` (checked by the facade: C-contiguous, of the result's shape) viewed as ``shape``."""
    if out is None:
        return np.empty(shape)
    return out if out.shape == shape else out.reshape(shape)


def deliver(result: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``result``, copied into ``out`` when the caller gave one (routes that cannot write in place)."""
    if out is None:
        return result
    out[...] = result
    return out


def _loop(name: str, Q: np.ndarray):
    """The serial or parallel loop kernel for samples Q (N, n), see :func:`use_parallel`."""
    return _kernel(f"{name}_parallel" if use_parallel(Q.shape[0] * Q.shape[1]) else f"{name}_serial")


def rnea(model, q, qd, qdd, f_world=None, gravity: bool = True, armature: bool = False,
         friction: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Rigid-body inverse dynamics; same contract as :func:`composedyn.dynamics.reference.rnea.rnea`.

    ``armature=True`` adds armature * qdd and ``friction=True`` adds damping * qd +
    friction * sgn(qd) (:func:`composedyn.dynamics.reference.friction.friction_torques`) inside the
    kernel: with both, the ``Robot``'s inverse dynamics in one call.  ``out``: an array of the
    result's shape to write into and return (see :func:`composedyn.checks.output_array`).
    """
    extra = (1 if armature else 0) + (2 if friction else 0)
    if _reference(model):
        tau = _np_rnea.rnea(model, q, qd, qdd, f_world=f_world, gravity=gravity)
        if armature:
            tau = tau + model.armature * np.asarray(qdd, float)
        if friction:
            from composedyn.dynamics.reference.friction import friction_torques

            tau = tau + friction_torques(model, qd)
        return deliver(tau, out)
    im, fm = _packs.get(id(model)) or packed(model)
    q, qd, qdd = _plain(q), _plain(qd), _plain(qdd)
    fw = _NONE_FW if f_world is None else _plain(f_world)
    if q.ndim == 1 and q.shape == qd.shape == qdd.shape and fw.ndim == 2:
        res = _target(out, q.shape)
        (_kernels.get("rnea_one") or _kernel("rnea_one"))(im, fm, q, qd, qdd, fw, 1 if gravity else 0, extra, res)
        return res
    n = model.n
    shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape, fw.shape[:-2] + (n,) if f_world is not None else ())
    Q, QD, QDD = (_rows(x, shape, 1) for x in (q, qd, qdd))
    FW = _rows(fw, shape + (6,), 2) if f_world is not None else NO_FW3
    res = _target(out, Q.shape)
    _loop("rnea", Q)(im, fm, Q, QD, QDD, FW, int(gravity), extra, res)
    return res.reshape(shape) if out is None else out


def gravity(model, q) -> np.ndarray:
    """Gravity torques g(q) (..., n): ``rnea(model, q, 0, 0)``, by the compiled gravity
    kernel (:mod:`composedyn.dynamics.compiled.gravity`) or the NumPy RNEA."""
    if _reference(model):
        z = np.zeros(np.shape(q))
        return _np_rnea.rnea(model, q, z, z)
    im, fm = _packs.get(id(model)) or packed(model)
    q = _plain(q)
    if q.ndim == 1:
        out = np.empty(q.shape[0])
        (_kernels.get("gravity_one") or _kernel("gravity_one"))(im, fm, q, out)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty(Q.shape)
    _loop("gravity", Q)(im, fm, Q, out)
    return out.reshape(q.shape)


def crba(model, q, armature: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Mass matrix; same contract as :func:`composedyn.dynamics.reference.crba.crba` (no armature),
    or with the armature on the diagonal when ``armature=True`` (the ``Robot``'s M); ``out``
    as in :func:`rnea`."""
    if _reference(model):
        M = _np_crba.crba(model, q)
        return deliver(M + np.diag(model.armature) if armature else M, out)
    im, fm = _packs.get(id(model)) or packed(model)
    q = _plain(q)
    n = q.shape[-1]
    arm = 1 if armature else 0
    if q.ndim == 1:
        res = _target(out, (n, n))
        (_kernels.get("crba_one") or _kernel("crba_one"))(im, fm, q, arm, res)
        return res
    Q = _rows(q, q.shape, 1)
    res = _target(out, (Q.shape[0], n, n))
    _loop("crba", Q)(im, fm, Q, arm, res)
    return res.reshape(q.shape + (n,)) if out is None else out


def coriolis_matrix(model, q, qd) -> np.ndarray:
    """Christoffel Coriolis matrix; same contract as :func:`composedyn.dynamics.reference.coriolis.coriolis_matrix`."""
    if _reference(model):
        return _np_coriolis.coriolis_matrix(model, q, qd)
    im, fm = packed(model)
    q, qd = _plain(q), _plain(qd)
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
    """Solve M x = rhs by Cholesky (NumPy): :func:`composedyn.dynamics.reference.forward.solve_mass`,
    for callers that hold M already (mimic-reduced robots).  ``model`` only names the joints."""
    return _np_forward.solve_mass(model, M, rhs)


def forward_dynamics(model, q, qd, tau, f_world=None, friction: bool = True, smooth: float | None = None,
                     out: np.ndarray | None = None) -> np.ndarray:
    """qdd = M^-1 (tau - rnea(q, qd, 0, f_world) - friction) in one compiled call (M with armature).

    All-joint coordinates of ``model`` (no mimic reduction); q, qd, tau (..., n),
    f_world (..., n, 6); same contract as ``composedyn.dynamics.reference.forward.forward_dynamics``.
    Raises ModelError like ``solve_mass``.  ``out`` as in :func:`rnea`.
    """
    if _reference(model):
        return deliver(_np_forward.forward_dynamics(model, q, qd, tau, f_world=f_world, friction=friction,
                                                     smooth=smooth), out)
    im, fm = packed(model)
    q, qd, tau = _plain(q), _plain(qd), _plain(tau)
    fw = _NONE_FW if f_world is None else _plain(f_world)
    fric, sm = int(bool(friction)), float(smooth or 0.0)  # any truth value, as the other routes
    if q.ndim == 1 and q.shape == qd.shape == tau.shape and fw.ndim == 2:
        res = _target(out, q.shape)
        if _kernel("aba_one")(im, fm, q, qd, tau, fw, fric, sm, res):
            res[...] = _reference_forward(model, q[None], qd[None], tau[None],
                                          fw[None] if f_world is not None else None, friction, smooth)[0]
        return res
    n = model.n
    shape = np.broadcast_shapes(q.shape, qd.shape, tau.shape, fw.shape[:-2] + (n,) if f_world is not None else ())
    Q, QD, TAU = (_rows(x, shape, 1) for x in (q, qd, tau))
    FW = _rows(fw, shape + (6,), 2) if f_world is not None else NO_FW3
    res, status = _target(out, Q.shape), np.zeros(Q.shape[0], dtype=np.int64)
    _loop("aba", Q)(im, fm, Q, QD, TAU, FW, fric, sm, res, status)
    if status.any():
        b = np.nonzero(status)[0]
        fwb = FW[b] if f_world is not None else None
        res[b] = _reference_forward(model, Q[b], QD[b], TAU[b], fwb, friction, smooth)
    return res.reshape(shape) if out is None else out


def _reference_forward(model, Q, QD, TAU, FW, friction, smooth):
    """CRBA + Cholesky in NumPy on samples (N, n): where the compiled Cholesky failed, the
    reference solve raises its ModelError (or, at the edge of positive definiteness, solves)."""
    from composedyn.dynamics.reference.friction import friction_torques

    h = _np_rnea.rnea(model, Q, QD, np.zeros_like(Q), f_world=FW)
    if friction:
        h = h + friction_torques(model, QD, smooth=smooth)
    M = _np_crba.crba(model, Q) + np.diag(model.armature)
    return _np_forward.solve_mass(model, M, TAU - h)


def warm_up(model, batch: bool = False, entries_too: bool = True) -> dict:
    """Compile (or load from the disk cache) the kernels a controller calls (dynamics and
    task space), before the control loop starts; ``batch=True`` also the trajectory loops;
    ``entries_too`` also the C functions of the ``Robot`` methods' single samples.
    Returns :func:`compile_times`."""
    if _reference(model):
        return {}
    n = model.n
    z, Z = np.zeros(n), np.zeros((2, n))
    rnea(model, z, z, z)
    rnea(model, z, z, z, f_world=np.zeros((n, 6)))
    gravity(model, z)
    M = crba(model, z) + np.diag(model.armature)
    coriolis_matrix(model, z, z)
    if n and np.all(np.linalg.eigvalsh(M) > 0):  # a singular M would raise ModelError
        forward_dynamics(model, z, z, z)
    if entries_too:
        _compile_entries(False)
    if batch:
        rnea(model, Z, Z, Z)
        gravity(model, Z)
        crba(model, Z)
        coriolis_matrix(model, Z, Z)
    _warm_up_task_space(model, batch, entries_too)
    return compile_times()


def _compile_entries(frames: bool) -> None:
    """Compile (or load) the C functions of the fixed-base quantities (those on the frames, or
    the others); their callers are made per robot (:mod:`composedyn.dynamics.data`)."""
    from composedyn.dynamics.compiled import declare, quantities

    for q in quantities.FIXED.values():
        if (q.model == "frames") == frames:
            declare.entry(q)
    for name, seconds in declare.COMPILE_SECONDS.items():
        _compile_s.setdefault(name, seconds)


def _warm_up_task_space(model, batch: bool, entries_too: bool) -> None:
    """The task-space part of :func:`warm_up`: frame and centre-of-mass kernels, the checked
    entries of the ``Robot`` methods, and with ``batch`` the frame loops, parallel ones included
    (where this thread may run them, see ``parallel.parallel_safe``)."""
    n = model.n
    z, Z = np.zeros(n), np.zeros((2, n))
    frame_pose(model, z, 0)
    jacobian(model, z, 0)
    frame_velocity(model, z, z, 0)
    frame_acceleration(model, z, z, z, 0)
    center_of_mass(model, z)
    com_jacobian(model, z)
    im, fx = packed_frames(model)
    if entries_too:
        _compile_entries(True)
    if batch:
        center_of_mass(model, Z)
        com_jacobian(model, Z)
        loops = ("serial", "parallel") if parallel_safe() else ("serial",)
        for kind in loops:
            _kernel(f"pose_{kind}")(im, fx, Z, 0, np.empty((2, 4, 4)))
            _kernel(f"jacobian_{kind}")(im, fx, Z, 0, np.empty((2, 6, n)))
            _kernel(f"velocity_{kind}")(im, fx, Z, Z, 0, np.empty((2, 6)))
            _kernel(f"acceleration_{kind}")(im, fx, Z, Z, Z, 0, np.empty((2, 6)))


# ---- task space: frames, Jacobians, centre of mass ----------------------------------------------
# Routes as above: the NumPy reference (composedyn.dynamics.reference.frames) under the NumPy
# backend or without moving joints, else one compiled kernel per quantity (compiled/frames.py,
# compiled/com.py), a single sample directly, batches by one sample loop.  A frame is given by
# its index k in model.link_names; the frame kernels take it with the reference as one integer,
# code = 2 k + local, and read the frames from packed_frames(model).
ROUTES.update({
    "frame_pose": Route("frames", "pose_one", "pose"),
    "jacobian": Route("frames", "jacobian_one", "jacobian"),
    "frame_velocity": Route("frames", "velocity_one", "velocity"),
    "frame_acceleration": Route("frames", "acceleration_one", "acceleration"),
    "center_of_mass": Route("com", "com_one", "com"),
    "com_jacobian": Route("com", "com_jacobian_one", "com_jacobian"),
})
_MODULE_OF.update({k: r.module for r in ROUTES.values() for k in (r.one, r.loop + "_serial", r.loop + "_parallel")})

_frame_packs: dict = {}


def packed_frames(model) -> tuple[np.ndarray, np.ndarray]:
    """``(im, fx)`` of ``model`` for the frame kernels (``compiled.layout.pack_frames``), built once."""
    p = _frame_packs.get(id(model))
    if p is None:
        im, fm = packed(model)
        p = _frame_packs[id(model)] = (im, pack_frames(model, fm))
        weakref.finalize(model, _frame_packs.pop, id(model), None)
    return p


def _frames_reference(name: str, model, *args):
    from composedyn.dynamics.reference import frames

    return getattr(frames, name)(model, *args)


def frame_pose(model, q, k: int) -> np.ndarray:
    """World <- frame ``k`` (..., 4, 4); contract of :func:`composedyn.dynamics.reference.frames.frame_pose`."""
    if _reference(model):
        return _frames_reference("frame_pose", model, q, k)
    im, fx = packed_frames(model)
    q = _plain(q)
    if q.ndim == 1:
        out = np.empty((4, 4))
        if _kernel("pose_one")(im, fx, q, 2 * k, out):  # non-finite q
            return _frames_reference("frame_pose", model, q, k)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty((Q.shape[0], 4, 4))
    _loop("pose", Q)(im, fx, Q, 2 * k, out)
    return out.reshape(q.shape[:-1] + (4, 4))


def jacobian(model, q, k: int, local: bool = False) -> np.ndarray:
    """Frame Jacobian (..., 6, n), linear rows first; contract of ``frames.jacobian``."""
    if _reference(model):
        return _frames_reference("jacobian", model, q, k, local)
    im, fx = packed_frames(model)
    q = _plain(q)
    n, code = model.n, 2 * k + int(local)
    if q.ndim == 1:
        out = np.empty((6, n))
        if _kernel("jacobian_one")(im, fx, q, code, out):
            return _frames_reference("jacobian", model, q, k, local)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty((Q.shape[0], 6, n))
    _loop("jacobian", Q)(im, fx, Q, code, out)
    return out.reshape(q.shape[:-1] + (6, n))


def frame_velocity(model, q, qd, k: int, local: bool = False) -> np.ndarray:
    """Frame twist J qd (..., 6); contract of ``frames.frame_velocity``."""
    if _reference(model):
        return _frames_reference("frame_velocity", model, q, qd, k, local)
    im, fx = packed_frames(model)
    q, qd = _plain(q), _plain(qd)
    code = 2 * k + int(local)
    if q.ndim == 1 and q.shape == qd.shape:
        out = np.empty(6)
        if _kernel("velocity_one")(im, fx, q, qd, code, out):
            return _frames_reference("frame_velocity", model, q, qd, k, local)
        return out
    shape = np.broadcast_shapes(q.shape, qd.shape)
    Q, QD = _rows(q, shape, 1), _rows(qd, shape, 1)
    out = np.empty((Q.shape[0], 6))
    _loop("velocity", Q)(im, fx, Q, QD, code, out)
    return out.reshape(shape[:-1] + (6,))


def frame_acceleration(model, q, qd, qdd, k: int, local: bool = False) -> np.ndarray:
    """Classical frame acceleration (..., 6); contract of ``frames.frame_acceleration``."""
    if _reference(model):
        return _frames_reference("frame_acceleration", model, q, qd, qdd, k, local)
    im, fx = packed_frames(model)
    q, qd, qdd = _plain(q), _plain(qd), _plain(qdd)
    code = 2 * k + int(local)
    if q.ndim == 1 and q.shape == qd.shape == qdd.shape:
        out = np.empty(6)
        if _kernel("acceleration_one")(im, fx, q, qd, qdd, code, out):
            return _frames_reference("frame_acceleration", model, q, qd, qdd, k, local)
        return out
    shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape)
    Q, QD, QDD = (_rows(x, shape, 1) for x in (q, qd, qdd))
    out = np.empty((Q.shape[0], 6))
    _loop("acceleration", Q)(im, fx, Q, QD, QDD, code, out)
    return out.reshape(shape[:-1] + (6,))


def center_of_mass(model, q) -> np.ndarray:
    """Centre of mass of the moving bodies (..., 3); contract of ``frames.center_of_mass``."""
    return _com_quantity(model, q, "com", (3,))


def com_jacobian(model, q) -> np.ndarray:
    """COM Jacobian (..., 3, n); contract of ``frames.com_jacobian``."""
    return _com_quantity(model, q, "com_jacobian", (3, model.n))


def _com_quantity(model, q, name: str, tail: tuple) -> np.ndarray:
    """Kernel ``com.<name>`` (single sample or batch loop) or the NumPy reference."""
    from composedyn.dynamics.reference import frames

    if _reference(model):
        return (frames.center_of_mass if name == "com" else frames.com_jacobian)(model, q)
    im, fm = packed(model)
    mass = frames.moving_mass(model)
    q = _plain(q)
    if q.ndim == 1:
        out = np.empty(tail)
        _kernel(f"{name}_one")(im, fm, q, mass, out)
        return out
    Q = _rows(q, q.shape, 1)
    out = np.empty((Q.shape[0],) + tail)
    _loop(name, Q)(im, fm, Q, mass, out)
    return out.reshape(q.shape[:-1] + tail)


# ---- joint torque regressor ----
def regressor(model, q, qd, qdd, gravity: bool = True) -> np.ndarray:
    """Joint torque regressor Y (..., n, 10 n) of all joints, compiled or NumPy; same contract as
    :func:`composedyn.dynamics.reference.regressor.regressor` (Y @ inertial_parameters = rnea)."""
    from composedyn.dynamics.reference import regressor as _np_regressor

    if _reference(model):
        return _np_regressor.regressor(model, q, qd, qdd, gravity=gravity)
    im, fm = packed(model)
    q, qd, qdd = _plain(q), _plain(qd), _plain(qdd)
    n = model.n
    if q.ndim == 1 and q.shape == qd.shape == qdd.shape:
        out = np.empty((n, 10 * n))
        _kernel("regressor_one")(im, fm, q, qd, qdd, int(gravity), out)
        return out
    shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape)
    Q, QD, QDD = (_rows(x, shape, 1) for x in (q, qd, qdd))
    out = np.empty((Q.shape[0], n, 10 * n))
    _loop("regressor", Q)(im, fm, Q, QD, QDD, int(gravity), out)
    return out.reshape(shape + (10 * n,))


# ---- derivatives ----
_NO_P, _NO_P3 = np.empty((0, 9)), np.empty((0, 0, 9))  # "no external wrenches" for the lever-arm matrices
_NO_P.flags.writeable = _NO_P3.flags.writeable = False


def rnea_derivatives(model, q, qd, qdd, f_world=None, P=None, friction: bool = False,
                     smooth: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """d tau / d q and d tau / d qd (..., n, n) of the all-joint inverse dynamics (``ROUTES``).

    Same contract as the NumPy reference
    :func:`composedyn.dynamics.reference.derivatives.rnea_derivatives` (``f_world``
    (..., n, 6) and ``P`` (..., n, 3, 3) from ``external_terms``, both or neither);
    ``friction=True`` adds d/d qd of
    :func:`composedyn.dynamics.reference.friction.friction_torques` (``smooth`` as there).
    """
    if _reference(model):
        from composedyn.dynamics.reference import derivatives as _np_deriv

        dq, dqd = _np_deriv.rnea_derivatives(model, q, qd, qdd, f_world=f_world, P=P)
        if friction:
            d = _np_deriv.friction_derivative(model, np.broadcast_to(qd, dq.shape[:-1]), smooth)
            dqd[..., np.arange(model.n), np.arange(model.n)] += d
        return dq, dqd
    im, fm = packed(model)
    q, qd, qdd = _plain(q), _plain(qd), _plain(qdd)
    n = model.n
    fric, sm = int(bool(friction)), float(smooth or 0.0)  # any truth value, as the other routes
    if q.ndim == 1 and q.shape == qd.shape == qdd.shape and (f_world is None or np.ndim(f_world) == 2):
        dq, dqd = np.empty((n, n)), np.empty((n, n))
        fw = _NONE_FW if f_world is None else np.ascontiguousarray(f_world, float)
        pm = _NO_P if f_world is None else np.ascontiguousarray(np.reshape(P, (n, 9)), float)
        _kernel("derivatives_one")(im, fm, q, qd, qdd, fw, pm, 1, fric, sm, dq, dqd)
        return dq, dqd
    shape = np.broadcast_shapes(q.shape, qd.shape, qdd.shape,
                                np.shape(f_world)[:-2] + (n,) if f_world is not None else ())
    Q, QD, QDD = (_rows(x, shape, 1) for x in (q, qd, qdd))
    if f_world is not None:
        FW = _rows(np.asarray(f_world, float), shape + (6,), 2)
        PP = _rows(np.reshape(np.asarray(P, float), np.shape(P)[:-2] + (9,)), shape + (9,), 2)
    else:
        FW, PP = NO_FW3, _NO_P3
    DQ, DQD = np.empty(Q.shape + (n,)), np.empty(Q.shape + (n,))
    _loop("derivatives", Q)(im, fm, Q, QD, QDD, FW, PP, 1, fric, sm, DQ, DQD)
    return DQ.reshape(shape + (n,)), DQD.reshape(shape + (n,))


def forward_dynamics_derivatives(model, q, qd, tau, friction: bool = True, smooth: float | None = None):
    """d qdd / d q, d qdd / d qd, M^-1 (..., n, n) of the all-joint forward dynamics (``ROUTES``).

    Same contract as :func:`composedyn.dynamics.reference.derivatives.forward_dynamics_derivatives`
    (no external wrenches); raises its ModelError when M(q) is singular.
    """
    from composedyn.dynamics.reference import derivatives as _np_deriv

    if _reference(model):
        return _np_deriv.forward_dynamics_derivatives(model, q, qd, tau, friction=friction, smooth=smooth)
    im, fm = packed(model)
    q, qd, tau = _plain(q), _plain(qd), _plain(tau)
    n = model.n
    fric, sm = int(bool(friction)), float(smooth or 0.0)  # any truth value, as the other routes
    shape = np.broadcast_shapes(q.shape, qd.shape, tau.shape)
    if len(shape) == 1:
        out = np.empty((3, n, n))
        if _kernel("fd_derivatives_one")(im, fm, q, qd, tau, fric, sm, out[0], out[1], out[2]) == 0:
            return out[0], out[1], out[2]
    else:
        Q, QD, TAU = (_rows(x, shape, 1) for x in (q, qd, tau))
        out = np.empty((3,) + Q.shape + (n,))
        status = np.zeros(Q.shape[0], dtype=np.int64)
        _loop("fd_derivatives", Q)(im, fm, Q, QD, TAU, fric, sm, out[0], out[1], out[2], status)
        if not status.any():
            return tuple(x.reshape(shape + (n,)) for x in out)
    return _np_deriv.forward_dynamics_derivatives(model, q, qd, tau, friction=friction, smooth=smooth)  # raises
