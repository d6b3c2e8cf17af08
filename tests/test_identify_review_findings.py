"""A log its reader finds damaged (a single-sample position spike in a ROS 1 bag) is refused by
``cd.identify`` and ``composedyn identify`` (exit status 3, as ``composedyn torques``), naming the
finding, unless the caller asks to fit it anyway; the same log without the spike is fitted."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from ident_sim import fourier_motion, real_robot, simulated_log, write_log_csv

pytest.importorskip("rosbags")

START = 1_700_000_000 * 10 ** 9


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    from composedyn.testing.log_bags import write_log

    prior = cd.load("two_link")
    real = real_robot(prior)
    fit = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1), seed=1)
    d = tmp_path_factory.mktemp("bags")

    def bag(spike: bool):
        def edit(_msgs):
            out = []
            for k in range(len(fit.t)):
                q = fit.q[k].copy()
                if spike and k == 2000:
                    q[1] += 0.5  # a flipped bit
                ns = START + round(fit.t[k] * 1e9)
                out.append((ns, ns, ["joint1", "joint2"], q, np.zeros(2), fit.effort[k], 0))
            return out

        return str(write_log(d / f"spike{spike}.bag", "ros1", [(["joint1", "joint2"], 200.0, 0.0)], duration=0.1,
                             edit=edit, velocity=False))

    val = write_log_csv(simulated_log(real, *fourier_motion(prior, 10, 200, seed=2), seed=2), d / "val.csv")
    return prior, bag(False), bag(True), val


def test_identify_refuses_a_damaged_log_unless_asked(bags):
    prior, clean, damaged, val = bags
    assert [f.kind for f in cd.read_log(damaged).findings] == ["damaged"]
    with pytest.raises(ValueError, match=r"spikeTrue\.bag.*damaged.*spikes by 0\.5.*ignore_findings=True") as e:
        cd.identify(prior, damaged, method="wls")
    assert e.value.findings == cd.read_log(damaged).findings
    res = cd.identify(prior, damaged, method="wls", ignore_findings=True)  # the caller's decision
    assert res.options["ignore_findings"] and np.isfinite(res.overall_relative_rms)
    good = cd.identify(prior, clean, method="wls")
    assert good.validate(val)["overall_relative_rms"] < 0.02
    with pytest.raises(ValueError, match="damaged"):  # a damaged validation log as well
        good.validate(damaged)
    assert good.validate(damaged, ignore_findings=True)["overall_relative_rms"] > 0


def test_cli_identify_damaged_log_exit_3_one_line(bags, tmp_path, capsys):
    prior, clean, damaged, val = bags
    out = tmp_path / "id.urdf"
    for argv in (["identify", "two_link", damaged, "--out", str(out), "--method", "wls"],
                 ["identify", "two_link", clean, "--out", str(out), "--method", "wls", "--validate", damaged]):
        assert main(argv) == 3
        err = capsys.readouterr().err.strip()
        assert err.startswith("composedyn: error: ") and "\n" not in err, err
        assert "damaged" in err and "spikeTrue.bag" in err and "--ignore-findings" in err
        assert not out.exists()
    assert main(["identify", "two_link", damaged, "--out", str(out), "--ignore-findings"]) == 0
    assert out.exists()
