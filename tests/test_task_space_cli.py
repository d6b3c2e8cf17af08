"""``composedyn info`` lists the task-space frames; the task-space example script runs and plots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import composedyn as cd
from composedyn.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_info_prints_every_frame_and_its_body(capsys):
    assert main(["info", "panda"]) == 0
    out = capsys.readouterr().out
    block = out.split("frames (", 1)[1].splitlines()[1:]
    robot = cd.load("panda")
    assert [line.split()[0] for line in block] == list(robot.frame_names)
    assert "flange  (body of joint joint7, welded to link7)" in out and "link0  (fixed base)" in out


def test_task_space_tracking_script_converges_and_writes_a_plot(tmp_path):
    out = tmp_path / "track.png"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "task_space_tracking.py"), "--duration", "1.5",
                          "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    line = run.stdout.splitlines()[0]
    final = float(line.split("m -> ")[1].split(" m")[0])
    assert final < 1e-4 and out.stat().st_size > 10_000
