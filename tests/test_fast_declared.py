"""``robot.fast`` has a method for every fixed-base declared quantity, made from its declaration.

Oracle: the general path of the same quantity (``robot.compute``, the batch loop or the
C caller after conversion, itself compared with Pinocchio elsewhere) at the same
all-joint arrays; one sample and batches, options positional and by keyword, several
results as a tuple, NaN in gives NaN out, and what ``robot.fast`` refuses (an option out
of range, ``out=`` for several results, a wrong shape) raises the error naming it.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.compiled import quantities
from random_robots import random_urdf

TOL = 1e-12


@pytest.fixture(scope="module")
def robot():
    return cd.from_urdf(random_urdf(17, 6, types=("revolute", "prismatic", "continuous"), damping=True,
                                    friction=True, armature=True))


def options(robot, q) -> dict:
    """The number and the options of declaration ``q`` in its positional order: a smoothing width,
    the last frame, local axes, friction on."""
    values = {"frame": len(robot.model.link_names) - 1, "local": 1, "friction": 1}
    return {**({q.number: 0.05} if q.number else {}), **{o: values[o] for o, _ in q.options}}


def close(a, b) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a.shape == b.shape and np.allclose(a, b, rtol=TOL, atol=TOL)


def test_every_declared_quantity_is_a_method():
    fd = cd.load("panda").fast
    assert set(quantities.DECLARED) | {"rnea"} <= set(dir(fd))
    for name in quantities.DECLARED:
        assert callable(getattr(fd, name)) and callable(getattr(fd, "_" + name))
    with pytest.raises(AttributeError):
        fd.no_such_quantity  # noqa: B018


@pytest.mark.parametrize("name", sorted(quantities.DECLARED))
@pytest.mark.parametrize("batch", [(), (4,)])
def test_fast_equals_the_general_path(robot, name, batch):
    q = quantities.DECLARED[name]
    rng = np.random.default_rng(len(name))
    xs = list(rng.uniform(-1.5, 1.5, (len(q.inputs),) + batch + (robot.dof,)))
    opts = options(robot, q)
    want = robot.compute(name, *xs, **opts)
    f = getattr(robot.fast, name)
    assert close(f(*xs, **opts), want)
    assert close(f(*xs, *opts.values()), want)  # positional, in the declaration's order
    if len(q.results) == 1:
        out = np.full(want.shape, 7.0)
        assert f(*xs, **opts, out=out) is out and close(out, want)
    else:
        with pytest.raises(ValueError, match=f"robot.fast.{name}"):
            f(*xs, **opts, out=np.empty(want[0].shape))
    bad = [x.copy() for x in xs]
    bad[0][..., 1] = np.nan
    got = f(*bad, **opts)
    assert all(np.isnan(r).all() for r in (got if isinstance(got, tuple) else (got,)))
    with pytest.raises(ValueError, match=f"robot.fast.{name}"):
        f(*[x[..., 1:] for x in xs], **opts)


@pytest.mark.parametrize("name", [n for n, q in sorted(quantities.DECLARED.items()) if any(
    o == "frame" for o, _ in q.options)])
def test_a_frame_index_out_of_range_raises(robot, name):
    q = quantities.DECLARED[name]
    xs = [np.zeros(robot.dof)] * len(q.inputs)
    for frame in (-1, len(robot.model.link_names)):
        with pytest.raises(ValueError, match="out of range"):
            getattr(robot.fast, name)(*xs, frame=frame)
        with pytest.raises(ValueError, match="out of range"):
            getattr(robot.fast, name)(*[np.stack([x, x]) for x in xs], frame=frame)
