"""``composedyn warm-up``: compile (or load) every dynamics kernel now, one progress line per group."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("warm-up", help="compile every dynamics kernel now (usually done at install)",
                       description="Compile every dynamics kernel a user can reach (or load it from the cache "
                                   "built at install or the per-user cache), printing one line per group that "
                                   "needed compiling, and where the kernels are kept.")
    p.set_defaults(run=run)


def run(args) -> int:
    import time

    from composedyn.dynamics.compiled.cache import cache_dirs
    from composedyn.kernels.warm import warm_all

    t0 = time.perf_counter()
    seconds = warm_all()
    dirs = cache_dirs()
    kept = dirs.writable or "memory only (no writable cache directory: set NUMBA_CACHE_DIR)"
    print(f"{len(seconds)} groups of kernels ready in {time.perf_counter() - t0:.1f} s; "
          f"compiled at install: {dirs.shipped or 'none'}; compiled later: {kept}")
    return 0
