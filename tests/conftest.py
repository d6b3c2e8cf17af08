"""Checks shared by every test run.

The oracle (Pinocchio and the example-robot-data URDFs) is required: without it
a test run stops with one message instead of skipping the comparisons in
silence.  ``COMPOSEDYN_NO_ORACLE=1`` opts out explicitly; the tests that need
the oracle are then skipped and counted in the summary.  The summary always
says how many tests compared against Pinocchio, and how many GPU tests (marked ``gpu``: CUDA
for PyTorch, a GPU device for JAX) ran; a GPU test skipped for want of a device is counted as
skipped, never as passed.

The suite runs in parallel processes (pytest-xdist, options in pyproject.toml; ``-n 0`` runs it in
one).  What a test observes travels on its report (``user_properties``), so the counts are the
same whichever process ran it.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
# The one-line notice of kernels compiled on first use would land in whichever test compiles first
# (and in the stderr of the CLI subprocesses); the tests of the notice set their own environment.
os.environ.setdefault("COMPOSEDYN_COMPILE_NOTICE", "0")

NO_ORACLE = "COMPOSEDYN_NO_ORACLE"
_passed_oracle: set[str] = set()  # node ids of passed tests that looked up anything in pinocchio
_gpu: dict[str, set[str]] = {"passed": set(), "failed": set(), "skipped": set()}  # outcome -> node ids
_robustness: list[str] = []  # the lines of the fuzz and corpus runs (tests/fuzz/report.py)
ORACLE, ROBUSTNESS = "composedyn-oracle", "composedyn-robustness"  # user_properties keys


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


def _robustness_lines() -> list[str]:
    module = sys.modules.get("fuzz.report")
    return module.LINES if module is not None else []


def _observe(item, oracle: bool):
    """Around a test's setup or call: record on the item (hence on its reports) the robustness lines
    it printed and (``oracle``) whether it looked anything up in Pinocchio."""
    uses, lines = _oracle_uses(), len(_robustness_lines())
    yield
    if oracle and _oracle_uses() > uses:
        item.user_properties.append((ORACLE, True))
    item.user_properties.extend((ROBUSTNESS, line) for line in _robustness_lines()[lines:])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _observe(item, oracle=False)  # a fixture's lookups count for no test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _observe(item, oracle=True)


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed and (ORACLE, True) in report.user_properties:
        _passed_oracle.add(report.nodeid)
    if report.when == "teardown":  # the last report of a test carries every property it gathered
        _robustness.extend(line for key, line in report.user_properties if key == ROBUSTNESS)
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
    for line in _robustness:
        terminalreporter.write_line(line)
