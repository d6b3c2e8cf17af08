"""The build step that compiles every kernel into the package: ``python -m composedyn.kernels.build``.

Run by ``setup.py`` (command ``build_kernels``) with the built package on
``sys.path`` and ``COMPOSEDYN_KERNEL_CACHE_BUILD`` naming the directory numba's
cache is written to (``composedyn/dynamics/compiled/kernel_cache`` of the built
package).  With ``--jobs N`` the groups of :mod:`composedyn.kernels.warm` that
compile apart (each quantity's compiled functions, closed chains) compile in up
to N worker processes, each into a directory of its own (two processes writing one
numba index could lose or mismatch entries), each taking the next group when it has
finished one (the groups are listed longest first), and the directories are merged;
a last serial pass over all groups then loads everything and compiles what the
merge lacks (what only the groups that reach several quantities' kernels compile),
so the result never depends on the split.
"""

from __future__ import annotations

import argparse
import os
import pickle
import select
import shutil
import subprocess
import sys
import tempfile
import time

from composedyn.dynamics.compiled.cache import BUILD_ENV


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
        apart = [k for k, group in enumerate(groups()) if group.apart]
        scratch = tempfile.mkdtemp(prefix="composedyn-kernels-")
        try:
            serve(apart, [os.path.join(scratch, str(k)) for k in range(min(jobs, len(apart)))])
            merge([os.path.join(scratch, name) for name in sorted(os.listdir(scratch))], target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    warm_all()  # loads the merged entries; compiles (into target) whatever they lack
    split = f"{jobs} processes, then {compiled_count()} in a last pass" if jobs > 1 else f"{compiled_count()}"
    print(f"composedyn: kernels compiled in {time.perf_counter() - t0:.0f} s ({split})", file=sys.stderr)


WORKER = (sys.executable, "-m", "composedyn.kernels.build", "--serve")


def serve(indexes: list[int], directories: list[str], worker: tuple = WORKER) -> None:
    """Compile the groups of ``indexes`` in one ``worker`` process per directory of ``directories``
    (each writing its own cache there): each worker asks for the next group when it has
    finished one (it reads a group's index per line on stdin and writes ``done`` when that
    group is compiled), so the groups, listed longest first, spread over the workers as they
    go.  Raises SystemExit when a worker stops without finishing its group."""
    workers = [subprocess.Popen(list(worker),
                                env=dict(os.environ, **{BUILD_ENV: directory}), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, bufsize=1) for directory in directories]
    try:
        waiting = list(indexes)
        idle = list(workers)
        busy: dict = {}  # stdout file descriptor -> worker
        while waiting or busy:
            while waiting and idle:
                process = idle.pop()
                process.stdin.write(f"{waiting.pop(0)}\n")
                busy[process.stdout.fileno()] = process
            ready, _, _ = select.select(list(busy), [], [])
            for fd in ready:
                process = busy.pop(fd)
                if process.stdout.readline().strip() != "done":
                    raise SystemExit(f"composedyn: a kernel group failed to compile (status {process.wait()})")
                idle.append(process)
    except BaseException:  # the others' groups are of no use now
        for process in workers:
            process.kill()
        raise
    finally:
        for process in workers:
            if process.stdin and not process.stdin.closed:
                process.stdin.close()
        for process in workers:
            process.wait()


def _serve_requests() -> None:
    """The worker of :func:`serve`: for each group index read from stdin, compile that group,
    then write ``done``."""
    from composedyn.kernels.warm import warm_all

    reply, sys.stdout = sys.stdout, sys.stderr  # whatever a group prints stays off the replies
    for line in sys.stdin:
        warm_all(only=int(line))
        reply.write("done\n")
        reply.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m composedyn.kernels.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes compiling groups at once")
    parser.add_argument("--group", type=int, help="compile this group only (index in composedyn.kernels.warm.groups)")
    parser.add_argument("--serve", action="store_true", help="compile the groups whose indexes stdin gives, one per "
                                                             "line, writing done after each (the build's workers)")
    args = parser.parse_args(argv)
    target = os.environ.get(BUILD_ENV)
    if not target:
        parser.error(f"{BUILD_ENV} must name the cache directory to write")
    if args.serve:
        _serve_requests()
    elif args.group is not None:
        from composedyn.kernels.warm import warm_all

        warm_all(only=args.group)
    else:
        build(target, max(1, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
