"""Deterministic fuzz cases: case ``i`` of robot ``key`` is a function of (seed, key, i) only,
so that a worker restarted after a crash or a hang rebuilds exactly the cases that follow."""

from __future__ import annotations

import inspect
import zlib
from dataclasses import dataclass, field

import numpy as np

from fuzz.methods import FAST_METHODS, FIXED_METHODS, FLOATING_METHODS
from fuzz.mutations import (
    ARRAY_MUTATIONS,
    INVALID,
    LOOSE,
    NONFINITE,
    QUATERNION_MUTATIONS,
    Arg,
    describe,
    mutate_array,
    mutate_quaternion,
)


@dataclass
class Case:
    robot: str
    index: int
    target: str  # "robot" or "fast"
    method: str
    args: list  # of Arg
    kwargs: dict  # name -> Arg
    tags: set = field(default_factory=set)

    @property
    def nonfinite(self) -> bool:
        return bool(self.tags & NONFINITE) or "nonfinite" in self.tags

    def describe(self) -> str:
        parts = [a.descr or describe(a.value) for a in self.args]
        parts += [f"{k}={a.descr or describe(a.value)}" for k, a in self.kwargs.items()]
        where = "robot.fast" if self.target == "fast" else "robot"
        return f"{self.robot}: {where}.{self.method}({', '.join(parts)})"


FAST_ARGS = {"inverse_dynamics": ("q", "qd", "qdd"), "rnea": ("q", "qd", "qdd"), "mass_matrix": ("q",),
             "coriolis_matrix": ("q", "qd"), "bias_torques": ("q", "qd"), "gravity_torques": ("q",),
             "forward_dynamics": ("q", "qd", "tau")}


