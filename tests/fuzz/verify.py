"""Run one fuzz case and classify it: ``error`` (clear), ``result`` (verified), ``accepted``
(a result where either an error or a result is acceptable, not compared), ``crash`` or
``wrong``.  Hangs and dead workers are classified by the parent (:mod:`fuzz.runner`)."""

from __future__ import annotations

import re
import time

import numpy as np

from fuzz.methods import FAST_METHODS, FIXED_METHODS, FLOATING_METHODS, NOT_COMPARED, SCALE_DEPENDENT
from fuzz.mutations import INVALID, LOOSE

RTOL = 1e-12
OVERFLOWING_NORMS = {"huge_quat", "big_quat", "tiny_quat"}  # quaternion scaled by 1e155, 1e100, 1e-160
MAX_MESSAGE = 400  # characters of a clear error's message
ARRAY_ROLES = ("q", "v")


def _validity(case, n_fast: int) -> str:
    if "signature" in case.tags:
        return INVALID
    cleans = [a.clean for a in case.args] + [a.clean for a in case.kwargs.values()]
    state = "valid"
    for c in cleans:
        if isinstance(c, str) and c == INVALID:
            return INVALID
        if isinstance(c, str) and c == LOOSE:
            state = LOOSE
    if case.target == "fast":
        xs = [a.value for a in case.args]
        if any(isinstance(x, np.ndarray) and type(x) is not np.ndarray for x in xs):
            return LOOSE if state != INVALID else INVALID
        batches = FAST_METHODS[case.method][2]
        if any(type(x) is not np.ndarray or x.dtype != np.float64 or x.dtype.byteorder == ">" for x in xs):
            return INVALID
        shape = xs[0].shape
        if any(x.shape != shape for x in xs) or shape[-1:] != (n_fast,) or len(shape) not in ((1, 2) if batches
                                                                                           else (1,)):
            return INVALID
    return state


def _roles(case, floating: bool) -> list:
    if case.target == "fast":
        return ["v"] * len(case.args)
    spec = (FLOATING_METHODS if floating else FIXED_METHODS)[case.method]
    return [role for _, role in spec[0]][:len(case.args)]


def _unit_quaternion(q: np.ndarray) -> np.ndarray:
    q = np.array(q, dtype=float)
    s = q[..., 3:7]
    m = np.max(np.abs(s), axis=-1, keepdims=True)
    s = s / m
    q[..., 3:7] = s / np.linalg.norm(s, axis=-1, keepdims=True)
    return q


def flatten(x, path: str = "") -> list:
    """(path, leaf) pairs of a result: arrays, numbers, strings; tuples, dicts and objects opened."""
    if x is None or isinstance(x, (str, bytes, bool, int, float, complex, np.generic)):
        return [(path, x)]
    if isinstance(x, np.ndarray):
        return [(path, x)]
    if isinstance(x, dict):
        return [p for k in sorted(x, key=str) for p in flatten(x[k], f"{path}[{k!r}]")]
    if isinstance(x, (tuple, list)):
        return [p for k, v in enumerate(x) for p in flatten(v, f"{path}[{k}]")]
    if hasattr(x, "__dict__"):
        return [p for k, v in sorted(vars(x).items()) if not k.startswith("_") and not callable(v)
                for p in flatten(v, f"{path}.{k}")]
    return [(path, repr(x))]


def _mismatch(a, e, path: str) -> str | None:
    """Why leaf ``a`` differs from the expected ``e`` (None: equal)."""
    if isinstance(e, np.ndarray) or isinstance(e, (float, np.floating)):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            return f"{path} shape {a.shape}, expected {e.shape}"
        if e.dtype.kind not in "fc" or a.dtype.kind not in "fcib":
            return None if np.array_equal(a, e) else f"{path} differs"
        a, e = a.astype(complex if a.dtype.kind == "c" else float), e.astype(float)
        finite = np.isfinite(e)
        scale = max(1.0, float(np.max(np.abs(e[finite]), initial=0.0)))
        same = (a == e) | (np.isnan(a) & np.isnan(e)) | (np.abs(a - e) <= RTOL * scale)
        if not same.all():
            k = np.unravel_index(int(np.argmin(same)), same.shape) if same.ndim else ()
            return f"{path}{list(k) if k else ''} = {a[k]!r}, expected {e[k]!r}"
        return None
    if isinstance(e, (int, np.integer, bool, np.bool_)) and isinstance(a, (int, np.integer, bool, np.bool_)):
        return None if a == e else f"{path} = {a!r}, expected {e!r}"
    return None if repr(a) == repr(e) else f"{path} = {str(a)[:60]}, expected {str(e)[:60]}"


