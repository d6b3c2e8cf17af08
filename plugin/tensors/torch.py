"""PyTorch front end: the Robot's dynamics on torch tensors (CPU or CUDA, float32 or float64).

Arguments that are not tensors (NumPy arrays, lists, numbers) are converted to the
front end's device and dtype; a tensor of another dtype or device is refused with
a ValueError naming the argument (no silent copy or precision change).  Autograd
flows through every tensor argument.

Three methods carry their own backward passes (``torch.autograd.Function``).  Inverse
dynamics and the mass matrix, on trees of one-coordinate joints (the mass matrix in float64,
with the model's inertias; inverse dynamics also with ``params``), run the transposes of
the RNEA's and the CRBA's tangents written out (:func:`composedyn.dynamics.array_api.rnea.rigid_torques_vjp`,
:func:`composedyn.dynamics.array_api.crba.mass_matrix_vjp`) on their forward passes' own
terms: about one more pass of the algorithm, instead of a pass back through every
operation of the recursion.  Forward dynamics: qdd solves ``ID(q, qd, qdd, params, ...) =
tau``, so by the implicit function theorem the gradient of a loss with respect to tau is
``mu = M^-1 dL/dqdd`` and with respect to every other input ``-mu^T dID/dx`` at the
solution, qdd held: one solve with M and one pass back through inverse dynamics, not a
pass back through the mass matrix and its factorisation.  When a backward pass is itself
differentiated (``create_graph=True``), it goes through the recursion instead, so that
higher derivatives stay exact; so do the transforms of ``torch.func`` (``jacfwd``,
``vmap``, ...) and the vectorised backward passes (``jacobian(vectorize=True)``,
``is_grads_batched``).
"""

from __future__ import annotations

import torch
from array_api_compat import torch as xp_torch

from composedyn.dynamics import array_api as aa
from composedyn.dynamics.array_api import crba, rnea
from composedyn.dynamics.array_api.kinematics import tree
from composedyn.tensors.checks import real_array
from composedyn.tensors.front import Dynamics, FloatingDynamics, split_options

DTYPES = (torch.float64, torch.float32)


def _functorch_active() -> bool:
    """Whether a torch.func transform (vmap, grad, jacrev, jacfwd, ...) is active: the rules below
    are backward passes for torch.autograd, so under a transform the recursion is differentiated."""
    active = getattr(torch._C, "_are_functorch_transforms_active", None)
    return active is not None and active()


def inverse_dynamics(bm, q, qd, qdd, **options):
    """:func:`composedyn.dynamics.array_api.inverse_dynamics` whose rigid-body part, on trees of
    one-coordinate joints (:func:`~composedyn.dynamics.array_api.crba.scalar_tree`), carries the
    RNEA's written-out backward pass (:class:`_RigidTorques`), the inertial parameters' gradient
    included."""
    rigid = _rigid_torques if crba.scalar_tree(bm) else None
    return aa.inverse_dynamics(bm, q, qd, qdd, rigid=rigid, **options)


def _rigid_torques(bm, q, v, a, params=None):
    if _functorch_active():
        return rnea.rigid_torques(bm, q, v, a, params)
    return _RigidTorques.apply(bm, q, v, a, params)


class _RigidTorques(torch.autograd.Function):
    """:func:`~composedyn.dynamics.array_api.rnea.rigid_torques` at full (q, v, a) (N, k) each and
    params (N, 10 n) or None whose backward pass is
    :func:`~composedyn.dynamics.array_api.rnea.rigid_torques_vjp` on the forward pass's own terms."""

    @staticmethod
    def forward(ctx, bm, q, v, a, params):
        passes = rnea.rigid_passes(bm, q, v, a, params)
        ctx.bm, ctx.passes = bm, passes
        ctx.save_for_backward(q, v, a, params)
        return rnea.projected(bm, passes[1], passes[5], q.shape[0])

    @staticmethod
    def backward(ctx, lam):
        q, v, a, params = ctx.saved_tensors
        wanted = ctx.needs_input_grad[1:]
        if _through_recursion(lam):
            return (None, *_recursion_grads(lambda *x: rnea.rigid_torques(ctx.bm, *x), (q, v, a, params), wanted, lam))
        grads = rnea.rigid_torques_vjp(ctx.bm, ctx.passes, v, lam, params=wanted[3])
        return (None, *(g if w else None for g, w in zip(grads, wanted[:3])), grads[3] if wanted[3] else None)


