"""Without Drake the SDFormat comparisons fail (a collection error), they never skip."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
# in this one process ("-n 0"): the module hidden here would be importable in worker processes
RUN_WITHOUT_DRAKE = ("import sys; sys.modules['pydrake'] = None; "
                     "import pytest; sys.exit(pytest.main(sys.argv[1:]))")


def test_missing_drake_fails_the_sdformat_tests():
    environ = {k: v for k, v in os.environ.items() if k != "COMPOSEDYN_NO_ORACLE"}
    out = subprocess.run([sys.executable, "-c", RUN_WITHOUT_DRAKE, "-q", "-n", "0", "-p", "no:cacheprovider",
                          str(TESTS / "test_sdf_import.py")], cwd=TESTS.parent, env=environ,
                         capture_output=True, text=True, timeout=600, check=False)
    text = out.stdout + out.stderr
    assert out.returncode not in (0, 5), text
    results = "\n".join(line for line in text.splitlines() if not line.startswith("---"))  # not the summary's counts
    assert "ModuleNotFoundError: No module named 'pydrake.multibody'" in text and "skipped" not in results, text
