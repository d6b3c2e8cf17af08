"""Argument checks at the public boundary: shapes, finiteness, broadcasting."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from composedyn.dynamics.reference.friction import smooth_width

__all__ = ["batch_shape", "joint_array", "joint_arrays", "output_array", "random_generator", "smooth_width",
           "wrenches"]


def joint_array(name: str, x, n: int, what: str = "") -> np.ndarray:
    """Return ``x`` as a float array of shape (..., n); ValueError naming ``name`` otherwise.

    ``what`` describes the last axis in messages (default: "with n = {n} joints").
    """
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(f"{name} is a masked array; pass a plain array (np.ma.filled({name}, value) chooses "
                         "what the masked entries are)")
    try:  # a ragged list makes NumPy raise already when asked whether it is complex
        complex_input = np.iscomplexobj(x)
    except (TypeError, ValueError):
        complex_input = False
    if complex_input:
        raise ValueError(f"{name} is complex; expected real values of shape (..., {n})")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        what = what or f"with n = {n} joints"
        raise ValueError(f"{name} must be a numeric array of shape (..., {n}) {what}") from None
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ValueError(f"{name} has shape {arr.shape}, expected (..., {n}) {what or f'with n = {n} joints'}")
    if not _all_finite(arr):
        raise ValueError(f"{name} contains NaN or infinite values; expected finite values of shape (..., {n})")
    return arr


def _all_finite(arr: np.ndarray) -> bool:
    """No NaN or inf in ``arr``.  For one small vector, summing a Python list is ~5x
    faster than ``np.isfinite(arr).all()`` (NaN and inf propagate through the sum; a
    finite sum that overflows falls through to the exact test)."""
    if arr.ndim == 1 and arr.shape[0] <= 64 and math.isfinite(sum(arr.tolist())):
        return True
    return bool(np.isfinite(arr).all())


def joint_arrays(n: int, **arrays) -> list[np.ndarray]:
    """Check several (..., n) arrays and broadcast their batch axes together."""
    checked = [joint_array(k, v, n) for k, v in arrays.items()]
    shape = checked[0].shape
    if all(a.shape == shape for a in checked):  # common case (one sample): nothing to broadcast
        return checked
    shape = batch_shape(dict(zip(arrays, checked)), f"(..., {n})") + (n,)
    # read-only broadcast views (np.broadcast_arrays' would warn when a route checks them)
    return [a if a.shape == shape else np.broadcast_to(a, shape) for a in checked]


def batch_shape(arrays: Mapping[str, np.ndarray], expected: str) -> tuple:
    """The shape that the leading axes of the checked ``arrays`` {name: array (..., n)} broadcast to;
    ValueError naming every array's shape otherwise, ``expected`` stating their last axes ("(..., 7)")."""
    try:
        return np.broadcast_shapes(*(a.shape[:-1] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(f"batch shapes do not broadcast: {shapes}; expected {expected} arrays "
                         "whose leading axes broadcast together") from None


def output_array(out, shape: tuple, *inputs) -> np.ndarray:
    """``out`` checked as the destination of a result of ``shape``: a writeable, C-contiguous
    float64 ndarray of exactly that shape sharing no memory with the ``inputs`` (a kernel
    reading an input while writing the result would read its own output).  ValueError naming
    what is wrong otherwise."""
    shape = tuple(shape)
    if not isinstance(out, np.ndarray):
        raise ValueError(f"out must be a numpy array of shape {shape}, got {type(out).__name__}")
    flags = out.flags
    if out.shape == shape and out.dtype == np.float64 and flags.c_contiguous and flags.writeable and \
            not any([isinstance(x, np.ndarray) and np.may_share_memory(out, x) for x in inputs]):
        return out  # the common case, without composing the messages below
    wrong = [what for what, bad in (
        (f"shape {out.shape}", out.shape != shape), (f"dtype {out.dtype}", out.dtype != np.float64),
        ("not C-contiguous", not out.flags.c_contiguous), ("read-only", not out.flags.writeable)) if bad]
    if wrong:
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {shape}; "
                         f"got {', '.join(wrong)}")
    if any(isinstance(x, np.ndarray) and np.may_share_memory(out, x) for x in inputs):
        raise ValueError("out shares memory with an input array; pass a separate array")
    return out


def output_arrays(out, count: int, shape: tuple, *inputs) -> tuple:
    """``out`` checked as the destinations of ``count`` results of ``shape`` each: a tuple (or list) of
    that many arrays as :func:`output_array` takes them, sharing no memory with one another.  ValueError
    naming what is wrong otherwise."""
    if not isinstance(out, (tuple, list)) or len(out) != count:
        raise ValueError(f"out must be a tuple of {count} numpy arrays of shape {tuple(shape)}, got "
                         f"{type(out).__name__}{f' of {len(out)}' if isinstance(out, (tuple, list)) else ''}")
    outs = tuple(output_array(o, shape, *inputs) for o in out)
    if any(np.may_share_memory(a, b) for k, a in enumerate(outs) for b in outs[k + 1:]):
        raise ValueError("out: two of its arrays share memory; pass separate arrays")
    return outs


def random_generator(seed, where: str) -> np.random.Generator:
    """``numpy.random.default_rng(seed)``; ValueError naming ``seed`` and the method ``where``
    when NumPy refuses it (a negative number, a float, a string)."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: seed must be None, a non-negative integer or a numpy Generator, "
                         f"got {repr(seed)[:40]}") from None


def wrenches(f_ext: Mapping | None, links: tuple) -> dict | None:
    """Check the f_ext mapping: known link names, (..., 6) finite wrenches."""
    if f_ext is None:
        return None
    if not isinstance(f_ext, Mapping):
        raise ValueError("f_ext must map link names to 6-vectors (fx, fy, fz, tx, ty, tz)")
    out = {}
    for name, w in f_ext.items():
        if name not in links:
            raise ValueError(f"f_ext names unknown link {name!r}")
        out[name] = joint_array(f"f_ext[{name!r}]", w, 6, "(fx, fy, fz, tx, ty, tz)")
    return out
