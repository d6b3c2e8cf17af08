"""The suite cannot shrink in silence: without Pinocchio the test run stops,
unless ``COMPOSEDYN_NO_ORACLE=1`` opts out, and then the summary counts the skips."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
# in this one process ("-n 0"): the module hidden here would be importable in worker processes
RUN_WITHOUT_PINOCCHIO = ("import sys; sys.modules['pinocchio'] = None; "
                         "import pytest; sys.exit(pytest.main(sys.argv[1:]))")


def _pytest_without_pinocchio(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "COMPOSEDYN_NO_ORACLE"} | env
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT_PINOCCHIO, "-q", "-n", "0", "-p", "no:cacheprovider",
                           *args],
                          cwd=TESTS.parent, env=environ, capture_output=True, text=True, timeout=600, check=False)


def test_missing_oracle_stops_the_test_run():
    out = _pytest_without_pinocchio(str(TESTS / "test_pinocchio_smoke.py"))
    assert out.returncode == 4, out.stdout + out.stderr
    assert "the test oracle is missing: Pinocchio is not importable" in out.stdout + out.stderr
    assert "passed" not in out.stdout


def test_explicit_opt_out_skips_and_counts():
    out = _pytest_without_pinocchio(str(TESTS / "test_pinocchio_smoke.py"), str(TESTS / "test_cli_habits.py"),
                                    "-k", "not 2000", COMPOSEDYN_NO_ORACLE="1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "oracle comparisons (Pinocchio): 0 tests passed; 1 skipped (COMPOSEDYN_NO_ORACLE=1)" in out.stdout
