"""Timing helpers for ``bench/speed.py``: interleaved medians, start-up probes, machine line.

The machine is shared, so every comparison times the contenders in turns
(A, B, A, B, ...) and reports medians: a burst of load hits all of them.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np


def interleaved(funcs: dict, number: int, repeat: int, best: bool = False) -> dict:
    """Median (``best``: minimum) seconds per call of each zero-argument function, timed in turns."""
    for f in funcs.values():
        f()  # warm-up (compilation, caches)
    runs = {k: [] for k in funcs}
    for _ in range(repeat):
        for k, f in funcs.items():
            runs[k].append(timeit.timeit(f, number=number) / number)
    return {k: float(np.min(v) if best else np.median(v)) for k, v in runs.items()}


def forced(f, work: int, idle: float):
    """``f`` run with the batch dispatcher's thresholds set (``parallel.PARALLEL_WORK``,
    ``PARALLEL_IDLE``, see ``parallel.use_parallel``): ``forced(f, 0, -inf)`` runs the parallel
    loop whatever the load, ``forced(f, 1 << 62, 0.5)`` the serial one."""
    from composedyn.dynamics.compiled import parallel

    def run():
        keep = parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE
        parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = work, idle
        try:
            return f()
        finally:
            parallel.PARALLEL_WORK, parallel.PARALLEL_IDLE = keep
    return run


def machine() -> str:
    """One line: date (UTC), CPU model, core count, load, library versions."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numba
    import pinocchio

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{now}; {cpu}, {os.cpu_count()} cores, load average {load}; Python {platform.python_version()}, "
            f"NumPy {np.__version__}, numba {numba.__version__}, Pinocchio {pinocchio.__version__}")


def _run(code: str, env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return out.stdout.strip().splitlines()[-1]


IMPORT = "import time; t = time.perf_counter(); import composedyn; print(time.perf_counter() - t)"
FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
import composedyn as cd
robot = cd.from_urdf({urdf!r})
q = np.full(robot.dof, 0.1)
t1 = time.perf_counter()
robot.inverse_dynamics(q, q, q)
t2 = time.perf_counter()
robot.warm_up()
t3 = time.perf_counter()
robot.warm_up(batch=True)
t4 = time.perf_counter()
print(t2 - t1, t2 - t0, t3 - t1, t4 - t1)
"""


def startup(urdf: str, repeat: int = 5) -> dict:
    """Seconds: ``import composedyn``; first inverse_dynamics call with an empty numba cache
    (compilation) and with the cache filled (a second process); warm_up() and
    warm_up(batch=True) totals.  Medians of ``repeat`` processes (import, cached) or one (cold)."""
    imp = float(np.median([float(_run(IMPORT)) for _ in range(repeat)]))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, COMPOSEDYN_BACKEND="auto")
        cold = [float(x) for x in _run(FIRST_CALL.format(urdf=urdf), env).split()]
        warm = np.median([[float(x) for x in _run(FIRST_CALL.format(urdf=urdf), env).split()]
                          for _ in range(repeat)], axis=0)
    return {"import": imp, "cold_call": cold[0], "cold_warm_up": cold[2], "cold_warm_up_batch": cold[3],
            "cached_call": warm[0], "cached_process": warm[1], "cached_warm_up": warm[2]}


def linear_fit(x, y) -> tuple[float, float, float]:
    """Least-squares y = a + b x; returns (a, b, R^2)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    b, a = np.polyfit(x, y, 1)
    r2 = 1.0 - np.sum((y - a - b * x) ** 2) / np.sum((y - y.mean()) ** 2)
    return float(a), float(b), float(r2)


def now() -> float:
    return time.perf_counter()
