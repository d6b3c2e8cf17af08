"""Bundled reference robots: listed by the CLI, loadable, physically sane, and the
Panda's DH table agrees with Franka's own URDF (example-robot-data)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main
from composedyn.robots import bundled_path, names
from pin_oracle import erd_urdf

DH_ROBOTS = ["two_link", "planar3r", "puma560", "stanford", "panda"]


def load_quiet(name: str) -> cd.Robot:
    """Load a bundled robot, ignoring the ModelWarning of published implausible inertias."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.load(name)


def random_q(robot: cd.Robot, rng: np.random.Generator, k: int = 20) -> np.ndarray:
    lo = np.where(np.isfinite(robot.limits["lower"]), robot.limits["lower"], -np.pi)
    hi = np.where(np.isfinite(robot.limits["upper"]), robot.limits["upper"], np.pi)
    return rng.uniform(lo, hi, (k, robot.dof))


def test_cli_lists_every_bundled_robot(capsys):
    assert main(["robots"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert set(DH_ROBOTS) <= set(names())
    assert sorted(listed) == sorted(names())


@pytest.mark.parametrize("name", names())
def test_bundled_robot_loads_with_positive_definite_mass_matrix(name):
    robot = load_quiet(name)
    M = robot.mass_matrix(random_q(robot, np.random.default_rng(0)))
    assert np.allclose(M, np.swapaxes(M, -1, -2), atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0


@pytest.mark.parametrize("name", DH_ROBOTS)
def test_robot_file_cites_its_sources_and_is_described(name):
    path = Path(bundled_path(name))
    head = path.read_text().splitlines()[0]
    assert head.startswith("#")
    readme = (path.parent / "README.md").read_text()
    assert f"`{name}`" in readme


@pytest.mark.parametrize("name,links", [("puma560", ["link1", "link3"]), ("stanford", ["link5"])])
def test_published_implausible_inertias_are_reported(name, links):
    with pytest.warns(cd.ModelWarning) as rec:
        cd.load(name)
    text = " ".join(str(w.message) for w in rec)
    assert all(f"'{link}'" in text for link in links)


def test_panda_dh_frames_equal_franka_urdf_frames():
    """franka_description's panda_link1..8 are the modified-DH frames and the flange."""
    dh = load_quiet("panda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        urdf = cd.from_urdf(erd_urdf("panda"), mimic="independent")
    rng = np.random.default_rng(1)
    q = random_q(dh, rng, k=10)
    qu = np.zeros((len(q), urdf.dof))
    for k, jn in enumerate(dh.joint_names):
        qu[:, urdf.joint_names.index(f"panda_{jn}")] = q[:, k]
    P, U = dh.link_poses(q), urdf.link_poses(qu)
    for i in range(1, 8):
        assert np.abs(P[f"link{i}"] - U[f"panda_link{i}"]).max() < 1e-12
    assert np.abs(P["flange"] - U["panda_link8"]).max() < 1e-12
    assert np.allclose(dh.limits["effort"],
                       [urdf.limits["effort"][urdf.joint_names.index(f"panda_{j}")] for j in dh.joint_names])
