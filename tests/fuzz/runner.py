"""Run numbered cases in worker subprocesses with a time budget per case.

A worker (``python -m MODULE ARG... START``) runs cases START, START + 1, ... and prints
``B {json}`` before each (with ``"g"``, the case number) and ``R {json}`` after it, flushed.
A worker that dies (segfault, abort, memory limit) or exceeds the budget is recorded as a
crash or a hang for the case it was running, and a new worker continues with the next case.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent
START_UP = 90.0  # s allowed for a worker's imports before its first case


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONWARNINGS"] = "ignore"
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def run(module: str, args: list[str], total: int, timeout: float) -> list[dict]:
    """One record per case 0 .. total - 1 (the worker's, or a crash/hang record)."""
    records: list[dict] = []
    start = 0
    while start < total:
        proc = subprocess.Popen([sys.executable, "-m", module, *args, str(start)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_env(), cwd=TESTS_DIR)
        try:
            start = _drain(proc, timeout, records, total)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return records


def _drain(proc, timeout: float, records: list, total: int) -> int:
    """Read one worker's records; return the number of the next case to run."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    current = None  # the case begun and not finished
    buf = b""
    deadline = time.monotonic() + START_UP
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(timeout=left):
            proc.kill()
            proc.wait()
            if current is None:
                raise RuntimeError(f"worker {proc.args} did not start within {START_UP:.0f} s")
            return _lost(current, "hang", f"no answer within {timeout:.0f} s", proc, records)
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            proc.wait()
            if current is None:
                if proc.returncode:
                    raise RuntimeError(f"worker failed outside a case: {proc.stderr.read().decode()[-3000:]}")
                return total
            return _lost(current, "crash", f"the worker died (exit status {proc.returncode})", proc, records)
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace")
            if text.startswith("B "):
                current = json.loads(text[2:])
                deadline = time.monotonic() + timeout
            elif text.startswith("R "):
                records.append(json.loads(text[2:]))
                current = None


def _lost(current: dict, outcome: str, reason: str, proc, records: list) -> int:
    stderr = proc.stderr.read().decode(errors="replace").strip().splitlines()
    records.append({**current, "outcome": outcome, "seconds": None,
                    "reason": reason + (f"; last stderr line: {stderr[-1][:200]}" if stderr else "")})
    return current["g"] + 1


def begin(out, record: dict) -> None:
    out.write("B " + json.dumps(record, default=str) + "\n")
    out.flush()


def end(out, record: dict) -> None:
    out.write("R " + json.dumps(record, default=str) + "\n")
    out.flush()
