"""Trajectory checks of long logs in bounded memory: read, differentiate and
check the samples window by window.

:func:`check_chunks` takes an iterator of sample blocks ``(t, q)``,
``(t, q, qd)`` or ``(t, q, qd, qdd)`` of any sizes (a CSV reader, a ROS bag
reader, arrays) and keeps only one window of samples at a time, plus the
limit scan's running state (:class:`composedyn.torque_check.limit_scan.LimitScan`) and a
bounded torque envelope for the plot.

Differentiation in overlapping windows: the spline of
:func:`composedyn.sampled.spline_derivatives` is fitted to a window of
``overlap + chunk + overlap`` samples and only the ``chunk`` samples in the
middle are kept (at the true ends of the log the window ends there, as for the
whole-log fit).  Both splines are global, but the influence of a sample on the
fit decays geometrically with the distance in samples: for the interpolating
quintic spline by |lambda| = 0.4306 per sample (the dominant root of the
quintic Euler-Frobenius polynomial, Schoenberg, "Cardinal interpolation and
spline functions", J. Approx. Theory 2, 1969), so ``OVERLAP`` = 64 samples
reduce the effect of the window's ends to ~1e-23 of the data scale; for the
cubic smoothing spline with parameter lambda and spacing h over the length
ell = (lambda h)^(1/4) (Reinsch, "Smoothing by spline functions", Numer. Math.
10, 1967: the Euler-Lagrange equation f - y + h lambda f'''' = 0), so the
overlap is 60 ell / h samples.  The windowed derivatives equal the whole-log
ones to 1e-9 (tests/test_chunked.py).  ``smoothing="gcv"`` chooses lambda
from all the samples at once, so it serves logs of one window only.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Iterable, Iterator

import numpy as np

from composedyn.checks import joint_array
from composedyn.sampled import MIN_SAMPLES, check_positions, check_smoothing, check_times, spline_derivatives
from composedyn.torque_check.envelope import Envelope
from composedyn.torque_check.limit_scan import LimitScan
from composedyn.torque_check.limits import JointLimits, resolve_limits
from composedyn.torque_check.report import TrajectoryReport, sample_table

CHUNK = 50_000  # samples kept from each window
OVERLAP = 64  # samples of context on each side of a window (interpolating spline)


def overlap_samples(smoothing, h: float) -> int:
    """Context samples each side of a window for ``smoothing`` at sample spacing h (s)."""
    if smoothing in (0, 0.0) or smoothing == "gcv":
        return OVERLAP
    return max(OVERLAP, math.ceil(60.0 * (float(smoothing) / h ** 3) ** 0.25))


def check_chunks(robot, chunks: Iterable, *, smoothing: float | str = 0.0, limits=None, margin: float = 1.0,
                 f_ext=None, friction: bool = True, source: str = "<stream>", keep: bool = False,
                 csv=None, chunk: int = CHUNK, window: int | None = None) -> TrajectoryReport:
    """Check a joint trajectory given as consecutive sample blocks against every limit.

    Parameters
    ----------
    robot : DynamicsModel
    chunks : iterable of tuples
        ``(t (T,), q (T, n))``, ``(t, q, qd)`` or ``(t, q, qd, qdd)`` (the same
        kind for every block), times increasing across blocks; blocks may have
        any length (>= 1).
    smoothing, f_ext, friction, limits, margin
        As in :func:`composedyn.check_trajectory`.
    source : str
        Name of the log in the report.
    keep : bool
        Keep every sample in the report (memory grows with the log); default
        keeps none: ``report.t`` etc. are None, the plot uses an envelope.
    csv : path, optional
        Write the per-sample table (time, j, j_vel, j_acc, j_tau) there while checking.
    chunk, window
        Samples kept per window; ``window`` (default: ``chunk``) overrides it.

    Returns
    -------
    TrajectoryReport
    """
    lim = limits if isinstance(limits, JointLimits) and margin == 1 else resolve_limits(robot, limits, margin)
    names = tuple(robot.joint_names)
    scan, env, kept = LimitScan(lim), Envelope(), ([] if keep else None)
    with contextlib.ExitStack() as stack:
        out = None if csv is None else stack.enter_context(open(csv, "w", encoding="utf-8", newline=""))
        try:
            _run(robot, chunks, smoothing, f_ext, friction, window or chunk, lim, scan, env, kept, out)
        except BaseException:
            stack.close()
            if csv is not None:
                os.unlink(csv)
            raise
    scan.finish()
    arrays = [np.concatenate(a) for a in zip(*kept)] if kept else [None] * 5
    return TrajectoryReport(getattr(robot, "name", type(robot).__name__), source, names, *arrays,
                            limits=lim, scan=scan, envelope=env)


def _run(robot, chunks, smoothing, f_ext, friction: bool, window: int, lim: JointLimits, scan: LimitScan,
         env: Envelope, kept: list, out) -> None:
    """Differentiate, compute torques and scan every window; append to ``kept`` / write to ``out``."""
    names = tuple(robot.joint_names)
    jerk = bool(lim.checked("jerk").any())
    if out is not None:
        out.write(",".join(["time"] + [f"{j}{s}" for j in names for s in ("", "_vel", "_acc", "_tau")]) + "\n")
    blocks = _validated(chunks, robot.dof, names)
    for t, q, qd, qdd, qddd in differentiate_chunks(blocks, smoothing, jerk, window):
        _finite(t, names, velocity=qd, acceleration=qdd, jerk=qddd)
        tau = robot.inverse_dynamics(q, qd, qdd, f_ext=f_ext, friction=friction)
        _finite(t, names, torque=tau)
        values = {"position": q, "velocity": qd, "acceleration": qdd, "effort": tau}
        if qddd is not None:
            values["jerk"] = qddd
        scan.add(t, values)
        env.add(t, tau)
        if kept is not None:
            kept.append((t, q, qd, qdd, tau))
        if out is not None:
            out.write(sample_table(names, t, q, qd, qdd, tau, header=False))


def _validated(chunks: Iterable, n: int, names: tuple) -> Iterator[tuple]:
    """Blocks with checked shapes, finite values, times and position magnitudes."""
    last, count, kind = None, 0, None
    for block in chunks:
        if not isinstance(block, (tuple, list)) or not 2 <= len(block) <= 4:
            raise ValueError("each chunk must be a tuple (t, q), (t, q, qd) or (t, q, qd, qdd)")
        if kind is None:
            kind = len(block)
        elif len(block) != kind:
            raise ValueError(f"chunk at sample {count} has {len(block)} arrays, earlier chunks {kind}")
        t = check_times(block[0], after=last, offset=count)
        arrays = []
        for name, x in zip(("q", "qd", "qdd"), block[1:]):
            x = joint_array(name, x, n)
            if x.shape != (len(t), n):
                raise ValueError(f"{name} has shape {x.shape} at sample {count}, "
                                 f"expected ({len(t)}, {n}) = (len(t), dof)")
            arrays.append(x)
        if len(t) == 0:
            continue
        check_positions(arrays[0], t, names)
        last, count = t[-1], count + len(t)
        yield (t, *arrays)
    if count < 2:
        raise ValueError(f"a trajectory needs at least 2 samples, got {count}")


def _finite(t: np.ndarray, names: tuple, **arrays) -> None:
    for what, x in arrays.items():
        if x is not None and not np.isfinite(x).all():
            k, i = np.argwhere(~np.isfinite(x))[0]
            raise ValueError(f"{what} of joint {names[i]!r} is not finite at t = {t[k]:g} s although the "
                             "inputs are finite: not a robot motion (check units and magnitudes)")


def differentiate_chunks(blocks: Iterable, smoothing: float | str = 0.0, jerk: bool = False,
                         chunk: int = CHUNK) -> Iterator[tuple]:
    """Blocks (t, q, qd, qdd, qddd or None) with the missing derivatives, from blocks
    (t, q[, qd[, qdd]]) in time order; windows as in the module docstring.

    The spline goes through the highest given derivative (q, qd or qdd) and
    gives the missing ones (qddd only when ``jerk``).
    """
    smoothing = check_smoothing(smoothing)
    buf: list = []
    rows, ctx, t0, ov, orders, kind = 0, 0, None, None, (), None
    for block in blocks:
        if kind is None:
            kind, t0 = len(block), block[0][0]
            orders = {2: (1, 2), 3: (1,), 4: ()}[kind]
            orders += (len(orders) + 1,) if jerk else ()
        if not orders:
            yield (*block, *([None] * (5 - len(block))))
            continue
        buf.append(block)
        rows += len(block[0])
        if ov is None:  # context from the spacing of the first samples (at least 2, up to 1000)
            if rows < max(2, min(chunk, 1000)):
                continue
            ts = np.concatenate([b[0] for b in buf])[:1000]
            ov = overlap_samples(smoothing, float(np.median(np.diff(ts))))
        while rows - ctx >= chunk + ov:
            if smoothing == "gcv":
                raise ValueError(f'smoothing="gcv" chooses lambda from the whole log: give a lambda > 0 '
                                 f"for logs over {chunk} samples")
            cols = list(buf[0]) if len(buf) == 1 else [np.concatenate(c) for c in zip(*buf)]
            end = ctx + chunk + ov
            win = [c[:end] for c in cols]
            yield _derivatives(win, orders, smoothing, t0, ctx, ctx + chunk, kind)
            keep_from = ctx + chunk - ov
            buf, rows, ctx = [tuple(c[keep_from:] for c in cols)], len(cols[0]) - keep_from, ov
    if orders and buf:
        cols = [np.concatenate(c) for c in zip(*buf)]
        if len(cols[0]) < MIN_SAMPLES:
            raise ValueError(f"need at least {MIN_SAMPLES} samples to differentiate positions, got {len(cols[0])}")
        yield _derivatives(cols, orders, smoothing, t0, ctx, len(cols[0]), kind)


def _derivatives(cols: list, orders: tuple, smoothing, t0: float, a: int, b: int, kind: int) -> tuple:
    """(t, q, qd, qdd, qddd) of rows a..b of a window fitted whole."""
    t = cols[0]
    d = spline_derivatives(t - t0, cols[kind - 1], orders, smoothing)
    given = [c[a:b] for c in cols[1:]]
    derived = [x[a:b] for x in d]
    q_qd_qdd = (given + derived)[:3]
    qddd = derived[len(derived) - 1] if len(orders) + kind - 1 == 4 else None
    return (t[a:b], *q_qd_qdd, qddd)
