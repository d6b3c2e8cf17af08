"""Hostile variants of one argument.

Each mutation returns ``Arg(value, clean, tags, descr)``: the value passed to the method,
``clean`` the float64 C-contiguous copy of the same numbers (or another plain Python value)
that the independent recomputation uses, ``INVALID`` when no valid call corresponds (an error
is required) or ``LOOSE`` when either an error or a result is acceptable (a result is then
counted as *accepted*, not compared).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

INVALID = "<invalid>"
LOOSE = "<loose>"


@dataclass
class Arg:
    value: object
    clean: object
    tags: set = field(default_factory=set)
    descr: str = ""


def describe(x) -> str:
    """A short description of an argument for reproductions."""
    if isinstance(x, np.ndarray):
        flags = [] if x.flags.c_contiguous else ["strided"]
        flags += [] if x.flags.writeable else ["read-only"]
        flags += ["big-endian"] if x.dtype.byteorder == ">" else []
        flags += [] if x.flags.aligned else ["unaligned"]
        head = f"{type(x).__name__ if type(x) is not np.ndarray else 'array'} {x.dtype.name} {x.shape}"
        if x.size and x.size <= 24 and x.dtype.kind in "fiucb":
            head += " " + np.array2string(np.asarray(x), precision=4, separator=", ", max_line_width=10**6)
        return head + (f" [{', '.join(flags)}]" if flags else "")
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of {len(x)}"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in x.items()) + "}"
    if type(x) is int and abs(x) >= 10**20:
        return f"{'-' if x < 0 else ''}10**{len(str(abs(x))) - 1}"
    r = repr(x)
    return r if len(r) < 60 else r[:57] + "..."


def _f8(x) -> np.ndarray:
    return np.array(x, dtype=np.float64, order="C", copy=True)


def _unaligned(x: np.ndarray) -> np.ndarray:
    buf = bytearray(x.nbytes + 1)
    a = np.frombuffer(buf, dtype=np.float64, count=x.size, offset=1).reshape(x.shape)
    a[...] = x
    return a


def _negative_stride(x: np.ndarray) -> np.ndarray:
    return x[..., ::-1].copy()[..., ::-1]


def _readonly(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y.flags.writeable = False
    return y


def _at(rng, x: np.ndarray, value) -> np.ndarray:
    y = np.array(x, dtype=float)
    y.flat[rng.integers(y.size)] = value
    return y


# name -> (function(rng, x, other) -> (value, clean or INVALID/LOOSE, extra tags)); ``other`` a second valid sample
def _array_mutations():
    m = {
        "list": lambda r, x, o: (x.tolist(), _f8(x)),
        "tuple": lambda r, x, o: (tuple(x.tolist()), _f8(x)),
        "float32": lambda r, x, o: ((y := x.astype(np.float32)), _f8(y)),
        "float16": lambda r, x, o: ((y := x.astype(np.float16)), _f8(y)),
        "int64": lambda r, x, o: ((y := np.round(x).astype(np.int64)), _f8(y)),
        "int8": lambda r, x, o: ((y := np.round(x).astype(np.int8)), _f8(y)),
        "bool": lambda r, x, o: ((y := x > 0), _f8(y)),
        "complex_real": lambda r, x, o: (x + 0j, LOOSE),
        "complex": lambda r, x, o: (x + 1j, INVALID),
        "object": lambda r, x, o: (x.astype(object), _f8(x)),
        "object_none": lambda r, x, o: (np.array([None] + x.tolist()[1:], dtype=object), INVALID),
        "str_numeric": lambda r, x, o: (x.astype(str), LOOSE),
        "str": lambda r, x, o: (np.array(["a"] * x.shape[-1]), INVALID),
        "bytes": lambda r, x, o: (x.tobytes(), INVALID),
        "python_str": lambda r, x, o: ("q", INVALID),
        "none": lambda r, x, o: (None, INVALID),
        "dict": lambda r, x, o: ({"q": 1.0}, INVALID),
        "scalar": lambda r, x, o: (float(x[0]), INVALID),
        "0d": lambda r, x, o: (np.array(x[0]), INVALID),
        "short": lambda r, x, o: (x[:-1].copy(), INVALID),
        "long": lambda r, x, o: (np.append(x, 0.5), INVALID),
        "empty": lambda r, x, o: (np.empty(0), INVALID),
        "column": lambda r, x, o: (x[:, None].copy(), INVALID),
        "ragged": lambda r, x, o: ([x.tolist(), x.tolist()[:-1]], INVALID),
        "empty_batch": lambda r, x, o: (np.empty((0, x.shape[-1])), _f8(np.empty((0, x.shape[-1])))),
        "batch2": lambda r, x, o: ((y := np.stack([x, o])), _f8(y)),
        "batch3x1": lambda r, x, o: ((y := np.stack([x, o, x])[:, None]), _f8(y)),
        "fortran_batch": lambda r, x, o: ((y := np.asfortranarray(np.stack([x, o]))), _f8(y)),
        "strided": lambda r, x, o: (np.repeat(x, 2)[::2], _f8(x)),
        "negative_stride": lambda r, x, o: (_negative_stride(x), _f8(x)),
        "big_endian": lambda r, x, o: (x.astype(">f8"), _f8(x)),
        "readonly": lambda r, x, o: (_readonly(x), _f8(x)),
        "unaligned": lambda r, x, o: (_unaligned(x), _f8(x)),
        "masked": lambda r, x, o: (np.ma.array(x), _f8(x)),
        "masked_some": lambda r, x, o: (np.ma.array(x, mask=np.arange(x.size) == 0), LOOSE),
        "matrix": lambda r, x, o: (np.matrix(x), LOOSE),
        "memoryview": lambda r, x, o: (memoryview(x.copy()), _f8(x)),
        "nan": lambda r, x, o: ((y := _at(r, x, np.nan)), _f8(y)),
        "inf": lambda r, x, o: ((y := _at(r, x, np.inf)), _f8(y)),
        "-inf": lambda r, x, o: ((y := _at(r, x, -np.inf)), _f8(y)),
        "nan_batch": lambda r, x, o: ((y := np.stack([x, _at(r, o, np.nan)])), _f8(y)),
        "huge": lambda r, x, o: ((y := _at(r, x, r.choice([1e300, -1e300, 1e154, 1.7e308]))), _f8(y)),
        "subnormal": lambda r, x, o: ((y := _at(r, x, 5e-324)), _f8(y)),
    }
    return m


ARRAY_MUTATIONS = _array_mutations()
# mutations whose input holds NaN or inf somewhere: the result must be an error or NaN
NONFINITE = {"nan", "inf", "-inf", "nan_batch"}
# floating-base configurations: the base quaternion (q[3:7]) scaled
QUATERNION_MUTATIONS = {
    "huge_quat": lambda s: s * 1e155,
    "big_quat": lambda s: s * 1e100,
    "tiny_quat": lambda s: s * 1e-160,
    "scaled_quat": lambda s: s * 3.0,
    "zero_quat": lambda s: s * 0.0,
}


def mutate_array(rng, name: str, x: np.ndarray, other: np.ndarray) -> Arg:
    value, clean = ARRAY_MUTATIONS[name](rng, x, other)
    return Arg(value, clean, {name}, describe(value))


def mutate_quaternion(name: str, q: np.ndarray) -> Arg:
    y = q.copy()
    y[3:7] = QUATERNION_MUTATIONS[name](y[3:7])
    return Arg(y, INVALID if name == "zero_quat" else _f8(y), {name}, describe(y))
