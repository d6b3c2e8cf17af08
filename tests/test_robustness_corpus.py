"""The corrupt-description corpus (see :mod:`fuzz.corpus`): every malformed URDF, xacro or DH
table, loaded through ``cd.load`` and through ``composedyn info`` in a worker subprocess under a
memory limit and a time budget, gives a one-line ModelError/ValueError (CLI: exit status 2, one
stderr line) or a valid robot whose M is finite, symmetric and positive definite.  Counts in the
terminal summary."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fuzz import report
from fuzz.corpus import corpus
from fuzz.report import FAILING
from fuzz.runner import run

ENTRIES = corpus()
# s per description: a valid one loads in well under 1 s; a hang is a load that no limit stops.  Above the
# xacro expansion's own wall-clock limit (importers.xacro.XACRO_SECONDS, 60 s), which stops the doubling
# entry in ~5 s on an idle core and took over 20 s with the suite's workers sharing two cores.
TIMEOUT = 90.0
CLI_SAMPLES = ("truncated", "binary_garbage", "axis_0 0 0")  # also run as a real `composedyn info` process


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("corpus")
    for name, file, content, expect, item in ENTRIES:
        path = d / file
        if isinstance(content, str):
            content = content.replace('filename="SELF"', f'filename="{path}"').encode()
        path.write_bytes(content)
    (d / "manifest.json").write_text(json.dumps([[n, f, e, i] for n, f, _, e, i in ENTRIES]))
    return d


@pytest.fixture(scope="module")
def records(folder) -> list[dict]:
    recs = run("fuzz.corpus_worker", [str(folder)], len(ENTRIES), TIMEOUT)
    c = Counter(r["outcome"] for r in recs)
    report.add([f"corpus descriptions: {len(recs)} files, {c['error']} one-line errors, {c['loaded']} valid robots "
                f"loaded, {c['crash']} crashes/tracebacks, {c['wrong']} wrong (loaded silently or refused when "
                f"valid), {c['hang']} hangs"])
    return recs


def _lines(recs: list[dict]) -> str:
    return "\n".join(f"  [{r['outcome']}{', ' + r['kind'] if r['kind'] else ''}] {r['name']} ({r['file']}): "
                     f"{r['reason'][:300]}" for r in recs[:10])


def test_every_description_ran(records):
    assert [r["g"] for r in records] == list(range(len(ENTRIES)))
    outcomes = Counter(r["outcome"] for r in records)
    assert outcomes["error"] > len(ENTRIES) // 3 and outcomes["loaded"] >= 5, outcomes


def test_no_crash_silent_load_or_hang(records):
    bad = [r for r in records if r["outcome"] in FAILING]
    assert not bad, f"{len(bad)} descriptions not handled:\n{_lines(bad)}"


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("composedyn")
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from composedyn.cli import main; sys.exit(main())"]


@pytest.mark.parametrize("name", CLI_SAMPLES)
def test_cli_process_prints_one_line(folder, name):
    file = next(f for n, f, *_ in ENTRIES if n == name)
    assert shutil.which(_cli()[0]) or Path(_cli()[0]).exists()
    p = subprocess.run(_cli() + ["info", str(folder / file)], capture_output=True, text=True, timeout=120)
    lines = [x for x in p.stderr.splitlines() if x.strip() and not x.startswith("composedyn: warning:")]
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("composedyn: error:"), p.stderr[-2000:]
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("load, cli, expect, outcome", [
    (("error", "ModelError: x"), ("error", "composedyn: error: x"), "any", "error"),
    (("loaded", ""), ("ok", ""), "any", "loaded"),
    (("wrong", "M is not positive definite"), ("ok", ""), "any", "wrong"),
    (("error", "ModelError: x"), ("error", "composedyn: error: x"), "load", "wrong"),
    (("loaded", ""), ("error", "composedyn: error: x"), "any", "wrong"),
    (("error", "ModelError: x"), ("crash", "exit status 1"), "any", "crash"),
])
def test_corpus_classification(load, cli, expect, outcome):
    from fuzz.corpus_worker import classify

    assert classify(load, cli, expect)[0] == outcome


def test_a_robot_with_a_singular_mass_matrix_is_not_accepted():
    import composedyn as cd
    from fuzz.corpus import joint_xml, link_xml, urdf
    from fuzz.corpus_worker import check_robot

    assert check_robot(cd.from_urdf(urdf()), 0) is None
    body = link_xml("base") + link_xml("l1", mass="0", ixx="0", iyy="0", izz="0") + joint_xml()
    with pytest.warns(cd.ModelWarning):  # a massless moving link is reported at load
        massless = cd.from_urdf(urdf(body=body))
    assert "positive definite" in check_robot(massless, 0)
