"""Command-line habits: ``--version``, ModelWarning lines, which errors exit 2,
``load(..., mimic=...)`` for every format, and deep trees without recursion."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from importlib import metadata

import numpy as np
import pytest

import composedyn as cd
from composedyn.cli import main


def test_version_is_the_package_metadata(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"composedyn {metadata.version('composedyn')}\n"
    assert cd.__version__ == metadata.version("composedyn")


def _inertial(mass: float, ixx: float, iyy: float, izz: float, xyz: str = "0 0 0") -> str:
    return (f'<inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


NO_INERTIAL = f"""<robot name="light"><link name="base"/>
  <link name="a">{_inertial(1, 0.1, 0.1, 0.1)}</link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="tip"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def test_model_warning_is_one_line_and_other_warnings_stay_hidden(tmp_path, capsys, monkeypatch):
    path = tmp_path / "light.urdf"
    path.write_text(NO_INERTIAL)
    real_load = cd.load

    def noisy_load(*args, **kwargs):
        warnings.warn("a library's deprecation notice", DeprecationWarning, stacklevel=2)
        warnings.warn("overflow somewhere", RuntimeWarning, stacklevel=2)
        return real_load(*args, **kwargs)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        real_load(path)
    expected = [f"composedyn: warning: {w.message}" for w in caught if issubclass(w.category, cd.ModelWarning)]
    assert any("'tip'" in line for line in expected)
    monkeypatch.setattr(cd, "load", noisy_load)
    assert main(["info", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "- tip" in out
    assert err.splitlines() == expected


def _raise(error: BaseException):
    raise error


def test_only_the_projects_errors_exit_2(tmp_path, capsys, monkeypatch):
    from composedyn.cli.commands import info

    assert main(["info", str(tmp_path / "missing.urdf")]) == 2  # ModelError
    assert capsys.readouterr().err.startswith("composedyn: error: ")
    for error in (OSError("disk full"), cd.SimulationError("integration failed")):
        monkeypatch.setattr(info, "run", lambda args, e=error: _raise(e))
        assert main(["info", "two_link"]) == 2
        assert capsys.readouterr().err == f"composedyn: error: {error}\n"
    # a ValueError from composedyn's own argument checks: one line
    monkeypatch.setattr(info, "run", lambda args: cd.load("two_link").inverse_dynamics(np.zeros(3), 0, 0))
    assert main(["info", "two_link"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("composedyn: error: ") and "Traceback" not in err[0]
    # genuine bugs keep their traceback: a ValueError raised inside NumPy, KeyError, RuntimeError, ...
    bugs = [lambda args: np.linalg.norm(np.ones(3), ord="nuclear"), *(
        lambda args, e=e: _raise(e) for e in (KeyError("link"), RuntimeError("internal"), TypeError("bad call")))]
    for bug, kind in zip(bugs, (ValueError, KeyError, RuntimeError, TypeError)):
        monkeypatch.setattr(info, "run", bug)
        with pytest.raises(kind):
            main(["info", "two_link"])


MIMIC = f"""<robot name="grip"><link name="base"/>
  <link name="a">{_inertial(1, 0.01, 0.02, 0.02, "0.1 0 0")}</link>
  <link name="b">{_inertial(0.5, 0.01, 0.01, 0.01, "0 0.1 0")}</link>
  <link name="c">{_inertial(0.2, 0.001, 0.001, 0.001)}</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0 0.2 0"/><axis xyz="0 1 0"/>
    <mimic joint="j2" multiplier="0.5" offset="0.01"/></joint>
</robot>"""

IMPORTER = '''
from composedyn.importers.urdf import load_urdf


def load(path):
    return load_urdf(open(path).read())
'''


@pytest.fixture
def urdf_text_format(tmp_path, monkeypatch):
    """A third-party format ``.grip``: URDF text under another suffix, through the entry-point group."""
    (tmp_path / "gripfmt_mod.py").write_text(IMPORTER)
    dist = tmp_path / "gripfmt-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gripfmt\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[composedyn.importers]\ngrip = gripfmt_mod:load\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    path = tmp_path / "hand.grip"
    path.write_text(MIMIC)
    yield path
    sys.modules.pop("gripfmt_mod", None)


@pytest.mark.parametrize("mimic", ["dependent", "independent"])
def test_load_honours_mimic_for_registered_formats(urdf_text_format, mimic):
    ours, ref = cd.load(urdf_text_format, mimic=mimic), cd.from_urdf(MIMIC, mimic=mimic)
    assert ours.joint_names == ref.joint_names == (("j1", "j2") if mimic == "dependent" else ("j1", "j2", "j3"))
    q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, ours.dof))
    assert np.array_equal(ours.inverse_dynamics(q, qd, qdd), ref.inverse_dynamics(q, qd, qdd))


def test_load_honours_mimic_for_dh_tables_and_rejects_urdf_keywords():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        a, b = cd.load("puma560", mimic="dependent"), cd.load("puma560", mimic="independent")
        assert a.joint_names == b.joint_names and a.mimic_joint_names == b.mimic_joint_names == ()
        with pytest.raises(ValueError, match="mimic"):
            cd.load("puma560", mimic="coupled")
        with pytest.raises(TypeError, match="gravity.*URDF files only"):
            cd.load("puma560", gravity=(0, 0, -1.62))


def _chain_urdf(n: int) -> str:
    inertial = _inertial(0.1, 1e-3, 1e-3, 1e-4, "0 0 0.05")
    links = "".join(f'<link name="l{i}">{inertial}</link>' for i in range(n))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="{"base" if i == 0 else f"l{i - 1}"}"/>'
                     f'<child link="l{i}"/><origin xyz="0 0 0.1"/><axis xyz="0 {i % 2} {1 - i % 2}"/>'
                     '<limit lower="-1" upper="1" velocity="2" effort="3"/></joint>' for i in range(n))
    return f'<robot name="chain{n}"><link name="base"/>{links}{joints}</robot>'


def test_info_prints_a_2000_joint_chain(tmp_path):
    n = 2000
    path = tmp_path / "chain.urdf"
    path.write_text(_chain_urdf(n))
    out = subprocess.run([sys.executable, "-m", "composedyn.cli", "info", str(path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stderr == "", out.stderr[-2000:]
    tree, frames = out.stdout.split("  frames (")  # the tree, then the task-space frames
    lines = tree.splitlines()
    assert len(lines) == 3 + 1 + 2 * n  # header, root link, one joint line and one link line per joint
    assert len(frames.splitlines()) == 1 + n + 1  # heading, base and the n links
    assert len(out.stdout) < 200 * len(lines)  # indentation stops growing: linear, not quadratic, size
    assert [ln.split()[1] for ln in lines[4::2]] == [f"j{i}" for i in range(n)]
    assert lines[-1].strip().startswith(f"- l{n - 1}  [0.1 kg, com (0 0 0.05) m, ")
    assert lines[-1].endswith(f"kg m²]  (depth {n})")