def _batch_shape(cleans: list, roles: list):
    shapes = [np.shape(c)[:-1] for c, r in zip(cleans, roles) if r in ARRAY_ROLES and isinstance(c, np.ndarray)]
    return np.broadcast_shapes(*shapes) if shapes else ()


def _samples(cleans: list, roles: list, batch: tuple):
    """Per-sample argument lists of a small batch (None: call with the whole batch)."""
    size = int(np.prod(batch)) if batch else 1
    if not batch:
        return [((), cleans)]
    if size == 0 or size > 6:
        return None
    out = []
    for idx in np.ndindex(*batch):
        out.append((idx, [np.broadcast_to(c, batch + c.shape[-1:])[idx].copy()
                          if r in ARRAY_ROLES and isinstance(c, np.ndarray) else c for c, r in zip(cleans, roles)]))
    return out


def _finite_inputs(args: list, roles: list) -> bool:
    return all(np.isfinite(a).all() for a, r in zip(args, roles) if r in ARRAY_ROLES and isinstance(a, np.ndarray))


class Checker:
    """Calls and verifies the cases of one robot."""

    def __init__(self, robot, fast_reference, floating: bool):
        self.robot, self.ref, self.floating = robot, fast_reference, floating

    def _expected(self, case, roles, cleans, kwargs):
        """The independent recomputation: list of (sample index, flat result or None if the
        sample's inputs are non-finite and the clean call refuses them), or an exception."""
        if case.target == "fast":
            method = getattr(self.ref, FAST_METHODS[case.method][3])
            if "smooth_friction" in kwargs:
                kwargs = {"smooth_friction": kwargs["smooth_friction"] or None}
        else:
            method = getattr(self.robot, case.method)
            if self.floating and case.method not in SCALE_DEPENDENT:
                cleans = [_unit_quaternion(c) if r == "q" and isinstance(c, np.ndarray) and np.isfinite(c).all()
                          and np.any(c[..., 3:7]) else c for c, r in zip(cleans, roles)]
        batch = _batch_shape(cleans, roles)
        samples = _samples(cleans, roles, batch)
        if samples is None:
            return None, [((), flatten(method(*cleans, **kwargs)))]
        res = []
        for idx, args in samples:
            try:
                res.append((idx, flatten(method(*args, **kwargs))))
            except Exception:
                if _finite_inputs(args, roles) and "nonfinite" not in case.tags:
                    raise
                res.append((idx, None))
        return batch, res

    def run(self, case, n_fast: int) -> dict:
        validity = _validity(case, n_fast)
        roles = _roles(case, self.floating)
        snapshots = [np.array(a.value, copy=True) if isinstance(a.value, np.ndarray) else None for a in case.args]
        target = self.robot.fast if case.target == "fast" else self.robot
        args = [a.value for a in case.args]
        kwargs = {k: a.value for k, a in case.kwargs.items()}
        t0 = time.perf_counter()
        try:
            result = getattr(target, case.method)(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - classified below
            return {"outcome": _error_kind(e, case, validity), "reason": _message(e),
                    "seconds": time.perf_counter() - t0}
        seconds = time.perf_counter() - t0
        done = {"seconds": seconds}
        out = kwargs.get("out")
        if out is not None and case.kwargs["out"].clean == "out" and result is not out:
            return {**done, "outcome": "wrong", "reason": "the result is not the out= array passed"}
        for a, snap in zip(args, snapshots):
            if snap is not None and not (isinstance(out, np.ndarray) and np.shares_memory(a, out)) and (
                    _modified(a, snap)):
                return {**done, "outcome": "wrong", "reason": "an input array was modified"}
        if validity == INVALID:
            return {**done, "outcome": "wrong", "reason": "a result for an invalid argument (an error is required): "
                    + _summary(result)}
        unseeded = case.method == "random_configuration" and getattr(case.kwargs.get("seed"), "value", None) is None
        if validity == LOOSE or unseeded or (case.target == "robot" and case.method in NOT_COMPARED):
            return {**done, "outcome": "accepted", "reason": _summary(result)}
        cleans = [a.clean for a in case.args]
        ckw = {k: a.clean for k, a in case.kwargs.items() if k != "out"}
        try:
            batch, expected = self._expected(case, roles, cleans, ckw)
        except Exception as e:  # noqa: BLE001
            if (case.nonfinite or isinstance(e, ValueError)) and _all_nan(result):
                return {**done, "outcome": "result", "reason": "NaN where the clean call refuses the input"}
            return {**done, "outcome": "wrong",
                    "reason": f"a result where the clean call raises {type(e).__name__}: {_message(e)}"}
        reason = _compare(result, batch, expected)
        numbers = [np.asarray(v, dtype=complex) for _, v in flatten(result) if _numeric(v)]
        if not reason and case.nonfinite and numbers and not any(np.isnan(v).any() for v in numbers):
            reason = "a finite result from a non-finite input (NaN expected)"
        if reason and case.tags & OVERFLOWING_NORMS and _all_nan(result):
            reason = None  # a configuration whose norm overflows may give NaN (never a finite wrong value)
        if reason:
            return {**done, "outcome": "wrong", "reason": reason}
        flat = [v for _, v in flatten(result) if _numeric(v)]
        if not case.nonfinite and any(not np.isfinite(np.asarray(v, dtype=complex)).all() for v in flat):
            return {**done, "outcome": "result", "reason": "non-finite result from finite input"}
        return {**done, "outcome": "result", "reason": ""}


def _modified(a: np.ndarray, snap: np.ndarray) -> bool:
    if a.dtype.kind in "fc":
        return not np.array_equal(a, snap, equal_nan=True)
    return not np.array_equal(a, snap)


def _all_nan(result) -> bool:
    """Every number of the result is NaN (and there is at least one)."""
    flat = [np.asarray(v, dtype=complex) for _, v in flatten(result) if _numeric(v)]
    return bool(flat) and all(np.isnan(v).all() for v in flat)


def _numeric(v) -> bool:
    return isinstance(v, (np.ndarray, float, np.floating)) and np.asarray(v).dtype.kind in "fc"


def _compare(result, batch, expected) -> str | None:
    flat = flatten(result)
    for idx, exp in expected:
        sample = [(p, np.asarray(v)[idx] if idx and isinstance(v, np.ndarray) else v) for p, v in flat]
        if exp is None:
            if any(np.isfinite(np.asarray(v, dtype=complex)).any() for _, v in sample if _numeric(v)):
                return f"finite values for sample {list(idx)} whose input is not finite (NaN expected)"
            continue
        if [p for p, _ in sample] != [p for p, _ in exp]:
            return f"result structure {[p for p, _ in sample][:4]} differs from {[p for p, _ in exp][:4]}"
        for (p, a), (_, e) in zip(sample, exp):
            why = _mismatch(a, e, p or "result")
            if why:
                return (f"sample {list(idx)}: " if idx else "") + why
    return None


def _summary(result) -> str:
    flat = flatten(result)
    return "; ".join(f"{p or 'result'} {np.shape(v)}" for p, v in flat[:3])


def _message(e: BaseException) -> str:
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    lines = len(text.splitlines())
    return f"{type(e).__module__}.{type(e).__name__}: {first[:200]}" + (f" (+{lines - 1} lines)" if lines > 1 else "")


def _error_kind(e: BaseException, case, validity: str) -> str:
    """``error`` for a clear error, ``unnamed`` for a clear type whose message does not name the
    invalid argument, ``crash`` for anything else."""
    module = type(e).__module__.split(".")[0]
    text = str(e).strip()
    if isinstance(e, OSError) and any(t.startswith("path:") for t in case.tags):
        return "error"  # a file name that cannot be written: the operating system's error, naming the file
    if not isinstance(e, (ValueError, TypeError)) or module not in ("builtins", "composedyn"):
        return "crash"
    if "\n" in text or len(text) > MAX_MESSAGE or not text:
        return "crash"
    names = [t.split(":", 1)[1] for t in case.tags if t.startswith("param:")] if validity == INVALID else []
    if names and not any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
        return "unnamed"
    return "error"
