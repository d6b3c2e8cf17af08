"""What is wrong with a log's data: ``kind`` "damaged" or "inconsistent", ``message`` one line naming where."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogFinding:
    kind: str
    message: str
