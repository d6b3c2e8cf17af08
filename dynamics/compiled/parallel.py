"""When a batch loop runs its parallel copy (``numba.prange`` over the cores) instead of the serial one.

Plain Python (no numba import): the Python-side callers of the batch loops
(:mod:`composedyn.dynamics.dispatch`, :mod:`.fast`) ask :func:`use_parallel`.
"""

from __future__ import annotations

import os
import threading

PARALLEL_WORK = 20_000  # samples x joints (~2 ms of serial work) from which batch loops use all cores
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
    """
    if work < PARALLEL_WORK or threading.current_thread() is not threading.main_thread():
        return False
    if not _first_parallel_pid:
        _first_parallel_pid.append(os.getpid())
    return _first_parallel_pid[0] == os.getpid()
