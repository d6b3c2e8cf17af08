"""Compiled results do not depend on the order the kernels were first compiled in.

The kernels share helpers (the joint model, ``compiled/joint.py``) but not
fast-math flags: the mass-matrix kernel may fuse and reorder, the
Coriolis, forward-dynamics and frame kernels may fuse, the RNEA kernel does
neither.  numba compiles a helper that names no flags with those of its first
caller and keeps that one version (and caches it on disk), so without care a
kernel's last bits would depend on which kernel a process (or an earlier
process sharing the cache) compiled first.  Two processes, each with its own
empty kernel cache, evaluate the same quantities of the Panda arm in opposite
orders; every result must be the same to the last bit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from composedyn.dynamics.compiled.cache import BUILD_ENV

# mass matrix (fastmath contract, reassoc, nsz) first or inverse dynamics (no fastmath) first; the
# Coriolis and frame kernels stand for the kernels that may fuse (forward dynamics too, whose kernel
# alone takes minutes to compile)
ORDERS = ("M,C,J,COM,ID", "ID,COM,J,C,M")
RUN = """
import json, sys, numpy as np, composedyn
robot = composedyn.load("panda")
q, qd, qdd = np.random.default_rng(7).uniform(-1.5, 1.5, (3, robot.dof))
calls = {"ID": lambda: robot.inverse_dynamics(q, qd, qdd), "M": lambda: robot.mass_matrix(q),
         "C": lambda: robot.coriolis_matrix(q, qd),
         "J": lambda: robot.jacobian(q, "flange"), "COM": lambda: robot.center_of_mass(q)}
print(json.dumps({k: np.asarray(calls[k](), dtype=float).tolist() for k in sys.argv[1].split(",")}))
"""


def evaluate(order: str, cache) -> dict[str, np.ndarray]:
    """The quantities of ``RUN`` evaluated in ``order`` by a fresh process compiling into ``cache``
    (an empty directory; no cache built at install is read)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COMPOSEDYN_"))}
    env[BUILD_ENV] = str(cache)
    proc = subprocess.run([sys.executable, "-c", RUN, order], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {k: np.array(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def test_results_do_not_depend_on_compile_order(tmp_path):
    first, second = (evaluate(order, tmp_path / f"cache{k}") for k, order in enumerate(ORDERS))
    assert set(first) == set(second) == {"ID", "M", "C", "J", "COM"}
    differ = {k: float(np.abs(first[k] - second[k]).max()) if first[k].shape == second[k].shape else "shape"
              for k in first if first[k].shape != second[k].shape or first[k].tobytes() != second[k].tobytes()}
    assert not differ, f"results of the two compile orders differ (max abs difference): {differ}"
