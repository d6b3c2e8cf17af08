"""The README's examples run: every ```python block (in order, one namespace,
in a scratch folder), then the ``composedyn`` commands of the "Command line"
section through the console script on the files those blocks wrote.

``composedyn demo`` is skipped here: tests/test_cli_simulate.py runs it.
"""

from __future__ import annotations

import pytest

from doc_blocks import ROOT, blocks, run_python_blocks
from test_cli_torques import error_lines, run

README = ROOT / "README.md"


def section(title: str, text: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


def test_python_blocks_run(scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    assert run_python_blocks(README.read_text(encoding="utf-8"), "README.md") >= 5
    assert (scratch / "motion.csv").exists() and (scratch / "report.png").exists()


def test_command_line_examples_run(scratch):
    if not (scratch / "motion.csv").exists():
        pytest.skip("needs the files written by the python blocks")
    (cmds,) = blocks("bash", section("Command line", README.read_text(encoding="utf-8")))
    ran = 0
    for line in cmds.splitlines():
        args = line.split("#")[0].split()
        if not args or args[:2] == ["composedyn", "demo"]:
            continue
        assert args[0] == "composedyn", line
        r = run(*args[1:], cwd=scratch)
        assert r.returncode in (0, 1) and not error_lines(r.stderr), (line, r.stderr)
        ran += 1
    assert ran >= 2 and (scratch / "report.json").exists() and (scratch / "tracking.json").exists()
