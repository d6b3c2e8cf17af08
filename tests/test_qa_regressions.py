"""Regressions for bad input: each case once gave a traceback, an unnamed
message, or silently wrong numbers."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main

ONE_LINK = ('<robot name="still"><link name="base"/><link name="l1"/>'
            '<joint name="weld" type="fixed"><parent link="base"/><child link="l1"/></joint></robot>')


def cli(capsys, *argv):
    """Run the CLI in-process: (status, stdout, stderr lines)."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, [line for line in err.replace("\r", "\n").splitlines()
                         if line.strip() and "[#" not in line and "[." not in line]


def one_error(capsys, *argv) -> str:
    status, out, err = cli(capsys, *argv)
    assert status == 2 and out == "" and len(err) == 1, (status, out, err)
    assert "Traceback" not in err[0]
    return err[0]


@pytest.fixture
def csv_ok(tmp_path):
    p = tmp_path / "ok.csv"
    p.write_text("time,joint1,joint2\n" + "".join(f"{0.1 * k},{0.1 * k},0\n" for k in range(8)))
    return p


# --- CLI -------------------------------------------------------------------

def test_integration_failure_is_one_line_not_a_traceback(capsys, monkeypatch):
    # e.g. a stiff plant: solve_ivp gives up (after ~20 s), simulate raises SimulationError, the CLI prints one line
    import types

    import scipy.integrate

    def failing(fun, t_span, y0, **kwargs):
        fun(t_span[0], y0)  # the right-hand side runs once, as in a real start
        return types.SimpleNamespace(status=-1, t=np.array([t_span[0]]),
                                     message="Required step size is less than spacing")

    monkeypatch.setattr(scipy.integrate, "solve_ivp", failing)
    assert "integration failed at t = 0 s: Required step size" in one_error(capsys, "simulate", "two_link")
    with pytest.raises(cd.SimulationError, match="integration failed"):
        cd.simulate(cd.load("two_link"), np.zeros(2), np.zeros(2), np.linspace(0, 1, 5))


@pytest.mark.parametrize("argv", [["demo", "--duration", "inf", "--no-plot"],
                                  ["simulate", "two_link", "--duration", "inf"],
                                  ["demo", "two_link", "--duration", "1e-9", "--no-plot"],
                                  ["simulate", "two_link", "--duration", "1e9"]])
def test_infinite_duration_names_the_option(capsys, argv):
    assert "--duration" in one_error(capsys, *argv)


@pytest.mark.parametrize("command", ["simulate", "demo", "equations"])
def test_robot_without_moving_joints(capsys, tmp_path, command):
    urdf = tmp_path / "still.urdf"
    urdf.write_text(ONE_LINK)
    msg = one_error(capsys, command, urdf, *(["--no-plot"] if command == "demo" else []))
    assert "still.urdf" in msg and "no moving joints" in msg


def test_csv_missing_or_folder(capsys, tmp_path):
    assert one_error(capsys, "torques", "two_link", tmp_path / "nope.csv").endswith("nope.csv: no such file")
    (tmp_path / "dir.csv").mkdir()
    assert "dir.csv: is a folder" in one_error(capsys, "torques", "two_link", tmp_path / "dir.csv")


def test_output_into_a_folder_names_the_option_path_not_a_temp_file(capsys, tmp_path, csv_ok):
    (tmp_path / "out").mkdir()
    msg = one_error(capsys, "torques", "two_link", csv_ok, "--json", tmp_path / "out")
    assert "out: is a folder" in msg and "/." not in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.csv", "out"]  # no temp file left


def test_unknown_plot_format_fails_before_writing(capsys, tmp_path, csv_ok):
    msg = one_error(capsys, "torques", "two_link", csv_ok, "--plot", tmp_path / "x.FOO",
                    "--json", tmp_path / "r.json")
    assert "x.FOO: unknown plot format 'foo'" in msg and "/." not in msg
    assert not (tmp_path / "r.json").exists()
    assert "x.foo" in one_error(capsys, "demo", "two_link", "--plot", tmp_path / "x.foo")


def test_smoothing_inf_names_smoothing(capsys, csv_ok):
    assert "smoothing must be" in one_error(capsys, "torques", "two_link", csv_ok, "--smoothing", "inf")


def test_equations_c_output_bad_path_prints_nothing(capsys, tmp_path):
    msg = one_error(capsys, "equations", "two_link", "--c", tmp_path / "missing" / "arm.c")
    assert "arm.c" in msg and "does not exist" in msg
    assert "is a folder" in one_error(capsys, "equations", "two_link", "--c", tmp_path)


# --- Python API ------------------------------------------------------------

