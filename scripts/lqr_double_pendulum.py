#!/usr/bin/env python
"""Balance the bundled two-link arm upright (an inverted double pendulum) with LQR.

    python scripts/lqr_double_pendulum.py                          # writes lqr_double_pendulum.png
    python scripts/lqr_double_pendulum.py --out docs/lqr_double_pendulum.png --perturb 0.15

The upright configuration q = (pi/2, 0) (both links pointing up, against
gravity) is an unstable equilibrium: the open-loop linearisation has an
eigenvalue with positive real part.  ``cd.LQRController`` linearises the
dynamics there (``robot.linearize``, analytic derivatives), solves the
continuous Riccati equation, and ``cd.simulate`` integrates the nonlinear
closed loop from a perturbed start.  The plot shows joint angles and torques
with and without the controller.
"""

from __future__ import annotations

import argparse

import numpy as np

import composedyn as cd


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="lqr_double_pendulum.png", help="image file to write")
    ap.add_argument("--perturb", type=float, default=0.1, help="initial angle error of each joint, rad")
    ap.add_argument("--duration", type=float, default=4.0, help="simulated time, s")
    args = ap.parse_args(argv)

    robot = cd.load("two_link")
    q_up = np.array([np.pi / 2, 0.0])
    A, _ = robot.linearize(q_up, np.zeros(2), robot.gravity_torques(q_up))
    ctrl = cd.LQRController(robot, q_up, Q=np.diag([100.0, 100.0, 1.0, 1.0]), R=0.1)
    q0 = q_up + np.array([args.perturb, -args.perturb])
    t = np.linspace(0.0, args.duration, 801)
    closed = cd.simulate(robot, q0, np.zeros(2), t, torque=ctrl, reference=ctrl.reference)
    t_open = t[t <= 1.0]
    open_ = cd.simulate(robot, q0, np.zeros(2), t_open)

    print(f"open-loop eigenvalues:   {np.round(np.linalg.eigvals(A), 3)}")
    print(f"closed-loop eigenvalues: {np.round(ctrl.poles, 3)}")
    print(f"LQR gain K:\n{np.round(ctrl.K, 2)}")
    print(f"final angle error {np.abs(closed.q[-1] - q_up).max():.2e} rad, "
          f"peak torque {np.abs(closed.tau).max():.2f} N m")

    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    fig = Figure(figsize=(8, 6), layout="constrained")
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    for j in range(2):
        ax1.plot(t, closed.q[:, j] - q_up[j], label=f"q{j + 1} - q_up (LQR)")
        ax1.plot(t_open, open_.q[:, j] - q_up[j], "--", label=f"q{j + 1} - q_up (no control)")
        ax2.plot(t, closed.tau[:, j], label=f"tau{j + 1}")
    ax1.set_ylim(-4 * args.perturb - 0.05, 4 * args.perturb + 0.05)
    ax1.set_ylabel("angle from upright, rad")
    ax1.set_title("two_link balanced upright by LQR (continuous Riccati, analytic linearisation)")
    ax1.legend(fontsize=8)
    ax2.set_ylabel("joint torque, N m")
    ax2.set_xlabel("time, s")
    ax2.legend(fontsize=8)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
