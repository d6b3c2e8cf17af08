"""The corpus worker: ``python -m fuzz.corpus_worker DIR START`` loads each description listed
in ``DIR/manifest.json`` from entry START on, through ``cd.load`` and through the CLI's
``composedyn info`` (in process), under a memory limit; see :mod:`fuzz.runner` for the protocol.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import sys
import warnings
from pathlib import Path

import numpy as np

MEMORY_LIMIT = 2 << 30  # bytes of address space: an expansion that grows without bound stops here
MAX_MESSAGE = 400


def _clear(e: BaseException) -> bool:
    """A ModelError or ValueError raised by composedyn or Python itself, with a one-line message."""
    text = str(e).strip()
    return (isinstance(e, ValueError) and type(e).__module__.split(".")[0] in ("builtins", "composedyn")
            and bool(text) and "\n" not in text and len(text) <= MAX_MESSAGE)


def check_robot(robot, seed: int) -> str | None:
    """Why the loaded robot's M (at a random q) is not finite, symmetric and positive definite."""
    q = np.random.default_rng(seed).uniform(-1.0, 1.0, robot.nq)
    if getattr(robot, "floating", False):
        q = robot.normalize(q)
    if robot.nv == 0:
        return None
    M = robot.mass_matrix(q)
    g = robot.gravity_torques(q)
    if not (np.isfinite(M).all() and np.isfinite(g).all()):
        return f"M or g not finite at q = {np.round(q, 3).tolist()}"
    if not np.allclose(M, M.T, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(M).max())):
        return "M is not symmetric"
    w = np.linalg.eigvalsh(M)
    if not w.min() > 1e-12 * max(1.0, w.max()):
        return f"M is not positive definite (eigenvalues {w.min():.3g} .. {w.max():.3g})"
    return None


def load_outcome(path: str, seed: int) -> tuple[str, str]:
    import composedyn as cd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = cd.load(path)
    except BaseException as e:  # noqa: BLE001 - classified
        text = str(e).strip()
        kind = "error" if _clear(e) else "crash"
        return kind, f"{type(e).__module__}.{type(e).__name__}: {text.splitlines()[0][:200] if text else ''}" + (
            f" (+{len(text.splitlines()) - 1} lines)" if len(text.splitlines()) > 1 else "")
    try:
        why = check_robot(robot, seed)
    except BaseException as e:  # noqa: BLE001
        return "crash", f"loaded, then {type(e).__name__} in the check: {str(e)[:200]}"
    return ("wrong", why) if why else ("loaded", "")


def cli_outcome(path: str) -> tuple[str, str]:
    """``composedyn info PATH`` in process: (ok|error|crash, reason)."""
    from composedyn.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["info", path])
    except BaseException as e:  # noqa: BLE001 - an exception that escapes the CLI is a traceback
        return "crash", f"the CLI raised {type(e).__name__}: {str(e).strip()[:200]}"
    lines = [x for x in err.getvalue().splitlines() if x.strip() and not x.startswith("composedyn: warning:")]
    if status == 0:
        return "ok", ""
    if status == 2 and len(lines) == 1 and "Traceback" not in err.getvalue():
        return "error", lines[0][:200]
    return "crash", f"exit status {status}, {len(lines)} stderr lines: {' | '.join(lines)[:300]}"


def classify(load: tuple, cli: tuple, expect: str) -> tuple[str, str]:
    """The entry's outcome from its load and CLI outcomes."""
    (lk, lr), (ck, cr) = load, cli
    if lk == "crash" or ck == "crash":
        return "crash", lr if lk == "crash" else cr
    if lk == "wrong":
        return "wrong", f"loaded silently: {lr}"
    if expect == "load" and lk != "loaded":
        return "wrong", f"a valid description refused: {lr}"
    if (lk == "loaded") != (ck == "ok"):
        return "wrong", f"cd.load {lk} but the CLI {ck}: {lr or cr}"
    return lk, lr


def main(argv: list[str]) -> int:
    from fuzz.runner import begin, end

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    folder, start = Path(argv[0]), int(argv[1])
    entries = json.loads((folder / "manifest.json").read_text())
    for g in range(start, len(entries)):
        name, file, expect, kind = entries[g]
        path = str(folder / file)
        head = {"g": g, "name": name, "file": file, "expect": expect, "kind": kind}
        begin(sys.stdout, head)
        load, cli = load_outcome(path, 2026 + g), cli_outcome(path)
        outcome, reason = classify(load, cli, expect)
        end(sys.stdout, {**head, "outcome": outcome, "reason": reason, "load": load[0], "cli": cli[0]})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
