"""When a batch loop runs its parallel copy (``numba.prange`` over the cores) instead of the serial one.

Plain Python (no numba import): the Python-side callers of the batch loops
(:mod:`composedyn.dynamics.dispatch`, :mod:`.fast`) ask :func:`use_parallel`.
"""

from __future__ import annotations

import os
import threading

PARALLEL_WORK = 20_000  # samples x joints (~2 ms of serial work) from which batch loops use all cores
PARALLEL_IDLE = 0.5  # idle cores (cpu_count - 1-minute load average) the parallel loop needs
_first_parallel_pid: list[int] = []  # the process that ran the first parallel loop


def use_parallel(work: int) -> bool:
    """Whether a batch of ``work`` = samples x joints runs the parallel loop.

    From :data:`PARALLEL_WORK` on, only from the main thread, and never in a
    process forked after this one ran a parallel loop: numba's ``workqueue``
    threading layer (used where OpenMP and TBB are missing) aborts on parallel
    regions entered from two threads at once, and GNU OpenMP aborts a forked
    child (e.g. a ``multiprocessing`` worker) that enters one.  Those callers
    loop serially.  Starting the threads costs ~10 us on idle cores but can
    cost milliseconds when other processes hold them, hence the threshold.

    Nor when fewer than :data:`PARALLEL_IDLE` cores are idle by the 1-minute load
    average (this process's busy thread counts in it): on a shared 2-core machine
    at load 2-4 a 10,000-sample Jacobian loop took 1.6-2.5 ms on one thread and
    2.5-11 ms on two, whose second thread waited for a core held by another
    process.  Tests and benchmarks that want the parallel loop whatever the load
    set ``PARALLEL_IDLE = -math.inf`` (and ``PARALLEL_WORK`` low).
    """
    if work < PARALLEL_WORK or (os.cpu_count() or 1) - os.getloadavg()[0] < PARALLEL_IDLE:
        return False
    return parallel_safe()


def parallel_safe() -> bool:
    """Whether this thread may enter a parallel loop at all (see :func:`use_parallel`): the
    main thread of the process that ran the first one."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if not _first_parallel_pid:
        _first_parallel_pid.append(os.getpid())
    return _first_parallel_pid[0] == os.getpid()
