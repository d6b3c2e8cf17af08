"""Actuator torques of the bundled Delta robot along a pick-and-place cycle, with a plot.

The travelling plate follows the usual pick-and-place test path (Adept cycle): up 25 mm,
across 305 mm, down 25 mm, and back, here 1.0 m below the base with every segment a
minimum-jerk (quintic) motion, 0.4 s for the whole way out and the same back.  The hip angles
come from the Delta's closed-form inverse kinematics (each leg: the elbow on a circle of radius
L about the hip axis must lie at distance l from its plate joint), the torques from
``ClosedChain.inverse_dynamics`` through :func:`composedyn.torque_check.closed_chain.check_closed_trajectory`
(joint velocities and accelerations by spline differentiation of the sampled angles).

    python scripts/delta_pick_and_place.py [--plot delta_pick_and_place.png] [--csv out.csv]

References: R. L. Williams II, "The Delta Parallel Robot: Kinematics Solutions" (2016), for
the inverse kinematics; B. Alikoç et al., "Motion Modelling and Simulation of a 5-Axis Industrial
Delta Robot" (data set testbedCIIRC/delta-robot-public), for the robot (see scripts/make_delta.py);
R. Clavel, "Delta, a fast robot with parallel geometry" (1988).
"""

from __future__ import annotations

import argparse

import numpy as np
from make_delta import L1 as L
from make_delta import L2 as LF
from make_delta import R0 as WB
from make_delta import R3 as WP

import composedyn as cd
from composedyn.torque_check.closed_chain import check_closed_trajectory


def hip_angles(p: np.ndarray) -> np.ndarray:
    """Hip angles (T, 3) (rad, positive = upper arm below the horizontal) for plate positions p (T, 3).

    Leg i lies in the vertical plane at azimuth 2 pi i / 3: in its frame the elbow (the pin's
    midpoint) is at (WB + L cos t, -L sin t) (radial, vertical) and the midpoint of the plate's
    two ball joints (the parallelogram keeps it at distance LF from the pin's) at (r, y, z) with
    r = WP + radial coordinate of p, y its tangential offset; |elbow - joint| = LF gives
    A cos t + B sin t = C, solved for the elbow-out branch.
    """
    out = np.empty(p.shape[:-1] + (3,))
    for i in range(3):
        phi = 2 * np.pi * i / 3
        r = p[..., 0] * np.cos(phi) + p[..., 1] * np.sin(phi) + WP
        y = -p[..., 0] * np.sin(phi) + p[..., 1] * np.cos(phi)
        z = p[..., 2]
        a = WB - r
        A, B = 2 * L * a, 2 * L * z
        C = LF**2 - y**2 - a**2 - z**2 - L**2
        rho, base = np.hypot(A, B), np.arctan2(B, A)
        if np.any(np.abs(C) > rho):
            raise ValueError(f"plate position outside the workspace of leg {i + 1}")
        out[..., i] = np.angle(np.exp(1j * (base + np.arccos(C / rho))))  # elbow-out branch, in (-pi, pi]
    return out


def minimum_jerk(s: np.ndarray) -> np.ndarray:
    return 10 * s**3 - 15 * s**4 + 6 * s**5


def cycle(T: int = 801, duration: float = 0.8, depth: float = -1.0,
          heading: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Times (T,) and plate positions (T, 3): up 25 mm, across 305 mm (horizontal, at ``heading``
    rad from the x axis), down 25 mm, and back."""
    c, s_ = 0.1525 * np.cos(heading), 0.1525 * np.sin(heading)
    way = np.array([[-c, -s_, depth], [-c, -s_, depth + 0.025], [c, s_, depth + 0.025], [c, s_, depth]])
    way = np.concatenate([way, way[-2::-1]])  # and back
    seg = np.array([0.06, 0.28, 0.06, 0.06, 0.28, 0.06]) * duration / 0.8
    knots = np.concatenate([[0.0], np.cumsum(seg)])
    t = np.linspace(0.0, knots[-1], T)
    k = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, len(seg) - 1)
    s = minimum_jerk((t - knots[k]) / seg[k])[:, None]
    return t, way[k] + s * (way[k + 1] - way[k])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plot", metavar="OUT.png", help="plot the hip torques and angles")
    ap.add_argument("--csv", metavar="OUT.csv", help="write t, hip angles, velocities, accelerations, torques")
    args = ap.parse_args(argv)
    delta = cd.load_closed_chain("delta")
    t, p = cycle()
    q = hip_angles(p)
    report = check_closed_trajectory(delta, t, q, source="pick-and-place cycle")
    qa = delta.assemble(q)  # the loop closure reproduces the plate path
    names = delta.all_joint_names
    plate = qa[:, [names.index(j) for j in ("plate_x", "plate_y", "plate_z")]]
    print(f"plate path error after closing the loops: {np.abs(plate - p).max():.2e} m")
    print(report.summary())
    for j, name in enumerate(delta.joint_names):
        print(f"  {name}: peak |torque| {np.abs(report.tau[:, j]).max():.3g} N m, "
              f"peak |speed| {np.abs(report.qd[:, j]).max():.3g} rad/s")
    if args.csv:
        report.to_csv(args.csv)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
        for j, name in enumerate(delta.joint_names):
            ax1.plot(t, report.tau[:, j], label=name)
            ax2.plot(t, np.degrees(q[:, j]), label=name)
        ax1.set_ylabel("hip torque (N m)")
        ax2.set_ylabel("hip angle (deg)")
        ax2.set_xlabel("time (s)")
        ax1.legend()
        ax1.set_title("Delta robot, pick-and-place cycle 25-305-25 mm")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
