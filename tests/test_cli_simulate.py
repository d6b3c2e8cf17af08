"""``composedyn simulate`` and ``composedyn demo`` through the console script,
and the progress bar's show-only-when-slow rule."""

from __future__ import annotations

import io
import json
import re

import numpy as np

import composedyn as cd
from composedyn.progress import Progress
from composedyn.simulation.reference_motion import demo_motion
from test_cli_torques import error_lines, run, write_csv


def test_simulate_generated_motion_writes_the_report(tmp_path):
    r = run("simulate", "panda", "--duration", "1", "--samples", "51", "--offset", "0.01",
            "--json", tmp_path / "r.json", "--plot", tmp_path / "r.png")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["ok"] is True and data["samples"] == 51 and data["t_end"] == 1.0
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    final = float(re.search(r"final error ([0-9.e+-]+)", r.stdout).group(1))
    assert final < 1e-3  # 0.01 rad initial error, kp = 100: exp(-10) * 11 * 0.01


def test_simulate_tracks_a_csv_and_flags_limits(tmp_path):
    panda = cd.load("panda")
    fast = demo_motion(panda, 0.25, fraction=0.5)
    t = np.linspace(0.0, 0.25, 101)
    path = write_csv(tmp_path / "fast.csv", t, fast(t)[0])
    r = run("simulate", "panda", path, "--samples", "26", "--json", tmp_path / "r.json")
    assert r.returncode == 1, r.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["source"] == str(path) and any(v["quantity"] == "effort" for v in data["violations"])


def test_simulate_bad_input_exits_2_and_writes_nothing(tmp_path):
    (tmp_path / "bad.csv").write_text("time,joint1\n0,0\n")
    out = tmp_path / "out"
    out.mkdir()
    for args, needle in ((["--mismatch", "2"], "--mismatch"), ([tmp_path / "bad.csv"], "joint2")):
        r = run("simulate", "panda", *args, "--json", out / "r.json")
        assert r.returncode == 2 and needle in error_lines(r.stderr)[0] and len(error_lines(r.stderr)) == 1, r.stderr
    assert list(out.iterdir()) == []


def test_demo_checks_tracks_and_plots(tmp_path):
    r = run("demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "within limits" in r.stdout and "effort limit exceeded on" in r.stdout
    exact = re.search(r"exact model: .*final error ([0-9.e+-]+)", r.stdout)
    assert exact and float(exact.group(1)) < 1e-6
    assert (tmp_path / "composedyn-demo.png").read_bytes()[:4] == b"\x89PNG"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_silent_for_short_runs_and_drawn_for_long_ones():
    """On a terminal; elsewhere nothing is ever drawn (tests/test_cli_robots.py)."""
    clock, out = Clock(), Tty()
    with Progress(3, "x", stream=out, clock=clock) as bar:
        bar.advance()
        clock.now = 0.5
        bar.advance()
    assert out.getvalue() == ""
    clock, out = Clock(), Tty()
    with Progress(3, "x", stream=out, clock=clock) as bar:
        bar.advance()
        clock.now = 1.5
        bar.advance()
        bar.advance()
    text = out.getvalue()
    assert "2/3" in text and "3/3" in text and text.endswith("\n") and "1/3" not in text
