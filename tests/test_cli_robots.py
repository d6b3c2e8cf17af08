"""``composedyn robots`` marks the bundled closed chains with their actuated joint count."""

import composedyn as cd
from composedyn.cli import main
from composedyn.robots import names


def test_robots_lists_closed_chains_with_actuated_joints(capsys):
    assert main(["robots"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert set(lines) == set(names())
    for name in names():
        try:
            chain = cd.load_closed_chain(name)
        except cd.ModelError:  # an open tree: no loop-closure description
            assert "closed chain" not in lines[name] and f"{cd.load(name).dof} dof" in lines[name]
            continue
        assert f"closed chain, {chain.dof} actuated of {chain.robot.dof} tree joints" in lines[name]


def test_open_tree_commands_refuse_closed_chains_with_one_line(tmp_path, capsys):
    for argv in (["demo", "fourbar"], ["equations", "slider_crank"]):  # torques, simulate: test_closed_cli.py
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "closed chain" in err[0] and "load_closed_chain" in err[0], (argv, err)
    assert main(["info", "fivebar"]) == 0
    assert "closed chain" in capsys.readouterr().out


def test_progress_is_drawn_only_when_stderr_is_a_terminal():
    import io

    from composedyn.progress import Progress

    class Clock:
        now = 0.0

        def __call__(self):
            return self.now

    class Tty(io.StringIO):
        def isatty(self):
            return True

    counts = {}
    for stream in (io.StringIO(), Tty()):
        clock = Clock()
        with Progress(1000, "x", stream=stream, clock=clock) as bar:
            for k in range(999):
                clock.now = 1.0 + 0.01 * k  # ten seconds of steps, one every 10 ms
                bar.advance()
        counts[type(stream).__name__] = stream.getvalue().count("\r")
    assert counts["StringIO"] == 0 and counts["Tty"] >= 50, counts


def test_complex_joint_arrays_are_rejected_not_truncated():
    import numpy as np
    import pytest

    robot = cd.load("two_link")
    z = np.zeros(2)
    with pytest.raises(ValueError, match="q is complex"):
        robot.inverse_dynamics(np.array([1j, 0.0]), z, z)


def test_reports_get_ordinary_file_permissions(tmp_path):
    """Atomic writes go through mkstemp (mode 0600); the result must look like a normal file."""
    import os

    from composedyn.writing import Staged, write_atomic

    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", "{}")
        with Staged() as st:
            with open(st.tmp(tmp_path / "b.csv"), "w") as f:
                f.write("x\n")
            st.commit()
    finally:
        os.umask(umask)
    for name in ("a.json", "b.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644
