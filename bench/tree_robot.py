"""Robots with joints of several coordinates (``TreeRobot``) against Pinocchio, measured in one run.

    python bench/tree_robot.py [--batch 10000] [--repeat 15] [--number 2000] [--derivative-batch 10000]

Prints Markdown tables (paste them into ``docs/performance.md``, section "Joints with several
coordinates", with the machine line):

1. per call through the public methods, as ratios to Pinocchio called from Python on the model built
   from the same kinematic graph with its own joint models (``testing.pinocchio_trees.graph_pinocchio``):
   ``inverse_dynamics`` (ID) / ``rnea``, ``mass_matrix`` (M) / ``crba``, ``forward_dynamics`` (FD) /
   ``aba``, ``jacobian`` (world axes, last frame) / ``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``);
   ratio < 1: composedyn faster.  Robots: a free-floating humanoid with ball hips, shoulders and ankles
   (MJCF, below) and a random tree over every joint kind (``random_joint_graph``);
2. batches of ``--batch`` samples in one call (two cores) against a Pinocchio Python loop, as speed-ups;
3. the derivatives of inverse and forward dynamics (``inverse_dynamics_derivatives``,
   ``forward_dynamics_derivatives``: the compiled kernels' general form, every joint's columns) against
   ``computeRNEADerivatives`` / ``computeABADerivatives``: one sample per call, and a batch of
   ``--derivative-batch`` samples in one call against a Pinocchio Python loop (µs per sample).

Medians of interleaved repeats (the machine may be shared).  Speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import composedyn as cd
from composedyn.testing.pinocchio_trees import graph_pinocchio, pin, random_joint_graph
from timing import forced, interleaved, machine

HUMANOID = """<mujoco model="humanoid"><worldbody><body name="torso" pos="0 0 1.3"><freejoint name="root"/>
  <geom type="capsule" fromto="0 -.07 0 0 .07 0" size=".07" mass="8"/>
  <body name="pelvis" pos="0 0 -0.4"><joint name="abdomen" type="ball"/><geom type="sphere" size=".09" mass="6"/>
  {legs}
  </body>{arms}</body></worldbody></mujoco>"""
LEG = """<body name="thigh_{s}" pos="0 {y} -0.04"><joint name="hip_{s}" type="ball"/>
    <geom type="capsule" fromto="0 0 0 0 0 -.34" size=".06" mass="4.5"/>
    <body name="shin_{s}" pos="0 0 -0.4"><joint name="knee_{s}" type="hinge" axis="0 -1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".05" mass="2.6"/>
      <body name="foot_{s}" pos="0 0 -0.35"><joint name="ankle_{s}" type="ball"/>
        <geom type="box" size=".1 .05 .02" mass="1"/></body></body></body>"""
ARM = """<body name="upper_arm_{s}" pos="0 {y} 0.06"><joint name="shoulder_{s}" type="ball"/>
    <geom type="capsule" fromto="0 0 0 0 {y} -.25" size=".04" mass="1.6"/>
    <body name="lower_arm_{s}" pos="0 {y} -0.28"><joint name="elbow_{s}" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .2 0 0" size=".03" mass="1.1"/></body></body>"""


def humanoid():
    xml = HUMANOID.format(legs="".join(LEG.format(s=s, y=y) for s, y in (("r", -0.1), ("l", 0.1))),
                          arms="".join(ARM.format(s=s, y=y) for s, y in (("r", -0.17), ("l", 0.17))))
    return cd.from_mjcf(xml)


class Pair:
    """The robot and Pinocchio's model of its graph, coordinates matched by joint name."""

    def __init__(self, robot):
        self.robot = robot
        self.model, self.where = graph_pinocchio(nx_graph(robot))
        self.data = self.model.createData()
        ids = [self.model.joints[self.model.getJointId(j.name)] for j in robot.joints]
        self.iq = np.concatenate([np.arange(m.idx_q, m.idx_q + j.nq) for m, j in zip(ids, robot.joints)])
        self.iv = np.concatenate([np.arange(m.idx_v, m.idx_v + j.nv) for m, j in zip(ids, robot.joints)])

    def q(self, q):
        out = np.zeros(q.shape[:-1] + (self.model.nq,))
        out[..., self.iq] = q
        return out

    def v(self, v):
        out = np.zeros(v.shape[:-1] + (self.model.nv,))
        out[..., self.iv] = v
        return out


def nx_graph(robot):
    """The robot's graph as a networkx graph Pinocchio's builder can walk (a copy)."""
    import networkx as nx

    g = nx.DiGraph(robot.graph)
    g.graph.update(robot.graph.graph)
    g.graph.setdefault("gravity", robot.array_model.gravity)
    return g


