"""``robot.to_torch()``: the Robot's methods on torch tensors.

Every value is compared with the NumPy Robot's method (float64 to 1e-12, float32
to 1e-5 relative) on bundled robots and random trees (friction, armature, mimic
joints, floating bases); gradients by autograd with composedyn's analytic
derivatives (floating bases through the tangent of ``integrate``) and with the
regressor (parameters) and the joint-term regressor columns (damping, Coulomb
friction, armature); ``torch.autograd.gradcheck`` on the dynamics; batches
against loops.  The CUDA tests run where a CUDA device is present (the summary
counts them).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the [torch] extra is part of the test extra")  # noqa: E402

from tensor_cases import (  # noqa: E402
    BLOCKER,
    CASES,
    SMALL,
    calls,
    close,
    frames,
    method,
    reference,
    robot,
    states,
    tangent,
    with_q1,
)

CUDA = torch.cuda.is_available()
gpu = pytest.mark.gpu


def args_of(st: dict, names: tuple, dtype=torch.float64, device="cpu") -> list:
    return [torch.tensor(st[a], dtype=dtype, device=device) for a in names]


def check_values(r, td, dtype, tol, device="cpu", batch=(3, 2)):
    st = with_q1(r, states(r, batch))
    for name, (names, kwargs) in calls(r).items():
        want = reference(r, name, names, kwargs, st)
        got = getattr(td, method(name))(*args_of(st, names, dtype, device), **kwargs)
        assert isinstance(got, torch.Tensor) and got.dtype == dtype and got.device.type == torch.device(device).type
        close(got.detach().cpu().numpy(), want, tol, f"{r.name} {name} {dtype}")


# ---- values ----
@pytest.mark.parametrize("case", CASES)
def test_values_float64_equal_numpy(case):
    r = robot(case)
    check_values(r, r.to_torch(), torch.float64, 1e-12)


@pytest.mark.parametrize("case", CASES)
def test_values_float32_equal_numpy(case):
    r = robot(case)
    check_values(r, r.to_torch(dtype=torch.float32), torch.float32, 1e-5)


@pytest.mark.parametrize("case", ("tree", "floating", "mimic"))
def test_friction_options_and_parameters_equal_numpy(case):
    """friction=False, smooth friction, and params= of a perturbed robot equal that robot's NumPy methods."""
    r = robot(case)
    td = r.to_torch()
    st = states(r, (4,), seed=3)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    close(td.inverse_dynamics(q, v, a, friction=False), r.inverse_dynamics(st["q"], st["v"], st["a"], friction=False),
          1e-12, "rigid ID")
    close(td.forward_dynamics(q, v, tau, smooth_friction=0.3),
          r.forward_dynamics(st["q"], st["v"], st["tau"], smooth_friction=0.3), 1e-12, "smooth FD")
    other = r.perturbed(0.3, seed=7)
    p = torch.tensor(other.inertial_parameters())
    assert not np.allclose(other.inertial_parameters(), r.inertial_parameters())
    for name, (names, kwargs) in calls(r).items():
        if method(name) in ("inverse_dynamics", "forward_dynamics", "mass_matrix", "bias_torques", "gravity_torques"):
            got = getattr(td, method(name))(*args_of(st, names), params=p, **kwargs)
            close(got, reference(other, name, names, kwargs, st), 1e-12, f"params {name}")


def test_batch_equals_loop_and_broadcasts():
    r = robot("panda")
    td = r.to_torch()
    st = states(r, (5,), seed=4)
    q, v, a = args_of(st, ("q", "v", "a"))
    tau = td.inverse_dynamics(q, v, a)
    loop = torch.stack([td.inverse_dynamics(q[k], v[k], a[k]) for k in range(5)])
    assert tau.shape == (5, r.nv) and torch.allclose(tau, loop, rtol=0, atol=1e-12)
    one = td.inverse_dynamics(q, v[0], a[0])  # (5, n) with (n,) and (n,)
    close(one, r.inverse_dynamics(st["q"], st["v"][0], st["a"][0]), 1e-12, "broadcast")
    M = td.mass_matrix(q.reshape(5, 1, -1))
    assert M.shape == (5, 1, r.nv, r.nv)


