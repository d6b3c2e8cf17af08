"""Bad input to the symbolic path and the ``composedyn equations`` command."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import sympy as sp

import composedyn as cd
from composedyn.dynamics import schema
from composedyn.dynamics.symbolic import chain_from_dh


def _arm(joint_type="revolute", mimic=None):
    g = schema.new_graph("arm")
    schema.add_link(g, "base")
    schema.add_link(g, "l1", 1.0, (0.1, 0, 0), np.eye(3) * 0.01)
    schema.add_link(g, "l2", 1.0, (0.1, 0, 0), np.eye(3) * 0.01)
    schema.add_joint(g, "j1", "base", "l1")
    T = np.eye(4)
    T[0, 3] = 0.3
    schema.add_joint(g, "j2", "l1", "l2", type=joint_type, origin=T)
    if mimic:
        g.edges["l1", "l2"]["mimic"] = mimic
    return g


def test_unsupported_joint_type():
    with pytest.raises(cd.ModelError, match="symbolic path"):
        cd.symbolic.equations(_arm("planar"))
    with pytest.raises(cd.ModelError, match="joint type"):
        chain_from_dh([dict(a=1, alpha=0, d=0, theta=0, joint="spherical")])


def test_floating_robot_refused_in_one_line():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the massless base link: a singular M once free
        robot = cd.from_graph(_arm(), floating=True)
    with pytest.raises(cd.ModelError, match=r"^robot 'arm': symbolic equations take joints of one coordinate; "
                                            r"its floating base is a free-flyer joint") as err:
        cd.symbolic.equations(robot)
    assert "\n" not in str(err.value)
    assert cd.symbolic.equations(cd.from_graph(_arm())).M.shape == (2, 2)  # the same arm on a fixed base


def test_mimic_coordinate_map_refused():
    a = sp.Symbol("a", real=True)
    with pytest.raises(ValueError, match="mimic"):
        cd.symbolic.equations(_arm(mimic=("j1", 1.0, 0.0)), coordinates=[a, a], generalized=[a])


def test_singular_coordinate_maps():
    robot = cd.from_graph(_arm())
    a, b = sp.symbols("a b", real=True)
    with pytest.raises(ValueError, match="singular Jacobian"):
        cd.symbolic.equations(robot, coordinates=[a + b, 2 * a + 2 * b], generalized=[a, b])
    with pytest.raises(ValueError, match="singular Jacobian at"):
        cd.symbolic.equations(robot, coordinates=[a, b ** 3], generalized=[a, b], point={a: 0.2, b: 0.0})
    eq = cd.symbolic.equations(robot, coordinates=[a, b ** 3], generalized=[a, b], point={a: 0.2, b: 0.5})
    assert eq.q == (a, b)
    with pytest.raises(ValueError, match="must give 2"):
        cd.symbolic.equations(robot, coordinates=[a], generalized=[a, b])


def test_symbol_clashes():
    q1, L = sp.symbols("q1 L", real=True)
    rows = [dict(a=q1, alpha=0, d=0, theta=0, mass=1, com=[0, 0, 0], inertia=[0, 0, 1])]
    with pytest.raises(ValueError, match="clash"):
        cd.symbolic.equations(rows)
    rows = [dict(a=L, alpha=0, d=0, theta=0, mass=1, com=[0, 0, 0], inertia=[0, 0, 1])]
    with pytest.raises(ValueError, match="clash"):
        cd.symbolic.equations(rows, coordinates=[sp.Symbol("L")], generalized=[sp.Symbol("L")])


def test_bad_arguments():
    robot = cd.from_graph(_arm())
    with pytest.raises(ValueError, match="parameter kinds"):
        cd.symbolic.equations(robot, parameters=["masses"])
    with pytest.raises(cd.ModelError):
        cd.symbolic.equations("not a robot")
    with pytest.raises(ValueError, match="parameters"):
        cd.symbolic.equations([dict(a=1, alpha=0, d=0, theta=0, mass=1)], parameters=True)
    with pytest.raises(cd.ModelError, match="no moving link"):
        cd.symbolic.equations(robot, wrenches={"nope": ((0, 0, 0), (0, 0, 1))})


def test_import_composedyn_does_not_import_sympy():
    code = ("import sys, composedyn; assert 'sympy' not in sys.modules; "
            "composedyn.symbolic; assert 'sympy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "composedyn.cli", *args], capture_output=True, text=True)


def test_cli_equations(tmp_path):
    r = _cli("equations", "two_link")
    assert r.returncode == 0 and "M[1,1]" in r.stdout
    out = tmp_path / "two.c"
    r = _cli("equations", "two_link", "--latex", "--parameters", "--c", str(out))
    assert r.returncode == 0 and "\\begin{align*}" in r.stdout and "m_{2}" in r.stdout
    assert "two_link_tau" in out.read_text()
    r = _cli("equations", "no_such_robot")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
