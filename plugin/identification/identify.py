"""Identify a robot's inertial parameters and joint friction from logged motion and torques.

``identify(robot, logs, method)`` stacks the identification equations

    tau_meas = Y(q, qd, qdd) pi + e,     Y = robot.regressor(..., joint_terms=True)

over the processed samples of every log (:mod:`composedyn.identification.signals`:
zero-phase filtering, differentiation, trimming, decimation) and solves them:

* ``"ols"``: ordinary least squares on the base parameters (Gautier's QR,
  :mod:`composedyn.dynamics.reference.base_parameters`);
* ``"wls"``: weighted least squares, each joint's rows divided by its noise
  standard deviation estimated from the OLS residuals (Gautier 1997);
* ``"physical"``: the semidefinite program of :mod:`composedyn.identification.physical`
  (pseudo-inertia LMI per body, entropic divergence to the URDF's
  parameters as regulariser), on the WLS-weighted equations.

The base parameters are unique; standard parameters are not.  For ols/wls
they are the prior (the robot's own) corrected by the smallest change
(Euclidean, in SI units) that gives the identified base parameters,
pi = pi_0 + beta^+ (pi_b - beta pi_0); ``"physical"`` returns the program's
solution.  The identified ``Robot`` puts each body's parameters on the link of
its joint (links welded to it by fixed joints get zero mass; the body's total
inertia is unchanged) and the viscous, Coulomb and armature terms on the joints.

Checks before the fit (each a ValueError naming what is wrong): a log its
reader found damaged or inconsistent (``findings``, see
:func:`composedyn.read_log`; ``ignore_findings=True`` fits it anyway, as a
:class:`composedyn.identification.logs.DamagedLog`), a base parameter the logs
do not excite (condition number of the base regressor above
:data:`MAX_CONDITION`), and a joint whose accelerations are not well above the
sensor noise (:func:`composedyn.identification.signals.acceleration_noise`):
below :data:`MIN_SNR` times the noise the regressor's errors bias the fit
(errors in variables, invisible in the residual) and the logs are refused;
below :data:`WARN_SNR` a :class:`composedyn.ModelWarning`.  Logs that give fewer than
:data:`ROWS_PER_PARAMETER` equations (fit samples after decimation, times joints) per base
parameter warn too: a short log is fitted closely whatever its parameters (a small residual,
parameters far from the truth).  A validation log
that the identified model predicts worse than the prior robot gives a
``ModelWarning`` too.  Each warning is also kept in ``Identification.warnings``.

References
----------
M. Gautier, "Dynamic identification of robots with power model", ICRA 1997.
J. Swevers, W. Verdonck and J. De Schutter, "Dynamic model identification
for industrial robots", IEEE Control Systems Magazine 27(5), 2007.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from composedyn.errors import ModelError, ModelWarning
from composedyn.identification.logs import as_identification_log, check_logs, refuse_findings
from composedyn.identification.physical import fit_physical, inconsistent_bodies
from composedyn.identification.signals import CUTOFF, ORDER, acceleration_noise, filter_log
from composedyn.parameters import parameters, refuse_floating

METHODS = ("ols", "wls", "physical")
MAX_CONDITION = 1e8  # base regressor of the logs: beyond this the fit is noise (refused)
MIN_SNR = 5.0  # a joint's RMS acceleration / its noise part below this: the fit is biased (refused)
WARN_SNR = 20.0  # ... below this: a warning (a bias of the order of 1 / SNR^2 in the weakest directions)
ROWS_PER_PARAMETER = 10  # fewer equations (fit samples x joints) per base parameter: a warning (over-fit)


@dataclass
class Identification:
    """Result of :func:`identify`.

    Attributes: ``robot`` (identified :class:`composedyn.Robot`; None when ols/wls
    gave a body no description can hold, e.g. a negative mass); ``inconsistent``
    indices of bodies whose pseudo-inertia is not positive semidefinite; ``method``;
    ``parameter_names`` (P,) and ``parameters`` (P,) standard parameters (10 per
    body, then ``[fv, fc, Ia(, off)]`` per joint); ``prior`` (P,) the robot's
    own; ``base`` (:class:`BaseParameters`) and ``base_values`` (r,);
    ``rms`` (dof,) residual RMS per joint (N m or N) and ``relative_rms``
    (dof,) RMS residual / RMS torque on the fit data, ``overall_relative_rms``
    the same over all joints (|residual| / |torque|); ``condition`` the
    condition number of the base regressor of the data; ``acceleration_snr``
    (dof,) each joint's RMS acceleration over the RMS of its sensor-noise part
    (inf for noise-free logs); ``warnings`` the messages of the
    ``ModelWarning`` raised for this result; ``weights`` (dof,) row weights (1
    for ols); ``samples`` processed data; ``options``.
    """

    robot: object
    method: str
    parameter_names: tuple
    parameters: np.ndarray
    prior: np.ndarray
    base: object
    base_values: np.ndarray
    rms: np.ndarray
    relative_rms: np.ndarray
    overall_relative_rms: float
    condition: float
    weights: np.ndarray
    joint_names: tuple
    inconsistent: list
    samples: list = field(repr=False)
    options: dict = field(default_factory=dict)
    validation: dict | None = None
    acceleration_snr: np.ndarray | None = None
    warnings: list = field(default_factory=list)
    _source_robot: object = field(default=None, repr=False)

    def predict(self, q, qd, qdd) -> np.ndarray:
        """Torques (..., dof) of the identified parameters (friction, armature and offset included)."""
        Y = self._source_robot.regressor(q, qd, qdd, joint_terms=True, offset=self.options["offset"])
        return Y @ self.parameters

    def validate(self, log, ignore_findings: bool | None = None, **kwargs) -> dict:
        """RMS error per joint of the identified model on another log (processed like the fit
        data); stores and returns ``{"source", "rms", "relative_rms", "prior_relative_rms"}``.

        A log its reader found damaged or inconsistent is refused unless ``ignore_findings``
        (default: as for the fit).  When the identified model predicts the log worse than the
        prior robot, a ``ModelWarning`` (also appended to ``warnings``)."""
        opts = {k: self.options[k] for k in ("cutoff", "order", "decimate")}
        opts.update(kwargs)
        lg = as_identification_log(log, self.joint_names)
        if ignore_findings is None:
            ignore_findings = self.options.get("ignore_findings", False)
        refuse_findings([lg], ignore_findings)
        s = filter_log(lg, **opts)
        Y = s.parallel(self._source_robot.regressor(s.q, s.qd, s.qdd, joint_terms=True,
                                                    offset=self.options["offset"]))
        tau = s.parallel(s.effort)
        err, prior = Y @ self.parameters - tau, Y @ self.prior - tau
        scale = np.sqrt(np.mean(tau ** 2, axis=0))
        self.validation = {"source": s.source, "rms": _rms(err), "relative_rms": _rms(err) / scale,
                           "prior_relative_rms": _rms(prior) / scale, "overall_relative_rms":
                           float(np.linalg.norm(err) / np.linalg.norm(tau)),
                           "prior_overall_relative_rms": float(np.linalg.norm(prior) / np.linalg.norm(tau)),
                           "samples": s}
        v = self.validation
        if v["overall_relative_rms"] > v["prior_overall_relative_rms"]:
            self._warn(f"{s.source}: the identified model predicts this validation log worse than the prior "
                       f"robot (RMS error {100 * v['overall_relative_rms']:.3g} % against "
                       f"{100 * v['prior_overall_relative_rms']:.3g} %); keep the prior or log a richer motion")
        return self.validation

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(message, ModelWarning, stacklevel=3)

    def to_urdf(self, path) -> Path:
        """Write the identified robot as URDF (inertials, ``<dynamics damping friction>``)."""
        if self.robot is None:
            bodies = ", ".join(self._source_robot.model.body_names[i] for i in self.inconsistent)
            raise ModelError(f"{self.method} gave physically impossible inertia (e.g. a negative mass) for "
                             f"link(s) {bodies}; no URDF can hold them: use method='physical'")
        return self.robot.to_urdf(path)

    def to_dict(self) -> dict:
        """The report as JSON-ready data."""
        m = self._source_robot.model
        out = {
            "robot": m.name, "method": self.method, "joints": list(self.joint_names),
            "options": {k: v for k, v in self.options.items()},
            "logs": [s.source for s in self.samples], "samples": int(sum(s.times.shape[0] for s in self.samples)),
            "condition_number": self.condition,
            "acceleration_snr": (None if self.acceleration_snr is None else  # null: a noise-free log
                                 {j: float(x) if np.isfinite(x) else None
                                  for j, x in zip(self.joint_names, self.acceleration_snr)}),
            "warnings": list(self.warnings),
            "overall_relative_rms": self.overall_relative_rms, "base_parameter_count": int(self.base.rank),
            "rms": dict(zip(self.joint_names, map(float, self.rms))),
            "relative_rms": dict(zip(self.joint_names, map(float, self.relative_rms))),
            "weights": dict(zip(self.joint_names, map(float, self.weights))),
            "bodies": list(m.body_names),
            "inconsistent_bodies": [m.body_names[i] for i in self.inconsistent],
            "base_parameters": [{"expression": e, "value": float(v)}
                                for e, v in zip(self.base.expressions, self.base_values)],
            "standard_parameters": [{"name": nm, "value": float(v), "prior": float(p)}
                                    for nm, v, p in zip(self.parameter_names, self.parameters, self.prior)],
        }
        if self.validation is not None:
            v = self.validation
            out["validation"] = {"log": v["source"], "overall_relative_rms": v["overall_relative_rms"],
                                 "prior_overall_relative_rms": v["prior_overall_relative_rms"],
                                 **{k: dict(zip(self.joint_names, map(float, v[k])))
                                    for k in ("rms", "relative_rms", "prior_relative_rms")}}
        return out

    def to_json(self, path=None) -> str:
        """The report as JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def plot(self, path, validation: bool | None = None) -> Path:
        """Measured vs predicted torque per joint (the validation log when there is one)."""
        from composedyn.identification.plot import plot_torques

        use_val = self.validation is not None if validation is None else validation
        s = self.validation["samples"] if use_val else self.samples[0]
        pred = s.parallel(self.predict(s.q, s.qd, s.qdd))
        return plot_torques(path, s.times, s.parallel(s.effort), pred, self.joint_names,
                            f"{self._source_robot.name}: {self.method} fit, {Path(s.source).name}")


