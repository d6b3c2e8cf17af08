"""Checks shared by every test run.

The oracle (Pinocchio and the example-robot-data URDFs) is required: without it
a test run stops with one message instead of skipping the comparisons in
silence.  ``COMPOSEDYN_NO_ORACLE=1`` opts out explicitly; the tests that need
the oracle are then skipped and counted in the summary.  The summary always
says how many tests compared against Pinocchio, and how many GPU tests (marked ``gpu``: CUDA
for PyTorch, a GPU device for JAX) ran; a GPU test skipped for want of a device is counted as
skipped, never as passed.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
# The one-line notice of kernels compiled on first use would land in whichever test compiles first
# (and in the stderr of the CLI subprocesses); the tests of the notice set their own environment.
os.environ.setdefault("COMPOSEDYN_COMPILE_NOTICE", "0")

NO_ORACLE = "COMPOSEDYN_NO_ORACLE"
_used_oracle: set[str] = set()  # node ids whose call looked up anything in pinocchio
_passed_oracle: set[str] = set()
_gpu: dict[str, set[str]] = {"passed": set(), "failed": set(), "skipped": set()}  # outcome -> node ids


def _missing_oracle() -> str | None:
    """Why the oracle is unusable, or None."""
    try:
        import pinocchio  # noqa: F401
    except ImportError as e:
        return f"Pinocchio is not importable ({e})"
    from pin_oracle import erd_robots_dir

    try:
        erd_robots_dir()
    except FileNotFoundError as e:
        return str(e)
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (PyTorch) or a JAX GPU device; counted in the summary")
    if os.environ.get(NO_ORACLE) == "1":
        return
    why = _missing_oracle()
    if why is not None:
        pytest.exit(f"the test oracle is missing: {why}. Install the test extra (pip install '.[test]'), "
                    f"or set {NO_ORACLE}=1 to run without the Pinocchio comparisons.", returncode=4)


def _oracle_uses() -> int:
    module = sys.modules.get("pin_oracle")
    return 0 if module is None or not hasattr(module, "pin") else module.pin.uses


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    before = _oracle_uses()
    yield
    if _oracle_uses() > before:
        _used_oracle.add(item.nodeid)


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed and report.nodeid in _used_oracle:
        _passed_oracle.add(report.nodeid)
    if "gpu" in report.keywords and (report.when == "call" or report.skipped):
        _gpu[report.outcome].add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    skipped = sum(NO_ORACLE in str(getattr(r, "longrepr", "")) for r in terminalreporter.stats.get("skipped", []))
    line = f"oracle comparisons (Pinocchio): {len(_passed_oracle)} tests passed"
    if skipped:
        line += f"; {skipped} skipped ({NO_ORACLE}=1)"
    terminalreporter.write_sep("-", line)
    ran = len(_gpu["passed"]) + len(_gpu["failed"])
    terminalreporter.write_sep("-", f"GPU tests: {ran} ran ({len(_gpu['passed'])} passed, {len(_gpu['failed'])} "
                                    f"failed); {len(_gpu['skipped'])} skipped (no GPU device)")
    robustness = sys.modules.get("fuzz.report")
    for line in robustness.LINES if robustness is not None else ():
        terminalreporter.write_line(line)