def per_call(pp, rng, number, repeat):
    robot, m, d = pp.robot, pp.model, pp.data
    q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
    v, a = rng.uniform(-1, 1, (2, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    pq, pv, pa, pt = pp.q(q), pp.v(v), pp.v(a), pp.v(tau)
    frame = robot.frame_names[-1]
    jid, X = pp.where[frame]
    fid = m.addFrame(pin.Frame("bench_frame", jid, 0, X, pin.FrameType.OP_FRAME)) \
        if not m.existFrame("bench_frame") else m.getFrameId("bench_frame")
    pp.data = d = m.createData()
    pairs = {
        "ID": (lambda: robot.inverse_dynamics(q, v, a), lambda: pin.rnea(m, d, pq, pv, pa)),
        "M": (lambda: robot.mass_matrix(q), lambda: pin.crba(m, d, pq)),
        "FD": (lambda: robot.forward_dynamics(q, v, tau), lambda: pin.aba(m, d, pq, pv, pt)),
        "J": (lambda: robot.jacobian(q, frame),
              lambda: pin.computeFrameJacobian(m, d, pq, fid, pin.LOCAL_WORLD_ALIGNED)),
    }
    out = {}
    for k, (ours, theirs) in pairs.items():
        t = interleaved({"ours": ours, "pin": theirs}, number, repeat)
        out[k] = (t["ours"], t["pin"])
    return out


def pin_loop(m, d):
    """loop(f, *arrays): a callable running Pinocchio's ``f(m, d, *row)`` over the rows of the arrays."""
    return lambda f, *arrays: (lambda: [f(m, d, *row) for row in zip(*arrays)])


def batch(pp, rng, N, repeat):
    robot, m, d = pp.robot, pp.model, pp.data
    q = robot.random_configuration(size=N, seed=int(rng.integers(1 << 30)))
    v, a = rng.uniform(-1, 1, (2, N, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    pq, pv, pa, pt = pp.q(q), pp.v(v), pp.v(a), pp.v(tau)

    loop = pin_loop(m, d)
    pairs = {"ID": (lambda: robot.inverse_dynamics(q, v, a), loop(pin.rnea, pq, pv, pa)),
             "M": (lambda: robot.mass_matrix(q), loop(pin.crba, pq)),
             "FD": (lambda: robot.forward_dynamics(q, v, tau), loop(pin.aba, pq, pv, pt))}
    out = {}
    for k, (ours, theirs) in pairs.items():
        t = interleaved({"ours": forced(ours, 0, -np.inf), "pin": theirs}, 1, repeat)
        out[k] = (t["ours"], t["pin"])
    return out


def derivatives(pp, rng, N, repeat):
    """(composedyn, Pinocchio) seconds: d ID and d FD for one sample and for a batch of N."""
    robot, m, d = pp.robot, pp.model, pp.data
    out = {}
    for n in (1, N):
        q = robot.random_configuration(size=n, seed=int(rng.integers(1 << 30)))
        v, a = rng.uniform(-1, 1, (2, n, robot.nv))
        tau = robot.inverse_dynamics(q, v, a)
        pq, pv, pa, pt = pp.q(q), pp.v(v), pp.v(a), pp.v(tau)
        if n == 1:  # one sample: unbatched arrays (a batch of one takes the batch path)
            q, v, a, tau = q[0], v[0], a[0], tau[0]
        loop = pin_loop(m, d)
        pairs = {"d ID": (lambda: robot.inverse_dynamics_derivatives(q, v, a),
                          loop(pin.computeRNEADerivatives, pq, pv, pa)),
                 "d FD": (lambda: robot.forward_dynamics_derivatives(q, v, tau),
                          loop(pin.computeABADerivatives, pq, pv, pt))}
        for k, (ours, theirs) in pairs.items():
            t = interleaved({"ours": ours, "pin": theirs}, 1 if n > 1 else 20, repeat)
            out[k, n] = (t["ours"] / n, t["pin"] / n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--derivative-batch", type=int, default=10000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(machine())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robots = {"humanoid, ball joints (MJCF)": humanoid(), "random tree, every kind": cd.from_graph(
            random_joint_graph(0, bodies=14))}
    rows_call, rows_batch, rows_der = [], [], []
    for label, robot in robots.items():
        pp = Pair(robot)
        robot.warm_up()
        name = f"{label} (nq {robot.nq}, nv {robot.nv})"
        pc = per_call(pp, rng, args.number, args.repeat)
        rows_call.append(f"| {name} | " + " | ".join(
            f"{pc[k][0] * 1e6:.2f} µs / {pc[k][1] * 1e6:.2f} µs = **{pc[k][0] / pc[k][1]:.2f}x**" for k in pc) + " |")
        bt = batch(pp, rng, args.batch, max(5, args.repeat // 3))
        rows_batch.append(f"| {name} | " + " | ".join(
            f"{bt[k][0] * 1e3:.1f} ms vs {bt[k][1] * 1e3:.1f} ms = **{bt[k][1] / bt[k][0]:.1f}x**" for k in bt) + " |")
        dr = derivatives(pp, rng, args.derivative_batch, max(3, args.repeat // 5))
        rows_der.append(f"| {name} | " + " | ".join(
            f"{dr[k][0] * 1e6:.1f} µs / {dr[k][1] * 1e6:.1f} µs = **{dr[k][0] / dr[k][1]:.2f}x**" for k in dr) + " |")
    print("\nPer call (composedyn / Pinocchio; < 1: composedyn faster)\n")
    print("| robot | ID (rnea) | M (crba) | FD (aba) | jacobian (last frame) |\n|---|---|---|---|---|")
    print("\n".join(rows_call))
    print(f"\nBatch of {args.batch} samples: one composedyn call (two cores) vs a Pinocchio Python loop (speed-up)\n")
    print("| robot | ID | M | FD |\n|---|---|---|---|")
    print("\n".join(rows_batch))
    print("\nDerivatives, µs per sample (composedyn / Pinocchio): one sample per call; a batch of "
          f"{args.derivative_batch} in one call vs a Pinocchio Python loop\n")
    print("| robot | d ID, one sample | d FD, one sample | d ID, batch | d FD, batch |\n|---|---|---|---|---|")
    print("\n".join(rows_der))


if __name__ == "__main__":
    main()