def test_numpy_arrays_and_lists_are_converted():
    r = robot("two_link")
    td = r.to_torch()
    q = [0.1, 0.2]
    out = td.gravity_torques(q)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    close(out, r.gravity_torques(q), 1e-12)


# ---- gradients ----
def _jac(f, *xs):
    return torch.autograd.functional.jacobian(f, tuple(xs), vectorize=False)


@pytest.mark.parametrize("case", SMALL + ("panda", "floating_mimic"))
def test_inverse_dynamics_gradients_equal_analytic_derivatives(case):
    r = robot(case)
    td = r.to_torch()
    st = states(r, (), seed=5)
    q, v, a = args_of(st, ("q", "v", "a"))
    Jq, Jv, Ja = _jac(lambda x, y, z: td.inverse_dynamics(x, y, z), q, v, a)
    dq, dv = r.inverse_dynamics_derivatives(st["q"], st["v"], st["a"])
    close(Jq.numpy() @ tangent(r, st["q"]), dq, 1e-9, "dtau/dq")
    close(Jv, dv, 1e-9, "dtau/dv")
    close(Ja, r.mass_matrix(st["q"]), 1e-9, "dtau/da = M")


@pytest.mark.parametrize("case", SMALL + ("panda", "floating_mimic"))
def test_forward_dynamics_gradients_equal_analytic_derivatives(case):
    r = robot(case)
    td = r.to_torch()
    st = states(r, (), seed=6)
    q, v, tau = args_of(st, ("q", "v", "tau"))
    Jq, Jv, Jt = _jac(lambda x, y, z: td.forward_dynamics(x, y, z), q, v, tau)
    dq, dv, Minv = r.forward_dynamics_derivatives(st["q"], st["v"], st["tau"])
    close(Jq.numpy() @ tangent(r, st["q"]), dq, 1e-9, "da/dq")
    close(Jv, dv, 1e-9, "da/dv")
    close(Jt, Minv, 1e-9, "da/dtau")


@pytest.mark.parametrize("case", ("floating", "floating_mimic"))
def test_integrate_is_differentiable_at_zero(case):
    """The tangent map of integrate at δ = 0 (where the exponential's series matters) is finite and exact."""
    r = robot(case)
    td = r.to_torch()
    q = torch.tensor(states(r, (), seed=7)["q"])
    (J,) = _jac(lambda d: td.integrate(q, d), torch.zeros(r.nv, dtype=torch.float64))
    close(J, tangent(r, q.numpy()), 1e-12, "d integrate / d v at 0")


@pytest.mark.parametrize("case", ("panda", "tree", "mimic", "floating"))
def test_parameter_gradient_is_the_regressor(case):
    r = robot(case)
    td = r.to_torch()
    st = states(r, (), seed=8)
    q, v, a = args_of(st, ("q", "v", "a"))
    p = torch.tensor(r.inertial_parameters())
    (Jp,) = _jac(lambda x: td.inverse_dynamics(q, v, a, params=x), p)
    Y = r.regressor(st["q"], st["v"], st["a"])
    close(Jp, Y, 1e-12, "d tau / d params")


