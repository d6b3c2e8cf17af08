"""Reading rate of joint logs and scaling of fleet torque checks.

    python bench/logs.py [--messages 300000] [--logs 24] [--seconds 120] [--rate 500]

1. Reading: an MCAP bag (ROS 2, one ``/joint_states`` publisher, 7 joints with
   positions, velocities and efforts) of ``--messages`` messages, read by
   ``composedyn.read_log``; printed as messages per minute on one core, next to
   rosbags' own loops in the same run (raw records only, and records
   deserialised to message objects without keeping them) as the floor.
2. Checking: ``--logs`` MCAP logs of ``--seconds`` at ``--rate`` Hz on the
   Panda, checked by ``composedyn.check_many`` on a ``distributed.LocalCluster``
   with 1 worker (half of the logs) and with 2 workers (all of them), and in
   process (half of the logs).  Perfect scaling gives a time ratio
   t(2 workers, N logs) / t(1 worker, N/2 logs) of 1; the target is well under 2.
   The seconds each task computed (Dask's task stream) and the share of the
   wall time the workers were busy tell orchestration overhead (idle workers)
   from CPU contention (tasks that take longer when two run at once).

Prints Markdown tables for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

import composedyn as cd
from composedyn.testing.log_bags import write_log


def reading(tmp: Path, messages: int) -> None:
    from rosbags.highlevel import AnyReader

    names = [f"joint{i}" for i in range(1, 8)]
    rate = 1000.0
    path = write_log(tmp / "read", "mcap", [(names, rate, 1e-4)], duration=messages / rate)
    rows = []
    t0 = time.perf_counter()
    with AnyReader([path]) as r:
        n_raw = sum(1 for _ in r.messages(connections=[c for c in r.connections if c.topic == "/joint_states"]))
    rows.append(("rosbags: raw records", n_raw, time.perf_counter() - t0))
    t0 = time.perf_counter()
    with AnyReader([path]) as r:
        n = 0
        for con, _, raw in r.messages(connections=[c for c in r.connections if c.topic == "/joint_states"]):
            r.deserialize(raw, con.msgtype)
            n += 1
    rows.append(("rosbags: deserialise each message", n, time.perf_counter() - t0))
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        log = cd.read_log(path)
        best = min(best, time.perf_counter() - t0)
    rows.append(("composedyn.read_log (best of 3)", len(log.t), best))
    print(f"\n### Reading an MCAP bag ({n_raw} JointState messages, 7 joints, one core)\n")
    print("| reader | messages | seconds | messages per minute |")
    print("|---|---:|---:|---:|")
    for label, count, s in rows:
        print(f"| {label} | {count} | {s:.2f} | {count / s * 60 / 1e6:.2f} M |")


def checking(tmp: Path, logs: int, seconds: float, rate: float) -> None:
    from distributed import Client, LocalCluster, get_task_stream

    robot = cd.load("panda")
    lim = robot.limits
    center = dict(zip(robot.joint_names, (lim["lower"] + lim["upper"]) / 2))
    names = list(robot.joint_names)
    t0 = time.perf_counter()
    paths = [str(write_log(tmp / f"log{k}", "mcap", [(names[::-1], rate, 1e-4)], duration=seconds,
                           speed=(0.3, 1.2)[k % 2], center=center, seed=k)) for k in range(logs)]
    print(f"\n(wrote {logs} logs of {seconds:g} s at {rate:g} Hz in {time.perf_counter() - t0:.0f} s)")
    half = paths[: logs // 2]
    cd.check_many(robot, paths[:1])  # compiled kernels into the disk cache
    results, busy = [], []
    t0 = time.perf_counter()
    serial = cd.check_many(robot, half)
    results.append(("in process", len(half), time.perf_counter() - t0))
    for workers, batch in ((1, half), (2, paths)):
        t0 = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            # start-up (imports, kernels loaded from the disk cache, the robot built) is not timed
            cd.check_many(robot, paths[: 2 * workers], client=client)
            start = time.perf_counter() - t0
            t0 = time.perf_counter()
            with get_task_stream(client) as stream:
                rows = cd.check_many(robot, batch, client=client)
            wall = time.perf_counter() - t0
            compute = sum(s["stop"] - s["start"] for task in stream.data for s in task["startstops"]
                          if s["action"] == "compute")
            results.append((f"{workers} worker(s) (start-up {start:.1f} s, not counted)", len(batch), wall))
            busy.append((workers, compute / len(batch), compute / (wall * workers)))
        if workers == 1:
            assert rows == serial, "cluster rows differ from the serial run"
    print(f"\n### Fleet check scaling ({seconds:g} s logs at {rate:g} Hz, Panda, "
          f"{int(seconds * rate)} samples each)\n")
    print("| run | logs | seconds | s per log | messages per minute |")
    print("|---|---:|---:|---:|---:|")
    for label, count, s in results:
        print(f"| {label} | {count} | {s:.1f} | {s / count:.2f} | {count * seconds * rate / s * 60 / 1e6:.2f} M |")
    print("\n| workers | compute s per log (inside the task) | workers busy |")
    print("|---:|---:|---:|")
    for workers, per_log, frac in busy:
        print(f"| {workers} | {per_log:.2f} | {100 * frac:.0f} % |")
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    t1, t2 = results[1][2], results[2][2]
    print(f"\nt(2 workers, {len(paths)} logs) / t(1 worker, {len(half)} logs) = {t2 / t1:.2f} "
          "(1 = perfect scaling, target well under 2)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=300_000)
    ap.add_argument("--logs", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--rate", type=float, default=500.0)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    tmp = Path(tempfile.mkdtemp(prefix="composedyn-bench-logs-"))
    try:
        reading(tmp, args.messages)
        checking(tmp, args.logs, args.seconds, args.rate)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
