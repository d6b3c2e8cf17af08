"""Time identification of a 7-joint arm and the regressor against Pinocchio, in one run.

    python bench/identify.py [--method physical] [--repeat 200]

The bundled Panda (7 joints) is the prior; the 'real' robot has its link
masses and inertias changed by up to 30 % and random viscous and Coulomb
friction (``tests/ident_sim.py``).  The fit log is a 30 s, 200 Hz excitation
trajectory (``cd.excitation_trajectory``, 5 harmonics of 0.1 Hz) with 1 %
torque noise and 1e-5 rad encoder noise; validation is a different, random
Fourier motion of 10 s.  Printed: the fit time of ``cd.identify`` per method
(compiled kernels warm), the relative RMS torque error of the identified and
of the prior model on the validation log, and the time of one regressor call
(composedyn ``robot.regressor`` and the compiled kernel through
``dispatch.call("regressor", ...)``) against Pinocchio's ``computeJointTorqueRegressor``
on the example-robot-data Panda URDF (fingers as independent joints), the
two timed in alternation, best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

# One BLAS thread: on a shared, loaded machine OpenBLAS's threads made each small LAPACK call
# (QR, SVD, 100 x 100 products) 20-50x slower; set OPENBLAS_NUM_THREADS yourself to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.testing.pinocchio_oracle import PinPair, erd_urdf, pin
from ident_sim import fourier_motion, real_robot, simulated_log


def fit_bench(methods) -> None:
    prior = cd.load("panda")
    real = real_robot(prior)
    t0 = time.perf_counter()
    ex = cd.excitation_trajectory(prior, 30.0, rate=200.0, maxiter=15)
    print(f"excitation trajectory (30 s, 200 Hz, 7 joints, 15 iterations): {time.perf_counter() - t0:.1f} s, "
          f"condition number {ex.condition:.3g}")
    fit = simulated_log(real, ex.t, ex.q, ex.qd, ex.qdd, seed=1)
    val = simulated_log(real, *fourier_motion(prior, 10, 200, seed=2), seed=2)
    cd.identify(prior, fit, method="ols")  # compile / load the kernels
    print("| method | fit time (s) | validation RMS error | prior model's error | condition number |")
    print("|---|---|---|---|---|")
    for m in methods:
        t0 = time.perf_counter()
        res = cd.identify(prior, fit, method=m)
        dt = time.perf_counter() - t0
        v = res.validate(val)
        print(f"| {m} | {dt:.2f} | {100 * v['overall_relative_rms']:.2f} % | "
              f"{100 * v['prior_overall_relative_rms']:.1f} % | {res.condition:.3g} |")


def regressor_bench(repeat: int) -> None:
    path = erd_urdf("panda")
    robot = cd.load(path, mimic="independent")
    pp = PinPair(robot, path)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, robot.dof))
    qp, vp, ap = pp.q(q), pp.v(qd), pp.v(qdd)
    robot.regressor(q, qd, qdd)
    best = {"facade": np.inf, "kernel": np.inf, "pinocchio": np.inf}
    for _ in range(repeat):
        t0 = time.perf_counter()
        robot.regressor(q, qd, qdd)
        t1 = time.perf_counter()
        dispatch.call("regressor", robot.model, robot.arrays, q, qd, qdd)
        t2 = time.perf_counter()
        pin.computeJointTorqueRegressor(pp.model, pp.data, qp, vp, ap)
        t3 = time.perf_counter()
        best = {"facade": min(best["facade"], t1 - t0), "kernel": min(best["kernel"], t2 - t1),
                "pinocchio": min(best["pinocchio"], t3 - t2)}
    p = best["pinocchio"]
    print(f"\nregressor, one call, Panda URDF ({robot.dof} joints, Y {robot.dof} x {10 * robot.dof}), "
          f"best of {repeat}:")
    print("| call | time (us) | / Pinocchio |")
    print("|---|---|---|")
    for k in ("facade", "kernel", "pinocchio"):
        print(f"| {k} | {1e6 * best[k]:.1f} | {best[k] / p:.2f} |")
    Q = rng.normal(size=(3, 6000, robot.dof))
    t0 = time.perf_counter()
    robot.regressor(*Q)
    tb = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in range(6000):
        pin.computeJointTorqueRegressor(pp.model, pp.data, pp.q(Q[0, s]), pp.v(Q[1, s]), pp.v(Q[2, s]))
    tp = time.perf_counter() - t0
    print(f"| batch of 6000 (facade, one call) | {1e6 * tb / 6000:.2f} per sample | "
          f"{tb / tp:.2f} (Pinocchio in a Python loop incl. argument mapping) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--method", action="append", choices=("ols", "wls", "physical"))
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    fit_bench(args.method or ["ols", "wls", "physical"])
    regressor_bench(args.repeat)


if __name__ == "__main__":
    main()
