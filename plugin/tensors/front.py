"""The Robot's methods on arrays of one array library, over :mod:`composedyn.dynamics.array_api`.

:class:`Dynamics` holds what PyTorch and JAX share: the method names, signatures
and meanings of :class:`composedyn.Robot` (and :class:`composedyn.floating_robot.FloatingRobot`),
the argument checks (:mod:`composedyn.tensors.checks`), broadcasting of the
batch axes and the call of the array-API algorithm.  A backend subclass says how
an argument becomes an array of its library (:meth:`Dynamics._array`), which
dtype a call computes in (:meth:`Dynamics._common`) and which model constants
serve that dtype (:meth:`Dynamics._model`).

Shapes: q (..., nq), velocities, accelerations and torques (..., nv), leading
batch axes broadcast; results have the broadcast batch axes in front, as the
Robot's.  ``params`` (..., 10 bodies) replaces the model's inertial parameters
(the regressor's layout, :meth:`composedyn.Robot.inertial_parameters`);
``damping``, ``coulomb`` (viscous N m s/rad and Coulomb N m coefficients) and
``armature`` (kg m²), (..., joints), replace the model's joint terms.  Every
array argument is differentiable.  Values are not checked (no NaN test: it would
synchronise a GPU or stop a trace); NaN in an argument gives NaN in the result.
"""

from __future__ import annotations

from composedyn.dynamics import array_api as aa
from composedyn.tensors.checks import batch_shape, layout


def split_options(friction: bool, smooth_friction, terms: dict, array_type) -> tuple[dict, dict]:
    """(static, arrays) of forward dynamics' options for a derivative rule: the Python values
    (``friction``, a number or None ``smooth_friction``) and the arrays of ``array_type`` to
    differentiate (the joint terms given, an array ``smooth_friction``)."""
    static = {"friction": friction}
    arrays = {k: v for k, v in terms.items() if v is not None}
    if isinstance(smooth_friction, array_type):
        arrays["smooth_friction"] = smooth_friction
    else:
        static["smooth_friction"] = smooth_friction
    return static, arrays


