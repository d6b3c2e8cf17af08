"""The corrupt-CSV corpus (see :mod:`fuzz.csv_corpus`): malformed trajectory and log CSVs of
panda and puma560 (whose velocity and effort limits are missing), each read through
``cd.read_log`` and checked through ``cd.check_many(robot, [path], errors="report")`` in a worker
subprocess under a memory limit and a time budget, and a few through the real ``composedyn
torques`` command.  Each gives a one-line ValueError (CLI: exit status 2, one stderr line) or
an honest verdict: never "within limits" for altered data or a robot with unchecked limits,
"inconsistent" for contradicting velocities, the passing verdict for an intact file.  Counts
in the terminal summary."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fuzz import report
from fuzz.csv_corpus import csv_corpus
from fuzz.report import FAILING
from fuzz.runner import run

ENTRIES = csv_corpus()
TIMEOUT = 20.0  # s per file (each reads and checks in well under 1 s)
CLI_TIMEOUT = 120.0  # s per command (start-up included)
CLI_SAMPLES = {  # name: (robot, exit status, verdict in --json or None for an unreadable file)
    "valid_planner": ("panda", 0, "within limits"),
    "header_only": ("panda", 2, None),
    "utf16": ("panda", 2, None),
    "velocity_zero_while_moving": ("panda", 3, "inconsistent"),
    "valid_measured_efforts": ("puma560", 0, "unchecked"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("csv_corpus")
    for name, robot, file, content, expect in ENTRIES:
        (d / file).write_bytes(content)
    (d / "manifest.json").write_text(json.dumps([[n, r, f, e] for n, r, f, _, e in ENTRIES]))
    return d


@pytest.fixture(scope="module")
def records(folder) -> list[dict]:
    recs = run("fuzz.csv_worker", [str(folder)], len(ENTRIES), TIMEOUT)
    c = Counter(r["outcome"] for r in recs)
    verdicts = Counter(r["check"] for r in recs if r["outcome"] == "verdict")
    report.add([f"corpus CSVs: {len(recs)} files, {c['error']} one-line errors, {c['verdict']} honest verdicts "
                f"({', '.join(f'{v} {n}' for v, n in sorted(verdicts.items()))}), "
                f"{c['crash']} crashes/tracebacks, {c['wrong']} wrong (reassuring on bad data, or a valid file "
                f"refused), {c['hang']} hangs"])
    return recs


def _lines(recs: list[dict]) -> str:
    return "\n".join(f"  [{r['outcome']}] {r['name']} ({r['robot']}, {r['file']}, expect {r['expect']}): "
                     f"{r['reason'][:300]}" for r in recs[:10])


def test_every_csv_ran(records):
    assert [r["g"] for r in records] == list(range(len(ENTRIES)))
    outcomes = Counter(r["outcome"] for r in records)
    assert outcomes["error"] > len(ENTRIES) // 2 and outcomes["verdict"] >= 10, outcomes


def test_no_crash_wrong_verdict_or_hang(records):
    bad = [r for r in records if r["outcome"] in FAILING]
    assert not bad, f"{len(bad)} CSVs not handled (reproduce: fuzz.csv_corpus.csv_corpus() entry g):\n{_lines(bad)}"


def test_the_verdicts_cover_every_kind(records):
    """The corpus reaches every verdict a CSV can get, so the classification is exercised."""
    seen = {r["check"] for r in records if r["outcome"] == "verdict"}
    assert {"within limits", "unchecked", "exceeded", "damaged", "inconsistent"} <= seen, seen


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("composedyn")
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from composedyn.cli import main; sys.exit(main())"]


@pytest.mark.parametrize("name", list(CLI_SAMPLES))
def test_cli_process(folder, tmp_path, name):
    robot, status, verdict = CLI_SAMPLES[name]
    file = next(f for n, r, f, *_ in ENTRIES if n == name and r == robot)
    out = tmp_path / "out.json"
    p = subprocess.run(_cli() + ["torques", robot, str(folder / file), "--json", str(out)], capture_output=True,
                       text=True, timeout=CLI_TIMEOUT)
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.returncode == status, (p.returncode, p.stdout[-1000:], p.stderr[-1000:])
    lines = [x for x in p.stderr.splitlines() if x.strip() and not x.startswith("composedyn: warning:")]
    data = json.loads(out.read_text()) if out.exists() else None
    if verdict is None:
        assert len(lines) == 1 and lines[0].startswith("composedyn: error:"), p.stderr[-2000:]
        assert data is None or data["verdict"] == "unreadable"
    else:
        assert lines == [], p.stderr[-2000:]
        assert data["verdict"] == verdict and data["ok"] == (verdict == "within limits"), data


@pytest.mark.parametrize("expect, read, check, complete, outcome", [
    ("altered", ("error", "x"), ("unreadable", "x"), True, "error"),
    ("valid", ("read", ""), ("within limits", ""), True, "verdict"),
    ("valid", ("read", ""), ("within limits", ""), False, "wrong"),
    ("valid", ("read", ""), ("unchecked", ""), False, "verdict"),
    ("valid", ("error", "x"), ("unreadable", "x"), True, "wrong"),
    ("altered", ("read", ""), ("within limits", ""), True, "wrong"),
    ("altered", ("read", ""), ("exceeded", ""), True, "verdict"),
    ("altered", ("read", "damaged"), ("exceeded", ""), True, "wrong"),
    ("inconsistent", ("read", "inconsistent"), ("inconsistent", ""), True, "verdict"),
    ("inconsistent", ("read", ""), ("exceeded", ""), True, "wrong"),
    ("error", ("read", ""), ("exceeded", ""), True, "wrong"),
    ("error", ("error", "x"), ("exceeded", ""), True, "wrong"),
    ("same", ("read", ""), ("exceeded", ""), True, "wrong"),
    ("error", ("crash", "x"), ("unreadable", "x"), True, "crash"),
])
def test_csv_classification(expect, read, check, complete, outcome):
    from fuzz.csv_worker import classify

    assert classify(expect, read, check, complete)[0] == outcome


def test_check_outcome_counts_a_wrapped_reader_exception_as_a_crash(tmp_path, monkeypatch):
    import composedyn as cd
    from composedyn.logs.rows import LogRow
    from fuzz.csv_worker import check_outcome

    path = str(tmp_path / "x.csv")
    row = LogRow(path, "unreadable", error=f"{path}: unreadable (IndexError: boom)")
    monkeypatch.setattr(cd, "check_many", lambda *a, **k: [row])
    assert check_outcome(cd.load("panda"), path)[0] == "crash"