def mass_matrix(bm, q, params=None, armature=None):
    """:func:`composedyn.dynamics.array_api.mass_matrix` whose rigid-body part, in float64 on trees
    of one-coordinate joints with the model's inertias, carries the CRBA's written-out backward pass
    (:class:`_RigidMassMatrix`)."""
    rigid = _rigid_mass_matrix if bm.dtype == torch.float64 and crba.scalar_tree(bm) else None
    return aa.mass_matrix(bm, q, params, armature, rigid=rigid)


def _rigid_mass_matrix(bm, q, params=None, kinematics=None):
    if params is not None or _functorch_active():  # no written-out rule for the parameters: the recursion
        return crba.rigid_mass_matrix(bm, q, params, kinematics)
    return _RigidMassMatrix.apply(bm, q)


class _RigidMassMatrix(torch.autograd.Function):
    """:func:`~composedyn.dynamics.array_api.crba.rigid_mass_matrix` at full q (N, k) whose backward
    pass is :func:`~composedyn.dynamics.array_api.crba.mass_matrix_vjp` on the forward pass's terms."""

    @staticmethod
    def forward(ctx, bm, q):
        ctx.bm, ctx.terms = bm, crba.root_terms(bm, *tree(bm, q))
        ctx.save_for_backward(q)
        return crba.root_mass_matrix(bm, ctx.terms, q.shape[0])

    @staticmethod
    def backward(ctx, lam):
        (q,) = ctx.saved_tensors
        if _through_recursion(lam):
            return (None, *_recursion_grads(lambda x: crba.rigid_mass_matrix(ctx.bm, x), (q,), (True,), lam))
        return None, crba.mass_matrix_vjp(ctx.bm, ctx.terms, lam)


def forward_dynamics(bm, q, qd, tau, friction: bool = True, smooth_friction=None, **terms):
    """:func:`composedyn.dynamics.array_api.forward_dynamics` with the implicit-function backward
    pass of :class:`_ForwardDynamics`; ``terms``: params, damping, coulomb, armature or None."""
    if _functorch_active():
        return aa.forward_dynamics(bm, q, qd, tau, friction=friction, smooth_friction=smooth_friction, **terms)
    static, arrays = split_options(friction, smooth_friction, terms, torch.Tensor)
    return _ForwardDynamics.apply(bm, static, tuple(arrays), q, qd, tau, *arrays.values())


class _ForwardDynamics(torch.autograd.Function):
    """qdd = FD(q, qd, tau, **arrays) whose backward pass is the implicit function's (module
    docstring)."""

    @staticmethod
    def forward(ctx, bm, static, names, q, qd, tau, *arrays):
        qdd, M = aa.accelerations_and_mass(bm, q, qd, tau, **static, **dict(zip(names, arrays)))
        ctx.bm, ctx.static, ctx.names, ctx.M = bm, static, names, M
        ctx.save_for_backward(q, qd, tau, *arrays)
        ctx.qdd = qdd.detach()
        return qdd

    @staticmethod
    def backward(ctx, g):
        bm, static, names = ctx.bm, ctx.static, ctx.names
        inputs = ctx.saved_tensors
        wanted = ctx.needs_input_grad[3:]
        if _through_recursion(g):
            def solved(q, qd, tau, *arrays):
                return aa.forward_dynamics(bm, q, qd, tau, **static, **dict(zip(names, arrays)))
            return (None, None, None, *_recursion_grads(solved, inputs, wanted, g))
        mu = aa.solve_mass(bm, ctx.M, g)
        with torch.enable_grad():
            xs = [x.detach().requires_grad_(w) for x, w in zip(inputs, wanted)]
            res = inverse_dynamics(bm, xs[0], xs[1], ctx.qdd, **static, **dict(zip(names, xs[3:])))
            grads = _grads(res, xs, -mu)
        return (None, None, None, *grads[:2], mu if wanted[2] else None, *grads[3:])


def _through_recursion(cotangent) -> bool:
    """Whether a backward pass differentiates the recursion instead of running its written-out rule:
    when it is itself differentiated (grad mode on: ``create_graph=True``), or when its cotangent is
    a batch of PyTorch's vectorised backward (``is_grads_batched``, ``jacobian(vectorize=True)``),
    whose batching covers the operations of autograd's own derivative formulas but not all of the
    rules'."""
    if torch.is_grad_enabled():
        return True
    batched = getattr(torch._C._functorch, "is_legacy_batchedtensor", None)
    return batched is not None and batched(cotangent)


