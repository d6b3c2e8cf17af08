"""check_many: in process and on a distributed.LocalCluster (2 worker processes) give the
same rows in input order; workers load compiled kernels from numba's disk cache."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.logs.fleet import kernel_cache_stats
from composedyn.testing.log_bags import write_log


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    robot = cd.load("panda")
    lim = robot.limits
    center = dict(zip(robot.joint_names, (lim["lower"] + lim["upper"]) / 2))
    d = tmp_path_factory.mktemp("fleet")
    names = list(robot.joint_names)
    paths = []
    for k, speed in enumerate((0.2, 1.4, 0.5, 2.0, 0.3)):
        kind = ("mcap", "ros1", "sqlite3")[k % 3]
        paths.append(str(write_log(d / (f"log{k}" + (".bag" if kind == "ros1" else "")), kind,
                                   [(names[::-1], 250.0, 1e-4)], duration=1.0, speed=speed, center=center, seed=k)))
    bad = d / "bad.mcap"
    bad.write_bytes(b"not a bag")
    return robot, paths, str(bad)


def test_serial_rows_follow_the_reports(fleet):
    robot, paths, _ = fleet
    rows = cd.check_many(robot, paths)
    assert [r.path for r in rows] == paths
    assert cd.check_many("panda", paths[:2]) == rows[:2]  # a bundled name or a file loads the robot
    for row, path in zip(rows, paths):
        rep = cd.logs.check_log(robot, path)
        assert rep.complete  # the Panda has every limit: "within limits" or "exceeded"
        assert row.verdict == ("within limits" if rep.ok else "exceeded") == rep.to_dict()["verdict"]
        ratio = max(abs(j.peak_torque) / j.effort_limit for j in rep.joints)
        assert row.torque_ratio == pytest.approx(ratio, rel=1e-15)
        assert row.residual == pytest.approx(float(rep.residual.rms.max()), rel=1e-15)
        assert row.unchecked == () and row.findings == () and row.error is None
    assert {r.verdict for r in rows} == {"within limits", "exceeded"}


def _numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def test_local_cluster_equals_serial(fleet):
    from distributed import Client, LocalCluster

    robot, paths, bad = fleet
    serial = cd.check_many(robot, paths + [bad], errors="report")
    assert serial[-1].verdict == "unreadable" and "not a readable ROS bag" in serial[-1].error
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        done = []
        rows = cd.check_many(robot, paths + [bad], client=client, errors="report",
                             progress=lambda k, n: done.append((k, n)))
        stats = client.run(kernel_cache_stats)
        threads = client.gather([client.submit(_numba_threads, pure=False, workers=[w])
                                 for w in client.scheduler_info()["workers"]])
        with pytest.raises(ValueError, match="bad.mcap: not a readable ROS bag"):
            cd.check_many(robot, [bad], client=client)
    assert rows == serial  # same rows, same order, bit for bit
    assert done[-1] == (len(paths) + 1, len(paths) + 1)
    assert threads == [1, 1]  # the workers are the parallelism: numba's loops take one thread per task
    assert len(stats) == 2
    assert all(s["compiled"] == 0 for s in stats.values()), stats  # loaded from the disk cache
    assert sum(s["loaded"] for s in stats.values()) > 0, stats
    np.testing.assert_equal([r.torque_ratio for r in rows], [r.torque_ratio for r in serial])