@pytest.mark.parametrize("case", ("tree", "mimic", "floating", "floating_mimic"))
def test_joint_term_gradients_are_the_regressor_columns(case):
    """d tau / d (damping, coulomb, armature) equal the joint-term regressor columns (qd, sgn qd, qdd)."""
    r = robot(case)
    td = r.to_torch()
    st = states(r, (), seed=9)
    q, v, a = args_of(st, ("q", "v", "a"))
    Y = r.regressor(st["q"], st["v"], st["a"], joint_terms=True)[:, 10 * td.layout.bodies:]
    cols = Y.reshape(r.nv, -1, 3)  # (nv, joints, [fv, fc, Ia])
    n = td.layout.joint_terms
    if cols.shape[1] != n:
        pytest.fail(f"{n} joint terms, but the regressor has {cols.shape[1]} joints")
    d0 = torch.full((n,), 0.3, dtype=torch.float64)  # tau is linear in each term: any values
    Jd, Jc, Ja = _jac(lambda d, c, m: td.inverse_dynamics(q, v, a, damping=d, coulomb=c, armature=m),
                      d0, d0 + 0.1, d0 + 0.2)
    close(Jd, cols[..., 0], 1e-12, "d tau / d damping")
    close(Jc, cols[..., 1], 1e-12, "d tau / d coulomb")
    close(Ja, cols[..., 2], 1e-12, "d tau / d armature")


@pytest.mark.parametrize("case", ("floating", "floating_mimic"))
def test_base_quaternion_of_any_norm_is_read_as_the_robot_reads_it(case):
    """A base quaternion of norm 2.5 gives the Robot's values (which divide the norm out); a zero one gives
    NaN, never a finite wrong pose; the gradient with respect to q is tangent to the unit quaternions."""
    r = robot(case)
    td = r.to_torch()
    st = states(r, batch=(3,), seed=7)
    q = st["q"].copy()
    q[..., 3:7] *= 2.5
    qt, v, a = (torch.tensor(x) for x in (q, st["v"], st["a"]))
    close(td.inverse_dynamics(qt, v, a), r.inverse_dynamics(q, st["v"], st["a"]), 1e-12, "ID at |quat| = 2.5")
    close(td.mass_matrix(qt), r.mass_matrix(q), 1e-12, "M at |quat| = 2.5")
    close(td.integrate(qt, v), r.integrate(q, st["v"]), 1e-12, "integrate at |quat| = 2.5")
    close(td.difference(qt, qt.flip(0)), r.difference(q, q[::-1]), 1e-12, "difference at |quat| = 2.5")
    frame = r.frame_names[-1]
    close(td.frame_pose(qt, frame), r.frame_pose(q, frame), 1e-12, "frame pose at |quat| = 2.5")
    qg = qt.clone().requires_grad_(True)
    td.inverse_dynamics(qg, v, a).sum().backward()
    radial = (qg.grad[..., 3:7] * qt[..., 3:7]).sum(-1)
    assert torch.all(radial.abs() < 1e-9 * (1 + qg.grad.abs().max())), radial
    q0 = qt.clone()
    q0[..., 3:7] = 0.0
    assert torch.isnan(td.inverse_dynamics(q0, v, a)).all()
    assert torch.isnan(td.frame_pose(q0, frame)[..., :3, :]).any()


@pytest.mark.parametrize("case", SMALL)
def test_gradcheck(case):
    r = robot(case)
    td = r.to_torch()
    st = states(r, (2,), seed=10)
    q, v, a, tau = (x.requires_grad_() for x in args_of(st, ("q", "v", "a", "tau")))
    p = torch.tensor(r.inertial_parameters(), requires_grad=True)
    n = td.layout.joint_terms
    arm = torch.full((n,), 0.1, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda *x: td.inverse_dynamics(*x[:3], params=x[3], armature=x[4]),
                                    (q, v, a, p, arm))
    assert torch.autograd.gradcheck(lambda *x: td.forward_dynamics(*x[:3], params=x[3]), (q, v, tau, p))
    assert torch.autograd.gradcheck(lambda x: td.jacobian(x, frames(r)[0]), (q,))


def _nodes(t) -> set:
    """The class names of the autograd nodes behind ``t``."""
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is not None and fn not in seen:
            seen.add(fn)
            todo.extend(g for g, _ in fn.next_functions)
    return {type(fn).__name__ for fn in seen}


def _recursion(r):
    """The array-API algorithms on torch without the front end's backward passes: the reference."""
    from array_api_compat import torch as xp

    from composedyn.dynamics import array_api as aa

    return aa, aa.on(aa.from_robot(r), xp, device=torch.device("cpu"), dtype=torch.float64)


