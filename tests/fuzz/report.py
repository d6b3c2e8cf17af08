"""Counts of a robustness run, printed in pytest's terminal summary (``tests/conftest.py``)
whatever the capture mode, so that a CI log always shows them."""

from __future__ import annotations

from collections import Counter

FAILING = ("crash", "wrong", "hang")  # the outcomes that fail a run
LINES: list[str] = []  # read by tests/conftest.py


def fuzz_counts(records: list[dict], robots) -> list[str]:
    """One line per robot and one for the total: cases and outcomes."""
    lines = []
    for name, recs in [(r, [x for x in records if x["robot"] == r]) for r in robots] + [("total", records)]:
        c = Counter(x["outcome"] for x in recs)
        nonfinite = sum(x.get("reason") == "non-finite result from finite input" for x in recs)
        lines.append(f"fuzz {name:>16}: {len(recs)} cases, {c['error']} clear errors "
                     f"(+{c['unnamed']} not naming the argument), {c['result'] + c['accepted']} results "
                     f"({c['result']} verified, {nonfinite} of them non-finite from finite input; "
                     f"{c['accepted']} accepted loose input), {c['crash']} crashes, {c['wrong']} wrong answers, "
                     f"{c['hang']} hangs")
    return lines


def reproductions(records: list[dict], limit: int = 8, outcomes=FAILING) -> str:
    """The first records whose outcome is among ``outcomes`` (default: the failing ones), one
    reproduction each (``fuzz.cases.Generator(robot, load(robot), SEED, tmpdir).case(index)``
    rebuilds the call)."""
    bad = [r for r in records if r["outcome"] in outcomes]
    text = "\n".join(f"  [{r['outcome']}] case {r['index']} of {r['robot']} "
                     f"({', '.join(t for t in r.get('tags', ()) if not t.startswith('param:'))}): {r['call'][:700]}"
                     f"\n      -> {r['reason'][:400]}" for r in bad[:limit])
    return text + (f"\n  ... and {len(bad) - limit} more" if len(bad) > limit else "")


def add(lines: list[str]) -> None:
    LINES.extend(lines)
    for line in lines:
        print(line)
