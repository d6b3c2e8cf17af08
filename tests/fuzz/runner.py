"""Run the fuzz cases in worker subprocesses (see :mod:`fuzz.worker`) with a time budget per
call: a worker that dies (segfault, abort) or exceeds the budget is recorded as a crash or a
hang for the case it was running, and a new worker continues with the next case."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FUZZ_DIR.parent)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONWARNINGS"] = "ignore"
    return env


def run(robots: list[str], seed: int, count: int, call_timeout: float = 30.0) -> list[dict]:
    """Every case of every robot, one record each (see :class:`fuzz.verify.Checker`)."""
    records: list[dict] = []
    pending = [f"{r}:0" for r in robots]
    while pending:
        proc = subprocess.Popen([sys.executable, "-m", "fuzz.worker", str(seed), str(count), *pending],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=FUZZ_DIR.parent)
        pending = _drain(proc, robots, pending, count, call_timeout, records)
    return records


def _drain(proc, robots, pending, count, call_timeout, records) -> list[str]:
    """Read one worker's records; return the robots (with first case) still to run."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    current = None  # (robot, index) begun and not finished
    buf = b""
    deadline = time.monotonic() + call_timeout + 60  # start-up: imports and loading the robot
    while True:
        left = deadline - time.monotonic()
        ready = sel.select(timeout=max(left, 0)) if left > 0 else []
        if not ready:
            proc.kill()
            proc.wait()
            return _after(current, "hang", f"no answer within {call_timeout:.0f} s", robots, pending, count, records,
                          proc)
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            proc.wait()
            if current is None:
                if proc.returncode:
                    raise RuntimeError(f"fuzz worker failed before any case: {proc.stderr.read().decode()[-2000:]}")
                return []
            return _after(current, "crash", f"the worker died (exit status {proc.returncode})", robots, pending,
                          count, records, proc)
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            text = line.decode()
            if text.startswith("B "):
                current = json.loads(text[2:])
                deadline = time.monotonic() + call_timeout
            elif text.startswith("R "):
                records.append(json.loads(text[2:]))
                current = None


def _after(current, outcome, reason, robots, pending, count, records, proc) -> list[str]:
    key, i = current["robot"], current["index"]
    stderr = proc.stderr.read().decode(errors="replace").strip().splitlines()
    records.append({**current, "outcome": outcome, "seconds": None,
                    "reason": reason + (f"; last stderr line: {stderr[-1][:200]}" if stderr else "")})
    order = [p.partition(":")[0] for p in pending]
    rest = order[order.index(key):]
    nxt = [f"{key}:{i + 1}"] if i + 1 < count else []
    return nxt + [f"{r}:0" for r in rest[1:]]
