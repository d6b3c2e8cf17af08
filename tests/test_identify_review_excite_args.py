"""Bad arguments of ``cd.excitation_trajectory`` and ``composedyn excite``: a ValueError naming the
argument (the option on the command line: one line, exit status 2, nothing written), never a
traceback or a trajectory that does not sample its own harmonics."""

from __future__ import annotations

import pytest

import composedyn as cd
from composedyn.cli import main


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"seed": -1}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"rate": float("inf")}, "rate must be a finite positive"),
    ({"rate": float("nan")}, "rate must be a finite positive"),
    ({"rate": 1e-6}, "rate gives .* samples per period"),
    ({"base_frequency": 1e9}, "rate gives .* samples per period"),
    ({"base_frequency": float("inf")}, "base_frequency must be a finite positive"),
    ({"harmonics": 2.5}, "harmonics must be a finite positive integer"),
    ({"points": 7}, "points gives .* samples per period"),
])
def test_excitation_trajectory_names_the_bad_argument(kwargs, match):
    robot = cd.load("two_link")
    with pytest.raises(ValueError, match=match):
        cd.excitation_trajectory(robot, 5.0, maxiter=0, **kwargs)


@pytest.mark.parametrize(("option", "value", "named"), [
    ("--seed", "-1", "--seed"),
    ("--rate", "inf", "--rate"),
    ("--rate", "1e-6", "--rate"),
    ("--base-frequency", "inf", "--base-frequency"),
    ("--base-frequency", "1e9", "--base-frequency"),
    ("--duration", "nan", "--duration"),
    ("--duration", "1e-9", "--duration"),
])
def test_cli_excite_bad_option_one_line_exit_2(tmp_path, capsys, option, value, named):
    out = tmp_path / "e.csv"
    args = {"--duration": "5", option: value}
    argv = ["excite", "two_link", "--out", str(out)] + [x for kv in args.items() for x in kv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("composedyn: error: ") and "\n" not in err and named in err, err
    assert not out.exists()


def test_sampling_at_four_points_per_period_of_the_highest_harmonic_is_accepted():
    robot = cd.load("two_link")
    ex = cd.excitation_trajectory(robot, 5.0, harmonics=2, base_frequency=0.25, rate=2.0, maxiter=0)
    assert ex.t.shape == (11,)
