"""Random fixed-base robots as URDF strings, for tests against Pinocchio and identities.

``random_urdf(seed, n)`` builds a branched tree of ``n`` moving joints
(revolute, continuous, prismatic) plus some fixed joints, with random origins
(xyz, rpy), random unit axes, random masses and random valid inertias
(positive definite, triangle inequality).  The XML string loads in both
``composedyn.from_urdf(xml)`` and ``pinocchio.buildModelFromXML(xml)``.

``urdfs()`` is the matching hypothesis strategy; ``FIXED_SEEDS`` gives
deterministic examples spanning 1 to 30 joints.
"""

from __future__ import annotations

import numpy as np

MOVING = ("revolute", "continuous", "prismatic")
FIXED_SEEDS = [(0, 1), (1, 2), (2, 3), (3, 5), (4, 7), (5, 10), (6, 13), (7, 17), (8, 22), (9, 30)]


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """Uniformly random rotation matrix (3, 3)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """Rotational inertia (3, 3) about the centre of mass, positive definite and
    satisfying the triangle inequality: principal moments (b+c, a+c, a+b) with
    second moments a, b, c > 0, rotated by a random rotation."""
    a, b, c = mass * rng.uniform(0.005, 0.1, 3)
    R = random_rotation(rng)
    return R @ np.diag([b + c, a + c, a + b]) @ R.T


def _fmt(x) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.atleast_1d(x))


def _link(name: str, rng: np.random.Generator) -> str:
    m = float(rng.uniform(0.2, 3.0))
    I = random_inertia(rng, m)
    com, rpy = rng.uniform(-0.2, 0.2, 3), rng.uniform(-np.pi, np.pi, 3)
    return (
        f'  <link name="{name}">\n    <inertial>\n'
        f'      <origin xyz="{_fmt(com)}" rpy="{_fmt(rpy)}"/>\n      <mass value="{m:.17g}"/>\n'
        f'      <inertia ixx="{I[0, 0]:.17g}" ixy="{I[0, 1]:.17g}" ixz="{I[0, 2]:.17g}" '
        f'iyy="{I[1, 1]:.17g}" iyz="{I[1, 2]:.17g}" izz="{I[2, 2]:.17g}"/>\n'
        f"    </inertial>\n  </link>\n"
    )


def _joint(name: str, jtype: str, parent: str, child: str, rng: np.random.Generator,
           damping: bool, friction: bool, armature: bool) -> str:
    xyz, rpy = rng.uniform(-0.4, 0.4, 3), rng.uniform(-np.pi, np.pi, 3)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    out = (f'  <joint name="{name}" type="{jtype}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
           f'    <origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>\n')
    if jtype != "fixed":
        out += f'    <axis xyz="{_fmt(axis)}"/>\n'
    if jtype in ("revolute", "prismatic"):
        lo = -np.pi if jtype == "revolute" else -1.0
        out += f'    <limit lower="{lo}" upper="{-lo}" effort="100" velocity="10"/>\n'
    if jtype != "fixed" and (damping or friction or armature):
        d = rng.uniform(0.05, 1.0) if damping else 0.0
        f = rng.uniform(0.05, 1.0) if friction else 0.0
        extra = f' armature="{rng.uniform(0.01, 0.5):.17g}"' if armature else ""
        out += f'    <dynamics damping="{d:.17g}" friction="{f:.17g}"{extra}/>\n'
    return out + "  </joint>\n"


def random_urdf(seed: int, n: int, p_fixed: float = 0.2, p_branch: float = 0.35,
                types: tuple = MOVING, damping: bool = False, friction: bool = False,
                armature: bool = False) -> str:
    """A random robot as a URDF XML string.

    Parameters
    ----------
    seed : seed of ``numpy.random.default_rng``; same (seed, arguments) -> same XML.
    n : number of moving joints (>= 1), drawn from ``types``.
    p_fixed : probability of adding a fixed joint (and link) after each moving one.
    p_branch : probability that a new joint hangs from a random earlier link
        instead of the last one (makes the tree branched).
    damping, friction : add ``<dynamics damping friction>`` with random values.
    armature : add the non-standard ``armature`` attribute to ``<dynamics>``
        (read by composedyn, ignored by Pinocchio's parser: set
        ``pin_model.armature`` yourself).

    Joint names are ``j0, j1, ...`` (fixed joints ``f0, ...``), links ``base``,
    ``l0, ...`` (fixed-joint children ``w0, ...``).  The base link has mass.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    links, joints = [_link("base", rng)], []
    names = ["base"]
    nf = 0
    for i in range(n):
        parent = names[-1] if rng.random() > p_branch else names[int(rng.integers(len(names)))]
        jtype = types[int(rng.integers(len(types)))]
        links.append(_link(f"l{i}", rng))
        joints.append(_joint(f"j{i}", jtype, parent, f"l{i}", rng, damping, friction, armature))
        names.append(f"l{i}")
        if rng.random() < p_fixed:
            host = names[int(rng.integers(len(names)))]
            links.append(_link(f"w{nf}", rng))
            joints.append(_joint(f"f{nf}", "fixed", host, f"w{nf}", rng, False, False, False))
            names.append(f"w{nf}")
            nf += 1
    return (f'<?xml version="1.0"?>\n<robot name="random_{seed}_{n}">\n' + "".join(links) + "".join(joints)
            + "</robot>\n")


def urdfs(max_joints: int = 30, **kwargs):
    """Hypothesis strategy drawing ``random_urdf(seed, n, **kwargs)`` with 1 <= n <= max_joints."""
    from hypothesis import strategies as st

    return st.builds(lambda s, n: random_urdf(s, n, **kwargs), st.integers(0, 2**32 - 1), st.integers(1, max_joints))
