"""Third-party description formats through the ``composedyn.importers``
entry-point group, registered by a temporary ``*.dist-info`` folder on sys.path."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import composedyn as cd
from composedyn.third_party_formats import importers

IMPORTER = '''
"""A toy format: one line "mass length" per link of a planar chain of point-like rods."""
import numpy as np
from composedyn.dynamics.schema import add_joint, add_link, new_graph


def load(path):
    g = new_graph("toy", source=str(path))
    g.graph["root"] = "base"
    add_link(g, "base")
    parent, offset = "base", 0.0
    for k, line in enumerate(open(path).read().split("\\n")):
        if not line.strip():
            continue
        m, length = map(float, line.split())
        add_link(g, f"l{k}", mass=m, com=(length / 2, 0, 0),
                 inertia=np.diag([1e-4, m * length**2 / 12, m * length**2 / 12]))
        T = np.eye(4)
        T[0, 3] = offset
        add_joint(g, f"j{k}", parent, f"l{k}", origin=T, axis=(0, 1, 0))
        parent, offset = f"l{k}", length
    return g
'''


@pytest.fixture
def toy_format(tmp_path, monkeypatch):
    (tmp_path / "toyfmt_mod.py").write_text(IMPORTER)
    dist = tmp_path / "toyfmt-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyfmt\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[composedyn.importers]\ntoy = toyfmt_mod:load\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop("toyfmt_mod", None)


def test_load_uses_a_registered_importer_for_its_suffix(toy_format):
    assert "toy" in importers()
    path = toy_format / "arm.TOY"
    path.write_text("2.0 0.5\n1.0 0.4\n")
    robot = cd.load(path)
    assert robot.dof == 2 and robot.joint_names == ("j0", "j1")
    # at q = 0 both rods are horizontal: the shoulder holds g (m1 l1/2 + m2 (l1 + l2/2))
    q = np.array([0.0, 0.0])
    g = 9.81
    expected_shoulder = g * (2.0 * 0.25 + 1.0 * (0.5 + 0.2))
    assert abs(abs(robot.gravity_torques(q)[0]) - expected_shoulder) < 1e-9


def test_unknown_suffix_without_importer_is_a_model_error(tmp_path):
    path = tmp_path / "arm.nosuchfmt"
    path.write_text("")
    with pytest.raises(cd.ModelError, match="arm.nosuchfmt"):
        cd.load(path)


def test_broken_importer_is_a_model_error_naming_it(tmp_path, monkeypatch):
    dist = tmp_path / "broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[composedyn.importers]\nbrk = no_such_module_xyz:load\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "a.brk").write_text("")
    with pytest.raises(cd.ModelError, match="brk"):
        cd.load(tmp_path / "a.brk")


def test_robot_satisfies_the_protocol():
    assert isinstance(cd.load("panda"), cd.DynamicsModel)
    assert not isinstance(object(), cd.DynamicsModel)
