"""The CSV corpus worker: ``python -m fuzz.csv_worker DIR START`` reads each file listed in
``DIR/manifest.json`` from entry START on through ``cd.read_log`` and checks it through
``cd.check_many(robot, [path], errors="report")``, in process, under a memory limit; see
:mod:`fuzz.runner` for the protocol and :mod:`fuzz.csv_corpus` for what each entry expects.
"""

from __future__ import annotations

import json
import resource
import sys
import warnings
from pathlib import Path

MEMORY_LIMIT = 3 << 30  # bytes of address space
MAX_MESSAGE = 400
GOOD = {True: "within limits", False: "unchecked"}  # the passing verdict, by whether every limit is given


def one_line(e: BaseException, path: str) -> bool:
    """A ValueError whose message is one short line naming the file."""
    text = str(e)
    return (isinstance(e, ValueError) and text.startswith(f"{path}:") and "\n" not in text.strip()
            and len(text) <= MAX_MESSAGE and "Traceback" not in text)


def read_outcome(robot, path: str) -> tuple[str, str]:
    """``cd.read_log``: ("error", message), ("read", finding kinds) or ("crash", what)."""
    import composedyn as cd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log = cd.read_log(path, joint_names=robot.joint_names)
    except BaseException as e:  # noqa: BLE001 - classified
        if one_line(e, path):
            return "error", str(e)
        return "crash", f"read_log raised {type(e).__module__}.{type(e).__name__}: {str(e)[:300]!r}"
    return "read", ",".join(sorted({f.kind for f in log.findings}))


def check_outcome(robot, path: str) -> tuple[str, str]:
    """``cd.check_many(..., errors="report")``: (verdict, error or findings) or ("crash", what)."""
    import composedyn as cd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = cd.check_many(robot, [path], errors="report")
    except BaseException as e:  # noqa: BLE001 - errors="report" returns a row for any bad log
        return "crash", f"check_many raised {type(e).__module__}.{type(e).__name__}: {str(e)[:300]!r}"
    row = rows[0]
    if row.verdict == "unreadable":
        text = row.error or ""
        if not text.startswith(f"{path}:") or "\n" in text or "Traceback" in text:
            return "crash", f"unreadable row with a bad message: {text[:300]!r}"
        if text.startswith(f"{path}: unreadable ("):  # the reader raised something other than ValueError
            return "crash", f"check_many: {text[:300]}"
        return "unreadable", text
    details = "; ".join(f"{f.kind}: {f.message}" for f in row.findings) or f"torque ratio {row.torque_ratio}"
    if row.residual is not None and not 0 <= row.residual < float("inf"):
        return "crash", f"verdict {row.verdict!r} with a non-finite effort residual {row.residual}"
    return row.verdict, details[:300]


def classify(expect: str, read: tuple, check: tuple, complete: bool) -> tuple[str, str]:
    """(outcome, reason): outcome "error" (one line), "verdict" (an honest verdict), "crash" or "wrong"."""
    (rk, rr), (ck, cr) = read, check
    good = GOOD[complete]
    if rk == "crash" or ck == "crash":
        return "crash", rr if rk == "crash" else cr
    if rk == "error" and ck != "unreadable":
        return "wrong", f"read_log refuses ({rr}) but check_many says {ck!r}"
    if ck == "unreadable":
        if expect in ("valid", "inconsistent"):
            return "wrong", f"refused, expected {good if expect == 'valid' else expect!r}: {cr}"
        return "error", cr
    if expect == "error":
        return "wrong", f"accepted with verdict {ck!r}, expected a one-line error"
    if ck == "within limits" and not complete:
        return "wrong", "within limits for a robot with unchecked limits"
    for kind in ("damaged", "inconsistent"):
        if kind in rr.split(",") and ck not in ("damaged", "inconsistent"):
            return "wrong", f"read_log finds the log {kind}, check_many says {ck!r}"
    if expect in ("valid", "same") and ck != good:
        return "wrong", f"an intact file gets {ck!r}, expected {good!r}: {cr}"
    if expect == "altered" and ck == "within limits":
        return "wrong", "altered data within limits"
    if expect == "inconsistent" and ck != "inconsistent":
        return "wrong", f"contradicting velocities get {ck!r}: {cr}"
    return "verdict", f"{ck}: {cr}"


def main(argv: list[str]) -> int:
    import numpy as np

    import composedyn as cd
    from fuzz.runner import begin, end

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    folder, start = Path(argv[0]), int(argv[1])
    entries = json.loads((folder / "manifest.json").read_text())
    robots, complete = {}, {}
    for g in range(start, len(entries)):
        name, rname, file, expect = entries[g]
        if rname not in robots:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                robot = robots[rname] = cd.load(rname)
            complete[rname] = all(np.isfinite(robot.limits[k]).all() for k in ("velocity", "effort"))
        robot = robots[rname]
        path = str(folder / file)
        head = {"g": g, "name": name, "robot": rname, "file": file, "expect": expect}
        begin(sys.stdout, head)
        read, check = read_outcome(robot, path), check_outcome(robot, path)
        outcome, reason = classify(expect, read, check, complete[rname])
        end(sys.stdout, {**head, "outcome": outcome, "reason": reason, "read": read[0], "check": check[0]})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
