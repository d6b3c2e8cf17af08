"""Failures of the fuzzer that issue 28 lists (fixed elsewhere): a record is attributed to an
item only when both its inputs and its failure match that item's description."""

from __future__ import annotations

FAILING = ("crash", "wrong", "hang")
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize")


def known_item(rec: dict) -> int | None:
    """The issue-28 item a failing record reproduces, or None for a failure the issue does not list."""
    tags, outcome, reason = set(rec.get("tags", ())), rec["outcome"], rec.get("reason", "")
    fast = rec.get("target") == "fast"
    if outcome not in FAILING:
        return None
    if fast and outcome == "wrong" and tags & {"alias:out_is_input", "alias:out_overlaps"}:
        return 3  # robot.fast with out= overlapping an input
    if fast and outcome == "wrong" and "fast_smooth" in tags and reason.startswith("a result for an invalid"):
        return 3  # fast.forward_dynamics accepts a negative, NaN or -inf smooth_friction
    if outcome == "wrong" and "huge_quat" in tags:
        return 5  # quaternions of norm >= 1.4e154
    if outcome == "crash" and "OverflowError" in reason and tags & {"smooth_overflow", "fast_smooth"}:
        return 10  # OverflowError for smooth_friction=10**400
    if outcome == "crash" and tags & {"masked", "masked_some"} and "numba" in reason:
        return 10  # a masked array gives a numba typing error
    if outcome == "crash" and "memoryview" in tags and "memoryview" in reason:
        return 10  # "memoryview: invalid slice key"
    if outcome == "crash" and "bool_none" in tags and rec.get("method") in DERIVATIVES:
        return 10  # friction=None in the compiled derivatives
    if (outcome == "crash" and "IndexError" in reason and rec.get("method") in DERIVATIVES
            and tags & {"0d", "scalar"} and rec.get("robot", "").startswith(("puma560_floating", "solo12"))):
        return 10  # IndexError from floating *_derivatives with 0-d arguments
    if fast and outcome == "wrong" and reason.startswith("the result is not the out="):
        return 10  # fast returns a view of out instead of out when it falls back
    if outcome == "hang" and "readonly" in tags:
        return 7  # a read-only input compiles a new specialisation
    return None
