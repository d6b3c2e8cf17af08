"""Long-log torque checks and stick-slip simulation: time and peak memory.

    .venv/bin/python bench/verdicts.py [--rows 100000,1000000,10000000]

Torque checks: a CSV log of a 7-joint arm (the bundled Panda, time + 7
positions at 1 kHz, a smooth motion inside the position limits) is checked by
``composedyn torques`` in a fresh subprocess per size; the table gives wall
time (after imports) and peak resident memory (``ru_maxrss``) of that process.
"parse alone" is :func:`numpy.loadtxt` reading the same file in the same
blocks, the floor of any check that parses the text; "pin RNEA" is
Pinocchio's inverse dynamics alone over the same number of samples (timed on
100,000 samples of the Panda URDF of example-robot-data and scaled), when
Pinocchio is importable.
Simulation: 5 s of the PUMA 560 from rest, unactuated, with its Coulomb and
viscous friction, by the default stick-slip model and by the regularised
model (``smooth_friction=0.01``), after a warm-up run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

CHILD = r"""
import io, contextlib, json, resource, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
from composedyn.cli import main
t1 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["torques", sys.argv[1], sys.argv[2]])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "check": t2 - t1, "code": code,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "verdict": out.getvalue().splitlines()[0]}))
"""


def write_log(path: Path, robot, rows: int, block: int = 200_000) -> None:
    """time + one column per joint: q = centre + 0.4 half-range sin(w t), 1 kHz."""
    lo, hi = robot.limits["lower"], robot.limits["upper"]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    w = 0.5 + 0.25 * np.arange(robot.dof)
    with open(path, "w") as f:
        f.write(",".join(["time", *robot.joint_names]) + "\n")
        for s in range(0, rows, block):
            t = np.arange(s, min(rows, s + block)) * 1e-3
            q = mid + 0.4 * half * np.sin(np.outer(t, w))
            np.savetxt(f, np.column_stack([t, q]), delimiter=",", fmt="%.9g")


def check_in_subprocess(urdf: str, path: Path) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, urdf, str(path)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def parse_seconds(path: Path, rows: int = 50_000) -> float:
    t0 = time.perf_counter()
    with open(path) as f:
        f.readline()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while len(np.loadtxt(f, delimiter=",", max_rows=rows, ndmin=2)):
                pass
    return time.perf_counter() - t0


def pin_rnea_seconds_per_sample(samples: int = 100_000) -> float | None:
    import importlib.util
    import site

    if importlib.util.find_spec("pinocchio") is None:  # a venv layered on a base one: its .pth not read
        for p in list(sys.path):
            if (Path(p) / "cmeel.pth").is_file():
                site.addsitedir(p)
    if importlib.util.find_spec("pinocchio") is None:
        return None
    from composedyn.testing.pinocchio_oracle import erd_urdf, pin

    urdf = erd_urdf("panda")
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    rng = np.random.default_rng(0)
    q, v, a = (rng.uniform(-1, 1, (samples, model.nq)) for _ in range(3))
    t0 = time.perf_counter()
    for k in range(samples):
        pin.rnea(model, data, q[k], v[k], a[k])
    return (time.perf_counter() - t0) / samples


def simulation_rows() -> list:
    import composedyn as cd

    warnings.simplefilter("ignore")
    puma = cd.load("puma560")
    q0 = np.array([0.0, 0.5, -0.5, 0.0, 0.5, 0.0])
    t = np.linspace(0.0, 5.0, 501)
    cd.simulate(puma, q0, np.zeros(6), np.linspace(0.0, 0.05, 6))  # warm-up (compiled kernels)
    rows = []
    for label, kw in (("stick-slip (default)", {}), ("tanh, smooth_friction=0.01", {"smooth_friction": 0.01})):
        t0 = time.perf_counter()
        sim = cd.simulate(puma, q0, np.zeros(6), t, **kw)
        dt = time.perf_counter() - t0
        rise = float(np.max(np.diff(sim.energy)))
        rows.append((label, dt, sim.nfev, sim.switches, rise, float(sim.energy[0]), float(sim.energy[-1])))
    t0 = time.perf_counter()
    short = cd.simulate(puma, np.zeros(6), np.zeros(6), np.linspace(0.0, 0.01, 11))
    rows.append(("stick-slip, q0 = 0, 10 ms", time.perf_counter() - t0, short.nfev, short.switches,
                 float(np.max(np.diff(short.energy))), float(short.energy[0]), float(short.energy[-1])))
    return rows


def main() -> None:
    import composedyn as cd
    from timing import machine

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="100000,1000000,10000000")
    args = ap.parse_args()
    urdf = "panda"
    warnings.simplefilter("ignore")
    robot = cd.load(urdf)
    try:
        print(machine())
    except ImportError:  # machine() names the Pinocchio version
        import platform

        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor()}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, numpy {np.__version__}")
    pin_per_sample = pin_rnea_seconds_per_sample()
    if pin_per_sample is None:
        print("(Pinocchio is not importable from this interpreter: no pin RNEA column)")
    print("\n| rows | CSV size | check time | peak RSS | parse alone | check / parse | pin RNEA alone | verdict |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as d:
        small = Path(d) / "small.csv"
        write_log(small, robot, 1000)
        base = check_in_subprocess(urdf, small)
        print(f"| 1,000 (baseline: imports, compiled kernels) | {small.stat().st_size / 1e6:.2f} MB "
              f"| {base['check']:.2f} s | {base['rss_mb']:.0f} MB | | | | |")
        for rows in (int(r) for r in args.rows.split(",")):
            path = Path(d) / f"log{rows}.csv"
            write_log(path, robot, rows)
            r = check_in_subprocess(urdf, path)
            parse = parse_seconds(path)
            pin = "" if pin_per_sample is None else f"{pin_per_sample * rows:.2f} s"
            verdict = r["verdict"].split(": ", 1)[1].split(" (")[0]
            print(f"| {rows:,} | {path.stat().st_size / 1e6:.0f} MB | {r['check']:.2f} s | {r['rss_mb']:.0f} MB "
                  f"| {parse:.2f} s | {r['check'] / parse:.2f} | {pin} | {verdict} |", flush=True)
            os.unlink(path)
    print("\n| PUMA 560, 5 s from rest, unactuated | wall time | RHS evaluations | stick/slip switches "
          "| max energy increase per sample | E(0) | E(5 s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, dt, nfev, sw, rise, e0, e1 in simulation_rows():
        print(f"| {label} | {dt:.3f} s | {nfev} | {sw} | {rise:.2e} J | {e0:.2f} J | {e1:.2f} J |")


if __name__ == "__main__":
    main()
