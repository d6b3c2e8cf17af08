"""Fenced code blocks of the Markdown documentation (README.md, docs/), for the tests that run them.

A block is opened by a fence line such as ```` ```python ````; words after the
language are its options.  ```` ```python no-run ```` marks a block that is not
run because it needs something the tests do not have (a cluster, a robot on the
network, ...); its first line is a comment ``# not run: <reason>``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_RUN = "no-run"


def fenced(lang: str, text: str) -> list[tuple[str, str]]:
    """(options, code) of every ```` ```lang ```` block of ``text``, in order."""
    return [(opts.strip(), code) for opts, code in
            re.findall(rf"^```{lang}([^\n]*)\n(.*?)^```", text, flags=re.S | re.M)]


def blocks(lang: str, text: str) -> list[str]:
    """The code of the ```` ```lang ```` blocks without options (the blocks that run)."""
    return [code for opts, code in fenced(lang, text) if not opts]


def run_python_blocks(text: str, source: str) -> int:
    """Execute the Python blocks of ``text`` in order in one namespace (in the current folder);
    return how many ran.  A ``no-run`` block must say why in its first line."""
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for k, (opts, code) in enumerate(fenced("python", text)):
        if NO_RUN in opts.split():
            first = code.splitlines()[0] if code.strip() else ""
            assert re.match(r"#\s*not run: \S", first), f"{source} python block {k + 1}: no-run needs '# not run: why'"
            continue
        assert not opts, f"{source} python block {k + 1}: unknown options {opts!r}"
        exec(compile(code, f"{source} python block {k + 1}", "exec"), namespace)
        ran += 1
    return ran
