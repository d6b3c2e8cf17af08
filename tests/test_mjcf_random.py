"""Random MJCF trees against MuJoCo: random body placements (quat, euler, axisangle, xyaxes), one to
three hinge or slide joints per body with random axes, anchors and refs, random geoms (inertia
from geoms) or explicit inertials, sites; fixed and free roots.  Mass matrix, inverse dynamics
and every body and site pose, per joint by name, to 1e-9."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import composedyn as cd
from mjcf_compare import compare


def _vec(rng, n=3, scale=1.0) -> str:
    return " ".join(f"{x:.6f}" for x in rng.uniform(-scale, scale, n))


def _orientation(rng) -> str:
    kind = rng.integers(5)
    if kind == 0:
        return ""
    if kind == 1:
        return f'quat="{_vec(rng, 4)}"'
    if kind == 2:
        return f'euler="{_vec(rng, 3, 90)}"'
    if kind == 3:
        return f'axisangle="{_vec(rng)} {rng.uniform(-180, 180):.4f}"'
    x = rng.normal(size=3)
    y = rng.normal(size=3)
    return f'xyaxes="{" ".join(f"{v:.6f}" for v in np.r_[x, y])}"'


def _joint(rng, name: str) -> str:
    kind = "slide" if rng.random() < 0.3 else "hinge"
    attrs = [f'name="{name}"', f'type="{kind}"', f'axis="{_vec(rng)}"']
    if rng.random() < 0.6:
        attrs.append(f'pos="{_vec(rng, scale=0.1)}"')
    if rng.random() < 0.5:
        attrs.append(f'ref="{rng.uniform(-30, 30) if kind == "hinge" else rng.uniform(-0.05, 0.05):.4f}"')
    if rng.random() < 0.5:
        attrs.append(f'armature="{rng.uniform(0, 0.05):.4f}"')
    return f"<joint {' '.join(attrs)}/>"


def _content(rng, k: int) -> str:
    if rng.random() < 0.3:
        return (f'<inertial pos="{_vec(rng, scale=0.1)}" {_orientation(rng) or ""} mass="{rng.uniform(0.2, 2):.4f}" '
                f'diaginertia="{rng.uniform(0.01, 0.02):.5f} {rng.uniform(0.01, 0.02):.5f} '
                f'{rng.uniform(0.01, 0.02):.5f}"/>')
    geoms = [f'<geom type="capsule" fromto="0 0 0 {_vec(rng, scale=0.3)}" size="{rng.uniform(0.01, 0.05):.4f}"/>',
             f'<geom type="box" size="{" ".join(f"{x:.4f}" for x in rng.uniform(0.02, 0.1, 3))}" '
             f'pos="{_vec(rng, scale=0.1)}" {_orientation(rng)}/>',
             f'<geom type="sphere" size="{rng.uniform(0.02, 0.08):.4f}" pos="{_vec(rng, scale=0.1)}"/>',
             f'<geom type="cylinder" size="{rng.uniform(0.02, 0.05):.4f} {rng.uniform(0.02, 0.1):.4f}" '
             f'{_orientation(rng)}/>']
    picked = rng.choice(len(geoms), size=int(rng.integers(1, 3)), replace=False)
    site = f'<site name="s{k}" pos="{_vec(rng, scale=0.2)}" {_orientation(rng)}/>' if rng.random() < 0.5 else ""
    return "".join(geoms[i] for i in picked) + site


def random_mjcf(seed: int, n: int = 7, free: bool = False) -> str:
    rng = np.random.default_rng(seed)
    bodies, parents = [], []
    for k in range(n):
        parents.append(int(rng.integers(-1, k)) if k and not free else (k - 1 if k else -1))
        if free and k > 1:
            parents[-1] = int(rng.integers(0, k))
        bodies.append(k)
    children: dict[int, list[int]] = {}
    for k, p in enumerate(parents):
        children.setdefault(p, []).append(k)

    def body(k: int) -> str:
        joints = "<freejoint name=\"root\"/>" if free and k == 0 else "".join(
            _joint(rng, f"j{k}_{i}") for i in range(int(rng.choice([0, 1, 1, 1, 2, 3]))))
        inner = "".join(body(c) for c in children.get(k, []))
        return (f'<body name="b{k}" pos="{_vec(rng, scale=0.3)}" {_orientation(rng)}>{joints}{_content(rng, k)}'
                f"{inner}</body>")

    tree = "".join(body(c) for c in children[-1])
    return (f'<mujoco model="random{seed}"><compiler angle="degree" autolimits="true"/>'
            f'<option gravity="{_vec(rng, scale=10)}"/><worldbody>{tree}</worldbody></mujoco>')


@pytest.mark.parametrize("seed", range(12))
def test_random_fixed_tree(seed):
    xml = random_mjcf(seed)
    robot = cd.from_mjcf(xml)
    compare(robot, mujoco.MjModel.from_xml_string(xml), seed=seed, samples=2)


@pytest.mark.parametrize("seed", range(6))
def test_random_free_tree(seed):
    xml = random_mjcf(100 + seed, free=True)
    robot = cd.from_mjcf(xml)
    assert robot.floating
    compare(robot, mujoco.MjModel.from_xml_string(xml), seed=seed, samples=2)
