"""URDF import needs no mesh or scene-graph library.

A fresh interpreter with ``yourdfpy`` and ``trimesh`` made unimportable loads a
vendor URDF and computes its inverse dynamics; the installed dependency closure
of composedyn (read from package metadata, extras left out) contains neither.
"""

import json
import subprocess
import sys
from importlib import metadata

import numpy as np
from packaging.requirements import Requirement

import composedyn as cd
from pin_oracle import erd_urdf

BLOCKED = ("yourdfpy", "trimesh")

SCRIPT = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # any import of it raises ImportError
import numpy as np
import composedyn as cd
robot = cd.from_urdf(sys.argv[1])
tau = robot.inverse_dynamics(np.full(robot.dof, 0.3), np.zeros(robot.dof), np.zeros(robot.dof))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r} and sys.modules[m] is not None)
print(json.dumps({{"tau": tau.tolist(), "loaded": loaded}}))
"""


def test_vendor_urdf_loads_with_mesh_libraries_blocked():
    path = erd_urdf("panda")
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(blocked=BLOCKED), path],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["loaded"] == []
    robot = cd.from_urdf(path)  # same file in this process: the same numbers
    tau = robot.inverse_dynamics(np.full(robot.dof, 0.3), np.zeros(robot.dof), np.zeros(robot.dof))
    assert robot.dof > 0 and np.array_equal(np.array(result["tau"]), tau)


def _name(req: Requirement) -> str:
    return req.name.lower().replace("_", "-")


def test_dependency_closure_has_no_mesh_library():
    """Every distribution ``pip install ".[all]"`` pulls in, transitively, read from the installed
    metadata (environment markers evaluated for this interpreter, requested extras followed)."""
    seen, todo = set(), [("composedyn", frozenset({"all"}))]
    while todo:
        dist, extras = todo.pop()
        if (dist, extras) in seen:
            continue
        seen.add((dist, extras))
        for text in metadata.requires(dist) or ():
            req = Requirement(text)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((_name(req), frozenset(req.extras)))
    names = {d for d, _ in seen}
    assert {"numpy", "lxml", "numba", "distributed", "rosbags", "mujoco"} <= names
    assert not names & set(BLOCKED), sorted(names & set(BLOCKED))
