"""A corpus of malformed trajectory and log CSVs for bundled robots, generated at test time.

``csv_corpus()`` returns entries ``(name, robot, file name, content bytes, expect)``. The
motion of every file is a smooth swing about the middle of the robot's position range, well
inside its velocity and effort limits, so the unaltered file passes. ``expect``:

- ``"valid"``: an intact file, which must be read and get the robot's passing verdict
  ("within limits" when every limit is given, "unchecked" otherwise);
- ``"same"``: the same numbers written another way (tabs, quotes, ...): a one-line error,
  or the passing verdict;
- ``"altered"``: data that is not the motion (NaN, a spike, a jump, ...): a one-line error,
  or any verdict but "within limits";
- ``"inconsistent"``: logged velocities that contradict the positions: the verdict
  "inconsistent";
- ``"error"``: no table of this robot at all: a one-line error.
"""

from __future__ import annotations

import numpy as np

SAMPLES = 101
DURATION = 1.0  # s
AMPLITUDE = 0.2  # rad: peak velocity 2 pi * 0.2 = 1.26 rad/s, under panda's 2.175 rad/s


def motion(robot, samples: int = SAMPLES, duration: float = DURATION):
    """(t (T,), q, qd, qdd (T, n)): each joint swings sinusoidally about the middle of its range."""
    lim = robot.limits
    center = np.where(np.isfinite(lim["lower"]) & np.isfinite(lim["upper"]),
                      0.5 * (lim["lower"] + lim["upper"]), 0.0)
    t = np.linspace(0.0, duration, samples)
    w = 2 * np.pi / duration
    phase = np.linspace(0.0, np.pi, robot.nv)
    q = center + AMPLITUDE * np.sin(w * t[:, None] + phase)
    qd = AMPLITUDE * w * np.cos(w * t[:, None] + phase)
    qdd = -AMPLITUDE * w * w * np.sin(w * t[:, None] + phase)
    return t, q, qd, qdd


def efforts(robot, q, qd, qdd, rng, noise: float = 0.05) -> np.ndarray:
    """(T, n) measured efforts: the inverse dynamics plus Gaussian noise of ``noise`` N m."""
    tau = np.array([robot.inverse_dynamics(a, b, c) for a, b, c in zip(q, qd, qdd)])
    return tau + rng.normal(0.0, noise, tau.shape)


def table(header: list, rows, sep: str = ",", end: str = "\n", fmt=repr) -> str:
    """CSV text: the header and one line per row (``fmt`` writes a number)."""
    lines = [sep.join(header)] + [sep.join(c if isinstance(c, str) else fmt(float(c)) for c in r) for r in rows]
    return end.join(lines) + end


def columns(names, suffixes=("",)) -> list:
    return ["time"] + [j + s for s in suffixes for j in names]


