"""Options and outputs that the report-writing commands share (``torques``, ``simulate``,
``identify``, legged checks): output files, limits and margin, plots."""

from __future__ import annotations

from pathlib import Path

from composedyn.logs.cli import output_path


def add_output_options(p) -> None:
    p.add_argument("--json", metavar="OUT.json", help="write the report as JSON")
    p.add_argument("--csv", metavar="OUT.csv",
                   help="write per-sample positions, velocities, accelerations, torques "
                        "(several inputs: OUT.<input name>.csv each)")
    p.add_argument("--violations", metavar="OUT.csv",
                   help="write one row per violation interval (joint, quantity, start, end, peak, limit, excess)")
    p.add_argument("--plot", metavar="OUT.png", help="plot torque and limit band per joint (needs matplotlib)")
    p.set_defaults(per_log_outputs=("csv", "violations", "plot"))  # OUT.<input name>.csv with several inputs


def add_limit_options(p) -> None:
    p.add_argument("--limits", metavar="FILE.toml",
                   help="extra or overriding limits: acceleration, jerk, velocity, effort, lower, upper "
                        "(one value, or a table joint = value), optional margin")
    p.add_argument("--margin", type=float, default=1.0, metavar="FACTOR",
                   help="tighten every limit by this factor, 0 < FACTOR <= 1 (e.g. 0.9)")


def read_limit_options(args) -> dict:
    """The ``limits`` mapping of --limits / --margin (ValueError naming the file)."""
    from composedyn.torque_check.limits import read_limits_toml

    limits = read_limits_toml(args.limits) if args.limits else {}
    if not 0 < args.margin <= 1:
        raise ValueError(f"--margin must be in (0, 1], got {args.margin:g}")
    return limits


def write_reports(reports: list, args, staged, csv_written: bool = False, json_text: str | None = None) -> None:
    """Stage --json/--csv/--violations/--plot outputs of ``reports`` (committed by the caller).
    ``json_text``: the --json content, when the caller gives it (default: the reports' ``to_dict``)."""
    import json

    many = len(reports) > 1
    if args.json:
        if json_text is None:
            data = reports[0].to_dict() if not many else {
                "ok": all(r.ok and r.complete for r in reports), "complete": all(r.complete for r in reports),
                "reports": [r.to_dict() for r in reports]}
            json_text = json.dumps(data, indent=2, allow_nan=False) + "\n"
        Path(staged.tmp(args.json)).write_text(json_text, encoding="utf-8")
    for r in reports:
        if args.csv and not csv_written:
            r.to_csv(staged.tmp(output_path(args.csv, r.source, many)))
        if getattr(args, "violations", None):
            r.violations_csv(staged.tmp(output_path(args.violations, r.source, many)))
        if args.plot:
            r.plot(staged.tmp(output_path(args.plot, r.source, many)))


def check_plot_available(args) -> None:
    if args.plot:
        from composedyn.torque_check.plotting import plot_format

        plot_format(args.plot)
