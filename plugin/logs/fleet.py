"""Torque checks of many logs: in this process, or on a Dask cluster.

On a cluster the robot travels once: its kinematic graph is scattered to every
worker (``broadcast=True``) and each worker builds the ``Robot`` from it on its
first task and keeps it for the next ones.  Compiled kernels are loaded from
numba's on-disk cache in each worker process (:func:`kernel_cache_stats`
counts loads and compilations), never compiled per task, and run on one
thread per task: the workers are the parallelism.  Each task returns a
small :class:`LogRow`, not the samples.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from composedyn.dynamics.extras import require
from composedyn.logs.check import LogRow, check_row

_ROBOTS: dict = {}  # worker-side: (scattered graph key, mimic mode) -> Robot, the latest few


def check_many(robot, paths, client=None, plot: bool = False, errors: str = "raise",
               progress: Callable[[int, int], None] | None = None, **options) -> list[LogRow]:
    """One :class:`LogRow` per log of ``paths``, in input order.

    Parameters
    ----------
    robot : Robot, or a description path or bundled name (``cd.load``)
    paths : sequence of str or Path
        Logs readable by :func:`composedyn.read_log`.
    client : distributed.Client or None
        None: check in this process, one log after another; a client: one task
        per log on that cluster.  Both give the same rows.
    plot : bool
        Render the worst joint of each failing log (``LogRow.plot``, PNG bytes).
    errors : "raise" or "report"
        On a log that cannot be read or checked: raise its ValueError (one line
        naming the log), or return an "error" row and go on.
    progress : callable(done, total) or None
        Called after each finished log.
    options
        ``topic``, ``stamps``, ``gap_factor``, ``smoothing``, ``friction``
        (see :func:`composedyn.logs.check.check_log`).
    """
    if isinstance(robot, (str, os.PathLike)):
        import composedyn as cd

        robot = cd.load(robot)
    if getattr(robot, "floating", False):
        raise ValueError(f"check_many: robot {robot.name!r} has a floating base; joint-state logs carry no base "
                         "motion (check legged trajectories with composedyn.check_trajectory)")
    if errors not in ("raise", "report"):
        raise ValueError(f'errors must be "raise" or "report", got {errors!r}')
    paths = [str(p) for p in paths]
    if client is None:
        rows = []
        for k, path in enumerate(paths):
            rows.append(check_row(robot, path, plot=plot, errors=errors, **options))
            if progress is not None:
                progress(k + 1, len(paths))
        return rows
    return _on_cluster(client, robot, paths, plot, errors, progress, options)


def _on_cluster(client, robot, paths, plot, errors, progress, options) -> list[LogRow]:
    import uuid

    require("distributed", "checking logs on a Dask cluster")
    from distributed import as_completed

    run = uuid.uuid4().hex  # keys of this call only: a later call never meets released ones
    graph = client.scatter(robot.graph, broadcast=True, hash=False)
    mimic = getattr(robot, "_mimic_mode", "dependent")
    futures = [client.submit(_check_on_worker, graph, graph.key, mimic, path, plot, errors, options,
                             key=f"composedyn-check-{run}-{k}", pure=False)
               for k, path in enumerate(paths)]
    index = {f.key: k for k, f in enumerate(futures)}
    rows: list = [None] * len(paths)
    try:
        for done, future in enumerate(as_completed(futures), start=1):
            try:
                rows[index[future.key]] = future.result()
            except ValueError as e:  # a task's bad log: raised again here, as this process's error
                raise ValueError(str(e)) from None
            if progress is not None:
                progress(done, len(paths))
    except BaseException:
        client.cancel(futures)
        raise
    return rows


def _check_on_worker(graph, key: str, mimic: str, path: str, plot: bool, errors: str, options: dict) -> LogRow:
    import numba

    # The cluster's workers are the parallelism: numba's parallel loops run on one thread per
    # task (its default, every core, in each of N workers would oversubscribe the machine).
    numba.set_num_threads(1)
    robot = _ROBOTS.get((key, mimic))
    if robot is None:
        from composedyn.robot import Robot

        while len(_ROBOTS) >= 4:  # robots of earlier calls
            _ROBOTS.pop(next(iter(_ROBOTS)))
        robot = _ROBOTS[(key, mimic)] = Robot(graph, mimic=mimic)
    return check_row(robot, path, plot=plot, errors=errors, **options)


def kernel_cache_stats() -> dict:
    """{"loaded": n, "compiled": n}: compiled kernels of this process taken from
    numba's disk cache, and compiled here (call on workers with ``client.run``)."""
    import sys

    loaded = compiled = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("composedyn.dynamics.compiled"):
            continue
        for obj in vars(module).values():
            stats = getattr(obj, "stats", None)
            if stats is not None and hasattr(stats, "cache_hits"):
                loaded += sum(stats.cache_hits.values())
                compiled += sum(stats.cache_misses.values())
    return {"loaded": loaded, "compiled": compiled}
