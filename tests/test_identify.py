"""End-to-end identification on simulated logs, and the identify / excite commands.

The 'real' robot differs from its description (link masses and inertias
scaled by up to 30 %, random viscous and Coulomb friction); its logs carry
1 % torque noise and 1e-5 rad encoder noise (``ident_sim.py``).  Oracles: the
real robot's own torques on a different validation motion, Pinocchio reading
the written URDF, and the pseudo-inertia / principal-moment conditions of
physical consistency.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from ident_sim import fourier_motion, real_robot, simulated_log, write_log_csv
from pin_oracle import PinPair, pin, rel_err
from random_robots import random_urdf


@pytest.fixture(scope="module")
def two_link():
    prior = cd.load("two_link")
    real = real_robot(prior)
    fit = simulated_log(real, *fourier_motion(prior, 20, 200, seed=1), seed=1)
    val = simulated_log(real, *fourier_motion(prior, 10, 200, seed=2), seed=2)
    return prior, real, fit, val


@pytest.mark.parametrize("method", ["ols", "wls", "physical"])
def test_identified_model_predicts_validation_torques(two_link, method):
    prior, real, fit, val = two_link
    res = cd.identify(prior, fit, method=method)
    v = res.validate(val)
    assert v["overall_relative_rms"] < 0.02 and np.all(v["relative_rms"] < 0.02)
    assert v["prior_overall_relative_rms"] > 10 * v["overall_relative_rms"]
    # the identified base parameters are the real robot's (friction included)
    from composedyn.parameters import parameters

    truth = res.base.base(parameters(real, joint_terms=True))
    assert np.abs(res.base_values - truth).max() < 0.05 * np.abs(truth).max()
    report = json.loads(res.to_json())
    assert report["method"] == method and report["validation"]["overall_relative_rms"] < 0.02
    assert len(report["base_parameters"]) == res.base.rank


def _consistent(robot) -> None:
    """Positive mass, positive principal moments satisfying the triangle inequality, per body."""
    m = robot.model
    assert np.all(m.mass > 0)
    for Ic in m.inertia_com:
        e = np.linalg.eigvalsh(Ic)
        assert e[0] > 0 and e[2] <= e[0] + e[1] + 1e-12 * e[2]


def test_physical_on_a_branched_tree_reads_back_in_pinocchio(tmp_path):
    prior = cd.from_urdf(random_urdf(11, 4, types=("revolute", "prismatic"), p_fixed=0.5))
    assert len(prior.model.link_names) > prior.dof + 1  # links welded by fixed joints are merged
    real = real_robot(prior, seed=3)
    fit = simulated_log(real, *fourier_motion(prior, 20, 200, seed=3), seed=3)
    val = simulated_log(real, *fourier_motion(prior, 10, 200, seed=4), seed=4)
    res = cd.identify(prior, fit, method="physical")
    assert res.inconsistent == []
    _consistent(res.robot)
    assert res.validate(val)["overall_relative_rms"] < 0.02
    path = res.to_urdf(tmp_path / "identified.urdf")
    back = cd.load(path)
    pp = PinPair(back, str(path))
    rng = np.random.default_rng(0)
    n = prior.dof
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, n))
        tau = res.robot.regressor(q, qd, qdd) @ res.parameters[:10 * n]  # rigid body part
        assert rel_err(pin.rnea(pp.model, pp.data, pp.q(q), pp.v(qd), pp.v(qdd)), pp.v(tau)) < 1e-9
        assert rel_err(back.inverse_dynamics(q, qd, qdd), res.predict(q, qd, qdd)) < 1e-9
    fv, fc = res.parameters[10 * n:].reshape(n, 3)[:, :2].T
    assert rel_err(pp.model.damping, pp.v(fv)) < 1e-12 and rel_err(pp.model.friction, pp.v(fc)) < 1e-12


def test_logs_in_any_joint_order_and_several_logs(two_link):
    prior, _, fit, val = two_link
    from types import SimpleNamespace

    flipped = SimpleNamespace(t=fit.t, joint_names=fit.joint_names[::-1] + ("extra",),
                              q=np.column_stack([fit.q[:, ::-1], fit.t]), qd=None,
                              effort=np.column_stack([fit.effort[:, ::-1], fit.t]))
    a = cd.identify(prior, [fit, val], method="wls")
    b = cd.identify(prior, [flipped, val], method="wls")
    assert np.allclose(a.base_values, b.base_values, rtol=1e-10, atol=1e-12)


def test_cli_identify_writes_urdf_json_plot(tmp_path, two_link, capsys):
    _, _, fit, val = two_link
    f, v = write_log_csv(fit, tmp_path / "fit.csv"), write_log_csv(val, tmp_path / "val.csv")
    out, js, png = tmp_path / "id.urdf", tmp_path / "id.json", tmp_path / "id.png"
    rc = main(["identify", "two_link", f, "--out", str(out), "--validate", v, "--json", str(js), "--plot", str(png)])
    assert rc == 0
    captured = capsys.readouterr()
    assert "validation" in captured.out and captured.err == ""  # no progress bar off a terminal
    report = json.loads(js.read_text())
    assert report["validation"]["overall_relative_rms"] < 0.02 and png.stat().st_size > 0
    _consistent(cd.load(out))


def _bad(tmp_path, capsys, name, header, rows):
    p = tmp_path / name
    p.write_text(",".join(header) + "\n" + "\n".join(",".join(f"{x:.9g}" for x in r) for r in rows) + "\n")
    rc = main(["identify", "two_link", str(p), "--out", str(tmp_path / "x.urdf")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and not (tmp_path / "x.urdf").exists()
    return err


def test_cli_bad_logs_one_line_exit_2(tmp_path, capsys):
    t = np.arange(400) / 100.0
    moving = np.column_stack([t, np.sin(t), np.cos(t), np.sin(t), np.cos(t)])
    err = _bad(tmp_path, capsys, "noeffort.csv", ["time", "joint1", "joint2", "joint1_effort"], moving[:, :4])
    assert "missing effort column" in err and "joint2_effort" in err
    hdr = ["time", "joint1", "joint2", "joint1_effort", "joint2_effort"]
    err = _bad(tmp_path, capsys, "short.csv", hdr, moving[:10])
    assert "10 samples" in err and "short.csv" in err
    still = moving.copy()
    still[:, 2] = 0.3
    err = _bad(tmp_path, capsys, "still.csv", hdr, still)
    assert "joint2" in err and "unidentifiable" in err and "joint1" not in err


def test_excitation_trajectory_within_limits_and_csv(tmp_path):
    from composedyn.torque_check.trajectory_csv import read_trajectory_csv

    robot = cd.from_urdf(random_urdf(2, 3, types=("revolute",)))
    ex = cd.excitation_trajectory(robot, 10.0, harmonics=3, base_frequency=0.1, rate=50, maxiter=10)
    lim = robot.limits
    assert np.all(ex.q >= lim["lower"]) and np.all(ex.q <= lim["upper"])
    assert np.all(np.abs(ex.qd) <= lim["velocity"])
    assert np.all(np.abs(robot.inverse_dynamics(ex.q, ex.qd, ex.qdd)) <= lim["effort"])
    assert np.allclose(ex.q[0], ex.q[-1]) and np.allclose(ex.qd[0], ex.qd[-1])  # one whole period
    # from rest: zero velocity and acceleration at t = 0 (and after the whole period), a real motion between
    for k in (0, -1):
        assert np.abs(ex.qd[k]).max() <= 1e-12 * np.abs(ex.qd).max()
        assert np.abs(ex.qdd[k]).max() <= 1e-12 * np.abs(ex.qdd).max()
    assert np.all(np.ptp(ex.q, axis=0) > 0.05 * (lim["upper"] - lim["lower"]))
    # the accelerations are the derivatives of the velocities (so the rest at t = 0 is the motion's own)
    assert np.abs(np.gradient(ex.qd, ex.t, axis=0) - ex.qdd)[1:-1].max() < 1e-2 * np.abs(ex.qdd).max()
    # velocities and accelerations are the derivatives of the positions
    assert np.abs(np.gradient(ex.q, ex.t, axis=0) - ex.qd)[1:-1].max() < 1e-2 * np.abs(ex.qd).max()
    assert np.isfinite(ex.condition) and ex.condition >= 1
    back = read_trajectory_csv(ex.to_csv(tmp_path / "ex.csv"), robot.joint_names)
    assert np.allclose(back.q, ex.q) and np.allclose(back.qdd, ex.qdd)


def test_cli_excite(tmp_path, capsys):
    out = tmp_path / "ex.csv"
    assert main(["excite", "two_link", "--duration", "5", "--out", str(out), "--harmonics", "2"]) == 0
    assert "condition number" in capsys.readouterr().out and out.read_text().startswith("time,")
    header, first = out.read_text().splitlines()[:2]
    start = dict(zip(header.split(","), map(float, first.split(","))))
    rates = [k for k in start if k.endswith(("_vel", "_acc"))]
    assert len(rates) == 4 and all(abs(start[k]) < 1e-12 for k in rates), start  # starts from rest
    assert main(["excite", "two_link", "--duration", "-1", "--out", str(out)]) == 2
    assert main(["excite", "two_link", "--duration", "5", "--out", str(out), "--harmonics", "1"]) == 2
    assert "harmonics >= 2" in capsys.readouterr().err


def test_torque_offsets_are_identified(two_link):
    """A constant sensor offset per joint, added to the logged efforts, comes back as the ``off`` terms."""
    from types import SimpleNamespace

    prior, real, _, _ = two_link
    offset = np.array([0.7, -0.4])
    # a wide motion: over a small range the gravity columns are nearly constant, like the offset's
    log = simulated_log(real, *fourier_motion(prior, 20, 200, seed=5, amplitude=3.0), seed=5)
    shifted = SimpleNamespace(t=log.t, joint_names=log.joint_names, q=log.q, qd=None, effort=log.effort + offset)
    res = cd.identify(prior, shifted, method="wls", offset=True)
    off = res.parameters[10 * prior.dof:].reshape(prior.dof, 4)[:, 3]
    assert np.abs(off - offset).max() < 0.02 * np.abs(offset).max()
    assert res.parameter_names[-1] == "off2"


def test_bad_arguments_and_impossible_least_squares_bodies(two_link, tmp_path):
    prior, _, fit, _ = two_link
    with pytest.raises(ValueError, match="method must be one of"):
        cd.identify(prior, fit, method="magic")
    for cutoff in (0.0, -1.0, float("nan"), float("inf")):  # inf would silently become 0.8 x Nyquist
        with pytest.raises(ValueError, match="cutoff must be a positive, finite frequency"):
            cd.identify(prior, fit, cutoff=cutoff)
    res = cd.identify(prior, fit, method="ols")
    # two_link's bodies are slender rods: the unidentifiable moments of the least-squares
    # solution leave them on the boundary of consistency; either a robot or a clear refusal
    if res.robot is None:
        with pytest.raises(cd.ModelError, match="physical"):
            res.to_urdf(tmp_path / "x.urdf")
    else:
        assert res.to_urdf(tmp_path / "x.urdf").exists()


def test_a_short_log_that_is_fitted_closely_with_wrong_parameters_warns(two_link):
    """1 s at 200 Hz: 25 fit samples for 11 base parameters; the residual is 0.1 % while base
    parameters are off by half their scale (the 20 s log of the fixture: 1 %, no warning)."""
    prior, real, fit, _ = two_link
    short = simulated_log(real, *fourier_motion(prior, 1, 200, seed=1), seed=1)
    with pytest.warns(cd.ModelWarning, match=r"equations .* for 11 base parameters, fewer than 10 per parameter"):
        res = cd.identify(prior, short)
    from composedyn.parameters import parameters

    truth = res.base.base(parameters(real, joint_terms=True))
    assert np.abs(res.base_values - truth).max() > 0.2 * np.abs(truth).max()  # the case the warning is for
    assert any("per parameter" in w for w in res.warnings)
    assert not any("per parameter" in w for w in cd.identify(prior, fit).warnings)

def test_a_log_that_does_not_excite_the_friction_is_refused(two_link):
    """Joint 2 moves only one way: its Coulomb term (sgn qd = 1) cannot be told from gravity and offset."""
    from types import SimpleNamespace

    prior, real, _, _ = two_link
    t = np.arange(3000) / 200.0
    q = np.column_stack([np.sin(t), 0.05 * t])
    qd = np.column_stack([np.cos(t), np.full_like(t, 0.05)])
    qdd = np.column_stack([-np.sin(t), 0 * t])
    log = SimpleNamespace(t=t, joint_names=prior.joint_names, q=q, qd=None, effort=real.inverse_dynamics(q, qd, qdd))
    with pytest.raises(ValueError, match="do not excite every base parameter"):
        cd.identify(prior, log, method="wls", offset=True)


def test_d_optimal_excitation_stays_within_limits_and_beats_its_start():
    robot = cd.from_urdf(random_urdf(2, 3, types=("revolute",)))
    kw = {"harmonics": 3, "base_frequency": 0.1, "rate": 20, "criterion": "d-optimal"}
    start = cd.excitation_trajectory(robot, 10.0, maxiter=0, **kw)
    ex = cd.excitation_trajectory(robot, 10.0, maxiter=15, **kw)
    lim = robot.limits
    assert np.all(np.abs(ex.qd) <= lim["velocity"]) and np.all(ex.q >= lim["lower"]) and np.all(ex.q <= lim["upper"])
    base = robot.base_parameters(joint_terms=True)

    def logdet(e):
        Yb = base.base_regressor(robot.regressor(e.q, e.qd, e.qdd, joint_terms=True)).reshape(-1, base.rank)
        return np.linalg.slogdet(Yb.T @ Yb)[1]

    assert logdet(ex) > logdet(start)
    with pytest.raises(ValueError, match="criterion"):
        cd.excitation_trajectory(robot, 10.0, criterion="a-optimal")


@pytest.mark.parametrize(("seed", "n"), [(25, 2), (27, 3), (13, 3), (34, 2), (3, 4)])
def test_condition_excitation_is_never_worse_than_its_start(seed, n):
    """The optimum is scaled down to the limits on the output samples after the optimisation, which can
    cost it more than it costs the start (maxiter=0: the start itself): the better of the two is returned.
    On these robots the scaled optimum is the worse one."""
    robot = cd.from_urdf(random_urdf(seed, n, types=("revolute", "prismatic")))
    kw = {"harmonics": 3, "base_frequency": 0.2, "rate": 10, "points": 40, "seed": seed}
    start = cd.excitation_trajectory(robot, 5.0, maxiter=0, **kw)
    ex = cd.excitation_trajectory(robot, 5.0, maxiter=8, **kw)
    assert ex.condition <= start.condition * (1 + 1e-12)
