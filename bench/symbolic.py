#!/usr/bin/env python
"""Time the symbolic derivation of full M(q), C(q, qd), g(q): composedyn's
composed vectors against ``sympy.physics.mechanics.LagrangesMethod`` on the
same robots (PUMA 560 and the planar 3R arm), in the same run.

    python bench/symbolic.py [--timeout 600] [--robots puma560 planar3r]

LagrangesMethod is given exactly the same numbers (the same symbolic chain),
builds the Lagrangian from the links' velocities and forms its equations
(``form_lagranges_equations`` + ``mass_matrix`` + ``forcing``); it runs in a
subprocess and is stopped after ``--timeout`` seconds (reported as "> T s").
Both results are checked numerically against the robot's numeric dynamics.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
import warnings

import numpy as np
import sympy as sp

from composedyn.dynamics.joint_types import PRISMATIC


def ours(name: str, simplify: str):
    """(wall s, cpu s, equations) of composedyn's derivation of M, C, g."""
    import composedyn as cd

    robot = cd.load(name)
    t0, c0 = time.perf_counter(), time.process_time()
    eq = cd.symbolic.equations(robot, simplify=simplify)
    return time.perf_counter() - t0, time.process_time() - c0, eq


def lagranges_method(name: str):
    """M and forcing (= -(C qd + g)) of ``name`` with sympy.physics.mechanics; returns (seconds, M, F, q, u)."""
    import sympy.physics.mechanics as me

    import composedyn as cd
    from composedyn.dynamics.symbolic import chain_from_model

    chain = chain_from_model(cd.load(name).model)
    t0, c0 = time.perf_counter(), time.process_time()
    n = chain.n
    q = me.dynamicsymbols(f"q1:{n + 1}")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frames, origins, bodies = [], [], []
    gvec = sum((chain.gravity[k] * v for k, v in enumerate((N.x, N.y, N.z))), me.Vector(0))
    for i in range(n):
        k = chain.parent[i]
        Fp, Op = (N, O) if k < 0 else (frames[k], origins[k])
        T = chain.tree[i]
        J = me.ReferenceFrame(f"J{i + 1}")
        J.orient_explicit(Fp, T[:3, :3])  # Fp.dcm(J) = tree rotation
        ax = sum((chain.axis[i][j] * v for j, v in enumerate((J.x, J.y, J.z))), me.Vector(0))
        tp = sum((T[j, 3] * v for j, v in enumerate((Fp.x, Fp.y, Fp.z))), me.Vector(0))
        if chain.jtype[i] == PRISMATIC:
            B = J
            Oi = Op.locatenew(f"O{i + 1}", tp + q[i] * ax)
            Oi.set_vel(N, Oi.pos_from(O).dt(N))
        else:
            B = J.orientnew(f"B{i + 1}", "Axis", (q[i], ax))
            Oi = Op.locatenew(f"O{i + 1}", tp)
            Oi.v2pt_theory(Op, N, Fp)
        c = sum((chain.com[i][j] * v for j, v in enumerate((B.x, B.y, B.z))), me.Vector(0))
        Ci = Oi.locatenew(f"C{i + 1}", c)
        Ci.v2pt_theory(Oi, N, B)
        I = chain.inertia[i]
        body = me.RigidBody(f"b{i + 1}", Ci, B, chain.mass[i],
                            (me.inertia(B, I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[0, 2]), Ci))
        body.potential_energy = -chain.mass[i] * gvec.dot(Ci.pos_from(O))
        frames.append(B), origins.append(Oi), bodies.append(body)
    lm = me.LagrangesMethod(me.Lagrangian(N, *bodies), q)
    lm.form_lagranges_equations()
    M, F = lm.mass_matrix, lm.forcing
    return (time.perf_counter() - t0, time.process_time() - c0), M, F, q


def _lm_worker(name, conn):
    dt, M, F, q = lagranges_method(name)
    t = me_t()
    qs = sp.symbols(f"x1:{len(q) + 1}")
    us = sp.symbols(f"u1:{len(q) + 1}")
    sub = {**{x.diff(t): u for x, u in zip(q, us)}}
    fM = sp.lambdify([qs], M.xreplace(sub).xreplace(dict(zip(q, qs))))
    fF = sp.lambdify([qs, us], F.xreplace(sub).xreplace(dict(zip(q, qs))))
    rng = np.random.default_rng(0)
    x, u = rng.normal(size=len(q)), rng.normal(size=len(q))
    conn.send((dt, x, u, np.array(fM(x), float), np.array(fF(x, u), float).ravel()))


def me_t():
    import sympy.physics.mechanics as me

    return me.dynamicsymbols._t


def run_lm(name: str, timeout: float):
    parent, child = mp.Pipe(duplex=False)
    p = mp.Process(target=_lm_worker, args=(name, child))
    t0 = time.perf_counter()
    p.start()
    ok = parent.poll(timeout)
    if not ok:
        p.terminate()
        p.join()
        return None, (time.perf_counter() - t0, float("nan"))
    out = parent.recv()
    p.join()
    return out, out[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["puma560", "planar3r"])
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed to LagrangesMethod")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import composedyn as cd

    print(f"sympy {sp.__version__}; {mp.cpu_count()} cpus; seconds as wall / cpu (the machine may be shared)")
    print(f"{'robot':10s} {'composed, normal form':>22s} {'composed, trig simp.':>22s} "
          f"{'LagrangesMethod':>18s} {'ratio LM/ours (wall, cpu)':>26s}")
    for name in args.robots:
        robot = cd.load(name)
        w_none, c_none, eq = ours(name, "none")
        w_trig, c_trig, _ = ours(name, "trig")
        f = eq.functions()
        lm, (w_lm, c_lm) = run_lm(name, args.timeout)
        check = ""
        if lm is not None:
            _, x, u, Mlm, Flm = lm
            err = max(np.abs(Mlm - robot.mass_matrix(x) + np.diag(robot.model.armature)).max(),
                      np.abs(-Flm - robot.bias_torques(x, u)).max())
            check = f"; LM vs numeric {err:.1e}"
        q = np.random.default_rng(1).normal(size=(3, robot.dof))
        err_ours = np.abs(f["M"](q) - robot.mass_matrix(q)).max()
        if lm is not None:
            lm_txt, ratio = f"{w_lm:.1f} / {c_lm:.1f}", f"{w_lm / w_none:.1f}, {c_lm / c_none:.1f}"
        else:
            lm_txt, ratio = f"> {args.timeout:.0f} wall", f"> {args.timeout / w_none:.1f}"
        print(f"{name:10s} {f'{w_none:.2f} / {c_none:.2f}':>22s} {f'{w_trig:.2f} / {c_trig:.2f}':>22s} "
              f"{lm_txt:>18s} {ratio:>26s}   (ours vs numeric {err_ours:.1e}{check})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
