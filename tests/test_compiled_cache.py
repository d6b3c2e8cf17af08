"""The compiled kernels' on-disk cache is keyed on the package's source, and numba is required.

numba alone keys a cache entry on the defining file only, so editing a helper
that a kernel inlines (here the joint model, ``compiled/joint.py``, inlined
into the gravity-torque kernel of ``compiled/gravity.py``) would be served the old machine
code.  The test runs a kernel from a copy of the installed package in fresh
processes: unchanged source loads from the cache, an edited helper compiles
again and gives the edited result.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

import composedyn

# the gravity-torque kernel: it inlines the joint model's helpers, and compiles in seconds
RUN_KERNEL = """
import json, numpy as np, composedyn
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.compiled.gravity import SCRATCH, gravity_into
robot = composedyn.load("two_link")
im, fm = pack(robot.model)
q = np.array([0.3, -0.7]); out = np.empty(2)
gravity_into(im, fm, q, out, np.empty((2, SCRATCH)))
print(json.dumps({"file": composedyn.__file__, "tau": out.tolist(),
                  "cache_hits": sum(gravity_into.stats.cache_hits.values())}))
"""


def copy_installed_package(dest: Path, kernels: bool = False) -> Path:
    """composedyn's modules copied into dest/composedyn (an installed wheel's layout), no caches
    (``kernels``: with the kernels compiled at install, ``kernel_cache/``, when it has them).

    Works for a wheel install (subpackages inside composedyn/) and an editable one
    (subpackages mapped from the repository's top-level folders)."""
    root = dest / "composedyn"
    skip = shutil.ignore_patterns("__pycache__", *(() if kernels else ("kernel_cache",)))
    shutil.copytree(composedyn.__path__[0], root, ignore=skip)
    for sub in ("importers", "dynamics", "robots"):
        shutil.copytree(importlib.import_module(f"composedyn.{sub}").__path__[0], root / sub, ignore=skip,
                        dirs_exist_ok=True)
    return root


def run(code: str, path: Path, **env_extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COMPOSEDYN_"))}
    env.update(PYTHONPATH=str(path), XDG_CACHE_HOME=str(path / "user-cache"), **env_extra)
    return subprocess.run([sys.executable, "-c", code], cwd=path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def kernel_in(path: Path) -> dict:
    proc = run(RUN_KERNEL, path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(path))  # the copy ran, not the installed package
    return result


def test_editing_an_inlined_helper_recompiles_the_kernel(tmp_path):
    root = copy_installed_package(tmp_path)
    first = kernel_in(tmp_path)  # compiles, writes the cache
    assert first["cache_hits"] == 0
    again = kernel_in(tmp_path)  # unchanged source: loaded from the cache
    assert again["cache_hits"] == 1 and again["tau"] == first["tau"]
    joint = root / "dynamics" / "compiled" / "joint.py"
    source = joint.read_text()
    assert "REVOLUTE" in source and "PRISMATIC" in source
    joint.write_text(source + "\nREVOLUTE, PRISMATIC = PRISMATIC, REVOLUTE  # swapped\n")
    edited = kernel_in(tmp_path)  # revolute joints now read as prismatic: other torques
    assert edited["cache_hits"] == 0 and edited["tau"] != first["tau"]
    joint.write_text(source)
    restored = kernel_in(tmp_path)
    assert restored["tau"] == first["tau"]


def test_the_stamp_covers_the_joint_type_codes_the_kernels_compile_in(tmp_path):
    from composedyn.dynamics.compiled.cache import CONSTANTS, source_stamp

    root = copy_installed_package(tmp_path)
    compiled, codes = root / "dynamics" / "compiled", root / "dynamics" / "joint_types.py"
    assert "joint_types.py" in CONSTANTS and codes.is_file()
    before = source_stamp(str(compiled))
    codes.write_text(codes.read_text() + "\n")
    edited = source_stamp(str(compiled))
    assert edited != before
    (root / "dynamics" / "schema.py").write_text("")  # other modules beside compiled/ are not compiled in
    assert source_stamp(str(compiled)) == edited


def test_numba_that_does_not_import_is_one_clear_error(tmp_path):
    code = ("import sys; sys.modules['numba'] = None\n"
            "import composedyn, numpy as np\n"
            "print(composedyn.load('two_link').inverse_dynamics(np.zeros(2), np.zeros(2), np.zeros(2)))")
    proc = run(code, tmp_path)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:") and "pip install numba" in last and "COMPOSEDYN_BACKEND=numpy" in last
    numpy_backend = run(code, tmp_path, COMPOSEDYN_BACKEND="numpy")  # the explicit choice still works
    assert numpy_backend.returncode == 0, numpy_backend.stderr


def test_a_cache_compiled_with_another_numba_compiles_again_and_says_so_once(tmp_path):
    root = copy_installed_package(tmp_path)
    shipped = root / "dynamics" / "compiled" / "kernel_cache"
    built = run(RUN_KERNEL, tmp_path, COMPOSEDYN_KERNEL_CACHE_BUILD=str(shipped))  # as the build step writes it
    assert built.returncode == 0, built.stderr
    (shipped / "build.json").write_text(json.dumps({"numba": numba.__version__}))
    served = run(RUN_KERNEL, tmp_path)
    assert served.returncode == 0, served.stderr
    assert json.loads(served.stdout.strip().splitlines()[-1])["cache_hits"] == 1  # read from the shipped cache
    assert "compiling dynamics kernels" not in served.stderr
    assert not (tmp_path / "user-cache").exists() or not any((tmp_path / "user-cache").rglob("gravity*"))
    for index in shipped.glob("*.nbi"):  # as if compiled by another numba release
        with open(index, "rb") as f:
            pickle.load(f)
            rest = f.read()
        index.write_bytes(pickle.dumps("0.0.1", protocol=-1) + rest)
    (shipped / "build.json").write_text(json.dumps({"numba": "0.0.1"}))
    proc = run(RUN_KERNEL, tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["cache_hits"] == 0 and result["tau"] == json.loads(served.stdout.strip().splitlines()[-1])["tau"]
    notices = [ln for ln in proc.stderr.splitlines() if "compiling dynamics kernels" in ln]
    assert len(notices) == 1 and f"compiled with numba 0.0.1, this is numba {numba.__version__}" in notices[0]
    assert proc.stderr.strip() == notices[0]
    again = json.loads(run(RUN_KERNEL, tmp_path).stdout.strip().splitlines()[-1])  # kept in the user's cache
    assert again["cache_hits"] == 1


def test_an_installed_package_carries_the_kernels_compiled_at_build(tmp_path):
    """A package installed from its wheel has the kernels compiled when it was built (``kernel_cache/``,
    setup.py), for this numba, this CPU and these sources, and a new process computes without compiling.
    The build step reports a failure and goes on, and a quiet ``pip install`` hides the report: this is
    where a failed build shows.  An editable checkout compiles on first use (skipped there), and so does
    an install built with ``COMPOSEDYN_KERNEL_CACHE=0`` (run its tests with the same setting)."""
    from composedyn.dynamics.compiled import cache

    inside = os.path.realpath(cache.PACKAGE_DIR).startswith(os.path.realpath(composedyn.__path__[0]) + os.sep)
    if not inside:
        pytest.skip("an editable checkout: the kernels are compiled on first use")
    if os.environ.get("COMPOSEDYN_KERNEL_CACHE") == "0":
        pytest.skip("COMPOSEDYN_KERNEL_CACHE=0: built without the kernel cache")
    info = cache.build_info()
    assert info, f"{cache.SHIPPED_DIR}: no kernels compiled at build (see setup.py's build_kernels)"
    assert (info.get("numba"), info.get("cpu"), info.get("stamp")) == (numba.__version__, cache.host_cpu(),
                                                                       cache.SOURCE_STAMP), info
    code = ("import numpy as np, networkx as nx, composedyn as cd\n"
            "from composedyn.dynamics.schema import add_joint, add_link\n"
            "r = cd.load('panda'); q = np.zeros(r.dof)\n"
            "print(r.inverse_dynamics(q, q, q).shape, r.mass_matrix(q).shape)\n"
            # a ball joint: the derivative kernels' general form (Quantity.general), compiled at build too
            "g = nx.DiGraph(name='ball'); add_link(g, 'base')\n"
            "for k, (parent, kind) in enumerate([('base', 'revolute'), ('l0', 'spherical')]):\n"
            "    add_link(g, f'l{k}', mass=1.0, com=(0.1, 0.0, 0.0), inertia=0.1 * np.eye(3))\n"
            "    add_joint(g, f'j{k}', parent, f'l{k}', type=kind, origin=np.eye(4), axis=(0.0, 0.0, 1.0))\n"
            "b = cd.from_graph(g); qb = b.random_configuration(seed=0); z = np.zeros(b.nv)\n"
            "print(b.inverse_dynamics_derivatives(qb, z, z)[0].shape,\n"
            "      b.forward_dynamics_derivatives(qb, z, z)[0].shape)")
    proc = run(code, tmp_path, COMPOSEDYN_COMPILE_NOTICE="1")  # imports the installed package
    assert proc.returncode == 0, proc.stderr
    assert "compiling dynamics kernels" not in proc.stderr, proc.stderr
    assert not (tmp_path / "user-cache").exists() or not any((tmp_path / "user-cache").rglob("*.nbi"))