def _recursion_grads(fn, inputs, wanted, cotangent) -> list:
    """The gradients of <cotangent, fn(*inputs)> (None inputs passed as None) by reverse mode through
    ``fn``: on the inputs themselves when grad mode is on, so that they can be differentiated again;
    otherwise on detached copies of those ``wanted``."""
    if torch.is_grad_enabled():
        return _grads(fn(*inputs), inputs, cotangent, create_graph=True)
    with torch.enable_grad():
        xs = [None if x is None else x.detach().requires_grad_(w) for x, w in zip(inputs, wanted)]
        return _grads(fn(*xs), xs, cotangent)


def _grads(out, xs, cotangent, create_graph: bool = False) -> list:
    """d <cotangent, out> / d x for each of ``xs`` that requires a gradient (None for the others,
    zeros where ``out`` does not depend on it); ``create_graph``: with a graph of its own, so that
    the result can be differentiated again."""
    xs = [x if x is not None and x.requires_grad else None for x in xs]
    live = [x for x in xs if x is not None]
    found = iter(torch.autograd.grad(out, live, cotangent, allow_unused=True,
                                     create_graph=create_graph) if live else ())
    grads = []
    for x in xs:
        d = None if x is None else next(found)
        grads.append(torch.zeros_like(x) if x is not None and d is None else d)
    return grads


class _Torch:
    """The torch hooks of :class:`composedyn.tensors.front.Dynamics`."""

    _inverse_dynamics = staticmethod(inverse_dynamics)
    _forward_dynamics = staticmethod(forward_dynamics)
    _mass_matrix = staticmethod(mass_matrix)

    device: torch.device
    dtype: torch.dtype

    def _setup(self, am, device, dtype) -> None:
        if dtype is None:
            dtype = torch.float64
        if dtype not in DTYPES:
            raise ValueError(f"to_torch: dtype must be torch.float64 or torch.float32, got {dtype!r}")
        try:
            device = torch.device(device) if device is not None else torch.empty(0).device
        except (RuntimeError, TypeError) as exc:
            raise ValueError(f"to_torch: device {device!r} is not a torch device ({exc})") from None
        try:  # a build without CUDA, no such device index, MPS missing: torch's own AssertionError/RuntimeError
            torch.empty(0, device=device)
        except (AssertionError, RuntimeError) as exc:
            first = (str(exc).strip() or type(exc).__name__).splitlines()[0].split(". ")[0][:120]
            raise ValueError(f"to_torch: device {str(device)!r} is not available here ({first})") from None
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.device, self.dtype = device, dtype
        self._bm = aa.on(am, xp_torch, device=device, dtype=dtype)

    def _array(self, name: str, x):
        if isinstance(x, torch.Tensor):
            if x.dtype != self.dtype:
                raise ValueError(f"{name} is a {x.dtype} tensor; this front end computes in {self.dtype} "
                                 f"(convert with .to({self.dtype}) or make another with robot.to_torch(dtype=...))")
            if x.device != self.device:
                raise ValueError(f"{name} is on {x.device}; this front end computes on {self.device} "
                                 f"(move it with .to('{self.device}') or use robot.to_torch(device=...))")
            return x
        # a copy: never shares the caller's memory
        return torch.tensor(real_array(name, x), dtype=self.dtype, device=self.device)

    def _model(self, like):
        return self._bm

    def _default(self):
        return torch.zeros(0, dtype=self.dtype, device=self.device)


class TorchDynamics(_Torch, Dynamics):
    """A fixed-base robot's dynamics on torch tensors; see :mod:`composedyn.tensors.front`."""

    def __init__(self, robot, am, device=None, dtype=None):
        Dynamics.__init__(self, robot, am, xp_torch)
        self._setup(am, device, dtype)


class TorchFloatingDynamics(_Torch, FloatingDynamics):
    """A floating robot's dynamics on torch tensors, with ``integrate``, ``difference`` and
    ``centroidal_momentum_matrix``."""

    def __init__(self, robot, am, device=None, dtype=None):
        FloatingDynamics.__init__(self, robot, am, xp_torch)
        self._setup(am, device, dtype)


def torch_dynamics(robot, device=None, dtype=None) -> TorchDynamics:
    """The torch front end of ``robot`` (see :func:`composedyn.tensors.to_torch`)."""
    am = aa.from_robot(robot)
    cls = TorchFloatingDynamics if robot.floating or hasattr(robot, "array_model") else TorchDynamics
    return cls(robot, am, device, dtype)