class Generator:
    """Builds the cases of one robot (see the module doc)."""

    def __init__(self, key: str, robot, seed: int, tmpdir: str):
        self.key, self.robot, self.seed, self.tmpdir = key, robot, seed, tmpdir
        self.floating = bool(getattr(robot, "floating", False))
        self.methods = FLOATING_METHODS if self.floating else FIXED_METHODS
        self.frames = tuple(robot.frame_names)
        self.n_fast = robot.model.n
        names = list(self.methods)
        w = np.array([self.methods[m][2] for m in names])
        self._names, self._p = names, w / w.sum()

    def rng(self, i: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(self.key.encode()), i])

    # ---- clean values ----
    def _q(self, rng) -> np.ndarray:
        if self.floating:
            return self.robot.random_configuration(seed=int(rng.integers(2**31)))
        return rng.uniform(-1.5, 1.5, self.robot.nq)

    def _clean(self, rng, role: str, method: str, frame: str | None):
        r = self.robot
        if role == "q":
            return self._q(rng)
        if role == "v":
            return rng.normal(size=r.nv)
        if role == "q0":
            return None
        if role == "frame":
            return str(rng.choice(self.frames))
        if role == "reference":
            return str(rng.choice(["world", "local"]))
        if role == "bool":
            return bool(rng.integers(2))
        if role == "fext":
            return None if rng.random() < 0.5 else {self.frames[-1]: rng.normal(size=6)}
        if role == "smooth":
            return None if rng.random() < 0.5 else 0.05
        if role == "dt":
            return 0.1 if method == "integrate" else (None if rng.random() < 0.5 else 0.01)
        if role == "target":
            return r.frame_pose(self._q(rng), frame)
        if role == "contacts":
            feet = [f for f in self.frames if f.endswith("FOOT")]
            return feet or [self.frames[-1]]
        if role == "scale":
            return 0.1
        if role == "seed":
            return int(rng.integers(5))
        if role == "samples":
            return 8
        if role == "size":
            return 2
        if role == "path":
            return f"{self.tmpdir}/out{int(rng.integers(10**6))}.urdf"
        if role == "damping":
            return 0.0
        raise KeyError(role)

    # ---- hostile values of one role ----
    def _hostile(self, rng, role: str, clean, method: str) -> Arg:
        f = self.frames
        name = clean if isinstance(clean, str) else f[0]
        pose = clean.tolist() if isinstance(clean, np.ndarray) else np.eye(4).tolist()
        options = {
            "frame": [(str(rng.choice(f)), None), ("nope", INVALID), ("", INVALID), (42, INVALID), (None, INVALID),
                      (name.encode(), INVALID), (" " + name, INVALID), (np.str_(name), name), (-1, INVALID),
                      (10**20, INVALID), (float("nan"), INVALID), ([name], INVALID), (len(f), INVALID)],
            "reference": [("WORLD", LOOSE), ("global", INVALID), (None, INVALID), (0, INVALID), ("", INVALID)],
            "bool": [(None, LOOSE), ("yes", LOOSE), (2, LOOSE), (np.bool_(False), False), ([], LOOSE),
                     (np.array([True, False]), LOOSE)],
            "fext": [({"nope": np.ones(6)}, INVALID), ({f[-1]: np.ones(5)}, INVALID),
                     ({f[-1]: np.full(6, np.nan)}, INVALID), ([1.0, 2.0], INVALID), ({f[-1]: "abc"}, INVALID),
                     ({f[-1]: np.full(6, 1e300)}, None), ({f[-1]: np.ones((2, 6))}, LOOSE), (42, INVALID),
                     ({f[-1]: np.ones(6, dtype=">f8")}, None), ({f[-1]: np.ones(6) + 1j}, INVALID)],
            "smooth": [(-1.0, INVALID), (float("nan"), INVALID), (float("inf"), LOOSE), (-float("inf"), INVALID),
                       (10**400, INVALID), ("0.1", LOOSE), ([0.1], INVALID), (0, 0), (1e-300, None),
                       (np.float32(0.1), None), (None, None)],
            "dt": [(float("nan"), INVALID), (float("inf"), INVALID), (10**400, INVALID), ("x", INVALID),
                   ([0.1, 0.2], INVALID), (-0.01, LOOSE), (0, LOOSE), (np.float32(0.5), None)],
            "target": [(np.eye(3), INVALID), (np.full((4, 4), np.nan), INVALID), ("x", INVALID),
                       (pose, np.array(pose) if isinstance(clean, np.ndarray) else LOOSE),
                       (np.eye(4) * 2, LOOSE), (np.where(np.eye(4) > 0, 1.0, 1e300), LOOSE)],
            "contacts": [("nope", INVALID), ([], LOOSE), (42, INVALID), ({f[-1]: "weird"}, INVALID),
                         ([f[-1], f[-1]], LOOSE), (None, INVALID)],
            "scale": [(-1.0, LOOSE), (float("nan"), INVALID), (float("inf"), INVALID), ("x", INVALID),
                      (10**400, INVALID)],
            "seed": [(-1, INVALID), (1.5, LOOSE), ("x", INVALID), (10**30, LOOSE), (None, LOOSE)],
            "samples": [(0, INVALID), (-1, INVALID), (2.5, LOOSE), ("x", INVALID), (3, LOOSE)],
            "size": [(0, LOOSE), (-1, INVALID), (2.5, LOOSE), ("x", INVALID), ((2, 2), None)],
            "path": [(None, INVALID), (42, INVALID), ("/nonexistent-dir/x.urdf", INVALID), (self.tmpdir, INVALID)],
            "damping": [(-1.0, INVALID), (float("nan"), INVALID), (float("inf"), INVALID), (1e-3, None)],
        }[role]
        value, c = options[int(rng.integers(len(options)))]
        tags = {f"{role}:{describe(value)}"}
        if role == "smooth" and type(value) is int and value == 10**400:
            tags.add("smooth_overflow")
        if role == "bool" and value is None:
            tags.add("bool_none")
        if role == "fext" and isinstance(value, dict) and any(
                np.iscomplexobj(x) or (isinstance(x, np.ndarray) and not np.isfinite(x).all()) for x in value.values()):
            tags.add("nonfinite")
        return Arg(value, value if c is None else c, tags)

    # ---- cases ----
    def case(self, i: int) -> Case:
        """Case ``i``: first one clean call of each method (robot, then ``robot.fast``), then
        random methods with one hostile argument."""
        rng = self.rng(i)
        fast = [] if self.floating else list(FAST_METHODS)
        if i < len(self._names) + len(fast):
            if i >= len(self._names):
                return self._fast_case(i, rng, fast[i - len(self._names)])
            return self._robot_case(i, rng, self._names[i], clean=True)
        if fast and rng.random() < 0.3:
            return self._fast_case(i, rng)
        return self._robot_case(i, rng, str(rng.choice(self._names, p=self._p)))

    def _robot_case(self, i: int, rng, method: str, clean: bool = False) -> Case:
        positional, keywords, _ = self.methods[method]
        values = {}
        frame = None
        for name, role in positional + keywords:
            if role == "out":
                continue
            values[name] = self._clean(rng, role, method, frame)
            if role == "frame":
                frame = values[name]
        args = [Arg(values[n], values[n]) for n, _ in positional]
        kwargs = {n: Arg(values[n], values[n]) for n, r in keywords if r != "out" and (clean or rng.random() < 0.5)}
        case = Case(self.key, i, "robot", method, args, kwargs)
        if clean:
            case.tags.add("clean")
        else:
            self._mutate(rng, case, positional, dict(positional + keywords))
        return case

    def _mutate(self, rng, case: Case, positional, roles: dict):
        arrays = [k for k, (n, role) in enumerate(positional) if role in ("q", "v")]
        u = rng.random()
        has_out = "out" in roles
        if u < 0.05:
            case.tags.add("clean")
        elif u < 0.55 and arrays:
            k = int(rng.choice(arrays))
            name, role = positional[k]
            x = case.args[k].value
            other = self._q(rng) if role == "q" else rng.normal(size=x.shape)
            if role == "q" and self.floating and rng.random() < 0.3:
                case.args[k] = mutate_quaternion(str(rng.choice(list(QUATERNION_MUTATIONS))), x)
            else:
                case.args[k] = mutate_array(rng, str(rng.choice(list(ARRAY_MUTATIONS))), x, other)
            case.tags |= case.args[k].tags | {"param:" + self._param(case.method, k, name)}
        elif u < 0.75:
            hostile = [(n, r) for n, r in roles.items() if r not in ("q", "v", "out", "q0")]
            if not hostile or rng.random() < 0.15:
                self._signature(rng, case)
            else:
                name, role = hostile[int(rng.integers(len(hostile)))]
                clean = case.kwargs[name].clean if name in case.kwargs else (
                    case.args[[n for n, _ in positional].index(name)].clean if name in dict(positional)
                    else self._clean(rng, role, case.method, None))
                if role == "frame" and not isinstance(clean, str):
                    clean = self.frames[0]
                arg = self._hostile(rng, role, clean, case.method)
                if name in dict(positional):
                    case.args[[n for n, _ in positional].index(name)] = arg
                else:
                    case.kwargs[name] = arg
                pos = [n for n, _ in positional]
                case.tags |= arg.tags | {"param:" + (self._param(case.method, pos.index(name), name) if name in pos
                                                     else name)}
        elif (has_out or len(arrays) > 1) and arrays:
            self._alias(rng, case, positional, has_out)
        elif "q0" in roles:
            x = self._q(rng)
            case.kwargs["q0"] = mutate_array(rng, str(rng.choice(list(ARRAY_MUTATIONS))), x, self._q(rng))
            case.tags |= {"q0"} | case.kwargs["q0"].tags
        else:
            case.tags.add("clean")

    def _param(self, method: str, k: int, name: str) -> str:
        """The name of positional parameter ``k`` of ``robot.method`` (floating: v, a for qd, qdd)."""
        params = list(inspect.signature(getattr(self.robot, method)).parameters)
        return params[k] if k < len(params) else name

    def _signature(self, rng, case: Case):
        u = rng.integers(3)
        if u == 0:
            case.kwargs["bogus"] = Arg(1, INVALID, {"unknown keyword"})
        elif u == 1 and case.args:
            case.args.pop()
            case.tags.add("missing argument")
        else:  # more positional arguments than the method has parameters
            params = inspect.signature(getattr(self.robot, case.method)).parameters
            case.args += [Arg(1.0, INVALID, {"extra positional"}) for _ in range(len(params) + 1 - len(case.args))]
        case.tags.add("signature")

    def _result_shape(self, case: Case) -> tuple:
        nv = self.robot.nv
        return (nv, nv) if case.method == "mass_matrix" else (nv,)

    def _alias(self, rng, case: Case, positional, has_out: bool):
        """Inputs that are views of each other, or ``out=`` overlapping an input."""
        r = self.robot
        kinds = ["same_object", "overlapping_views"]
        if has_out:
            kinds += ["out_is_input", "out_overlaps", "out_fresh", "out_float32", "out_shape", "out_strided",
                      "out_readonly", "out_list"]
        kind = str(rng.choice(kinds))
        case.tags.add("alias:" + kind)
        vs = [k for k, (n, role) in enumerate(positional) if role == "v"]
        shape = self._result_shape(case)
        if kind == "same_object" and len(vs) >= 2:
            a = case.args[vs[0]]
            case.args[vs[1]] = Arg(a.value, a.clean.copy(), descr=f"<the same object as argument {vs[0] + 1}>")
        elif kind in ("overlapping_views", "out_overlaps") or kind == "same_object":
            size = sum(r.nq if positional[k][1] == "q" else r.nv for k in range(len(positional))
                       if positional[k][1] in ("q", "v")) + int(np.prod(shape)) + 2
            buf = np.empty(size)
            pos = 0
            for k, (n, role) in enumerate(positional):
                if role not in ("q", "v"):
                    continue
                x = case.args[k].clean
                buf[pos:pos + x.size] = x
                case.args[k] = Arg(buf[pos:pos + x.size], x.copy(), descr=f"buf[{pos}:{pos + x.size}]")
                pos += x.size - (1 if kind == "overlapping_views" else 0)
            if kind == "overlapping_views":  # the views share one entry: make both read the same number
                for k, (n, role) in enumerate(positional):
                    if role in ("q", "v"):
                        case.args[k].clean = np.array(case.args[k].value, copy=True)
            if kind == "out_overlaps":
                start = int(rng.integers(1, max(2, pos - 1)))
                case.kwargs["out"] = Arg(buf[start:start + int(np.prod(shape))].reshape(shape), "out",
                                         descr=f"buf[{start}:{start + int(np.prod(shape))}]")
        elif kind == "out_is_input":
            same = [k for k, (n, role) in enumerate(positional)
                    if role in ("q", "v") and case.args[k].value.shape == shape]
            k = int(rng.choice(same)) if same else 0
            if same:
                case.kwargs["out"] = Arg(case.args[k].value, "out", descr=f"<argument {k + 1} itself>")
            else:  # mass matrix: out holds q in its first row
                out = np.zeros(shape)
                x = case.args[0].clean
                out.flat[:x.size] = x
                case.args[0] = Arg(out.reshape(-1)[:x.size], x.copy(), descr="out.flat[:n]")
                case.kwargs["out"] = Arg(out, "out", descr="<out holding argument 1>")
        else:
            out = {"out_fresh": lambda: np.empty(shape), "out_float32": lambda: np.empty(shape, np.float32),
                   "out_shape": lambda: np.empty((shape[0] + 1,) + shape[1:]),
                   "out_strided": lambda: np.empty((shape[0] * 2,) + shape[1:])[::2],
                   "out_readonly": lambda: _readonly_empty(shape), "out_list": lambda: [0.0] * shape[0]}[kind]()
            case.kwargs["out"] = Arg(out, "out" if kind == "out_fresh" else INVALID)
            case.tags.add("param:out")
        case.tags.add("aliasing")

    # ---- robot.fast ----
    def _fast_case(self, i: int, rng, clean: str | None = None) -> Case:
        method = clean or str(rng.choice(list(FAST_METHODS)))
        k, tail, batches, _ = FAST_METHODS[method]
        n = self.n_fast
        batch = () if not batches or rng.random() < 0.6 else (int(rng.integers(0, 4)),)
        xs = [rng.uniform(-1.5, 1.5, batch + (n,)) for _ in range(k)]
        args = [Arg(x, x.copy()) for x in xs]
        case = Case(self.key, i, "fast", method, args, {}, {"fast"})
        rshape = batch + ((n,) if tail == "n" else (n, n))
        u = 1.0 if clean else rng.random()
        if u < 0.45:
            j = int(rng.integers(k))
            name = str(rng.choice(list(ARRAY_MUTATIONS)))
            other = rng.uniform(-1.5, 1.5, xs[j].shape)
            if xs[j].ndim == 1:
                case.args[j] = mutate_array(rng, name, xs[j], other)
            else:
                if name in NONFINITE and batch[0] > 0:
                    y = xs[j].copy()
                    y[-1, rng.integers(n)] = {"inf": np.inf, "-inf": -np.inf}.get(name, np.nan)
                    case.args[j] = Arg(y, y.copy(), {name})
                elif name in ("strided", "negative_stride", "big_endian", "readonly", "unaligned", "float32"):
                    y = {"strided": lambda x: np.repeat(x, 2, axis=-1)[..., ::2],
                         "negative_stride": _negative_stride_rows, "big_endian": lambda x: x.astype(">f8"),
                         "readonly": _readonly_copy, "unaligned": _unaligned_copy,
                         "float32": lambda x: x.astype(np.float32)}[name](xs[j])
                    case.args[j] = Arg(y, np.array(y, dtype=float), {name})
                else:
                    case.args[j] = Arg(xs[j].T.copy() if name == "column" else xs[j][:, :-1].copy(), INVALID,
                                       {name})
            case.tags |= case.args[j].tags | {"param:" + FAST_ARGS[method][j]}
        elif u < 0.75:
            self._fast_out(rng, case, rshape)
        elif u < 0.85 and method == "forward_dynamics":
            options = [(-1.0, INVALID), (float("nan"), INVALID), (-float("inf"), INVALID), (float("inf"), LOOSE),
                       (10**400, INVALID), (0.05, None), (0, None), ("x", INVALID)]
            value, c = options[int(rng.integers(len(options)))]
            case.kwargs["smooth_friction"] = Arg(value, value if c is None else c, {"fast_smooth"})
            case.tags |= {"fast_smooth", "param:smooth_friction"}
        elif u < 0.9 and k >= 2:
            case.args[1] = Arg(case.args[0].value, case.args[0].clean.copy(), descr="<the same object as argument 1>")
            case.tags.add("alias:same_object")
        else:
            case.tags.add("clean")
        return case

    def _fast_out(self, rng, case: Case, rshape: tuple):
        kind = str(rng.choice(["out_is_input", "out_overlaps", "out_fresh", "out_float32", "out_shape",
                               "out_strided", "out_readonly", "out_fortran"]))
        case.tags |= {"alias:" + kind, "aliasing"}
        if kind == "out_is_input" and case.args[0].value.shape == rshape:
            j = int(rng.integers(len(case.args)))
            case.kwargs["out"] = Arg(case.args[j].value, "out", descr=f"<argument {j + 1} itself>")
        elif kind in ("out_overlaps", "out_is_input"):
            size = sum(a.value.size for a in case.args) + int(np.prod(rshape)) + 2
            buf = np.empty(size)
            pos = 0
            for j, a in enumerate(case.args):
                x = a.clean
                buf[pos:pos + x.size] = x.ravel()
                case.args[j] = Arg(buf[pos:pos + x.size].reshape(x.shape), x.copy(), descr=f"buf[{pos}:{pos + x.size}]")
                pos += x.size
            start = int(rng.integers(0, max(1, pos - 1)))
            m = int(np.prod(rshape))
            case.kwargs["out"] = Arg(buf[start:start + m].reshape(rshape), "out", descr=f"buf[{start}:{start + m}]")
        else:
            shape = (rshape[0] + 1,) + rshape[1:] if rshape else (1,)
            out = {"out_fresh": lambda: np.empty(rshape), "out_float32": lambda: np.empty(rshape, np.float32),
                   "out_shape": lambda: np.empty(shape), "out_readonly": lambda: _readonly_empty(rshape),
                   "out_strided": lambda: np.empty(rshape[:-1] + (rshape[-1] * 2,))[..., ::2],
                   "out_fortran": lambda: np.empty(rshape, order="F")}[kind]()
            ok = (out.dtype == np.float64 and out.shape == rshape and out.flags.c_contiguous
                  and out.flags.writeable)
            case.kwargs["out"] = Arg(out, "out" if ok else INVALID)
            case.tags.add("param:out")


def _readonly_empty(shape) -> np.ndarray:
    y = np.zeros(shape)
    y.flags.writeable = False
    return y


def _readonly_copy(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y.flags.writeable = False
    return y


def _negative_stride_rows(x: np.ndarray) -> np.ndarray:
    return x[..., ::-1].copy()[..., ::-1]


def _unaligned_copy(x: np.ndarray) -> np.ndarray:
    buf = bytearray(x.nbytes + 1)
    a = np.frombuffer(buf, dtype=np.float64, count=x.size, offset=1).reshape(x.shape)
    a[...] = x
    return a
