"""Verdicts of log checks: a robot without some limits is never "within limits" in any
output (rows, text, JSON, summary CSV, HTML, serial or Dask); every exception of a reader
makes an "unreadable" row; reader findings make "damaged" / "inconsistent" (exit 3)."""

from __future__ import annotations

import csv
import json
import re
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
import composedyn.torque_check.trajectory_csv as trajectory_csv
from composedyn.cli import main
from composedyn.cli.closed_chain import load_model
from composedyn.closed_chain import ClosedChain
from composedyn.logs.findings import LogFinding
from composedyn.logs.html import fleet_html
from composedyn.logs.verdict import EXIT_STATUS, exit_status
from composedyn.robots import names
from composedyn.simulation.reference_motion import demo_reference
from composedyn.testing.log_bags import write_log
from composedyn.torque_check.closed_chain import check_closed_trajectory
from test_logs_cli import center


def _write_csv(path, joint_names, t, q, effort=None):
    cols = ["time", *joint_names] + ([f"{j}_effort" for j in joint_names] if effort is not None else [])
    data = np.column_stack([t, q] + ([effort] if effort is not None else []))
    np.savetxt(path, data, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")
    return str(path)


@pytest.fixture(scope="module")
def lacking(tmp_path_factory):
    """Every bundled robot some limit of which is missing: name -> (model, [positions CSV,
    CSV with efforts], oracle report of the motion)."""
    d = tmp_path_factory.mktemp("lacking")
    out = {}
    for name in names():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the bundled descriptions' own ModelWarnings
            model = load_model(name, "torques")
        t = np.linspace(0.0, 2.0, 201)
        with np.errstate(invalid="ignore"):  # inf + -inf: a joint without position limits
            q, qd, qdd = demo_reference(model, 2.0)(t)
        if isinstance(model, ClosedChain):
            oracle = check_closed_trajectory(model, t, q, qd, qdd)
        else:
            oracle = cd.check_trajectory(model, t, q, qd, qdd)
        if oracle.complete:
            continue
        paths = [_write_csv(d / f"{name}.csv", model.joint_names, t, q),
                 _write_csv(d / f"{name}_effort.csv", model.joint_names, t, q, effort=np.zeros_like(q))]
        out[name] = (model, paths, oracle)
    return out


def _ratio(peaks, limits) -> float | None:
    """Independent oracle: max |peak| / limit over joints with a finite limit, None without any."""
    pairs = [(abs(p), lim) for p, lim in zip(peaks, limits) if np.isfinite(lim)]
    return max(p / lim for p, lim in pairs) if pairs else None


def test_bundled_robots_without_some_limits_are_never_within_limits(lacking, tmp_path, capsys):
    assert {"puma560", "stanford", "planar3r", "two_link"} <= set(lacking)  # open trees lacking limits
    assert any(isinstance(m, ClosedChain) for m, _, _ in lacking.values())
    for name, (model, paths, oracle) in lacking.items():
        expected = "unchecked" if oracle.ok else "exceeded"
        rows = cd.check_many(model, paths, keep_reports=True)
        for row in rows:
            assert row.verdict == expected != "within limits", (name, row)
            assert row.unchecked == oracle.unchecked and len(row.unchecked) > 0
            for got, peaks, limit in ((row.torque_ratio, [j.peak_torque for j in oracle.joints], oracle.effort),
                                      (row.velocity_ratio, [j.peak_velocity for j in oracle.joints], oracle.velocity)):
                want = _ratio(peaks, limit)
                assert got is None if want is None else got == pytest.approx(want, rel=1e-6), (name, got, want)
            if not np.isfinite(oracle.effort).any():
                assert row.torque_ratio is None and row.worst_joint is None  # never "max torque/limit 0"
            entry = row.entry()
            assert entry["verdict"] == expected and entry["ok"] is False and entry["complete"] is False
        extra = [] if isinstance(model, ClosedChain) else ["--html", str(tmp_path / f"{name}.html")]
        for path in paths:
            out = {k: tmp_path / f"{name}.{k}" for k in ("json", "csv")}
            code = main(["torques", name, path, "--json", str(out["json"]), "--summary", str(out["csv"]), *extra])
            text = capsys.readouterr().out
            assert code == 0 and expected == "unchecked" or code == 1, (name, code)
            assert "within limits" not in text and expected in text, text
            assert not re.search(r"torque/limit 0\b", text)
            report = json.loads(out["json"].read_text())
            assert report["verdict"] == expected and report["ok"] is False, name
            with open(out["csv"], newline="") as f:
                (summary,) = csv.DictReader(f)
            assert summary["verdict"] == expected and summary["unchecked"]
            if extra:
                page = (tmp_path / f"{name}.html").read_text()
                assert f'<tr class="{expected}"><td' in page and 'class="within-limits"' not in page


def test_dask_rows_of_a_robot_without_effort_limits(lacking, tmp_path):
    """puma560 (no effort or velocity limits) through --workers 2 and --html: the serial JSON, "unchecked"."""
    _, paths, _ = lacking["puma560"]
    files = {}
    for mode, extra in (("serial", []), ("dask", ["--workers", "2", "--html", str(tmp_path / "p.html")])):
        out = tmp_path / f"{mode}.json"
        assert main(["torques", "puma560", *paths, "--json", str(out), *extra]) == 0
        files[mode] = out.read_text()
    assert files["dask"] == files["serial"]
    data = json.loads(files["serial"])
    assert data["verdict"] == "unchecked" and [e["verdict"] for e in data["reports"]] == ["unchecked"] * 2
    assert all(e["torque_ratio"] is None for e in data["reports"])


def _panda_bag(panda, path, speed: float) -> str:
    """A one-second MCAP bag of the Panda's analytic motion about the middle of its range."""
    return str(write_log(path, "mcap", [(list(panda.joint_names), 200.0, 0.0)], duration=1.0, speed=speed,
                         center=center(panda)))


class _Corrupt(Exception):
    """Stands for a bag library's own error class (rosbags, apsw)."""


@pytest.mark.parametrize("error", [OverflowError("Python int too large to convert to C ssize_t"), MemoryError(),
                                   UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
                                   _Corrupt("database disk image is malformed"), ValueError("no topic '/x'")])
def test_any_reader_exception_is_an_unreadable_row(error, tmp_path, monkeypatch):
    panda = cd.load("panda")
    good = _panda_bag(panda, tmp_path / "good", 0.2)
    bad_bag, bad_csv = str(tmp_path / "broken.mcap"), _write_csv(
        tmp_path / "broken.csv", panda.joint_names, np.linspace(0, 1, 11), np.zeros((11, 7)))
    read_log, csv_chunks = cd.read_log, trajectory_csv.csv_chunks

    def reader(path, *args, **kwargs):
        if str(path) == bad_bag:
            raise error
        return read_log(path, *args, **kwargs)

    def chunks(path, *args, **kwargs):
        blocks = csv_chunks(path, *args, **kwargs)
        if str(path) == bad_csv:  # fails part-way through the file
            yield next(blocks)
            raise error
        yield from blocks

    monkeypatch.setattr(cd, "read_log", reader)
    monkeypatch.setattr(trajectory_csv, "csv_chunks", chunks)
    rows = cd.check_many(panda, [bad_bag, good, bad_csv], errors="report")
    assert [r.verdict for r in rows] == ["unreadable", "within limits", "unreadable"]
    for row, path in ((rows[0], bad_bag), (rows[2], bad_csv)):
        assert row.error.startswith(f"{path}: ") and "\n" not in row.error
        assert (str(error).splitlines() or [""])[0] in row.error
        if not isinstance(error, ValueError):
            assert type(error).__qualname__ in row.error
    with pytest.raises(ValueError, match=re.escape(rows[0].error)):
        cd.check_many(panda, [good, bad_bag])


def test_a_corrupted_bag_is_one_unreadable_row_among_checked_ones(bags, tmp_path, capsys):
    """The summary of an MCAP file overwritten near its end: the reader's own exception
    (whatever its type) is one line; the other logs are checked and reported."""
    panda, paths = bags
    data = bytearray(next(Path(paths[0.2]).glob("*.mcap")).read_bytes())  # the bag folder's storage file
    data[-200:-100] = b"\xff" * 100
    broken = tmp_path / "broken.mcap"
    broken.write_bytes(bytes(data))
    rows = cd.check_many(panda, [paths[0.2], str(broken), paths[2.0]], errors="report")
    assert [r.verdict for r in rows] == ["within limits", "unreadable", "exceeded"]
    assert rows[1].error.startswith(f"{broken}: ") and "\n" not in rows[1].error
    out = tmp_path / "r.json"
    assert main(["torques", "panda", paths[0.2], str(broken), paths[2.0], "--json", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"composedyn: error: {rows[1].error}"]
    assert [e["verdict"] for e in json.loads(out.read_text())["reports"]] == [r.verdict for r in rows]


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    panda = cd.load("panda")
    d = tmp_path_factory.mktemp("found")
    return panda, {speed: _panda_bag(panda, d / f"log_{speed}", speed) for speed in (0.2, 2.0)}


@pytest.mark.parametrize("kinds, verdict", [(("damaged",), "damaged"), (("inconsistent",), "inconsistent"),
                                            (("inconsistent", "damaged"), "damaged")])
def test_reader_findings_give_their_verdict_and_exit_3(bags, kinds, verdict, tmp_path, monkeypatch, capsys):
    panda, paths = bags
    found = tuple(LogFinding(k, f"{paths[0.2]}:/joint_states: {k} at t = 0.5 s") for k in kinds)
    read_log = cd.read_log

    def reader(path, *args, **kwargs):
        log = read_log(path, *args, **kwargs)
        if str(path) != paths[0.2]:
            return log
        return replace(log, findings=found)

    monkeypatch.setattr(cd, "read_log", reader)
    (row, fast) = cd.check_many(panda, [paths[0.2], paths[2.0]], keep_reports=True)
    assert cd.check_many(panda, [paths[0.2]])[0].verdict == verdict
    assert row.verdict == verdict and row.findings == found and fast.verdict == "exceeded"
    assert row.entry()["findings"] == [{"kind": f.kind, "message": f.message} for f in found]
    assert f"{verdict}: in the samples read, within limits" in row.text
    assert all(f"{f.kind.upper()}: {f.message}" in row.text for f in found)
    out = tmp_path / "r.json"
    assert main(["torques", "panda", paths[0.2], paths[2.0], "--json", str(out), "--summary",
                 str(tmp_path / "s.csv")]) == 3  # damaged/inconsistent outranks exceeded
    data = json.loads(out.read_text())
    assert [e["verdict"] for e in data["reports"]] == [verdict, "exceeded"] and data["verdict"] == verdict
    assert f"{verdict}: in the samples read" in capsys.readouterr().out
    with open(tmp_path / "s.csv", newline="") as f:
        first = next(csv.DictReader(f))
    assert first["verdict"] == verdict and found[0].message in first["findings"]


def test_exit_status_order_and_epilog(capsys):
    assert exit_status(["within limits", "unchecked"]) == 0
    assert exit_status(["unchecked", "exceeded"]) == 1
    assert exit_status(["exceeded", "inconsistent"]) == 3
    assert exit_status(["damaged", "unreadable", "exceeded"]) == 2
    with pytest.raises(SystemExit):
        main(["torques", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for code in sorted(set(EXIT_STATUS.values())):
        words = [v for v, c in EXIT_STATUS.items() if c == code]
        clause = re.search(rf"\b{code} ([^;.]*)", text.split("exit status:", 1)[1]).group(1)
        assert all(w.split()[-1] in clause for w in words if w != "unchecked"), (code, clause)
    with pytest.raises(ValueError, match="kind must be one of damaged, inconsistent"):
        LogFinding("broken", "x")


def test_html_page_has_its_title_and_heading():
    row = cd.logs.LogRow("a/b.bag", "unreadable", error="a/b.bag: not a readable ROS bag")
    page = fleet_html([row], "Nightly <fleet>")
    assert "<title>Nightly &lt;fleet&gt;</title>" in page and "<h1>Nightly &lt;fleet&gt;</h1>" in page
    assert "unreadable: not a readable ROS bag" in page
