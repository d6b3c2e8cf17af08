"""A read-only install used by another user without a home directory works, and writes nothing
next to the package.

The installed package (with the kernels compiled at install, when it has them) is copied into a
directory, byte-compiled as pip does, and made read-only; fresh processes then run as the user
``nobody`` (when the tests run as root; as the same user otherwise) with HOME unset.  The first
inverse dynamics, mass matrix, forward dynamics and Jacobian of the bundled Panda must work and
agree with the NumPy reference; the package directory must be unchanged; kernels compiled in the
first process are kept in the user's private cache under the temporary directory, so a second
process compiles nothing; with no writable directory at all the kernels are compiled in memory.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from test_compiled_cache import copy_installed_package

NOBODY = 65534
FIRST_RESULT = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np, composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.cache import cache_dirs, compiled_count
r = cd.load("panda"); q = np.linspace(-0.5, 0.5, r.dof); frame = r.frame_names[-1]
tau = r.inverse_dynamics(q, q, q); M = r.mass_matrix(q); a = r.forward_dynamics(q, q, tau); J = r.jacobian(q, frame)
seconds = time.perf_counter() - t0
dispatch.set_backend("numpy")
ref = [r.inverse_dynamics(q, q, q), r.mass_matrix(q), r.forward_dynamics(q, q, tau), r.jacobian(q, frame)]
err = max(float(np.max(np.abs(x - y))) for x, y in zip((tau, M, a, J), ref))
print(json.dumps({"file": cd.__file__, "seconds": seconds, "err": err, "compiled": compiled_count(),
                  "writable": cache_dirs().writable, "shipped": cache_dirs().shipped}))
"""


def _tree(root: Path) -> dict:
    """path -> (size, mtime_ns) of every file and folder under root."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def _read_only(root: Path) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(stat.S_IMODE(mode) & ~0o222 | (0o555 if p.is_dir() else 0o444))


def _as_user() -> tuple[list[str], str]:
    """The command prefix running a process as another user, and who that is."""
    if os.geteuid() != 0:
        return [], "the same user (not root: no other user to switch to)"
    setpriv = shutil.which("setpriv")
    assert setpriv, "running as root, but setpriv (util-linux) is missing: cannot run as another user"
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"], "nobody"


@pytest.fixture
def read_only_copy():
    base = Path(tempfile.mkdtemp(prefix="composedyn-ro-"))
    try:
        base.chmod(0o755)
        site = base / "site"
        package = copy_installed_package(site, kernels=True)
        compileall.compile_dir(str(package), quiet=1)  # as pip does at install
        _read_only(site)
        tmp = base / "tmp"
        tmp.mkdir(mode=0o777)
        tmp.chmod(0o1777)
        closed = base / "closed"
        closed.mkdir(mode=0o555)
        yield site, package, tmp, closed
    finally:
        for p in [base, *base.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def _python(site: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """Python with ``args`` as another user, HOME unset, the copy on PYTHONPATH, TMPDIR=tmp."""
    prefix, who = _as_user()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "XDG_CACHE_HOME", "PYTHONPATH") and not k.startswith(("NUMBA_", "COMPOSEDYN_"))}
    env.update(PYTHONPATH=str(site), TMPDIR=str(tmp))
    proc = subprocess.run([*prefix, sys.executable, *args], cwd=str(tmp), env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"as {who}: {proc.stderr[-3000:]}"
    return proc


def _run(site: Path, tmp: Path, code: str) -> dict:
    proc = _python(site, tmp, "-c", code)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


def test_read_only_install_another_user_no_home(read_only_copy):
    site, package, tmp, _ = read_only_copy
    before = _tree(site)
    first = _run(site, tmp, FIRST_RESULT)
    assert first["file"].startswith(str(package))
    assert first["err"] < 1e-9
    assert _tree(site) == before, "files were written into the installed package"
    if first["compiled"]:  # kernels missing from the install's cache: kept in the user's private cache
        assert first["writable"] and first["writable"].startswith(str(tmp)), first
        assert len([ln for ln in first["stderr"].splitlines() if "compiling dynamics kernels" in ln]) == 1
    again = _run(site, tmp, FIRST_RESULT)
    assert again["compiled"] == 0 and again["err"] < 1e-9, again
    demo = _python(site, tmp, "-m", "composedyn.cli", "demo", "--no-plot", "--duration", "0.3")
    assert demo.stdout.startswith("robot panda") and "Traceback" not in demo.stderr
    assert _tree(site) == before


def test_no_writable_directory_compiles_in_memory(read_only_copy):
    site, package, _, closed = read_only_copy
    if os.geteuid() != 0:
        pytest.fail("this check needs root, to run as a user for whom no directory is writable")
    code = (f"import tempfile; tempfile.tempdir = {str(closed)!r}\n"  # /tmp itself is writable by everyone
            "import json, numpy as np, composedyn as cd\n"
            "from composedyn.dynamics.compiled.cache import cache_dirs\n"
            "r = cd.load('two_link'); q = np.array([0.3, -0.7])\n"
            "print(json.dumps({'writable': cache_dirs().writable, 'tau': r.inverse_dynamics(q, q, q).tolist()}))")
    before = _tree(site)
    out = _run(site, closed, code)
    assert out["writable"] is None
    assert len(out["tau"]) == 2 and all(abs(t) < 1e6 for t in out["tau"])
    assert _tree(site) == before
