"""Optional dependencies: a feature whose extra is missing says in one line which extra to install.

Each check runs in a subprocess where the package is made unimportable by a
``sys.meta_path`` finder installed from a ``sitecustomize.py`` on PYTHONPATH
(as if it were not installed), through the Python API and through the CLI
(exit status 2, one line on stderr).  ``import composedyn`` and the core
dynamics import none of the optional packages.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from composedyn.dynamics.extras import EXTRAS

BLOCKER = """
import sys

class _NotInstalled:
    blocked = set({blocked!r})

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""

XACRO = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><link name="base"/></robot>
"""


def run(tmp_path: Path, blocked: tuple, args: list[str]) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=tuple(blocked)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
               COMPOSEDYN_COMPILE_NOTICE="0")
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]
    return lines[0]


# (extra, blocked packages, Python code using the feature)
PYTHON_CASES = [
    ("plot", ("matplotlib",), "from composedyn.torque_check.plotting import plot_format; plot_format('x.png')"),
    ("logs", ("rosbags",), "import composedyn as cd; cd.read_log('x.bag')"),
    ("identify", ("cvxpy", "clarabel"),
     "import numpy as np; from composedyn.identification.physical import fit_physical; "
     "fit_physical(np.eye(10), np.zeros(10), np.r_[1.0, np.zeros(3), 1, 0, 0, 1, 0, 1], 1, 0)"),
    ("contact", ("cvxpy", "clarabel"),
     "import numpy as np, composedyn as cd; r = cd.load('two_link', floating=True); q = r.neutral(); "
     "z = np.zeros(r.nv); r.contact_inverse_dynamics(q, z, z, [r.frame_names[-1]], friction_coefficient=0.5)"),
    ("xacro", ("xacro",), "import composedyn as cd; cd.load('r.urdf.xacro')"),
    ("symbolic", ("sympy",), "import composedyn as cd; cd.symbolic.equations"),
]


@pytest.mark.parametrize("extra, blocked, code", PYTHON_CASES, ids=[c[0] for c in PYTHON_CASES])
def test_python_api_names_the_extra(tmp_path, extra, blocked, code):
    (tmp_path / "x.bag").write_bytes(b"")
    (tmp_path / "r.urdf.xacro").write_text(XACRO)
    proc = run(tmp_path, blocked, ["-c", "import composedyn\ntry:\n    " + code +
                                   "\nexcept composedyn.MissingExtra as e:\n    print('MissingExtra:', e)"
                                   "\n    assert isinstance(e, ImportError)"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("MissingExtra: "), proc.stdout + proc.stderr[-3000:]
    assert f'pip install "composedyn[{extra}]"' in lines[0]
    assert any(b in lines[0] for b in blocked)


CLI_CASES = [
    ("symbolic", ("sympy",), ["equations", "two_link"]),
    ("xacro", ("xacro",), ["info", "r.urdf.xacro"]),
    ("logs", ("rosbags",), ["torques", "two_link", "x.bag"]),
    ("plot", ("matplotlib",), ["torques", "two_link", "x.bag", "--plot", "out.png"]),
    ("plot", ("matplotlib",), ["demo", "two_link", "--duration", "0.2", "--plot", "out.png"]),  # asked for
    ("fleet", ("distributed", "dask"), ["torques", "two_link", "a.csv", "b.csv", "--workers", "2"]),
]


@pytest.mark.parametrize("extra, blocked, args", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_names_the_extra_in_one_line(tmp_path, extra, blocked, args):
    (tmp_path / "x.bag").write_bytes(b"")
    (tmp_path / "r.urdf.xacro").write_text(XACRO)
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text("t,shoulder,elbow\n0,0,0\n0.01,0,0\n0.02,0,0\n")
    proc = run(tmp_path, blocked, ["-m", "composedyn.cli", *args])
    line = one_line(proc)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert line.startswith("composedyn: error: ") and f'pip install "composedyn[{extra}]"' in line, line


def test_demo_without_matplotlib_says_the_plot_was_skipped(tmp_path):
    proc = run(tmp_path, ("matplotlib",), ["-m", "composedyn.cli", "demo", "two_link", "--duration", "0.2"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'plot skipped: matplotlib is not installed (pip install "composedyn[plot]")' in proc.stdout
    assert not list(tmp_path.glob("*.png"))


def test_import_and_core_dynamics_import_no_optional_package(tmp_path):
    code = ("import sys, numpy as np, composedyn as cd\n"
            "r = cd.load('panda'); q = np.zeros(r.dof)\n"
            "r.inverse_dynamics(q, q, q); r.mass_matrix(q); r.forward_dynamics(q, q, q); "
            "r.jacobian(q, r.frame_names[-1])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & set(%r)))" % sorted(EXTRAS))
    proc = run(tmp_path, (), ["-c", code])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[]"


def test_floating_robots_and_the_numpy_backend_need_no_optional_package(tmp_path):
    """The core install (every optional package unimportable, array_api_compat of the PyTorch and JAX
    extras among them): a floating robot loads (its base's inertia is checked through the NumPy backend)
    and the NumPy backend's algorithms run, with values equal to the compiled methods'."""
    blocked = tuple(EXTRAS) + ("array_api_compat", "torch", "jax")
    code = ("import sys, numpy as np, composedyn as cd\n"
            "r = cd.load('two_link', floating=True); q = r.random_configuration(seed=1)\n"
            "v, a = np.linspace(-1, 1, r.nv), np.linspace(0.5, -0.5, r.nv)\n"
            "M, tau = r.numpy.mass_matrix(q), r.numpy.inverse_dynamics(q, v, a)\n"
            "assert np.abs(M - r.mass_matrix(q)).max() < 1e-10 * np.abs(M).max()\n"
            "assert np.abs(tau - r.inverse_dynamics(q, v, a)).max() < 1e-10 * np.abs(tau).max()\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & set(%r)))" % sorted(blocked))
    proc = run(tmp_path, blocked, ["-c", code])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[]"


def test_every_optional_package_has_an_extra_in_pyproject():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    core = " ".join(meta["dependencies"])
    for module, extra in EXTRAS.items():
        assert extra in extras, extra
        assert module not in core, f"{module} is a core dependency"
    assert "composedyn[all" in " ".join(extras["test"])
