"""The documentation site builds without a warning (``mkdocs build --strict``: API reference from the
docstrings included, every page in the navigation, every link and anchor found), and every Python
block of its pages runs: the blocks of one page in order, in one namespace, in a scratch folder, as
the README's (``tests/test_readme.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from doc_blocks import ROOT, run_python_blocks

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def test_site_builds_without_warnings(tmp_path):
    import mkdocs  # noqa: F401  (the test extra installs it: a missing MkDocs fails here, it is not skipped)
    import mkdocstrings  # noqa: F401

    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(site)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "WARNING" not in r.stderr, r.stderr[-4000:]
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("inverse_dynamics", "mass_matrix", "check_trajectory", "ComputedTorqueController", "LoopClosure"):
        assert name in api, f"{name} missing from the API reference"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_python_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
