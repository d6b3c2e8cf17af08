"""Findings of reading a log that make its samples untrustworthy: a damaged container
(fewer messages read than it records, stamps or sequence numbers that jump) or
inconsistent data (logged velocities that disagree with the positions)."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("damaged", "inconsistent")


@dataclass(frozen=True)
class LogFinding:
    """One finding of a log reader.

    ``kind``: "damaged" (the file lost or corrupted data) or "inconsistent" (its
    fields contradict each other); ``message``: one line naming the file, topic,
    time or sample where it was found.
    """

    kind: str
    message: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"LogFinding kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    def to_dict(self) -> dict:
        return finding_dicts((self,))[0]


def log_findings(log) -> tuple:
    """The :class:`LogFinding` records a reader attached to ``log`` (its ``findings``
    attribute; () when it has none)."""
    return tuple(getattr(log, "findings", None) or ())


def finding_dicts(findings) -> list[dict]:
    """JSON-ready ``[{"kind", "message"}]`` of any records with those two fields."""
    return [{"kind": str(f.kind), "message": str(f.message)} for f in findings]
