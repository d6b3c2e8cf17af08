"""Simulated identification logs: a 'real' robot differing from its description (changed
masses and inertias, viscous and Coulomb friction) driven along a trajectory, with torque
noise (a share of each joint's RMS torque) and encoder noise on the positions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import composedyn as cd


def real_robot(prior, scale: float = 0.3, seed: int = 1):
    """``prior`` with every link's mass and inertia scaled by up to ``scale`` and random friction."""
    g = prior.perturbed(scale, seed=seed).graph.copy()
    rng = np.random.default_rng(seed)
    for _, _, d in g.edges(data=True):
        if d["type"] != "fixed":
            d["damping"], d["friction"] = float(rng.uniform(0.1, 1.0)), float(rng.uniform(0.1, 2.0))
    return cd.from_graph(g)


def fourier_motion(robot, duration: float, rate: float, seed: int, harmonics: int = 4, base_frequency: float = 0.2,
                   amplitude: float = 0.35):
    """A random (not optimised) finite Fourier series around mid-range, each harmonic's position
    amplitude at most ``amplitude`` / harmonics (rad or m): t, q, qd, qdd."""
    from composedyn.identification.excitation import fourier

    rng = np.random.default_rng(seed)
    n = robot.dof
    lo, hi = robot.limits["lower"], robot.limits["upper"]
    finite = np.isfinite(lo) & np.isfinite(hi)
    q0 = np.where(finite, 0.5 * (np.where(finite, lo, 0.0) + np.where(finite, hi, 0.0)), 0.0)
    wl = 2 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    a, b = rng.uniform(-1, 1, (2, n, harmonics)) * (amplitude * wl / harmonics)
    t = np.arange(int(duration * rate) + 1) / rate
    return (t, *fourier(t, a, b, q0, base_frequency))


def simulated_log(real, t, q, qd, qdd, seed: int, torque_noise: float = 0.01, encoder_noise: float = 1e-5,
                  joint_names=None):
    """A log object (t, joint_names, q, qd=None, effort) of ``real`` along (q, qd, qdd)."""
    rng = np.random.default_rng(seed)
    tau = real.inverse_dynamics(q, qd, qdd)
    tau = tau + torque_noise * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.normal(size=tau.shape)
    qm = q + encoder_noise * rng.normal(size=q.shape)
    return SimpleNamespace(t=t, joint_names=tuple(joint_names or real.joint_names), q=qm, qd=None, effort=tau,
                           source=f"simulated-{seed}")


def write_log_csv(log, path) -> str:
    """The log as a trajectory CSV with <joint>_effort columns."""
    header = ["time", *log.joint_names, *(j + "_effort" for j in log.joint_names)]
    np.savetxt(path, np.column_stack([log.t, log.q, log.effort]), delimiter=",", header=",".join(header),
               comments="", fmt="%.17g")
    return str(path)