class Dynamics:
    """The Robot's dynamics on one array library; see the module docstring for shapes."""

    floating = False

    def __init__(self, robot, am, xp):
        self.layout = layout(robot, am)
        self.name = robot.name
        self.nq, self.nv = self.layout.nq, self.layout.nv
        self.frame_names = self.layout.frames
        self._am = am
        self._xp = xp

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, nq={self.nq}, nv={self.nv})"

    # ---- backend hooks ----
    def _array(self, name: str, x):
        """``x`` as an array of this library (floating dtype); ValueError naming ``name`` otherwise."""
        raise NotImplementedError

    def _common(self, arrays: list) -> list:
        """``arrays`` in the one dtype the call computes in."""
        return arrays

    def _model(self, like):
        """The model constants (:func:`composedyn.dynamics.array_api.on`) for arrays like ``like``."""
        raise NotImplementedError

    def _default(self):
        """An empty array of the default dtype (what :meth:`neutral` and :meth:`inertial_parameters` return)."""
        raise NotImplementedError

    def _call(self, fn, *args, **options):
        """``fn(model, *args, **options)``, an array-API algorithm on the model constants of the
        first argument's dtype (a backend may compile it)."""
        return fn(self._model(args[0]), *args, **options)

    _inverse_dynamics = staticmethod(aa.inverse_dynamics)
    """The inverse dynamics a backend runs (one with a derivative rule of its own may replace it)."""
    _forward_dynamics = staticmethod(aa.forward_dynamics)
    """The forward dynamics a backend runs (one with a derivative rule of its own may replace it)."""
    _mass_matrix = staticmethod(aa.mass_matrix)
    """The mass matrix a backend runs (likewise)."""

    # ---- arguments ----
    def _state(self, q=None, **rates) -> list:
        """Checked, converted q and rates (name -> array), batch axes broadcast together."""
        return self._checked({} if q is None else {"q": q}, rates)

    def _checked(self, configs: dict, rates: dict) -> list:
        """Configurations (name -> (..., nq)) and rates (name -> (..., nv)) checked, converted to one
        dtype, their batch axes broadcast together; in that order."""
        named = {}
        for names, check in ((configs, self.layout.q), (rates, self.layout.v)):
            for name, value in names.items():
                named[name] = x = self._array(name, value)
                check(name, tuple(x.shape))
        shape = batch_shape({k: tuple(x.shape) for k, x in named.items()})
        xs = self._common(list(named.values()))
        xp = self._xp
        return [x if tuple(x.shape[:-1]) == shape else xp.broadcast_to(x, shape + tuple(x.shape[-1:])) for x in xs]

    def _terms(self, like, params=None, damping=None, coulomb=None, armature=None) -> dict:
        """The model's replaced terms given as arrays (the others left out), in ``like``'s dtype."""
        out = {}
        if params is not None:
            out["params"] = p = self._array("params", params)
            self.layout.params(tuple(p.shape))
        for name, x in (("damping", damping), ("coulomb", coulomb), ("armature", armature)):
            if x is not None:
                out[name] = t = self._array(name, x)
                self.layout.joint_term(name, tuple(t.shape))
        if not out:
            return out
        cast = self._common([like, *out.values()])[1:]
        pad = self.layout.base_terms  # a floating base has no joint terms: zeros in front, as in the model
        if pad:
            xp = self._xp
            cast = [x if k == "params" else xp.concat((xp.broadcast_to(x[..., :1] * 0, (*x.shape[:-1], pad)), x),
                                                      axis=-1) for k, x in zip(out, cast)]
        return dict(zip(out, cast))

    def _rates(self, *names: str) -> tuple:
        """The argument names of the velocity-like arguments: ``qd``/``qdd`` (fixed base) or ``v``/``a``."""
        return tuple(self.layout.rates[0] if n == "v" else self.layout.rates[1] if n == "a" else n for n in names)

    # ---- dynamics ----
    def inverse_dynamics(self, q, qd, qdd, friction: bool = True, smooth_friction: float | None = None,
                         params=None, damping=None, coulomb=None, armature=None):
        """Joint torques (..., nv) = M(q) qdd + C(q, qd) qd + g(q) + friction, as
        :meth:`composedyn.Robot.inverse_dynamics` (no ``f_ext``); ``smooth_friction`` (rad/s):
        tanh(qd / smooth_friction) in place of sgn(qd) (differentiable at qd = 0)."""
        nv, na = self._rates("v", "a")
        q, qd, qdd = self._state(q, **{nv: qd, na: qdd})
        terms = self._terms(q, params, damping, coulomb, armature)
        return self._call(self._inverse_dynamics, q, qd, qdd, friction=friction, smooth_friction=smooth_friction,
                                   **terms)

    def forward_dynamics(self, q, qd, tau, friction: bool = True, smooth_friction: float | None = None,
                         params=None, damping=None, coulomb=None, armature=None):
        """Accelerations (..., nv) solving M qdd = tau - C qd - g - friction, as
        :meth:`composedyn.Robot.forward_dynamics` (no ``f_ext``; a singular M gives inf/NaN on JAX,
        the linear solver's error on torch)."""
        q, qd, tau = self._state(q, **{self._rates("v")[0]: qd, "tau": tau})
        terms = self._terms(q, params, damping, coulomb, armature)
        return self._call(self._forward_dynamics, q, qd, tau, friction=friction, smooth_friction=smooth_friction,
                                   **terms)

    def mass_matrix(self, q, params=None, armature=None):
        """Joint-space inertia M(q) (..., nv, nv), armature on the diagonal."""
        (q,) = self._state(q)
        return self._call(self._mass_matrix, q, **self._terms(q, params, armature=armature))

    def bias_torques(self, q, qd, params=None):
        """C(q, qd) qd + g(q) (..., nv), friction not included."""
        q, qd = self._state(q, **{self._rates("v")[0]: qd})
        return self._call(aa.bias_torques, q, qd, **self._terms(q, params))

    def gravity_torques(self, q, params=None):
        """Gravity torques g(q) (..., nv)."""
        (q,) = self._state(q)
        return self._call(aa.gravity_torques, q, **self._terms(q, params))

    def coriolis_matrix(self, q, qd):
        """Coriolis matrix C(q, qd) (..., nv, nv), Christoffel form (dM/dt - 2C skew)."""
        q, qd = self._state(q, **{self._rates("v")[0]: qd})
        return self._call(aa.coriolis_matrix, q, qd)

    def kinetic_energy(self, q, qd):
        """Kinetic energy 1/2 qd^T M(q) qd (...,) in J, armature included."""
        q, qd = self._state(q, **{self._rates("v")[0]: qd})
        return self._call(aa.kinetic_energy, q, qd)

    def potential_energy(self, q):
        """Gravitational potential energy (...,) in J, as :meth:`composedyn.Robot.potential_energy`."""
        (q,) = self._state(q)
        return self._call(aa.potential_energy, q)

    def energy(self, q, qd):
        """Total mechanical energy T + V (...,) in J, as :meth:`composedyn.Robot.energy`."""
        q, qd = self._state(q, **{self._rates("v")[0]: qd})
        return self._call(aa.energy, q, qd)

    def regressor(self, q, qd, qdd, joint_terms: bool = False, offset: bool = False):
        """Joint torque regressor Y (..., nv, 10 bodies [+ 3 or 4 per joint]): ``regressor(q, qd, qdd) @ params``
        is the inverse dynamics without friction and armature; ``joint_terms``/``offset`` append the
        joint columns, as :meth:`composedyn.Robot.regressor`."""
        nv, na = self._rates("v", "a")
        q, qd, qdd = self._state(q, **{nv: qd, na: qdd})
        return self._call(aa.regressor, q, qd, qdd, joint_terms=joint_terms, offset=offset)

    def inertial_parameters(self):
        """The model's inertial parameters (10 bodies,) in the regressor's layout: the ``params``
        of the model itself (:meth:`composedyn.Robot.inertial_parameters`)."""
        return aa.inertial_parameters(self._model(self._default()))

    # ---- task space ----
    def frame_pose(self, q, frame: str):
        """World <- ``frame`` homogeneous transform (..., 4, 4)."""
        frame = self.layout.frame(frame)
        (q,) = self._state(q)
        return self._call(aa.frame_pose, q, frame)

    def jacobian(self, q, frame: str, reference: str = "world"):
        """Frame Jacobian (..., 6, nv), linear rows first; ``"world"``: origin velocity and angular
        velocity in world axes, ``"local"``: frame axes."""
        frame, reference = self.layout.frame(frame), self.layout.reference(reference)
        (q,) = self._state(q)
        return self._call(aa.jacobian, q, frame, reference=reference)

    def frame_velocity(self, q, qd, frame: str, reference: str = "world"):
        """Frame twist (..., 6) = J(q) qd, linear first (m/s, rad/s)."""
        frame, reference = self.layout.frame(frame), self.layout.reference(reference)
        q, qd = self._state(q, **{self._rates("v")[0]: qd})
        return self._call(aa.frame_velocity, q, qd, frame, reference=reference)

    def frame_acceleration(self, q, qd, qdd, frame: str, reference: str = "world"):
        """Classical acceleration (..., 6) of the frame origin and angular acceleration: J qdd + Jdot qd."""
        frame, reference = self.layout.frame(frame), self.layout.reference(reference)
        nv, na = self._rates("v", "a")
        q, qd, qdd = self._state(q, **{nv: qd, na: qdd})
        return self._call(aa.frame_acceleration, q, qd, qdd, frame, reference=reference)

    def center_of_mass(self, q):
        """Centre of mass (..., 3) in world coordinates, as :meth:`composedyn.Robot.center_of_mass`."""
        (q,) = self._state(q)
        return self._call(aa.center_of_mass, q)

    def com_jacobian(self, q):
        """Jacobian of :meth:`center_of_mass` (..., 3, nv)."""
        (q,) = self._state(q)
        return self._call(aa.com_jacobian, q)


class FloatingDynamics(Dynamics):
    """:class:`Dynamics` of a floating robot, with its configuration-space methods."""

    floating = True

    def integrate(self, q, v, dt=1.0):
        """q ⊕ v dt (..., nq), as :meth:`composedyn.floating_robot.FloatingRobot.integrate`;
        ``dt`` a number or an array broadcasting with the batch axes."""
        q, v = self._state(q, v=v)
        if not isinstance(dt, (int, float)):
            dt = self._common([q, self._array("dt", dt)])[1]
        return self._call(aa.integrate, q, v, dt=dt)

    def difference(self, q0, q1):
        """v (..., nv) with integrate(q0, v) = q1."""
        q0, q1 = self._checked({"q0": q0, "q1": q1}, {})
        return self._call(aa.difference, q0, q1)

    def centroidal_momentum_matrix(self, q):
        """A_G(q) (..., 6, nv): centroidal momentum (linear, angular about the centre of mass), world axes."""
        (q,) = self._state(q)
        return self._call(aa.centroidal_momentum_matrix, q)

    def neutral(self):
        """The neutral configuration (nq,): base at the origin with identity orientation, joints 0."""
        return aa.neutral(self._model(self._default()))