def _screw_tree(seed: int = 2, bodies: int = 8):
    """A random branched tree of one-coordinate joints of every such kind (helical ones with random
    pitches), random axes, placements, inertias and joint terms, as a TreeRobot."""
    import networkx as nx

    import composedyn as cd
    from composedyn.dynamics.schema import add_joint, add_link

    rng = np.random.default_rng(seed)
    g = nx.DiGraph(name="screws", gravity=np.array([0.3, -0.2, -9.81]))
    add_link(g, "base")
    links = ["base"]
    for k in range(bodies):
        kind = ("helical", "revolute", "prismatic", "continuous")[k % 4]
        x, y, z = rng.uniform(0.01, 0.1, 3)
        add_link(g, f"l{k}", mass=rng.uniform(0.3, 2.0), com=0.1 * rng.normal(size=3),
                 inertia=np.diag([y + z, x + z, x + y]))
        T = np.eye(4)
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        T[:3, :3], T[:3, 3] = R * np.sign(np.linalg.det(R)), 0.3 * rng.normal(size=3)
        own = {"pitch": rng.uniform(-0.1, 0.1)} if kind == "helical" else {}
        add_joint(g, f"j{k}", links[rng.integers(len(links))], f"l{k}", type=kind, origin=T, axis=rng.normal(size=3),
                  damping=rng.uniform(0, 0.5), friction=rng.uniform(0, 0.3), armature=rng.uniform(0, 0.1), **own)
        links.append(f"l{k}")
    return cd.from_graph(g)


@pytest.mark.parametrize("case", ("panda", "tree", "mimic", "screws"))
def test_written_out_backward_passes_equal_reverse_mode_through_the_recursion(case):
    """The backward passes of ID (the RNEA's transposed tangent), M (the CRBA's) and FD (the implicit
    function's) are in use on trees of one-coordinate joints (revolute, continuous, prismatic, helical) and equal
    reverse mode through the array-API recursion for random cotangents, with the joint terms (and
    for ID the inertial parameters) as tensor inputs too."""
    r = _screw_tree() if case == "screws" else robot(case)
    td = r.to_torch()
    aa, bm = _recursion(r)
    st = states(r, (3,), seed=12)
    rng = np.random.default_rng(12)
    n = td.layout.joint_terms
    terms = {k: torch.tensor(rng.uniform(0.1, 0.5, n), requires_grad=True) for k in ("damping", "coulomb", "armature")}
    p = torch.tensor(r.perturbed(0.3, seed=3).inertial_parameters(), requires_grad=True)
    cases = {
        "inverse_dynamics": (("q", "v", "a"), "_RigidTorquesBackward", aa.inverse_dynamics, {**terms, "params": p}),
        "mass_matrix": (("q",), "_RigidMassMatrixBackward", aa.mass_matrix, {"armature": terms["armature"]}),
        "forward_dynamics": (("q", "v", "tau"), "_ForwardDynamicsBackward", aa.forward_dynamics, terms),
    }
    for name, (names, node, reference_fn, kw) in cases.items():
        xs = [x.requires_grad_() for x in args_of(st, names)]
        out = getattr(td, name)(*xs, **kw)
        assert node in _nodes(out), (name, sorted(_nodes(out)))
        want = reference_fn(bm, *xs, **kw)
        close(out.detach(), want.detach(), 1e-12, f"{case} {name} value")
        cot = torch.tensor(rng.normal(size=tuple(out.shape)))
        inputs = [*xs, *kw.values()]
        got = torch.autograd.grad(out, inputs, cot)
        ref = torch.autograd.grad(want, inputs, cot)
        for x, g, w in zip([*names, *kw], got, ref):
            close(g, w, 1e-11, f"{case} {name}: gradient with respect to {x}")


