"""Throughput of the PyTorch and JAX front ends against composedyn's compiled batch, in one run.

    python bench/tensors.py [--batch 4096] [--repeat 5] [--robot panda] [--quick]

For a batch of ``--batch`` random states of the bundled 7-DOF Panda: inverse dynamics
(ID), mass matrix (M), forward dynamics (FD), and their gradients (reverse mode: the
gradient of the batch's summed output with respect to every state input, one
backward pass), on

- composedyn's compiled batch (``robot.inverse_dynamics(Q, QD, QDD)`` ...; gradients:
  the analytic ``inverse_dynamics_derivatives`` / ``forward_dynamics_derivatives``,
  full Jacobians);
- ``robot.to_torch()`` in float64 and float32 on the CPU, and on CUDA when a device
  is present (the run says when there is none);
- ``robot.to_jax()`` under ``jax.jit`` in float64 and float32 (gradients: ``jax.jit(jax.grad(...))``);
- ADAM (``adam-robotics``) where installed (the run says when it is not).

Prints microseconds per sample, the ratio to the compiled batch (targets: ID and M
within 10x on the CPU in float64) and the ratio of each gradient to its forward pass
(target: within 3x), and, on CUDA, inverse dynamics per second in float32 (target
>= 1e6).  Medians of interleaved repeats (the machine may be shared).  By default every
contender runs on one core (``--threads``): the compiled batch would otherwise take both
cores of an idle machine and XLA its thread pool, while torch keeps one thread.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile

import numpy as np

import composedyn as cd
from timing import interleaved, machine


def states(robot, batch: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, batch, robot.dof))
    tau = robot.inverse_dynamics(q, qd, qdd)
    return {"q": q, "qd": qd, "qdd": qdd, "tau": tau}


def compiled(robot, st: dict) -> dict:
    q, qd, qdd, tau = st["q"], st["qd"], st["qdd"], st["tau"]
    return {
        "ID": lambda: robot.inverse_dynamics(q, qd, qdd),
        "M": lambda: robot.mass_matrix(q),
        "FD": lambda: robot.forward_dynamics(q, qd, tau),
        "dID": lambda: robot.inverse_dynamics_derivatives(q, qd, qdd),
        "dFD": lambda: robot.forward_dynamics_derivatives(q, qd, tau),
    }


def torch_calls(robot, st: dict, dtype, device) -> dict:
    import torch

    td = robot.to_torch(device=device, dtype=dtype)
    q, qd, qdd, tau = (torch.tensor(st[k], dtype=dtype, device=device) for k in ("q", "qd", "qdd", "tau"))
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)

    def run(f):
        def call():
            with torch.no_grad():
                f()
            sync()
        return call

    def grad(f, *xs):
        def call():
            xs_ = [x.detach().requires_grad_() for x in xs]
            f(*xs_).sum().backward()
            sync()
        return call

    return {
        "ID": run(lambda: td.inverse_dynamics(q, qd, qdd)),
        "M": run(lambda: td.mass_matrix(q)),
        "FD": run(lambda: td.forward_dynamics(q, qd, tau)),
        "dID": grad(td.inverse_dynamics, q, qd, qdd),
        "dM": grad(td.mass_matrix, q),
        "dFD": grad(td.forward_dynamics, q, qd, tau),
    }


def jax_calls(robot, st: dict, dtype) -> dict:
    import jax
    import jax.numpy as jnp

    jd = robot.to_jax()
    q, qd, qdd, tau = (jnp.asarray(st[k], dtype=dtype) for k in ("q", "qd", "qdd", "tau"))

    def run(f, *xs):
        g = jax.jit(f)
        return lambda: g(*xs).block_until_ready()

    def grad(f, *xs):
        g = jax.jit(jax.grad(lambda *a: jnp.sum(f(*a)), argnums=tuple(range(len(xs)))))
        return lambda: jax.block_until_ready(g(*xs))

    return {
        "ID": run(jd.inverse_dynamics, q, qd, qdd),
        "M": run(jd.mass_matrix, q),
        "FD": run(jd.forward_dynamics, q, qd, tau),
        "dID": grad(jd.inverse_dynamics, q, qd, qdd),
        "dM": grad(jd.mass_matrix, q),
        "dFD": grad(jd.forward_dynamics, q, qd, tau),
    }


def adam_calls(robot, st: dict, dtype, device, folder: str) -> dict:
    """ADAM's batched PyTorch computations on the same robot (its URDF export) with a fixed base:
    identity base pose, zero base velocity; ID = M[6:, 6:] qdd + h[6:] (ADAM has no inverse dynamics
    with accelerations).  No FD: ADAM's ABA is for a floating base only (it inverts the base's
    articulated inertia, singular for a massless base link).  Checked against composedyn before timing."""
    import os

    import torch
    from adam.pytorch import KinDynComputationsBatch

    path = robot.to_urdf(os.path.join(folder, f"{robot.name}.urdf"))
    gravity = torch.tensor([*robot.model.gravity, 0.0, 0.0, 0.0], dtype=dtype, device=device)
    kd = KinDynComputationsBatch(str(path), list(robot.joint_names), device=torch.device(device), dtype=dtype,
                                 gravity=gravity)
    q, qd, qdd = (torch.tensor(st[k], dtype=dtype, device=device) for k in ("q", "qd", "qdd"))
    batch = q.shape[0]
    H = torch.eye(4, dtype=dtype, device=device).expand(batch, 4, 4)
    z6 = torch.zeros(batch, 6, dtype=dtype, device=device)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)

    def ID(q, qd, qdd):
        M = kd.mass_matrix(H, q)[:, 6:, 6:]
        return (M @ qdd[..., None])[..., 0] + kd.bias_force(H, q, z6, qd)[:, 6:]

    def M(q):
        return kd.mass_matrix(H, q)[:, 6:, 6:]

    want = robot.inverse_dynamics(st["q"], st["qd"], st["qdd"], friction=False)
    err = float(np.max(np.abs(ID(q, qd, qdd).detach().cpu().numpy() - want)))
    print(f"ADAM ({dtype}, {device}): inverse dynamics differ from composedyn's (friction off) by {err:.2g} N m")

    def run(f, *xs):
        def call():
            with torch.no_grad():
                f(*xs)
            sync()
        return call

    def grad(f, *xs):
        def call():
            f(*[x.detach().requires_grad_() for x in xs]).sum().backward()
            sync()
        return call

    return {"ID": run(ID, q, qd, qdd), "M": run(M, q), "dID": grad(ID, q, qd, qdd), "dM": grad(M, q)}


def table(results: dict, batch: int) -> None:
    """Microseconds per sample, ratio to the compiled batch, and gradient / forward ratios."""
    quantities = ("ID", "M", "FD", "dID", "dM", "dFD")
    base = results["compiled"]
    print("| contender | " + " | ".join(f"{k} µs/sample" for k in quantities) + " | ID / compiled | M / compiled"
          " | FD / compiled | dID / ID | dM / M | dFD / FD |")
    print("|---" * (len(quantities) + 7) + "|")
    for name, t in results.items():
        us = [f"{1e6 * t[k] / batch:.3g}" if k in t else "-" for k in quantities]
        vs = [f"{t[k] / base[k]:.2f}" if k in t else "-" for k in ("ID", "M", "FD")]
        grads = [f"{t['d' + k] / t[k]:.2f}" if "d" + k in t and k in t else "-" for k in ("ID", "M", "FD")]
        print(f"| {name} | " + " | ".join(us + vs + grads) + " |")
    print("\n(compiled gradients: the analytic full Jacobians of ID and FD; the front ends': one "
          "reverse-mode gradient of the summed batch output with respect to every input)")


def one_core(threads: int) -> None:
    """With ``threads`` = 1, pin this process to one core and keep the compiled batch on its serial
    loop, so that every contender computes on one core (the per-core comparison of the targets);
    with more, on that many cores (the compiled batch's parallel loop when the load allows)."""
    import os

    if not threads or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))[:threads]
    os.sched_setaffinity(0, cores)
    if threads == 1:
        from composedyn.dynamics.compiled import parallel

        parallel.PARALLEL_WORK = float("inf")
    print(f"Pinned to core(s) {cores}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--robot", default="panda")
    ap.add_argument("--threads", type=int, default=1,
                    help="cores for every contender (default 1: the process is pinned to one core, the "
                         "compiled batch runs its serial loop, torch one intra-op thread; XLA's threads "
                         "share the core).  0: no pinning, each library's own default")
    ap.add_argument("--quick", action="store_true", help="batch 512, 2 repeats (smoke run)")
    a = ap.parse_args(argv)
    if a.quick:
        a.batch, a.repeat = 512, 2
    print(f"Machine: {machine()}")
    one_core(a.threads)
    robot = cd.load(a.robot)
    robot.warm_up(batch=True)
    folder = tempfile.TemporaryDirectory()
    st = states(robot, a.batch)
    print(f"Robot: {robot.name} ({robot.dof} DOF), batch {a.batch}, medians of {a.repeat} interleaved repeats\n")
    contenders = {"compiled": compiled(robot, st)}
    if importlib.util.find_spec("torch") is not None:
        import torch

        if a.threads:
            torch.set_num_threads(a.threads)
        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
        contenders["torch float64 CPU"] = torch_calls(robot, st, torch.float64, "cpu")
        contenders["torch float32 CPU"] = torch_calls(robot, st, torch.float32, "cpu")
        if torch.cuda.is_available():
            name = torch.cuda.get_device_name()
            contenders[f"torch float64 CUDA ({name})"] = torch_calls(robot, st, torch.float64, "cuda")
            contenders[f"torch float32 CUDA ({name})"] = torch_calls(robot, st, torch.float32, "cuda")
        else:
            print("CUDA: no CUDA device on this machine; the GPU target (>= 1e6 ID/s in float32) is not measured")
    else:
        print("PyTorch: not installed (pip install \"composedyn[torch]\")")
    if importlib.util.find_spec("jax") is not None:
        import jax

        jax.config.update("jax_enable_x64", True)
        print(f"JAX {jax.__version__}, devices {jax.devices()}")
        contenders["jax float64"] = jax_calls(robot, st, "float64")
        contenders["jax float32"] = jax_calls(robot, st, "float32")
    else:
        print("JAX: not installed (pip install \"composedyn[jax]\")")
    if importlib.util.find_spec("adam") is None:
        print("ADAM: adam-robotics is not installed; not compared (pip install adam-robotics)")
    elif importlib.util.find_spec("torch") is not None:
        import torch

        contenders["ADAM torch float64 CPU"] = adam_calls(robot, st, torch.float64, "cpu", folder.name)
        contenders["ADAM torch float32 CPU"] = adam_calls(robot, st, torch.float32, "cpu", folder.name)
        if torch.cuda.is_available():
            contenders["ADAM torch float32 CUDA"] = adam_calls(robot, st, torch.float32, "cuda", folder.name)
    print()
    flat = {(c, k): f for c, calls in contenders.items() for k, f in calls.items()}
    times = interleaved(flat, number=1, repeat=a.repeat)
    results: dict = {c: {} for c in contenders}
    for (c, k), t in times.items():
        results[c][k] = t
    table(results, a.batch)
    for c, t in results.items():
        if "CUDA" in c and "float32" in c:
            print(f"\n{c}: {a.batch / t['ID']:.3g} inverse dynamics per second at batch {a.batch} (target >= 1e6)")
    if "torch float32 CUDA" in " ".join(results):
        import torch

        big = states(robot, 16 * a.batch, seed=1)
        call = torch_calls(robot, big, torch.float32, "cuda")["ID"]
        t = interleaved({"ID": call}, number=3, repeat=a.repeat)["ID"]
        print(f"torch float32 CUDA: {16 * a.batch / t:.3g} inverse dynamics per second at batch {16 * a.batch}")
    best = results.get("torch float64 CPU")
    if best is not None:
        print(f"\nTargets (CPU, float64, torch): ID {best['ID'] / results['compiled']['ID']:.2f}x and "
              f"M {best['M'] / results['compiled']['M']:.2f}x the compiled batch (target <= 10); gradients "
              f"{best['dID'] / best['ID']:.2f}x (ID), {best['dM'] / best['M']:.2f}x (M), "
              f"{best['dFD'] / best['FD']:.2f}x (FD) their forward pass (target <= 3)")
    jx = results.get("jax float64")
    if jx is not None:
        print(f"Targets (CPU, float64, jax): ID {jx['ID'] / results['compiled']['ID']:.2f}x and "
              f"M {jx['M'] / results['compiled']['M']:.2f}x the compiled batch; gradients "
              f"{jx['dID'] / jx['ID']:.2f}x (ID), {jx['dM'] / jx['M']:.2f}x (M), {jx['dFD'] / jx['FD']:.2f}x (FD)")


if __name__ == "__main__":
    main()
