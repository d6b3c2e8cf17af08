"""The build step's merge of numba cache directories compiled in separate processes: every entry of
every directory is served from the merged one, same-named data files of one function renumbered."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import declare
from composedyn.kernels.build import merge, serve

# all_finite on contiguous or strided vectors: two signatures of one function, each compiled by
# its own process into its own directory, where both data files are named "...1.nbc"
RUN = """
import json, sys, numpy as np
from composedyn.dynamics.compiled.cache import compiled_count
from composedyn.dynamics.compiled.finite import all_finite
out = {}
for layout in sys.argv[1:]:
    x = np.array([0.3, np.nan]) if layout == "contiguous" else np.array([0.3, 0.0, -0.7, 0.0])[::2]
    out[layout] = bool(all_finite(x))
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
    name = next(p.name for p in a.glob("finite.all_finite-*.nbi"))
    assert (b / name).is_file()  # the same function in both, each with its own "1" data file
    written = merge([str(a), str(b)], str(merged))
    assert written >= 2 and len(list(merged.glob(name[:-len(".nbi")] + ".*.nbc"))) == 2
    both = run(merged, "contiguous", "strided")
    assert both["compiled"] == 0  # every kernel loaded from the merged cache
    assert both["tau"] == {**first["tau"], **second["tau"]} == {"contiguous": False, "strided": True}


# a worker of serve(): records each group index it is given in its directory, then answers
# done (or stops without answering at the index in argv[1])
WORKER = """
import os, sys, time
from composedyn.dynamics.compiled.cache import BUILD_ENV
for line in sys.stdin:
    if line.strip() == sys.argv[1]:
        sys.exit(3)
    with open(os.path.join(os.environ[BUILD_ENV], "given"), "a") as f:
        f.write(line)
    time.sleep(0.05)
    print("done", flush=True)
"""


def test_the_workers_take_every_group_once(tmp_path):
    directories = [tmp_path / "a", tmp_path / "b"]
    for d in directories:
        d.mkdir()
    serve(list(range(9)), [str(d) for d in directories], (sys.executable, "-c", WORKER, "none"))
    given = [[int(x) for x in (d / "given").read_text().split()] for d in directories if (d / "given").exists()]
    assert sorted(sum(given, [])) == list(range(9)) and len(given) == 2  # each group once, both workers used


def test_a_worker_that_stops_fails_the_build(tmp_path):
    directories = [tmp_path / "a", tmp_path / "b"]
    for d in directories:
        d.mkdir()
    with pytest.raises(SystemExit, match="a kernel group failed to compile"):
        serve(list(range(9)), [str(d) for d in directories], (sys.executable, "-c", WORKER, "4"))



@njit
def _weighted(im, fm, q, fw, out):  # not inlined: every entry and loop of _TOY calls this one function
    s = float(im.shape[0])
    for i in range(q.shape[0]):
        s += q[i] * fm[i % fm.shape[0], 0]
    for i in range(fw.shape[0]):
        s += fw[i, 0]
    out[0] = s
    return 0


@njit(inline="always")
def _toy(im, fm, q, fw, out):
    return _weighted(im, fm, q, fw, out)


_TOY = declare.Quantity("toy_weighted_sum", _toy, inputs=(("q", "nq"),), extras=(("f_world", 6),),
                        results=((1,),))


def test_a_kernel_that_is_not_inlined_gets_one_set_of_argument_types_from_every_caller():
    # numba compiles a function once per argument types, and a read-only array is another type than a
    # writeable one: the generated C entries (arrays made of pointers) and batch loops (the read-only packed
    # model) pass the model arrays and the extras through jit.readonly, so that a kernel they share
    # (aba_into: minutes to compile) is compiled once at install, not once per kind of caller
    from numba import cfunc

    robot = cd.load("panda")
    im, fm = dispatch.packed(robot.model).of(_TOY)
    entries = [cfunc(declare.signature())(declare.generated(declare._entry_source(_TOY, name, extras), name, _TOY))
               for name, extras in (("toy_entry", False), ("toy_entry_with_extras", True))]
    loops = [njit(parallel=parallel)(declare.generated(declare._loop_source(_TOY, name), name, _TOY))
             for name, parallel in (("toy_loop_serial", False), ("toy_loop_parallel", True))]
    Q = np.ones((3, robot.dof))
    W = np.ones((3, im.shape[0], 6))
    for loop in loops:
        for extras in (W, np.empty((0, im.shape[0], 6))):
            out, status = np.zeros((3, 1)), np.zeros(3, np.int64)
            loop(im, fm, Q, extras, out, status)
            expected = im.shape[0] + fm[:robot.dof, 0].sum() + (im.shape[0] if len(extras) else 0)
            assert not status.any() and out[0, 0] == expected
    for entry in entries:
        assert entry.address  # compiled: each called _weighted while compiling
    assert len(_weighted.signatures) == 1, _weighted.signatures
    im_t, fm_t, q_t, fw_t, out_t = _weighted.signatures[0]
    assert not (im_t.mutable or fm_t.mutable or fw_t.mutable) and q_t.mutable and out_t.mutable

