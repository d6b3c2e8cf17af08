"""Speed of one-sample dynamics with link wrenches against Pinocchio, in one run.

    python bench/wrenches.py [--repeat 9] [--number 2000]

A controller with a contact or a tool load calls inverse or forward dynamics with
``f_ext`` = {link: (fx, fy, fz, tx, ty, tz)} (world axes, force at the link's centre of
mass).  Per call (µs, median of interleaved repeats) on UR5 (wrench on ``tool0``) and
Solo12 with a free flyer (wrenches on two feet):

- composedyn: ``robot.inverse_dynamics(q, v, a, f_ext=...)``, ``robot.forward_dynamics(q, v,
  tau, f_ext=...)``, and the same calls without wrenches;
- Pinocchio, the same job: ``pin.forwardKinematics`` + ``pin.updateFramePlacements``, each
  wrench moved to its joint's frame in Python (``oMi.actInv``), then ``pin.rnea`` / ``pin.aba``
  with the ``StdVec_Force``;
- Pinocchio's ``pin.rnea`` / ``pin.aba`` with a prepared ``StdVec_Force`` (a lower bound: the
  wrenches already in joint frames).

Ratios are composedyn / Pinocchio (< 1 is faster).  Speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_oracle import FreeFlyerPair, PinPair, erd_urdf, pin
from timing import interleaved, machine

CASES = {"UR5": ("ur5", False, ("tool0",)), "Solo12": ("solo12", True, ("FL_FOOT", "HR_FOOT"))}


def _inertial_origin(urdf: str, link: str) -> np.ndarray:
    """The centre of mass of ``link`` in its axes, read from the URDF (``<inertial><origin xyz>``)."""
    import xml.etree.ElementTree as ET

    node = ET.parse(urdf).getroot().find(f"link[@name='{link}']/inertial/origin")
    return np.array([float(x) for x in (node.get("xyz") if node is not None else "0 0 0").split()])


def case(key: str, rng):
    name, floating, links = CASES[key]
    urdf = erd_urdf(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.load(urdf, floating=floating)
    pp = FreeFlyerPair(robot, urdf, pin.JointModelFreeFlyer()) if floating else PinPair(robot, urdf)
    q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
    v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    f = {k: rng.normal(size=6) for k in links}
    tau = robot.inverse_dynamics(q, v, a, f_ext=f)
    model, data = pp.model, pp.data
    pq, pv, pa, ptau = pp.q(q), pp.v(v), pp.v(a), pp.v(tau)
    frames = {k: model.getFrameId(k) for k in links}
    com = {k: _inertial_origin(urdf, k) for k in links}

    def pin_fext():
        pin.forwardKinematics(model, data, pq)
        pin.updateFramePlacements(model, data)
        fext = pin.StdVec_Force()
        for _ in range(model.njoints):
            fext.append(pin.Force.Zero())
        for k, w in f.items():
            c = data.oMf[frames[k]].act(com[k])
            j = model.frames[frames[k]].parentJoint
            fext[j] += data.oMi[j].actInv(pin.Force(w[:3], w[3:] + np.cross(c, w[:3])))
        return fext

    fixed = pin_fext()
    got = robot.forward_dynamics(q, v, tau, f_ext=f)
    assert np.allclose(pp.v(got), pin.aba(model, data, pq, pv, ptau, fixed), atol=1e-8)
    assert np.allclose(ptau, pin.rnea(model, data, pq, pv, pa, fixed), atol=1e-8)
    return {
        "ID": (lambda: robot.inverse_dynamics(q, v, a, f_ext=f), lambda: robot.inverse_dynamics(q, v, a),
               lambda: pin.rnea(model, data, pq, pv, pa, pin_fext()), lambda: pin.rnea(model, data, pq, pv, pa, fixed)),
        "FD": (lambda: robot.forward_dynamics(q, v, tau, f_ext=f), lambda: robot.forward_dynamics(q, v, tau),
               lambda: pin.aba(model, data, pq, pv, ptau, pin_fext()),
               lambda: pin.aba(model, data, pq, pv, ptau, fixed)),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--number", type=int, default=2000)
    a = ap.parse_args(argv)
    print(machine())
    rng = np.random.default_rng(0)
    print("\n| robot | quantity | composedyn, f_ext | composedyn, no wrench | Pinocchio, world wrenches "
          "| Pinocchio, prepared fext | ratio (same job) | ratio (prepared) |")
    print("|---|---|---|---|---|---|---|---|")
    for key in CASES:
        for quantity, fns in case(key, rng).items():
            t = interleaved(dict(enumerate(fns)), a.number, a.repeat)
            us = [1e6 * t[i] for i in range(4)]
            print(f"| {key} | {quantity} | {us[0]:.1f} | {us[1]:.2f} | {us[2]:.1f} | {us[3]:.2f} | "
                  f"{us[0] / us[2]:.2f} | {us[0] / us[3]:.1f} |")


if __name__ == "__main__":
    main()
