"""Torque checks of many logs: in this process, or on a Dask cluster.

On a cluster the robot travels once: its kinematic graph is scattered to every
worker (``broadcast=True``) and each worker builds the ``Robot`` from it on its
first task and keeps it for the next ones.  Compiled kernels are loaded from
numba's on-disk cache in each worker process (:func:`kernel_cache_stats`
counts loads and compilations), never compiled per task, and run on one
thread per task: the workers are the parallelism.  Each task returns a
small :class:`LogRow`, not the samples.  A log that cannot be read is an
"unreadable" row made on the worker (the task does not fail), so one bad log
neither stops the others nor fills the worker logs with tracebacks.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from composedyn.dynamics.extras import require
from composedyn.logs.rows import LogRow, check_row

_ROBOTS: dict = {}  # worker-side: (scattered graph key, mimic mode) -> Robot, the latest few


def check_many(robot, paths, client=None, plot: bool = False, errors: str = "raise",
               progress: Callable[[int, int], None] | None = None, files=None, keep_reports: bool = False,
               **options) -> list[LogRow]:
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
        Render the worst joint of each log that exceeds a limit (``LogRow.plot``, PNG bytes).
    errors : "raise" or "report"
        On a log that cannot be read or checked (whatever its reader raised): raise a
        ValueError (one line naming the log), or return an "unreadable" row with that
        line as ``error`` and go on with the others.
    progress : callable(done, total) or None
        Called after each finished log.
    files : sequence of dict or None
        Per log, outputs written by the process that checks it: {"csv": path,
        "violations": path, "plot": path} (see :func:`composedyn.logs.check.check_file`);
        on a cluster the workers must see these paths.
    keep_reports : bool
        Keep each log's full JSON-ready report and summary text in its row
        (``LogRow.report``, ``LogRow.text``).
    options
        ``topic``, ``stamps``, ``gap_factor``, ``smoothing``, ``friction``, ``limits``
        (see :func:`composedyn.logs.check.check_log`).

    Notes
    -----
    Serial and cluster runs give equal rows: each log is read and checked by the same
    function (a trajectory CSV without efforts streamed in blocks in both).
    """
    if isinstance(robot, (str, os.PathLike)):
        import composedyn as cd

        robot = cd.load(robot)
    from composedyn.joint_space import refuse_several_coordinates

    refuse_several_coordinates(robot, "check_many")
    if getattr(robot, "floating", False):
        raise ValueError(f"check_many: robot {robot.name!r} has a floating base; joint-state logs carry no base "
                         "motion (check legged trajectories with composedyn.check_trajectory)")
    if errors not in ("raise", "report"):
        raise ValueError(f'errors must be "raise" or "report", got {errors!r}')
    from composedyn.closed_chain import ClosedChain

    if client is not None and isinstance(robot, ClosedChain):
        raise ValueError(f"check_many: {type(robot).__name__} {robot.name!r} is checked in this process only "
                         "(client=None)")
    paths = [str(p) for p in paths]
    files = [None] * len(paths) if files is None else list(files)
    if len(files) != len(paths):
        raise ValueError(f"check_many: files has {len(files)} entries for {len(paths)} logs")
    task = {"plot": plot, "keep_report": keep_reports, **options}
    if client is None:
        rows = []
        for k, path in enumerate(paths):
            rows.append(check_row(robot, path, errors=errors, files=files[k], **task))
            if progress is not None:
                progress(k + 1, len(paths))
        return rows
    return _on_cluster(client, robot, paths, files, errors, progress, task)


def _on_cluster(client, robot, paths, files, errors, progress, task) -> list[LogRow]:
    import uuid

    require("distributed", "checking logs on a Dask cluster")
    from distributed import as_completed

    run = uuid.uuid4().hex  # keys of this call only: a later call never meets released ones
    graph = client.scatter(robot.graph, broadcast=True, hash=False)
    mimic = getattr(robot, "mimic_mode", "dependent")
    futures = [client.submit(_check_on_worker, graph, graph.key, mimic, path, files[k], task,
                             key=f"composedyn-check-{run}-{k}", pure=False)
               for k, path in enumerate(paths)]
    index = {f.key: k for k, f in enumerate(futures)}
    rows: list = [None] * len(paths)
    try:
        for done, future in enumerate(as_completed(futures), start=1):
            row = rows[index[future.key]] = future.result()
            if row.verdict == "unreadable" and errors == "raise":  # a bad log: this process's error
                raise ValueError(row.error)
            if progress is not None:
                progress(done, len(paths))
    except BaseException:
        client.cancel(futures)
        raise
    return rows


def _check_on_worker(graph, key: str, mimic: str, path: str, files: dict | None, task: dict) -> LogRow:
    import warnings

    import numba

    # The cluster's workers are the parallelism: numba's parallel loops run on one thread per
    # task (its default, every core, in each of N workers would oversubscribe the machine).
    numba.set_num_threads(1)
    robot = _ROBOTS.get((key, mimic))
    if robot is None:
        from composedyn.robot import Robot

        while len(_ROBOTS) >= 4:  # robots of earlier calls
            _ROBOTS.pop(next(iter(_ROBOTS)))
        with warnings.catch_warnings():  # the description's warnings were shown where it was loaded
            warnings.simplefilter("ignore")
            robot = _ROBOTS[(key, mimic)] = Robot(graph, mimic=mimic)
    return check_row(robot, path, errors="report", files=files, **task)


def kernel_cache_stats() -> dict:
    """{"loaded": n, "compiled": n}: compiled kernels of this process taken from
    numba's disk cache, and compiled here (call on workers with ``client.run``)."""
    import sys

    loaded = compiled = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("composedyn.dynamics.compiled"):
            continue
        for obj in [*vars(module).values(), *getattr(module, "GENERATED", {}).values()]:  # generated loops too
            stats = getattr(obj, "stats", None)
            if stats is not None and hasattr(stats, "cache_hits"):
                loaded += sum(stats.cache_hits.values())
                compiled += sum(stats.cache_misses.values())
    return {"loaded": loaded, "compiled": compiled}
