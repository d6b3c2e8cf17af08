"""The verdicts of a log check, shared by every output (text, JSON, CSV, HTML, fleet
rows), and the exit status of ``composedyn torques``.

=================  ===========================================================  ====
verdict            meaning                                                      exit
=================  ===========================================================  ====
"within limits"    every limit checked on every joint, none exceeded            0
"unchecked"        nothing exceeded, but some limit is missing (not checked)    0
"exceeded"         a checked limit is exceeded                                  1
"unreadable"       the log could not be read or checked (one-line ``error``)    2
"damaged"          the reader found lost or corrupted data (``findings``)       3
"inconsistent"     the reader found fields that contradict each other           3
=================  ===========================================================  ====

A damaged or inconsistent log keeps that verdict whatever its limits say: its
samples cannot be trusted to pass or to fail.  Over several logs the exit status
is the first that applies of 2, 3, 1, 0.
"""

from __future__ import annotations

VERDICTS = ("within limits", "unchecked", "exceeded", "unreadable", "damaged", "inconsistent")
EXIT_STATUS = {"within limits": 0, "unchecked": 0, "exceeded": 1, "unreadable": 2, "damaged": 3, "inconsistent": 3}
SEVERITY = ("unreadable", "damaged", "inconsistent", "exceeded", "unchecked", "within limits")  # worst first


def report_verdict(report, findings=()) -> str:
    """The verdict of a checked log: ``report`` (ok, complete) and the reader's ``findings``."""
    kinds = {f.kind for f in findings}
    for kind in ("damaged", "inconsistent"):
        if kind in kinds:
            return kind
    if not report.ok:
        return "exceeded"
    return "within limits" if report.complete else "unchecked"


def worst_verdict(verdicts) -> str:
    """The worst of several verdicts (``SEVERITY`` order); "within limits" for none."""
    verdicts = set(verdicts)
    return next((v for v in SEVERITY if v in verdicts), "within limits")


def exit_status(verdicts) -> int:
    """The command's exit status over logs with these verdicts: 2 if one is unreadable,
    else 3 if one is damaged or inconsistent, else 1 if one exceeds a limit, else 0."""
    codes = {EXIT_STATUS[v] for v in verdicts}
    return next((c for c in (2, 3, 1) if c in codes), 0)


def counts(verdicts) -> dict:
    """{verdict: number of logs} over ``VERDICTS`` (zeros included)."""
    verdicts = list(verdicts)
    return {v: verdicts.count(v) for v in VERDICTS}


def reason(path, error: BaseException) -> str:
    """One line naming ``path`` and why it could not be read or checked."""
    first = (str(error).strip().splitlines() or [""])[0]
    if not isinstance(error, ValueError):
        kind = type(error)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        first = f"{name}: {first}" if first else name
        first = f"unreadable ({first})"
    path = str(path)
    line = first if first.startswith(f"{path}:") else f"{path}: {first}"
    return line if len(line) <= 400 else line[:397] + "..."
