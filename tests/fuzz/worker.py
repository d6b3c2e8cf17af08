"""The fuzzer's worker process: ``python -m fuzz.worker SEED CASES ROBOT[:FIRST] ...``.

For each robot, from case FIRST (default 0) to CASES - 1, prints ``B robot i`` before the
call and ``R {json}`` after it (flushed), so that the parent knows which case a segfault or a
hang belongs to and can restart the worker at the next one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings


def main(argv: list[str]) -> int:
    from fuzz.cases import Generator
    from fuzz.robots import fast_reference, load
    from fuzz.verify import Checker

    seed, count = int(argv[0]), int(argv[1])
    warnings.simplefilter("ignore")
    out = sys.stdout
    with tempfile.TemporaryDirectory() as tmp:
        for spec in argv[2:]:
            key, _, first = spec.partition(":")
            robot = load(key)
            floating = bool(getattr(robot, "floating", False))
            checker = Checker(robot, None if floating else fast_reference(key, robot), floating)
            gen = Generator(key, robot, seed, tmp)
            for i in range(int(first or 0), count):
                case = gen.case(i)
                out.write("B " + json.dumps({"robot": key, "index": i, "target": case.target, "method": case.method,
                                             "call": case.describe(), "tags": sorted(case.tags)}) + "\n")
                out.flush()
                record = checker.run(case, gen.n_fast)
                record.update(robot=key, index=i, target=case.target, method=case.method, call=case.describe(),
                              tags=sorted(case.tags))
                out.write("R " + json.dumps(record, default=str) + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")
    sys.exit(main(sys.argv[1:]))
