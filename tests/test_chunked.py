"""Long logs in windows: the windowed derivatives, torques and limit intervals equal the
whole-log ones on random motions, however the samples are split; CSV blocks equal the
whole table; absurd inputs are refused with one line."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.sampled import spline_derivatives
from composedyn.torque_check.chunked import check_chunks, differentiate_chunks
from composedyn.torque_check.trajectory_csv import csv_chunks


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def random_motion(rng, robot, T):
    """A random smooth motion around mid-range: sums of sines, random spacing jitter."""
    lo, hi = robot.limits["lower"], robot.limits["upper"]
    t = np.cumsum(rng.uniform(0.8e-3, 1.2e-3, T))
    w = rng.uniform(0.5, 8.0, (3, robot.dof))
    a = rng.uniform(0.05, 0.5, (3, robot.dof)) * 0.5 * (hi - lo)
    q = 0.5 * (lo + hi) + sum(a[k] * np.sin(w[k] * t[:, None] + k) for k in range(3))
    return t, q


def split(rng, *arrays):
    """Consecutive blocks of random sizes (1 .. 700 rows)."""
    T = len(arrays[0])
    cuts = np.unique(np.r_[0, np.cumsum(rng.integers(1, 700, T // 50 + 1)), T])
    cuts = cuts[cuts <= T]
    return [tuple(a[i:j] for a in arrays) for i, j in itertools.pairwise(cuts) if j > i]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("smoothing", [0.0, 1e-9, 1e-6])
def test_windowed_derivatives_equal_the_whole_log_spline(seed, smoothing):
    rng = np.random.default_rng(seed)
    T = 3000
    t = np.cumsum(rng.uniform(0.8e-3, 1.2e-3, T))
    q = np.sin(rng.uniform(1, 10, 4) * t[:, None]) + 1e-4 * rng.normal(size=(T, 4))
    whole = spline_derivatives(t - t[0], q, (1, 2, 3), smoothing)
    out = list(differentiate_chunks(split(rng, t, q), smoothing, jerk=True, chunk=400))
    assert len(out) > 5
    got = [np.concatenate([o[k] for o in out]) for k in (2, 3, 4)]
    assert np.array_equal(np.concatenate([o[0] for o in out]), t)
    for g, w in zip(got, whole):
        assert np.abs(g - w).max() <= 1e-9 * max(1.0, np.abs(w).max())


@pytest.mark.parametrize("seed", [3, 4])
def test_chunked_check_equals_the_whole_log_check(panda, seed):
    rng = np.random.default_rng(seed)
    t, q = random_motion(rng, panda, 4000)
    limits = {"acceleration": 2.0, "jerk": 200.0, "velocity": 0.6}
    whole = cd.check_trajectory(panda, t, q, limits=limits)
    parts = check_chunks(panda, split(rng, t, q), limits=limits, chunk=500, keep=True)
    assert parts.t is not None and np.array_equal(parts.t, whole.t)
    for a, b in ((parts.qd, whole.qd), (parts.qdd, whole.qdd), (parts.tau, whole.tau)):
        assert np.abs(a - b).max() <= 1e-9 * np.abs(b).max()
    assert len(whole.violations) > 10 and len(parts.violations) == len(whole.violations)
    for u, v in zip(parts.violations, whole.violations):
        assert (u.joint, u.quantity) == (v.joint, v.quantity)
        assert abs(u.start - v.start) < 1e-9 and abs(u.end - v.end) < 1e-9 and abs(u.peak - v.peak) < 1e-6
    streamed = check_chunks(panda, split(rng, t, q), limits=limits, chunk=500)
    assert streamed.t is None and streamed.samples == len(t)
    assert [j.status for j in streamed.joints] == [j.status for j in whole.joints]
    assert np.allclose([j.peak_torque for j in streamed.joints], [j.peak_torque for j in whole.joints], rtol=1e-9)


def test_streamed_report_plots_from_its_envelope_and_writes_csv(panda, tmp_path):
    rng = np.random.default_rng(5)
    t, q = random_motion(rng, panda, 3000)
    rep = check_chunks(panda, split(rng, t, q), chunk=500, csv=tmp_path / "s.csv", limits={"effort": 5.0})
    rep.plot(tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    whole = cd.check_trajectory(panda, t, q)
    table = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)
    assert table.shape == (len(t), 1 + 4 * panda.dof)
    assert np.allclose(table[:, 4], whole.tau[:, 0], rtol=1e-8, atol=1e-8)
    t0, _, lo, hi = rep.envelope.arrays()
    assert len(t0) <= 2 * rep.envelope.buckets + 1
    assert np.allclose(lo.min(0), whole.tau.min(0)) and np.allclose(hi.max(0), whole.tau.max(0))
    with pytest.raises(ValueError, match="streamed"):
        rep.to_csv()


def test_csv_blocks_equal_the_whole_table_with_comments_inside(panda, tmp_path):
    rng = np.random.default_rng(6)
    t, q = random_motion(rng, panda, 1200)
    lines = [",".join(["time", *panda.joint_names])] + [",".join(f"{x:.17g}" for x in row)
                                                         for row in np.column_stack([t, q])]
    lines.insert(500, "# a comment inside the data")
    lines.insert(800, "")
    (tmp_path / "c.csv").write_text("# header comment\n" + "\n".join(lines) + "\n")
    blocks = list(csv_chunks(tmp_path / "c.csv", panda.joint_names, rows=256))
    assert len(blocks) == 5
    assert np.array_equal(np.concatenate([b[0] for b in blocks]), t)
    assert np.array_equal(np.concatenate([b[1] for b in blocks]), q)


def test_absurd_inputs_are_refused(panda):
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(ValueError, match="beyond 10000 rad"):
        cd.check_trajectory(panda, t, np.full((11, 7), 1e200))
    with pytest.raises(ValueError, match="too close to differentiate"):
        cd.check_trajectory(panda, np.arange(11) * 1e-15, np.zeros((11, 7)))
    with pytest.raises(ValueError, match="beyond 1e"):
        cd.check_trajectory(panda, 1.7e18 + np.arange(11) * 1e6, np.zeros((11, 7)))
    q = np.zeros((11, 7))
    with pytest.raises(ValueError, match="not finite"):  # finite inputs, torques overflow
        cd.check_trajectory(panda, t, q, qd=np.full((11, 7), 1e200), qdd=np.zeros((11, 7)))


def test_cli_refuses_absurd_logs_with_one_line(panda, tmp_path, capsys):
    t = np.linspace(0.0, 1.0, 11)
    for name, tt, q, needle in (("big.csv", t, np.full((11, 7), 1e200), "beyond"),
                                ("dense.csv", np.arange(11) * 1e-15, np.zeros((11, 7)), "too close")):
        path = tmp_path / name
        np.savetxt(path, np.column_stack([tt, q]), delimiter=",", header=",".join(["time", *panda.joint_names]),
                   comments="", fmt="%.17g")
        assert main(["torques", "panda", str(path), "--json", str(tmp_path / "r.json")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and name in err[0] and needle in err[0] and "nan" not in err[0]
        assert not (tmp_path / "r.json").exists()  # one log that cannot be checked: bad input, nothing written


def test_given_velocities_and_accelerations_stream_like_arrays(panda):
    rng = np.random.default_rng(7)
    t, q = random_motion(rng, panda, 2500)
    whole = cd.check_trajectory(panda, t, q)
    qd, qdd = whole.qd, whole.qdd
    limits = {"jerk": 50.0}
    for given in ((q, qd), (q, qd, qdd)):
        ref = cd.check_trajectory(panda, t, *given, limits=limits)
        got = check_chunks(panda, split(rng, t, *given), limits=limits, chunk=300, keep=True)
        assert np.array_equal(got.qd, ref.qd)
        assert np.abs(got.qdd - ref.qdd).max() <= 1e-9 * np.abs(ref.qdd).max()
        assert [(v.joint, v.quantity) for v in got.violations] == [(v.joint, v.quantity) for v in ref.violations]
        assert np.allclose([v.start for v in got.violations], [v.start for v in ref.violations], rtol=0, atol=1e-9)
        assert any(v.quantity == "jerk" for v in got.violations)
