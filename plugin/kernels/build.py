"""The build step that compiles every kernel into the package: ``python -m composedyn.kernels.build``.

Run by ``setup.py`` (command ``build_kernels``) with the built package on
``sys.path`` and ``COMPOSEDYN_KERNEL_CACHE_BUILD`` naming the directory numba's
cache is written to (``composedyn/dynamics/compiled/kernel_cache`` of the built
package).  With ``--jobs N`` the groups of :mod:`composedyn.kernels.warm` compile in up
to N processes, each into a directory of its own (two processes writing one
numba index could lose or mismatch entries), and the directories are merged;
a last serial pass over all groups then loads everything and compiles what the
merge lacks, so the result never depends on the split.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time

from composedyn.dynamics.compiled.cache import BUILD_ENV

FIRST = "closed chains"  # the longest group starts first


def merge(sources: list[str], target: str) -> int:
    """Merge the numba cache directories ``sources`` into ``target``: per function, the
    entries of all its indexes (the first of equal keys kept), data files renumbered.
    Returns the number of entries written."""
    from numba.core.serialize import dumps

    indexes: dict[str, list[str]] = {}
    for source in sources:
        for name in sorted(os.listdir(source)) if os.path.isdir(source) else ():
            if name.endswith(".nbi"):
                indexes.setdefault(name, []).append(source)
    os.makedirs(target, exist_ok=True)
    written = 0
    for name, where in indexes.items():
        base, merged, version, stamp = name[:-len(".nbi")], {}, None, None
        for source in where:
            with open(os.path.join(source, name), "rb") as f:
                version = pickle.load(f)  # numba's version, then the pickled (stamp, overloads)
                stamp, overloads = pickle.loads(f.read())
            for key, data in overloads.items():
                if key not in merged:
                    merged[key] = f"{base}.{len(merged) + 1}.nbc"
                    shutil.copyfile(os.path.join(source, data), os.path.join(target, merged[key]))
        with open(os.path.join(target, name), "wb") as f:
            pickle.dump(version, f, protocol=-1)
            f.write(dumps((stamp, merged)))
        written += len(merged)
    return written


def build(target: str, jobs: int) -> None:
    """Compile every group into ``target`` in up to ``jobs`` processes, merge, then one serial pass."""
    from composedyn.dynamics.compiled.cache import compiled_count
    from composedyn.kernels.warm import groups, warm_all

    t0 = time.perf_counter()
    if jobs > 1:
        labels = [label for label, _ in groups()]
        order = sorted(range(len(labels)), key=lambda k: labels[k] != FIRST)
        scratch = tempfile.mkdtemp(prefix="composedyn-kernels-")
        try:
            running: list[subprocess.Popen] = []
            while order or running:
                while order and len(running) < jobs:
                    k = order.pop(0)
                    env = dict(os.environ, **{BUILD_ENV: os.path.join(scratch, str(k))})
                    running.append(subprocess.Popen([sys.executable, "-m", "composedyn.kernels.build", "--group",
                                                     str(k)], env=env))
                time.sleep(0.2)
                for proc in [p for p in running if p.poll() is not None]:
                    running.remove(proc)
                    if proc.returncode:
                        raise SystemExit(f"composedyn: a kernel group failed to compile (status {proc.returncode})")
            merge([os.path.join(scratch, str(k)) for k in range(len(labels))], target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    warm_all()  # loads the merged entries; compiles (into target) whatever they lack
    split = f"{jobs} processes, then {compiled_count()} in a last pass" if jobs > 1 else f"{compiled_count()}"
    print(f"composedyn: kernels compiled in {time.perf_counter() - t0:.0f} s ({split})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m composedyn.kernels.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes compiling groups at once")
    parser.add_argument("--group", type=int, help="compile this group only (index in composedyn.kernels.warm.groups)")
    args = parser.parse_args(argv)
    target = os.environ.get(BUILD_ENV)
    if not target:
        parser.error(f"{BUILD_ENV} must name the cache directory to write")
    if args.group is not None:
        from composedyn.kernels.warm import warm_all

        warm_all(only=args.group)
    else:
        build(target, max(1, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
