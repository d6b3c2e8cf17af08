"""Logs whose accelerations are not well above the sensor noise bias a least-squares fit (errors in
variables) while its residual stays small: ``identify`` refuses them (below ``MIN_SNR``) or warns
(below ``WARN_SNR``), and accepts rich logs and the library's own excitation trajectories; a
validation log the identified model predicts worse than the prior gives a warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from ident_sim import fourier_motion, real_robot, simulated_log, write_log_csv


@pytest.fixture(scope="module")
def arm():
    prior = cd.load("two_link")
    return prior, real_robot(prior)


def _fit(prior, log, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cd.identify(prior, log, method="wls", **kw)
    return res, [str(w.message) for w in caught if issubclass(w.category, cd.ModelWarning)]


def test_tiny_motion_is_refused(arm):
    """Every joint within +-3 mrad: condition number 1.5e4, fit residual 3 %, yet the model predicts
    another motion worse than the unchanged prior."""
    prior, real = arm
    log = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1, amplitude=0.003), seed=1)
    with pytest.raises(ValueError, match=r"barely accelerate joint\(s\) joint1 .*joint2 .*composedyn excite"):
        cd.identify(prior, log, method="wls")


def test_one_joint_barely_moving_is_refused_by_name(arm):
    """joint2 moves 1.5 mrad (above the 1 mrad of 'never moves'), joint1 a rich motion."""
    prior, real = arm
    t, q, qd, qdd = fourier_motion(prior, 20, 200, seed=1)
    s = 0.005
    q[:, 1] = q[0, 1] + s * (q[:, 1] - q[0, 1])
    qd[:, 1] *= s
    qdd[:, 1] *= s
    log = simulated_log(real, t, q, qd, qdd, seed=1)
    assert 1e-3 < np.ptp(log.q[:, 1]) < 2e-3
    with pytest.raises(ValueError, match=r"barely accelerate joint\(s\) joint2 \(") as e:
        cd.identify(prior, log, method="wls")
    assert "joint1" not in str(e.value)


def test_weak_motion_warns_and_rich_motion_does_not(arm):
    prior, real = arm
    weak = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1, amplitude=0.01), seed=1)
    res, messages = _fit(prior, weak)
    assert len(messages) == 1 and "accelerate joint(s)" in messages[0] and res.warnings == messages
    assert res.to_dict()["warnings"] == messages
    rich = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1), seed=1)
    res, messages = _fit(prior, rich)
    assert messages == [] and res.warnings == [] and np.all(res.acceleration_snr > 100)
    # the noise estimate: the simulated encoder noise is 1e-5 rad; logged velocities give the same check
    from composedyn.identification.identify import WARN_SNR

    with_qd = type(rich)(**{**vars(rich), "qd": np.gradient(rich.q, rich.t, axis=0)})
    assert np.all(cd.identify(prior, with_qd, method="wls").acceleration_snr > WARN_SNR)


@pytest.mark.parametrize("name", ["two_link", "planar3r"])
def test_own_excitation_trajectories_are_accepted_without_warning(name):
    robot = cd.load(name)
    real = real_robot(robot)
    ex = cd.excitation_trajectory(robot, 20.0, rate=200)
    res, messages = _fit(robot, simulated_log(real, ex.t, ex.q, ex.qd, ex.qdd, seed=1))
    assert messages == [] and res.overall_relative_rms < 0.02


def test_validation_worse_than_the_prior_warns(arm, tmp_path, capsys):
    """A validation log of the prior robot itself: the identified (real) model predicts it worse."""
    prior, real = arm
    fit = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1), seed=1)
    own = simulated_log(prior, *fourier_motion(prior, 10, 200, seed=2), seed=2)
    res, _ = _fit(prior, fit)
    with pytest.warns(cd.ModelWarning, match="predicts this validation log worse than the prior robot"):
        v = res.validate(own)
    assert v["overall_relative_rms"] > v["prior_overall_relative_rms"] and len(res.warnings) == 1
    f, o = write_log_csv(fit, tmp_path / "fit.csv"), write_log_csv(own, tmp_path / "own.csv")
    assert main(["identify", "two_link", f, "--out", str(tmp_path / "id.urdf"),
                 "--validate", o]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("composedyn: warning: ") and "worse than the prior" in err[0]
