"""``composedyn warm-up`` and ``robot.warm_up()``: one progress line per group that had to compile,
silence for groups loaded from a cache."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from composedyn.dynamics.compiled import cache
from composedyn.kernels.warm import Steps, groups


def test_progress_lines_name_only_the_groups_that_compiled(monkeypatch):
    counts = iter([0, 0, 0, 3, 3, 3])  # compiled_count before/after each group
    monkeypatch.setattr(cache, "compiled_count", lambda: next(counts))
    monkeypatch.setenv("COMPOSEDYN_COMPILE_NOTICE", "1")
    out = io.StringIO()
    steps = Steps(3, out)
    assert steps.run("loaded", lambda: 1) == 1
    steps.run("compiled", lambda: None)
    steps.run("loaded too", lambda: None)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("composedyn: warm-up 2/3 compiled: ") and lines[0].endswith(" s")
    assert set(steps.seconds) == {"loaded", "compiled", "loaded too"}


def test_progress_lines_follow_the_notice_switch(monkeypatch):
    counts = iter([0, 1])
    monkeypatch.setattr(cache, "compiled_count", lambda: next(counts))
    monkeypatch.setenv("COMPOSEDYN_COMPILE_NOTICE", "0")
    out = io.StringIO()
    Steps(1, out).run("compiled", lambda: None)
    assert out.getvalue() == ""


def test_warm_up_command_compiles_or_loads_every_group():
    env = {k: v for k, v in os.environ.items() if k != "COMPOSEDYN_COMPILE_NOTICE"}
    proc = subprocess.run([sys.executable, "-m", "composedyn.cli", "warm-up"], capture_output=True, text=True,
                          env=env, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"{len(groups())} groups of kernels ready in "), proc.stdout
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("composedyn: warm-up ")]
    notices = [ln for ln in proc.stderr.splitlines() if "compiling dynamics kernels" in ln]
    assert len(notices) == (1 if progress else 0), proc.stderr
    assert len(proc.stderr.splitlines()) == len(progress) + len(notices), proc.stderr
    again = subprocess.run([sys.executable, "-m", "composedyn.cli", "warm-up"], capture_output=True, text=True,
                           env=env, timeout=1800, check=False)
    assert again.returncode == 0 and again.stderr == "", again.stderr[-3000:]  # all cached now
