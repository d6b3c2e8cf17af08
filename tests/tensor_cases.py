"""Robots, states and comparisons shared by tests/test_torch.py and the tests/test_jax*.py files.

Cases: bundled robots, random branched trees with damping, Coulomb friction and
armature, random trees with mimic joints, and floating random trees.  Each case
is a NumPy ``Robot`` (the reference every tensor result is compared with).
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from functools import lru_cache

import numpy as np

import composedyn as cd
from random_robots import random_urdf

BUNDLED = ("panda", "puma560", "stanford", "two_link", "planar3r")
RANDOM = ("tree", "mimic", "floating", "floating_mimic")
CASES = BUNDLED + RANDOM
SMALL = ("two_link", "tree", "mimic", "floating")  # cases for the slower gradient checks


def mimic_urdf(seed: int, n: int, **options) -> str:
    """``random_urdf`` with every third moving joint from the end a mimic of an earlier independent one."""
    rng = np.random.default_rng(seed)
    root = ET.fromstring(random_urdf(seed, n, **options))
    js = [j for j in root.findall("joint") if j.get("type") in ("revolute", "prismatic", "continuous")]
    dep = set(range(len(js) - 1, 0, -3))
    for k in sorted(dep):
        src = js[int(rng.choice([i for i in range(k) if i not in dep]))]
        ET.SubElement(js[k], "mimic", joint=src.get("name"), multiplier=f"{rng.uniform(-2, 2):.6f}",
                      offset=f"{rng.uniform(-0.5, 0.5):.6f}")
    return ET.tostring(root, encoding="unicode")


@lru_cache(maxsize=None)
def robot(case: str):
    """The NumPy robot of ``case`` (built once)."""
    joint_terms = dict(damping=True, friction=True, armature=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        if case in BUNDLED:
            return cd.load(case)
        if case == "tree":
            return cd.from_urdf(random_urdf(3, 7, p_fixed=0.3, **joint_terms))
        if case == "mimic":
            return cd.from_urdf(mimic_urdf(5, 8, **joint_terms))
        if case == "floating":
            return cd.from_urdf(random_urdf(4, 5, p_fixed=0.3, **joint_terms), floating=True)
        if case == "floating_mimic":
            return cd.from_urdf(mimic_urdf(6, 7, **joint_terms), floating=True)
    raise KeyError(case)


def states(r, batch: tuple = (4,), seed: int = 0) -> dict:
    """Random q (*batch, nq), velocity, acceleration and torque (*batch, nv) for robot ``r``;
    velocities kept away from 0 (Coulomb friction's sign is then differentiable)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(batch))
    if r.floating:
        q = r.random_configuration(size, seed=seed).reshape(batch + (r.nq,))
    else:
        q = rng.uniform(-1.5, 1.5, batch + (r.nq,))
    sign = rng.choice([-1.0, 1.0], batch + (r.nv,))
    v = sign * rng.uniform(0.2, 1.5, batch + (r.nv,))
    a = rng.uniform(-2.0, 2.0, batch + (r.nv,))
    tau = rng.uniform(-5.0, 5.0, batch + (r.nv,))
    return {"q": q, "v": v, "a": a, "tau": tau}


def frames(r) -> tuple:
    """Two frames to test: the last and one in the middle."""
    names = r.frame_names
    return (names[-1], names[len(names) // 2])


def calls(r) -> dict:
    """Method name -> (arguments from a state dict, the NumPy result) over the Robot's methods."""
    out = {
        "inverse_dynamics": (("q", "v", "a"), {}),
        "forward_dynamics": (("q", "v", "tau"), {}),
        "mass_matrix": (("q",), {}),
        "bias_torques": (("q", "v"), {}),
        "gravity_torques": (("q",), {}),
        "coriolis_matrix": (("q", "v"), {}),
        "energy": (("q", "v"), {}),
        "regressor": (("q", "v", "a"), {}),
        "center_of_mass": (("q",), {}),
        "com_jacobian": (("q",), {}),
    }
    for k, f in enumerate(frames(r)):
        out[f"frame_pose[{k}]"] = (("q",), {"frame": f})
        for ref in ("world", "local"):
            out[f"jacobian[{k},{ref}]"] = (("q",), {"frame": f, "reference": ref})
            out[f"frame_velocity[{k},{ref}]"] = (("q", "v"), {"frame": f, "reference": ref})
            out[f"frame_acceleration[{k},{ref}]"] = (("q", "v", "a"), {"frame": f, "reference": ref})
    if r.floating:
        out["centroidal_momentum_matrix"] = (("q",), {})
        out["integrate"] = (("q", "v"), {"dt": 0.3})
        out["difference"] = (("q", "q1"), {})
    return out


def method(name: str) -> str:
    return name.split("[")[0]


def reference(r, name: str, args: tuple, kwargs: dict, st: dict):
    """The NumPy robot's result of ``name`` on the state ``st``."""
    return getattr(r, method(name))(*(st[a] for a in args), **kwargs)


def with_q1(r, st: dict, seed: int = 1) -> dict:
    """``st`` with a second configuration q1 (for ``difference``)."""
    other = states(r, st["q"].shape[:-1], seed)
    return {**st, "q1": other["q"]}


def close(got, want, tol: float, what: str = "") -> None:
    """max |got - want| <= tol * max(1, max |want|)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert err <= tol * scale, f"{what}: error {err:.3g} > {tol:g} x {scale:.3g}"


def tangent(r, q: np.ndarray) -> np.ndarray:
    """d q / d δ (nq, nv) of q ⊕ δ at δ = 0: free flyer (p + R δ_lin, quat ⊗ (δ_ang / 2, 1)), joints identity."""
    if not r.floating:
        return np.eye(r.nq)
    x, y, z, w = q[3:7]
    R = _quat_matrix(q[3:7])
    quat = 0.5 * np.array([[w, -z, y], [z, w, -x], [-y, x, w], [-x, -y, -z]])
    T = np.zeros((r.nq, r.nv))
    T[:3, :3], T[3:7, 3:6], T[7:, 6:] = R, quat, np.eye(r.nv - 6)
    return T


def _quat_matrix(quat) -> np.ndarray:
    x, y, z, w = quat / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


BLOCKER = """
import sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {module!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, _NotInstalled())
import composedyn as cd
try:
    cd.load("two_link").{call}
except cd.MissingExtra as e:
    print("MissingExtra:", e)
"""
