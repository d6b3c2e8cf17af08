#!/usr/bin/env python
"""Operational-space tracking of a circle by a robot's end frame, with a plot.

    python scripts/task_space_tracking.py [--robot panda] [--frame flange]
                                          [--duration 3] [--model-error 0.0] [--out task_space_tracking.png]

The target: the frame's start pose moved around a horizontal circle (radius
``--radius``, one turn in ``--period`` s), orientation held.  The arm starts at
rest 2 cm off the circle; :class:`composedyn.OperationalSpaceController`
(kp = 64 1/s^2, kd = 16 1/s, critically damped, null-space posture = the start)
drives it, built on the exact model or on one with ``--model-error`` mass error,
and :func:`composedyn.simulate` integrates the true robot.  Prints the error at
the start and the end and writes a plot of the position and orientation errors
(log scale, with the predicted decay (|e0| + |edot0| t) exp(-8 t) of the exact model) and of the
joint torques.
"""

from __future__ import annotations

import argparse

import numpy as np

import composedyn as cd
from composedyn.torque_check.plotting import require_matplotlib


def circle(T0: np.ndarray, radius: float, period: float):
    """reference(t) -> (pose (4, 4), twist (6,), acceleration (6,)) around a horizontal circle."""
    c, om = T0[:3, 3].copy(), 2 * np.pi / period

    def reference(t):
        cs, sn = np.cos(om * t), np.sin(om * t)
        T = T0.copy()
        T[:3, 3] = c + radius * np.array([cs - 1.0, sn, 0.0])
        v = radius * om * np.array([-sn, cs, 0.0])
        a = -radius * om * om * np.array([cs, sn, 0.0])
        return T, np.r_[v, np.zeros(3)], np.r_[a, np.zeros(3)]

    return reference


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="panda")
    ap.add_argument("--frame", default=None, help="controlled frame (default: the last of robot.frame_names)")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--radius", type=float, default=0.08)
    ap.add_argument("--period", type=float, default=2.0)
    ap.add_argument("--model-error", type=float, default=0.0, help="relative mass error of the controller's model")
    ap.add_argument("--out", default="task_space_tracking.png")
    args = ap.parse_args()
    robot = cd.load(args.robot)
    frame = args.frame or robot.frame_names[-1]
    lim = robot.limits
    q0 = np.clip(np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7])[:robot.dof] if robot.dof == 7 else
                 np.full(robot.dof, 0.3), lim["lower"], lim["upper"])
    reference = circle(robot.frame_pose(q0, frame), args.radius, args.period)
    start = reference(0.0)[0].copy()
    start[:3, 3] += [0.02, 0.0, -0.01]
    q_start = robot.inverse_kinematics(frame, start, q0=q0).q
    model = robot if args.model_error == 0 else robot.perturbed(args.model_error)
    w = 8.0
    ctrl = cd.OperationalSpaceController(model, frame, kp=w * w, kd=2 * w, posture=q_start, damping=1e-4)
    t = np.linspace(0.0, args.duration, 301)
    sim = cd.simulate(robot, q_start, np.zeros(robot.dof), t, torque=ctrl, reference=reference, friction=False)
    E = np.array([ctrl.error(q, reference(tt)[0]) for tt, q in zip(t, sim.q)])
    ep, er = np.linalg.norm(E[:, :3], axis=1), np.linalg.norm(E[:, 3:], axis=1)
    print(f"{robot.name} frame {frame}: position error {ep[0]:.3g} m -> {ep[-1]:.3g} m, "
          f"orientation error {er[0]:.3g} rad -> {er[-1]:.3g} rad after {args.duration:g} s")
    ed0 = np.linalg.norm(reference(0.0)[1][:3])
    Figure = require_matplotlib()
    fig = Figure(figsize=(9, 6), layout="constrained")
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    ax1.semilogy(t, np.maximum(ep, 1e-16), label="position error |p_d - p| (m)")
    ax1.semilogy(t, np.maximum(er, 1e-16), label="orientation error |log(R_d R^T)| (rad)")
    ax1.semilogy(t, (ep[0] + (w * ep[0] + ed0) * t) * np.exp(-w * t), "k--", lw=0.8,
                 label="bound (|e0| (1 + wt) + |edot0| t) exp(-wt), w = 8/s")
    ax1.set_ylabel("task error")
    ax1.legend(fontsize=8)
    ax1.set_title(f"{robot.name}: operational-space tracking of a circle by {frame}"
                  + (f" (model mass error {args.model_error:g})" if args.model_error else " (exact model)"))
    ax2.plot(t, sim.tau)
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("joint torque (N m)")
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
