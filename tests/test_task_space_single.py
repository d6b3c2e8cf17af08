"""The task-space methods' compiled single-sample path: the C callers of the task-space
quantities (``Robot._frame_path``, ``composedyn.dynamics.data``).

Oracles: the general path of the same method (list input, which converts and goes
through ``dispatch``) and the NumPy reference (backend ``"numpy"``); the lean path
must give their results to 1e-12, and every input the entries do not take exactly
(other dtypes, byte order, 2-D arrays, lists, unknown frames) must reach the general
path -- counted by spies on the entries -- with its result or its named error.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from random_robots import random_urdf
from test_compiled import rel, spy_lean_calls

TOL = 1e-12
ENTRIES = ("frame_pose", "jacobian", "frame_velocity", "frame_acceleration")


@pytest.fixture
def spy(monkeypatch):
    """Per task-space entry, the calls its C callers served (returned a result)."""
    return spy_lean_calls(monkeypatch, ENTRIES)


def calls(robot, frame, reference, q, qd, qdd):
    return [robot.frame_pose(q, frame), robot.jacobian(q, frame, reference),
            robot.frame_velocity(q, qd, frame, reference), robot.frame_acceleration(q, qd, qdd, frame, reference)]


@pytest.mark.parametrize("seed", [3, 11])
def test_lean_path_equals_general_path_and_numpy_reference(seed, spy):
    """Every frame (fixed-base links, welded links, branches, prismatic joints), both references."""
    robot = cd.from_urdf(random_urdf(seed, 6, types=("revolute", "prismatic", "continuous")))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3, robot.dof))
    cases = [(frame, reference) for frame in robot.frame_names for reference in ("world", "local")]
    lean, general = [], []
    for frame, reference in cases:
        before = dict(spy)
        lean.append(calls(robot, frame, reference, q, qd, qdd))
        assert all(spy[k] == before[k] + 1 for k in ENTRIES), (frame, before, spy)
        general.append(calls(robot, frame, reference, q.tolist(), qd.tolist(), qdd.tolist()))
    dispatch.set_backend("numpy")
    try:
        numpy_ = [calls(robot, frame, reference, q, qd, qdd) for frame, reference in cases]
    finally:
        dispatch.set_backend("auto")
    for results in zip(lean, general, numpy_):
        for a, b, c in zip(*results):
            assert a.shape == b.shape and rel(a, b) < TOL and rel(a, c) < TOL


CONVERT = {
    "int64": lambda x: np.round(x).astype(np.int64),
    "float32": lambda x: x.astype(np.float32),
    "big-endian": lambda x: x.astype(">f8"),
    "batch": lambda x: x[None],
    "list": lambda x: x.tolist(),
    "subclass": lambda x: x.view(type("Sub", (np.ndarray,), {})),
}


@pytest.mark.parametrize("kind", CONVERT)
@pytest.mark.parametrize("which", ["q", "qd", "qdd"])
def test_inputs_the_entries_do_not_take_go_to_the_general_path(kind, which, spy):
    """An argument that is not a 1-D native float64 ndarray never reaches an entry (which
    would read it as one); the result equals the float64 call's."""
    robot = cd.from_urdf(random_urdf(5, 5))
    frame = robot.frame_names[-1]
    args = dict(zip(("q", "qd", "qdd"), np.random.default_rng(1).uniform(-2, 2, (3, robot.dof))))
    bad = CONVERT[kind](args[which])
    as_float = np.asarray(bad, float)
    want = {**args, which: as_float}
    got = {**args, which: bad}
    before = dict(spy)
    if which == "q":
        assert rel(robot.frame_pose(got["q"], frame), robot.frame_pose(want["q"], frame)) < TOL
        assert rel(robot.jacobian(got["q"], frame, "local"), robot.jacobian(want["q"], frame, "local")) < TOL
    a = robot.frame_velocity(got["q"], got["qd"], frame)
    b = robot.frame_velocity(want["q"], want["qd"], frame)
    assert a.shape == b.shape and rel(a, b) < TOL
    a = robot.frame_acceleration(got["q"], got["qd"], got["qdd"], frame)
    b = robot.frame_acceleration(want["q"], want["qd"], want["qdd"], frame)
    assert a.shape == b.shape and rel(a, b) < TOL
    # the entries saw the float64 1-D calls, and the bad call's velocity only when qdd was the bad one
    flat = kind != "batch"
    assert spy["frame_acceleration"] == before["frame_acceleration"] + flat
    assert spy["frame_velocity"] == before["frame_velocity"] + (flat or which == "qdd") + (which == "qdd")


def test_strided_and_read_only_vectors_take_the_lean_path(spy):
    robot = cd.from_urdf(random_urdf(7, 5))
    frame = robot.frame_names[-1]
    states = np.random.default_rng(2).uniform(-2, 2, (robot.dof, 3))
    q = states[:, 0]
    frozen = q.copy()
    frozen.flags.writeable = False
    assert not q.flags.c_contiguous
    for x in (q, frozen):
        assert rel(robot.jacobian(x, frame), robot.jacobian(q.tolist(), frame)) < TOL
    assert spy["jacobian"] == 2


@pytest.mark.parametrize("call,message", [
    (lambda r, q: r.jacobian(np.r_[q[:-1], np.nan], r.frame_names[-1]), "q"),
    (lambda r, q: r.jacobian(q[:-1], r.frame_names[-1]), "q has shape"),
    (lambda r, q: r.frame_pose(np.r_[q, 0.0], r.frame_names[-1]), "q has shape"),
    (lambda r, q: r.frame_velocity(q, np.r_[q[:-1], np.inf], r.frame_names[-1]), "qd"),
    (lambda r, q: r.frame_acceleration(q, q, q[:-1], r.frame_names[-1]), "qdd has shape"),
    (lambda r, q: r.frame_velocity(q, None, r.frame_names[-1]), "qd"),
    (lambda r, q: r.jacobian(q, "no_such_link"), "unknown frame"),
    (lambda r, q: r.jacobian(q, r.frame_names[-1][:-1] + "x"), "close names"),
    (lambda r, q: r.jacobian(q, ["link"]), "frame must be a link name"),
    (lambda r, q: r.jacobian(q, r.frame_names[-1], "LOCAL"), "reference must be"),
    (lambda r, q: r.jacobian(q, r.frame_names[-1], ["world"]), "reference must be"),
])
def test_bad_input_raises_the_general_paths_named_error(call, message):
    robot = cd.from_urdf(random_urdf(5, 5))
    q = np.random.default_rng(3).uniform(-2, 2, robot.dof)
    with pytest.raises(ValueError, match=message):
        call(robot, q)


def test_warm_up_compiles_the_task_space_entries_and_kernels():
    """After warm_up the lean path's entries are compiled (loaded, in a later process) and the
    frame kernels have been called."""
    from composedyn.dynamics.compiled import declare

    robot = cd.from_urdf(random_urdf(9, 4))
    times = robot.warm_up()
    for name in ENTRIES:
        assert name + "_entry" in times and name + "_entry" in declare.COMPILE_SECONDS
    loops = ("frame_pose", "jacobian", "frame_velocity", "frame_acceleration", "center_of_mass", "com_jacobian")
    assert {name + "_loop_serial" for name in loops} <= set(times)
    assert "jacobian_loop_serial" in robot.warm_up(batch=True)
