"""``FastDynamics``: the lean per-call entry for control loops (``robot.fast``).

No broadcasting, no mimic reduction, no per-element checks in Python: every
input must be a float64 array, (n,) for one sample or (N, n) for N samples,
with n = ``model.n`` joints in ``model.joint_names`` order (for a ``Robot``
with mimic joints that is ``robot.all_joint_names``).  The results equal the
``Robot`` methods (armature and friction included where the method includes
them).  Pass ``out=`` to reuse a result array: float64, C-contiguous, of the
result's shape.

Safe without per-element checks in Python: shapes and dtypes are compared
once per call (a single sample: in the compiled entry of :mod:`.entry`, whose
signature fixes dtype and layout), and

* a shape, length or dtype that does not fit raises ``ValueError`` (nothing
  is read past an array, nothing written past ``out``);
* NaN or inf in an input gives NaN out: the whole result of that sample
  (checked in compiled code, ~1 ns per number);
* a mass matrix that is not positive definite raises ``ModelError``
  (forward dynamics), as the ``Robot`` method does.

    fd = robot.fast                 # bind once, outside the loop
    fd.warm_up()                    # compile / load the kernels now
    tau = fd.inverse_dynamics(q, qd, qdd)
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled import entry
from composedyn.dynamics.compiled.aba import aba_parallel, aba_serial
from composedyn.dynamics.compiled.coriolis import coriolis_parallel, coriolis_serial
from composedyn.dynamics.compiled.crba import crba_parallel, crba_serial
from composedyn.dynamics.compiled.gravity import gravity_parallel, gravity_serial
from composedyn.dynamics.compiled.layout import NO_FW3, pack
from composedyn.dynamics.compiled.parallel import use_parallel
from composedyn.dynamics.compiled.rnea import rnea_parallel, rnea_serial
from composedyn.dynamics.reference import forward as _reference

_F8 = np.dtype(np.float64)


class _Entries:
    """The compiled entries of :mod:`.entry` as attributes, each compiled (or loaded from the
    disk cache) at its first look-up; later look-ups are plain attribute reads."""

    def __getattr__(self, name: str):
        k = entry.compiled(name)
        setattr(self, name, k)
        return k


_ENTRIES = _Entries()


def _bad_call(name: str, n: int, arrays: dict, out) -> ValueError:
    """The ValueError for a call of ``robot.fast.<name>`` whose arrays do not fit."""
    got = ", ".join(f"{k} {getattr(a, 'dtype', type(a).__name__)} {np.shape(a)}" for k, a in arrays.items())
    if out is not None:
        flags = getattr(out, "flags", None)
        layout = "" if flags is not None and flags.c_contiguous and flags.writeable else " not C-contiguous/writeable"
        got += f", out {getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}{layout}"
    return ValueError(f"robot.fast.{name}: expects float64 arrays of shape ({n},) or (N, {n}) and a float64 "
                      f"C-contiguous out= of the result's shape; got {got}")


def _batch(name: str, n: int, arrays: dict, out, tail: tuple):
    """Check a batch call once: inputs float64 (N, n) of one shape (copied to C order if
    strided), out None or float64 C-contiguous writeable (N,) + tail.  Returns (inputs, out)."""
    xs = list(arrays.values())
    shape = xs[0].shape
    if len(shape) != 2 or shape[1] != n or any(x.shape != shape or x.dtype != _F8 for x in xs):
        raise _bad_call(name, n, arrays, out)
    xs = [x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in xs]
    want = (shape[0],) + tail
    if out is None:
        return xs, np.empty(want)
    if (type(out) is not np.ndarray or out.shape != want or out.dtype != _F8 or not out.flags.c_contiguous
            or not out.flags.writeable):
        raise _bad_call(name, n, arrays, out)
    return xs, out


class FastDynamics:
    """Compiled dynamics of one ``Model`` with checks of shapes only (see the module doc).

    The per-call methods are closures over the packed model arrays (set in
    ``__init__``), which saves the attribute look-ups of a bound method.  A
    single sample goes through the checked compiled entries of :mod:`.entry`
    (shared with the ``Robot`` methods): they compare the lengths, scan for
    NaN and inf and run the kernel, compiled inline, in one call; their status
    decides what is returned (see :meth:`_status`).
    """

    def __init__(self, model):
        self.model = model
        self.n = n = model.n
        im, fm = pack(model)
        self._packed = im, fm
        empty = np.empty
        sq = (n, n)
        ent = _ENTRIES
        status = self._status

        def inverse_dynamics(q, qd, qdd, out=None):
            """tau = M qdd + C qd + g + damping qd + friction sgn(qd) (armature in M), (n,) or (N, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                try:
                    s = ent.inverse_dynamics(im, fm, q, qd, qdd, out)
                except TypeError:
                    s = 1
                return status(s, out, "inverse_dynamics", q=q, qd=qd, qdd=qdd) if s else out
            (q, qd, qdd), out = _batch("inverse_dynamics", n, {"q": q, "qd": qd, "qdd": qdd}, out, (n,))
            (rnea_parallel if use_parallel(q.size) else rnea_serial)(im, fm, q, qd, qdd, NO_FW3, 1, 3, out)
            return out

        def mass_matrix(q, out=None):
            """M(q) with armature, (n, n) or (N, n, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(sq)
                try:
                    s = ent.mass_matrix(im, fm, q, out)
                except TypeError:
                    s = 1
                return status(s, out, "mass_matrix", q=q) if s else out
            (q,), out = _batch("mass_matrix", n, {"q": q}, out, sq)
            (crba_parallel if use_parallel(q.size) else crba_serial)(im, fm, q, 1, out)
            return out

        def coriolis_matrix(q, qd, out=None):
            """C(q, qd) in Christoffel form, (n, n) or (N, n, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(sq)
                try:
                    s = ent.coriolis_matrix(im, fm, q, qd, out)
                except TypeError:
                    s = 1
                return status(s, out, "coriolis_matrix", q=q, qd=qd) if s else out
            (q, qd), out = _batch("coriolis_matrix", n, {"q": q, "qd": qd}, out, sq)
            (coriolis_parallel if use_parallel(q.size) else coriolis_serial)(im, fm, q, qd, out)
            return out

        def bias_torques(q, qd, out=None):
            """h = C qd + g (no friction), (n,) only."""
            if out is None:
                out = empty(n)
            try:
                s = ent.bias_torques(im, fm, q, qd, out)
            except TypeError:
                s = 1
            return status(s, out, "bias_torques", q=q, qd=qd) if s else out

        def gravity_torques(q, out=None):
            """g(q), (n,) or (N, n)."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                try:
                    s = ent.gravity_torques(im, fm, q, out)
                except TypeError:
                    s = 1
                return status(s, out, "gravity_torques", q=q) if s else out
            (q,), out = _batch("gravity_torques", n, {"q": q}, out, (n,))
            (gravity_parallel if use_parallel(q.size) else gravity_serial)(im, fm, q, out)
            return out

        def forward_dynamics(q, qd, tau, out=None, smooth_friction: float = 0.0):
            """qdd solving M qdd = tau - C qd - g - friction, (n,) or (N, n); ModelError if M is singular."""
            if q.ndim == 1:
                if out is None:
                    out = empty(n)
                try:
                    s = ent.forward_dynamics(im, fm, q, qd, tau, smooth_friction, out)
                except TypeError:
                    s = 1
                if s == 3:  # no positive pivot: the reference raises ModelError, or solves at the edge
                    out[:] = _reference.forward_dynamics(model, q, qd, tau, smooth=smooth_friction or None)
                    return out
                return status(s, out, "forward_dynamics", q=q, qd=qd, tau=tau) if s else out
            (q, qd, tau), out = _batch("forward_dynamics", n, {"q": q, "qd": qd, "tau": tau}, out, (n,))
            st = np.zeros(q.shape[0], dtype=np.int64)
            k = aba_parallel if use_parallel(q.size) else aba_serial
            k(im, fm, q, qd, tau, NO_FW3, 1, float(smooth_friction), out, st)
            if st.any():
                b = np.nonzero(st)[0]
                out[b] = _reference.forward_dynamics(model, q[b], qd[b], tau[b], smooth=smooth_friction or None)
            return out

        self.inverse_dynamics = self.rnea = inverse_dynamics
        self.mass_matrix, self.coriolis_matrix = mass_matrix, coriolis_matrix
        self.bias_torques, self.gravity_torques = bias_torques, gravity_torques
        self.forward_dynamics = forward_dynamics

    def _status(self, s: int, out, name: str, **arrays):
        """``out`` for an entry's status ``s``: 0 the result, 2 (NaN or inf in) all NaN;
        1 (a length, dtype or layout that does not fit) raises ValueError."""
        if s == 0:
            return out
        if s == 2:
            out.fill(np.nan)
            return out
        raise _bad_call(name, self.n, arrays, out)

    def warm_up(self, batch: bool = False) -> None:
        """Compile (or load from the disk cache) the single-sample entries now; ``batch=True`` also the loops."""
        z = np.zeros(self.n)
        self.inverse_dynamics(z, z, z)
        self.mass_matrix(z)
        self.coriolis_matrix(z, z)
        self.gravity_torques(z)
        self.bias_torques(z, z)
        im, fm = self._packed
        _ENTRIES.forward_dynamics(im, fm, z, z, z, 0.0, np.empty(self.n))  # status only: no error here
        if batch:
            Z = np.zeros((2, self.n))
            self.inverse_dynamics(Z, Z, Z)
            self.mass_matrix(Z)
            self.coriolis_matrix(Z, Z)
            self.gravity_torques(Z)
            aba_serial(im, fm, Z, Z, Z, NO_FW3, 1, 0.0, np.empty((2, self.n)), np.zeros(2, np.int64))