def _weighted_lstsq(Y: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """argmin |diag(w) (Y x - b)| by the normal equations (Y has full column rank: a base regressor).

    Y^T W^2 Y is small (parameters squared); LAPACK's QR and SVD of the tall Y were
    erratic in time when other threads (numba's, other processes) held the cores."""
    import scipy.linalg

    w2 = w * w
    return scipy.linalg.solve(Y.T @ (Y * w2[:, None]), Y.T @ (b * w2), assume_a="pos")


def _condition(Y: np.ndarray) -> float:
    """2-norm condition number of Y (K, r) from the eigenvalues of Y^T Y."""
    ev = np.linalg.eigvalsh(Y.T @ Y)
    return float(np.sqrt(ev[-1] / ev[0])) if ev[0] > 0 else float("inf")


def _least_excited(Y: np.ndarray, base) -> str:
    """The base parameter with the largest share of the weakest direction of Y (K, r)."""
    ev, V = np.linalg.eigh(Y.T @ Y)
    return base.expressions[int(np.argmax(np.abs(V[:, 0])))]


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x ** 2, axis=0))


def _acceleration_snr(logs: list, samples: list, names) -> tuple[np.ndarray, list[str]]:
    """Each joint's RMS acceleration over the RMS of its sensor-noise part, pooled over the logs, and
    the warnings; ValueError naming the joints below :data:`MIN_SNR`."""
    signal, noise, sigma = (np.sum(x, axis=0) for x in zip(*(acceleration_noise(lg, s)
                                                               for lg, s in zip(logs, samples))))
    with np.errstate(divide="ignore", invalid="ignore"):
        snr = np.where(noise > 0, np.sqrt(signal / np.where(noise > 0, noise, 1.0)), np.inf)
    sigma = sigma / len(logs)

    def listed(limit):
        return ", ".join(f"{j} ({x:.2g} x, noise {sg:.2g})" for j, x, sg in zip(names, snr, sigma) if x < limit)

    what = ("times the part the sensor noise makes of them (noise: standard deviation of the logged "
            f"{'positions' if samples[0].derived_velocity else 'velocities'}, estimated from the logs)")
    if np.any(snr < MIN_SNR):
        raise ValueError(f"the logs barely accelerate joint(s) {listed(MIN_SNR)}: their accelerations are "
                         f"below {MIN_SNR:g} {what}, so the fit would be biased: log a larger or faster motion "
                         "(composedyn excite), or lower the cut-off")
    weak = [] if not np.any(snr < WARN_SNR) else [
        f"the logs accelerate joint(s) {listed(WARN_SNR)} little: their accelerations are below {WARN_SNR:g} "
        f"{what}, and the fit may be biased towards smaller inertias and armatures: a larger or faster "
        "motion (composedyn excite), or a lower cut-off, helps"]
    return snr, weak