def csv_corpus() -> list[tuple[str, str, str, bytes, str]]:
    import warnings

    import composedyn as cd

    rng = np.random.default_rng(28)
    e: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # puma560's description warnings
        robots = {name: cd.load(name) for name in ("panda", "puma560")}

    def add(robot, name, content, expect):
        data = content.encode() if isinstance(content, str) else content
        e.append((name, robot, f"{len(e):03d}_{robot}_{name}.csv", data, expect))

    for rname, robot in robots.items():
        names = list(robot.joint_names)
        n = len(names)
        t, q, qd, qdd = motion(robot)
        pos = np.column_stack([t, q])
        valid = table(columns(names), pos)
        with_vel = table(columns(names, ("", "_vel")), np.column_stack([t, q, qd]))
        tau = efforts(robot, q, qd, qdd, rng)
        noisy_q = q + rng.normal(0.0, 1e-5, q.shape)
        measured = np.column_stack([t, noisy_q, qd, tau])
        measured_header = columns(names, ("", "_vel", "_effort"))
        add(rname, "valid_planner", valid, "valid")
        add(rname, "valid_measured_efforts", table(measured_header, measured), "valid")
        if rname == "puma560":  # limits partly missing: never "within limits"
            for name, k in (("nan_position", 1), ("inf_position", 2)):
                bad = pos.copy()
                bad[40, k] = np.nan if k == 1 else np.inf
                add(rname, name, table(columns(names), bad), "altered")
            big = pos.copy()
            big[50:, 2] += 3.0  # past joint2's upper position limit
            add(rname, "beyond_position_limit", table(columns(names), big), "altered")
            zero = np.column_stack([t, q, np.zeros_like(qd)])
            add(rname, "velocity_zero_while_moving", table(columns(names, ("", "_vel")), zero), "inconsistent")
            add(rname, "no_time_column", table(names, q), "error")
            add(rname, "panda_joint_names", table(columns([f"panda_joint{i + 1}" for i in range(n)]), pos), "error")
            continue
        # valid files written another way
        add(rname, "valid_with_velocities", with_vel, "valid")
        add(rname, "valid_with_accelerations", table(columns(names, ("", "_vel", "_acc")),
                                                     np.column_stack([t, q, qd, qdd])), "valid")
        add(rname, "bom", "\ufeff" + valid, "valid")
        add(rname, "crlf", valid.replace("\n", "\r\n"), "valid")
        lines = valid.splitlines(keepends=True)
        add(rname, "whitespace_only_lines", "".join(x + ("   \t\n" if k % 10 == 3 else "") for k, x in
                                                    enumerate(lines)) + "\n \n", "valid")
        add(rname, "comment_lines", "# recorded by the planner\n" + "".join(
            x + ("# pause\n" if k == 50 else "") for k, x in enumerate(lines)), "valid")
        add(rname, "t_column", valid.replace("time,", "t,", 1), "valid")
        add(rname, "header_spaces", valid.replace(",", " , ", n).replace("time", " time", 1), "same")
        add(rname, "semicolons", table(columns(names), pos, sep=";"), "same")
        add(rname, "tabs", table(columns(names), pos, sep="\t"), "same")
        add(rname, "quoted_numbers", table(columns(names), pos, fmt=lambda x: f'"{x!r}"'), "same")
        add(rname, "decimal_commas", table(columns(names), pos, sep=";", fmt=lambda x: repr(x).replace(".", ",")),
            "same")
        add(rname, "trailing_commas", valid.replace("\n", ",\n"), "same")
        add(rname, "time_capitalised", valid.replace("time", "Time", 1), "same")
        # header problems
        add(rname, "empty", "", "error")
        add(rname, "header_only", table(columns(names), []), "error")
        add(rname, "whitespace_only", " \n\t\n  \n", "error")
        add(rname, "no_time_column", table(names, q), "error")
        add(rname, "unknown_joint_column", table(columns(names + ["joint8"]), np.column_stack([pos, q[:, 0]])), "error")
        add(rname, "duplicate_joint_column", table(columns(names + [names[0]]), np.column_stack([pos, q[:, 0]])),
            "error")
        add(rname, "missing_joint", table(columns(names[:-1]), pos[:, :-1]), "error")
        add(rname, "velocities_of_some_joints", table(columns(names) + [names[0] + "_vel"],
                                                      np.column_stack([pos, qd[:, 0]])), "error")
        add(rname, "accelerations_without_velocities", table(columns(names, ("", "_acc")),
                                                             np.column_stack([t, q, qdd])), "error")
        add(rname, "efforts_of_some_joints", table(columns(names) + [names[0] + "_effort"],
                                                   np.column_stack([pos, tau[:, 0]])), "error")
        add(rname, "one_sample", table(columns(names), pos[:1]), "error")
        add(rname, "five_samples", table(columns(names), pos[:5]), "error")
        # value problems
        for name, value in (("nan", np.nan), ("inf", np.inf), ("minus_inf", -np.inf), ("1e308", 1e308),
                            ("1e5", 1e5)):
            bad = pos.copy()
            bad[40, 3] = value
            add(rname, f"position_{name}", table(columns(names), bad), "altered")
        for name, cell in (("abc", "abc"), ("empty_cell", ""), ("hex", "0x10"), ("two_dots", "0.1.2")):
            rows = [list(r) for r in pos]
            rows[30][2] = cell
            add(rname, f"position_{name}", table(columns(names), rows), "altered")
        rows = [list(r) for r in pos]
        add(rname, "ragged_short_row", table(columns(names), rows[:20] + [rows[20][:-1]] + rows[21:]), "altered")
        add(rname, "ragged_long_row", table(columns(names), rows[:20] + [rows[20] + [0.0]] + rows[21:]), "altered")
        add(rname, "truncated_last_row", valid[: valid.rindex("\n", 0, len(valid) - 1) + 8], "altered")
        back = pos.copy()
        back[[30, 31], 0] = back[[31, 30], 0]
        add(rname, "time_backwards", table(columns(names), back), "altered")
        dup = pos.copy()
        dup[31, 0] = dup[30, 0]
        add(rname, "duplicate_time", table(columns(names), dup), "altered")
        for name, scale, offset in (("time_1e12", 1e12, 0.0), ("time_epoch_ns", 1e9, 1.7e18)):
            ns = pos.copy()
            ns[:, 0] = offset + scale * t
            add(rname, name, table(columns(names), ns), "altered")
        close = pos.copy()
        close[:, 0] = t * 1e-8
        add(rname, "time_10_ns_apart", table(columns(names), close), "altered")
        huge = pos.copy()
        huge[:, 2] += 50.0  # beyond the limits, not beyond MAX_POSITION
        add(rname, "position_offset_50_rad", table(columns(names), huge), "altered")
        spike = pos.copy()
        spike[60, 4] += 0.5
        add(rname, "position_spike", table(columns(names), spike), "altered")
        for name, vel in (("velocity_zero_while_moving", np.zeros_like(qd)), ("velocity_sign_flipped", -qd),
                          ("velocity_three_times", 3 * qd)):
            add(rname, name, table(columns(names, ("", "_vel")), np.column_stack([t, q, vel])), "inconsistent")
        for name, acc in (("acceleration_zero_while_turning", np.zeros_like(qdd)),
                          ("acceleration_three_times", 3 * qdd)):
            add(rname, name, table(columns(names, ("", "_vel", "_acc")), np.column_stack([t, q, qd, acc])),
                "inconsistent")
        add(rname, "two_logs_concatenated", valid + "".join(valid.splitlines(keepends=True)[1:]), "altered")
        add(rname, "header_repeated", valid + valid, "altered")
        add(rname, "comments_only", "# time,joint1\n# 0,0\n", "error")
        for name, where in (("effort_nan_cell", (40, 1 + 2 * n)), ("effort_nan_column", (slice(None), 1 + 2 * n + 2))):
            bad = measured.copy()
            bad[where] = np.nan
            add(rname, name, table(measured_header, bad), "altered")
        # encoding problems
        add(rname, "latin1_joint_name", valid.replace("joint1", "joint\u00e91", 1).encode("latin-1"), "error")
        add(rname, "latin1_comment", ("# r\u00e9sum\u00e9\n" + valid).encode("latin-1"), "same")
        add(rname, "utf16", valid.encode("utf-16"), "error")
        add(rname, "nul_bytes", valid[:2000].encode() + b"\x00" * 64 + valid[2000:].encode(), "altered")
        add(rname, "trailing_nul_bytes", valid.encode() + b"\x00" * (1 << 16), "same")
        add(rname, "binary_garbage", rng.integers(0, 256, 8192, dtype=np.uint8).tobytes(), "error")
        add(rname, "valid_then_garbage", valid.encode() + rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(),
            "same")
        add(rname, "very_long_line", valid + "1" * (2 << 20) + "\n", "same")
        add(rname, "very_long_header", ",".join(["time"] + [f"c{k}" for k in range(200_000)]) + "\n", "error")
    return e
