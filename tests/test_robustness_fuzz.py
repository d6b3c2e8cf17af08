"""The fuzzer over every public method of ``Robot``, ``FloatingRobot`` and ``robot.fast``
(see :mod:`fuzz`): a fixed seed, a fixed number of cases per robot, each call in a worker
subprocess with a time budget.  A crash, a wrong answer or a hang fails the robot's test.
The counts are printed in the terminal summary."""

from __future__ import annotations

import numpy as np
import pytest

from fuzz import report
from fuzz.methods import FAST_METHODS, FIXED_METHODS, FLOATING_METHODS, NOT_COMPARED
from fuzz.report import FAILING
from fuzz.robots import ROBOTS
from fuzz.runner import run

SEED = 2026
CASES = 400  # per robot
CALL_TIMEOUT = 60.0  # s: a call that compiles a new kernel specialisation takes up to ~20 s
MAX_UNNAMED = 0  # clear errors whose message does not name the invalid argument
OVERFLOWING = "huge"  # the mutation putting one entry of magnitude 1e154 to 1.7e308 into an array


@pytest.fixture(scope="module")
def records() -> list[dict]:
    recs = run("fuzz.worker", [str(SEED), str(CASES), *ROBOTS], CASES * len(ROBOTS), CALL_TIMEOUT)
    report.add(report.fuzz_counts(recs, ROBOTS))
    return recs


FLOATING = {r for r in ROBOTS if r.startswith(("puma560_floating", "solo12"))}


def test_every_case_ran(records):
    assert len(records) == CASES * len(ROBOTS)
    assert {r["outcome"] for r in records} <= {"error", "unnamed", "result", "accepted", *FAILING}
    # the run is not vacuous: each robot has verified results and clear errors
    for robot in ROBOTS:
        outcomes = [r["outcome"] for r in records if r["robot"] == robot]
        assert outcomes.count("result") > CASES // 5 and outcomes.count("error") > CASES // 5, robot
    # every method was called and gave at least one verified result (one result: those not compared)
    verified = {(r["target"], r["method"], r["robot"] in FLOATING) for r in records if r["outcome"] == "result" or (
        r["outcome"] == "accepted" and r["method"] in NOT_COMPARED)}
    wanted = ({("robot", m, False) for m in FIXED_METHODS} | {("robot", m, True) for m in FLOATING_METHODS}
              | {("fast", m, False) for m in FAST_METHODS})
    assert wanted <= verified, sorted(wanted - verified)


@pytest.mark.parametrize("robot", ROBOTS)
def test_no_crash_wrong_answer_or_hang(records, robot):
    bad = [r for r in records if r["robot"] == robot and r["outcome"] in FAILING]
    assert not bad, f"{len(bad)} failures:\n{report.reproductions(bad)}"


def test_errors_name_the_invalid_argument(records):
    unnamed = [r for r in records if r["outcome"] == "unnamed"]
    assert len(unnamed) <= MAX_UNNAMED, (f"{len(unnamed)} errors do not name the argument:\n"
                                         f"{report.reproductions(unnamed, outcomes=('unnamed',))}")


def test_non_finite_results_only_where_the_result_overflows(records):
    """A non-finite result from finite input only where an entry is so large that the result
    overflows float64 (documented in docs/guide/robustness.md), never from ordinary numbers."""
    silent = [r for r in records if r.get("reason") == "non-finite result from finite input"
              and OVERFLOWING not in r["tags"]]
    assert not silent, report.reproductions(silent, outcomes=("result",))


def test_runner_records_a_segfault_and_a_hang_and_goes_on():
    recs = run("fuzz.selftest_worker", [], 4, timeout=2.0)
    assert [(r["g"], r["outcome"]) for r in recs] == [(0, "result"), (1, "crash"), (2, "hang"), (3, "result")]
    assert "exit status -11" in recs[1]["reason"]


class _Liar:
    """A robot whose gravity torques are wrong for a strided input, finite for a NaN input, and
    which writes into its input for a read-only-looking call: what the checker must catch."""

    def __init__(self, robot):
        self.robot, self.dof, self.nq, self.nv = robot, robot.dof, robot.nq, robot.nv

    def gravity_torques(self, q):
        if isinstance(q, np.ndarray) and np.isnan(q).any():
            return np.zeros(self.dof)
        g = self.robot.gravity_torques(np.array(q, dtype=float))
        if isinstance(q, np.ndarray) and not q.flags.c_contiguous:
            g = g * (1 + 1e-9)
        if isinstance(q, np.ndarray) and q.dtype == np.float32:
            q[0] = 0.0
        return g


@pytest.mark.parametrize("mutation, reason", [("strided", "expected"), ("nan", "NaN expected"),
                                              ("float32", "input array was modified"), ("list", None)])
def test_checker_catches_wrong_answers(mutation, reason):
    import composedyn as cd
    from fuzz.cases import Case
    from fuzz.mutations import mutate_array
    from fuzz.verify import Checker

    liar = _Liar(cd.load("two_link"))
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, 2)
    arg = mutate_array(rng, mutation, q, q)
    case = Case("two_link", 0, "robot", "gravity_torques", [arg], {}, set(arg.tags))
    rec = Checker(liar, None, False).run(case, 2)
    if reason is None:
        assert rec["outcome"] == "result", rec
    else:
        assert rec["outcome"] == "wrong" and reason in rec["reason"], rec
