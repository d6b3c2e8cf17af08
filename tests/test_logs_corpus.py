"""Corrupted-bag corpus: ROS 1 ``.bag``, ROS 2 ``.db3`` and ``.mcap`` logs of the bundled Panda
(within limits), truncated at several offsets and with single bit flips at fixed-seed random
positions.  Every variant is refused with one ValueError line naming the file, or reads with a
"damaged"/"inconsistent" finding, or reads the original samples exactly, or differs from them by
less than sensor noise (positions 1e-4 rad, velocities 1e-2 rad/s, efforts 0.2 N m, times 1 us:
a flip in the lowest bits of a number, which no rule can see) with the original's verdict.  A
variant that reads changed data beyond that without a finding fails the test."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.logs.check import check_log
from composedyn.testing.log_bags import write_log

KINDS = ("ros1", "db3_file", "mcap_file")
CUTS = (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 0.99)
FLIPS = 30
NOISE = {"t": 1e-6, "q": 1e-4, "qd": 1e-2, "effort": 0.2}


@pytest.fixture(scope="module")
def panda():
    return cd.load("panda")


def largest_change(log, orig) -> dict | None:
    """Per field, the largest absolute change from the original; None when the shapes differ."""
    out = {}
    for f in NOISE:
        a, b = getattr(log, f), getattr(orig, f)
        if (a is None) != (b is None) or (a is not None and a.shape != b.shape):
            return None
        out[f] = 0.0 if a is None else float(np.abs(a - b).max())
    return out if log.stamp0 == orig.stamp0 and log.joint_names == orig.joint_names else None


@pytest.mark.parametrize("kind", KINDS)
def test_corrupted_bags_are_never_silently_changed(panda, tmp_path, kind, capsys):
    names = list(panda.joint_names)
    lim = panda.limits
    center = dict(zip(names, (lim["lower"] + lim["upper"]) / 2))
    path = write_log(tmp_path / (kind + (".bag" if kind == "ros1" else "")), kind, [(names, 100.0, 0.0)],
                     duration=1.0, speed=0.3, center=center)
    orig = cd.read_log(path, joint_names=names)
    verdict = check_log(panda, orig)
    assert orig.findings == () and verdict.verdict == "within limits"
    data = path.read_bytes()
    rng = np.random.default_rng(28)
    variants = [("cut", int(len(data) * f)) for f in CUTS]
    variants += [("flip", int(b)) for b in rng.integers(0, 8 * len(data), FLIPS)]
    counts = dict(cases=0, refused=0, flagged=0, identical=0, below_noise=0)
    for what, at in variants:
        raw = bytearray(data[:at] if what == "cut" else data)
        if what == "flip":
            raw[at // 8] ^= 1 << (at % 8)
        bad = tmp_path / f"{what}{at}{path.suffix}"
        bad.write_bytes(raw)
        counts["cases"] += 1
        try:
            log = cd.read_log(bad, joint_names=names)
        except ValueError as e:
            assert str(e).startswith(f"{bad}: ") and "\n" not in str(e), (what, at, str(e))
            counts["refused"] += 1
            continue
        if log.findings:
            assert all(f.kind in ("damaged", "inconsistent") for f in log.findings)
            if not counts["flagged"]:  # the verdict is the finding's
                assert check_log(panda, log).verdict == log.findings[0].kind
            counts["flagged"] += 1
            continue
        change = largest_change(log, orig)
        assert change is not None, (what, at, "different samples read without a finding")
        if not any(change.values()):
            counts["identical"] += 1
            continue
        assert all(change[f] <= NOISE[f] for f in NOISE), (what, at, change)
        if max(change.values()) > 1e-6:  # visible to a check at all: the same verdict as the original
            again = check_log(panda, log)
            assert again.verdict == verdict.verdict and again.ok == verdict.ok
        counts["below_noise"] += 1
    with capsys.disabled():  # the counts appear in the test output whatever the capture mode
        print(f"\n{kind} corpus: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    assert counts["cases"] == len(CUTS) + FLIPS
    assert counts["refused"] >= len(CUTS) // 2  # most truncations cannot be read at all