def identify(robot, logs, method: str = "wls", offset: bool = False, cutoff: float = CUTOFF,
             order: int = ORDER, decimate: int | None = None, gamma: float = 1.0,
             progress: Callable[[str], None] | None = None, ignore_findings: bool = False) -> Identification:
    """Identify ``robot``'s parameters from ``logs`` (one log or a list).

    A log is a CSV path (trajectory format with ``<joint>_effort`` columns, see
    :mod:`composedyn.identification.logs`) or an object with ``.t`` (T,) s,
    ``.joint_names``, ``.q`` (T, k), ``.qd`` (T, k) or None, ``.effort`` (T, k);
    its joints may be in any order and include extra ones.  ``method``: ``"ols"``,
    ``"wls"`` (the default; ``composedyn identify``'s is ``"physical"``, which needs the extra
    ``[identify]``) or ``"physical"`` (see the module docstring).  ``offset``: also a
    constant torque offset per joint.  ``cutoff`` (Hz, finite; at most 0.8 x the log's Nyquist
    frequency is used), ``order``, ``decimate``: the signal processing of
    :func:`composedyn.identification.signals.filter_log`.
    ``gamma``: weight of the prior divergence (physical; in units of the weighted
    squared residual, i.e. of one noise variance).  ``progress(label)`` is called
    at each stage.  ``ignore_findings``: fit logs that their reader found
    damaged or inconsistent (refused by default).  Raises ValueError (bad logs,
    unknown method, logs that do not excite the robot; see the module
    docstring); a ``ModelWarning`` for weakly exciting logs.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    refuse_floating(robot, "identify")
    say = progress or (lambda label: None)
    names = robot.joint_names
    say("reading logs")
    jl = [as_identification_log(lg, names) for lg in (logs if isinstance(logs, (list, tuple)) else [logs])]
    if not jl:
        raise ValueError("identify: no logs given")
    refuse_findings(jl, ignore_findings)
    check_logs(jl, names)
    say("filtering")
    samples = [filter_log(lg, cutoff=cutoff, order=order, decimate=decimate) for lg in jl]
    say("regressor")
    n = robot.dof
    P = (10 + (4 if offset else 3)) * robot.model.n
    Y = np.concatenate([s.parallel(robot.regressor(s.q, s.qd, s.qdd, joint_terms=True, offset=offset))
                        .reshape(-1, P) for s in samples])
    tau = np.concatenate([s.parallel(s.effort).reshape(-1) for s in samples])
    row_joint = np.tile(np.arange(n), Y.shape[0] // n)
    base = robot.base_parameters(joint_terms=True, offset=offset)
    Yb = base.base_regressor(Y)
    condition = _condition(Yb)
    if not condition < MAX_CONDITION:
        raise ValueError(f"the logs do not excite every base parameter (condition number {condition:.3g}); the "
                         f"least excited is {_least_excited(Yb, base)}: log a richer motion (composedyn excite)")
    snr, weak = _acceleration_snr(jl, samples, names)
    if Yb.shape[0] < ROWS_PER_PARAMETER * Yb.shape[1]:
        weak.append(f"the logs give {Yb.shape[0]} equations ({Yb.shape[0] // n} fit samples x {n} joints) for "
                    f"{Yb.shape[1]} base parameters, fewer than {ROWS_PER_PARAMETER} per parameter: the fit can "
                    "match them closely with parameters far from the truth; log a longer motion")
    say("least squares")
    pib = _weighted_lstsq(Yb, tau, np.ones(tau.shape[0]))
    weights = np.ones(n)
    if method != "ols":
        res = Yb @ pib - tau
        sigma = np.sqrt(np.array([np.mean(res[row_joint == j] ** 2) for j in range(n)]))
        weights = 1.0 / np.maximum(sigma, 1e-12 * max(float(sigma.max()), 1e-300))
        pib = _weighted_lstsq(Yb, tau, weights[row_joint])
    prior = parameters(robot, joint_terms=True, offset=offset)
    bodies = robot.model.n
    if method == "physical":
        say("semidefinite program")
        w2 = weights[row_joint] ** 2
        pi = fit_physical(Y.T @ (Y * w2[:, None]), Y.T @ (tau * w2), prior, bodies, 4 if offset else 3, gamma=gamma)
        pib = base.base(pi)
    else:
        pi = prior + np.linalg.pinv(base.beta) @ (pib - base.base(prior))
    bad = inconsistent_bodies(pi[:10 * bodies])
    say("building the identified robot")
    try:
        ident = robot_with_parameters(robot, pi, offset)
    except ModelError:  # ols/wls: e.g. a negative mass, which no description can hold
        ident = None
    err = (Y @ pi - tau).reshape(-1, n)
    scale = np.sqrt(np.mean(tau.reshape(-1, n) ** 2, axis=0))
    result = Identification(
        robot=ident, method=method, parameter_names=robot.parameter_names(True, offset), parameters=pi,
        prior=prior, base=base, base_values=pib, rms=_rms(err), relative_rms=_rms(err) / scale,
        overall_relative_rms=float(np.linalg.norm(err) / np.linalg.norm(tau)), condition=condition,
        weights=weights, joint_names=tuple(names), inconsistent=bad,
        samples=samples, options={"offset": offset, "cutoff": cutoff, "order": order, "decimate": decimate,
                                  "gamma": gamma, "ignore_findings": bool(ignore_findings)},
        acceleration_snr=snr, _source_robot=robot)
    for message in weak:
        result._warn(message)
    return result


def robot_with_parameters(robot, pi: np.ndarray, offset: bool = False):
    """A new Robot with ``robot``'s kinematics and the standard parameters ``pi`` (regressor order).

    Body i's parameters go to the link of its joint (inertia about the centre
    of mass, link axes); links welded to it get zero mass.  Joint terms set
    ``damping``, ``friction``, ``armature`` (an offset has no URDF field).
    """
    from composedyn.dynamics.reference.regressor import body_parameters

    m = robot.model
    g = robot.graph.copy()
    n = m.n
    mass, h, Io = body_parameters(np.asarray(pi[:10 * n]).reshape(n, 10))
    for i, link in enumerate(m.body_names):
        c = h[i] / mass[i] if mass[i] > 0 else np.zeros(3)
        Ic = Io[i] - mass[i] * (c @ c * np.eye(3) - np.outer(c, c))
        g.nodes[link].update(mass=float(mass[i]), com=c, inertia=0.5 * (Ic + Ic.T), inertial=True)
    for name, b in zip(m.link_names, m.link_body):
        if b >= 0 and name != m.body_names[b]:
            g.nodes[name].update(mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))
    k = 4 if offset else 3
    joint_par = np.asarray(pi[10 * n:]).reshape(n, k)
    edge = {d["name"]: (u, v) for u, v, d in g.edges(data=True)}
    for j, name in enumerate(m.joint_names):
        g.edges[edge[name]].update(damping=float(joint_par[j, 0]), friction=float(joint_par[j, 1]),
                                   armature=float(joint_par[j, 2]))
    return type(robot)(g, mimic=robot.mimic_mode)