def test_backward_passes_in_float32_follow_float64():
    """The backward passes run in float32 too (ID and FD; M's float32 gradient is the recursion's):
    their gradients equal float64's to float32's precision."""
    r = robot("panda")
    st = states(r, (4,), seed=15)
    grads = {}
    for dtype in (torch.float64, torch.float32):
        td = r.to_torch(dtype=dtype)
        q, v, a, tau = (x.requires_grad_() for x in args_of(st, ("q", "v", "a", "tau"), dtype))
        out = td.inverse_dynamics(q, v, a).sum() + td.forward_dynamics(q, v, tau).sum()
        assert "_RigidTorquesBackward" in _nodes(out) and "_ForwardDynamicsBackward" in _nodes(out)
        grads[dtype] = torch.autograd.grad(out, (q, v, a, tau))
    for name, g32, g64 in zip("q v a tau".split(), grads[torch.float32], grads[torch.float64]):
        close(g32.double(), g64, 2e-4, f"float32 gradient with respect to {name}")


def test_second_derivatives_go_through_the_recursion():
    """Differentiating a backward pass again (create_graph) gives the recursion's second derivatives."""
    r = robot("panda")
    td = r.to_torch()
    aa, bm = _recursion(r)
    st = states(r, (2,), seed=13)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    for name, fn, ref in (
        ("ID", lambda x: td.inverse_dynamics(x, v, a), lambda x: aa.inverse_dynamics(bm, x, v, a)),
        ("M", td.mass_matrix, lambda x: aa.mass_matrix(bm, x)),
        ("FD", lambda x: td.forward_dynamics(x, v, tau), lambda x: aa.forward_dynamics(bm, x, v, tau)),
    ):
        H = torch.autograd.functional.hessian(lambda x: (fn(x) ** 2).sum(), q)
        H0 = torch.autograd.functional.hessian(lambda x: (ref(x) ** 2).sum(), q)
        assert torch.count_nonzero(H) > 0
        close(H, H0, 1e-10, f"{name} second derivative")


@pytest.mark.parametrize("case", ("panda", "floating"))
def test_torch_func_transforms_go_through_the_recursion(case):
    """Under torch.func (which the backward passes do not serve) jacfwd and vmap(jacrev) give the
    autograd Jacobians, friction (its sign) included."""
    r = robot(case)
    td = r.to_torch()
    st = states(r, (2,), seed=14)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    for name, fn in (("ID", lambda x, y, z: td.inverse_dynamics(x, y, z)), ("M", lambda x, y, z: td.mass_matrix(x)),
                     ("FD", lambda x, y, z: td.forward_dynamics(x, y, z))):
        rates = (v, a) if name == "ID" else (v, tau)
        batched = torch.func.vmap(torch.func.jacrev(fn))(q, *rates)
        for k in range(2):
            want = _jac(lambda x: fn(x, rates[0][k], rates[1][k]), q[k])[0]
            close(batched[k], want, 1e-12, f"{name}: vmap(jacrev), sample {k}")
            close(torch.func.jacfwd(fn)(q[k], rates[0][k], rates[1][k]), want, 1e-12, f"{name}: jacfwd")


def test_vectorised_jacobians_go_through_the_recursion():
    """jacobian(vectorize=True) (a batch of cotangents, which the backward passes hand to the recursion)
    equals the one-row-at-a-time Jacobian."""
    r = robot("panda")
    td = r.to_torch()
    st = states(r, (), seed=16)
    q, v, a, tau = args_of(st, ("q", "v", "a", "tau"))
    for name, fn in (("ID", lambda x: td.inverse_dynamics(x, v, a)), ("M", td.mass_matrix),
                     ("FD", lambda x: td.forward_dynamics(x, v, tau))):
        close(torch.autograd.functional.jacobian(fn, q, vectorize=True), _jac(fn, q)[0], 1e-12, f"{name}: vectorize")


