"""The fuzzer's worker process: ``python -m fuzz.worker SEED CASES ROBOT... START``.

Case g is case ``g % CASES`` of robot ``g // CASES``; see :mod:`fuzz.runner` for the protocol.
"""

from __future__ import annotations

import sys
import tempfile
import warnings


def main(argv: list[str]) -> int:
    from fuzz.cases import Generator
    from fuzz.robots import fast_reference, load, use_backend
    from fuzz.runner import begin, end
    from fuzz.verify import Checker

    seed, count, robots, start = int(argv[0]), int(argv[1]), argv[2:-1], int(argv[-1])
    warnings.simplefilter("ignore")
    loaded = None
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(start, count * len(robots)):
            key, i = robots[g // count], g % count
            if loaded != key:
                use_backend(key)
                robot = load(key)
                floating = bool(getattr(robot, "floating", False))
                checker = Checker(robot, None if floating else fast_reference(key, robot), floating)
                gen = Generator(key, robot, seed, tmp)
                loaded = key
            case = gen.case(i)
            head = {"g": g, "robot": key, "index": i, "target": case.target, "method": case.method,
                    "call": case.describe(), "tags": sorted(case.tags)}
            begin(sys.stdout, head)
            end(sys.stdout, {**head, **checker.run(case, gen.n_fast)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