@pytest.mark.parametrize("smoothing", [None, np.inf, -1.0, float("nan"), "foo"])
def test_check_trajectory_bad_smoothing(smoothing):
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(ValueError, match="smoothing must be"):
        cd.check_trajectory(cd.load("two_link"), t, np.zeros((11, 2)), smoothing=smoothing)


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
@pytest.mark.parametrize("width", [-0.01, float("nan"), "x"])
def test_bad_smooth_friction_raises(backend, width, monkeypatch):
    if backend == "numpy":
        from composedyn.dynamics import dispatch
        monkeypatch.setattr(dispatch, "backend", lambda: "numpy")
    robot = cd.load("two_link")
    with pytest.raises(ValueError, match="smooth_friction"):
        robot.forward_dynamics(np.zeros(2), np.ones(2), np.zeros(2), smooth_friction=width)


def test_smooth_friction_zero_means_exact_sign_on_every_path():
    """0 used to give NaN at rest (tanh(0 / 0)) on the NumPy path, and the sign on the compiled one."""
    from composedyn.dynamics.reference.friction import friction_torques

    robot = cd.from_dh(
        [{"a": 1.0, "alpha": 0.0, "d": 0.0, "theta": 0.0, "mass": 1.0, "com": [0.5, 0, 0],
          "inertia": [0.01, 0.01, 0.01], "friction": 2.0}], convention="standard")
    qd = np.array([[0.0], [0.3], [-0.3]])
    assert np.array_equal(friction_torques(robot.model, qd, smooth=0.0), friction_torques(robot.model, qd))
    z = np.zeros(1)
    assert np.isfinite(robot.forward_dynamics(z, z, z, smooth_friction=0.0)).all()


def test_reference_returning_wrong_tuple():
    robot = cd.load("two_link")
    ctrl = cd.ComputedTorqueController(robot, 100.0, 20.0)
    z = np.zeros(2)
    with pytest.raises(ValueError, match=r"reference\(t\) must return \(q_des, qd_des, qdd_des\)"):
        cd.simulate(robot, z, z, np.linspace(0, 0.1, 3), torque=ctrl, reference=lambda t: (z, z))


@pytest.mark.parametrize("q0,duration,match", [([np.nan, 0.0], 1.0, "q0"), ([0.0, 0.0], np.inf, "duration")])
def test_minimum_jerk_rejects_nan_and_infinite_duration(q0, duration, match):
    with pytest.raises(ValueError, match=match):
        cd.MinimumJerk(q0, [1.0, 1.0], duration)


def test_load_checks_mimic_for_every_format():
    with pytest.raises(ValueError, match="mimic must be one of"):
        cd.load("two_link", mimic="foo")


def test_report_writers_name_the_path(tmp_path):
    t = np.linspace(0.0, 1.0, 11)
    report = cd.check_trajectory(cd.load("two_link"), t, np.zeros((11, 2)))
    with pytest.raises(OSError, match="is a folder"):
        report.to_json(tmp_path)
    with pytest.raises(OSError, match="does not exist"):
        report.to_csv(tmp_path / "no" / "x.csv")


def test_closed_chain_independent_may_be_one_name():
    """A bare string used to be split into characters: "joints ['c', 'r', 'a', ...] are not joints"."""
    loop = cd.LoopClosure("coupler", "rocker", (0.6, 0, 0), (0.4, 0, 0), kind="planar", plane="xz")
    guess = {"crank_joint": 1.0, "coupler_joint": -0.7, "rocker_joint": 1.1}
    one = cd.ClosedChain(cd.load("fourbar"), [loop], independent="crank_joint", guess=guess)
    assert one.joint_names == ("crank_joint",) or list(one.joint_names) == ["crank_joint"]


def test_bad_arguments_name_the_argument(tmp_path):
    """Bad arguments: each message names what is wrong."""
    import composedyn as cd
    from composedyn.errors import ModelError

    robot = cd.load("two_link")
    with pytest.raises(ValueError, match="scale must be a number"):
        robot.perturbed("x")
    with pytest.raises(ValueError, match="kp must be a number"):
        cd.ComputedTorqueController(robot, kp="a", kd=1.0)
    with pytest.raises(ModelError, match="is a directory"):
        cd.from_urdf(tmp_path)
    with pytest.raises(OSError, match="to_urdf: cannot write"):
        robot.to_urdf(tmp_path)
    rows = [{"a": 0.5, "alpha": 0.0, "d": 0.0, "mass": 1.0}]
    with pytest.raises(ModelError, match="name must be a non-empty string"):
        cd.from_dh(rows, name=5)