# ---- argument checks ----
def test_errors_name_the_argument_and_the_shape():
    r = robot("panda")
    td = r.to_torch()
    z = torch.zeros(4096, 6, dtype=torch.float64)
    q = torch.zeros(4096, 7, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"^q must have 7 entries in its last axis \(panda's nq\), got \(4096, 6\)$"):
        td.mass_matrix(z)
    with pytest.raises(ValueError, match=r"^qdd must have 7 entries in its last axis \(panda's nv\), got \(4096, 6\)$"):
        td.inverse_dynamics(q, q, z)
    with pytest.raises(ValueError, match=r"^params must have 70 entries .*10 for each of 7 bodies"):
        td.mass_matrix(q, params=torch.zeros(60, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"batch shapes do not broadcast: q \(4096, 7\), qd \(3, 7\)"):
        td.bias_torques(q, torch.zeros(3, 7, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"q is a torch.float32 tensor; this front end computes in torch.float64"):
        td.gravity_torques(q.float())
    with pytest.raises(ValueError, match=r"unknown frame 'flang'; close names: flange"):
        td.frame_pose(q, "flang")
    with pytest.raises(ValueError, match=r"reference must be 'world' or 'local', got 'base'"):
        td.jacobian(q, r.frame_names[-1], reference="base")
    with pytest.raises(ValueError, match=r"q must be a real-valued tensor or array, got str"):
        td.gravity_torques("abc")
    with pytest.raises(ValueError, match="dtype must be torch.float64 or torch.float32"):
        r.to_torch(dtype=torch.int64)
    absent = f"cuda:{torch.cuda.device_count()}"  # one past the last CUDA device (cuda:0 on a CPU-only build)
    with pytest.raises(ValueError, match=rf"^to_torch: device '{absent}' is not available here \(.+\)$"):
        r.to_torch(device=absent)
    fr = robot("floating")
    tf = fr.to_torch()
    with pytest.raises(ValueError, match=rf"^v must have {fr.nv} entries in its last axis \(.*'s nv = 6 base \+ "
                                         rf"{fr.nv - 6} joints\), got \(2,\)$"):
        tf.bias_torques(torch.tensor(fr.neutral()), torch.zeros(2, dtype=torch.float64))


def test_frame_names_and_layout():
    r = robot("floating")
    td = r.to_torch()
    assert td.frame_names == r.frame_names and (td.nq, td.nv) == (r.nq, r.nv)
    assert torch.equal(td.neutral(), torch.tensor(r.neutral()))
    assert not hasattr(robot("panda").to_torch(), "integrate")


def test_without_torch_one_line_names_the_extra():
    proc = subprocess.run([sys.executable, "-c", BLOCKER.format(module="torch", call="to_torch()")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("MissingExtra: robot.to_torch"), proc.stdout
    assert 'pip install "composedyn[torch]"' in lines[0]


# ---- CUDA ----
@gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA device")
@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
@pytest.mark.parametrize("case", ("panda", "floating", "mimic"))
def test_cuda_values_equal_numpy(case, dtype, tol):
    r = robot(case)
    check_values(r, r.to_torch(device="cuda", dtype=dtype), dtype, tol, device="cuda")


@gpu
@pytest.mark.skipif(not CUDA, reason="no CUDA device")
def test_cuda_gradients_equal_analytic_derivatives():
    r = robot("panda")
    td = r.to_torch(device="cuda")
    st = states(r, (), seed=11)
    q, v, a = args_of(st, ("q", "v", "a"), device="cuda")
    Jq, Jv, _ = _jac(lambda x, y, z: td.inverse_dynamics(x, y, z), q, v, a)
    dq, dv = r.inverse_dynamics_derivatives(st["q"], st["v"], st["a"])
    close(Jq.cpu(), dq, 1e-9, "cuda dtau/dq")
    close(Jv.cpu(), dv, 1e-9, "cuda dtau/dv")


def test_composedyn_imports_no_array_library():
    """``import composedyn`` and the NumPy dynamics load neither PyTorch, JAX nor array-api-compat."""
    code = ("import sys, numpy as np, composedyn as cd\n"
            "r = cd.load('panda'); q = np.zeros(r.dof); r.inverse_dynamics(q, q, q)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'jax', 'array_api_compat'}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
