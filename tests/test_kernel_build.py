"""The build step's merge of numba cache directories compiled in separate processes: every entry of
every directory is served from the merged one, same-named data files of one function renumbered."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from composedyn.kernels.build import merge

# rnea_into on contiguous or strided positions: two signatures of one function, each compiled by
# its own process into its own directory, where both data files are named "...1.nbc"
RUN = """
import json, sys, numpy as np, composedyn
from composedyn.dynamics.compiled.cache import compiled_count
from composedyn.dynamics.compiled.layout import NO_FW, pack
from composedyn.dynamics.compiled.rnea import SCRATCH, rnea_into
im, fm = pack(composedyn.load("two_link").model)
out = {}
for layout in sys.argv[1:]:
    q = np.array([0.3, -0.7]) if layout == "contiguous" else np.array([0.3, 0.0, -0.7, 0.0])[::2]
    tau = np.empty(2)
    rnea_into(im, fm, q, q, q, NO_FW, 1, 0, tau, np.empty((3, SCRATCH)))
    out[layout] = tau.tolist()
print(json.dumps({"tau": out, "compiled": compiled_count()}))
"""


def run(directory, *layouts) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COMPOSEDYN_"))}
    env["COMPOSEDYN_KERNEL_CACHE_BUILD"] = str(directory)
    proc = subprocess.run([sys.executable, "-c", RUN, *layouts], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_merged_directories_serve_every_entry(tmp_path):
    a, b, merged = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    first, second = run(a, "contiguous"), run(b, "strided")
    assert first["compiled"] > 0 and second["compiled"] > 0
    name = next(p.name for p in a.glob("rnea.rnea_into-*.nbi"))
    assert (b / name).is_file()  # the same function in both, each with its own "1" data file
    written = merge([str(a), str(b)], str(merged))
    assert written >= 2 and len(list(merged.glob(name[:-len(".nbi")] + ".*.nbc"))) == 2
    both = run(merged, "contiguous", "strided")
    assert both["compiled"] == 0  # every kernel loaded from the merged cache
    assert both["tau"] == {**first["tau"], **second["tau"]}
