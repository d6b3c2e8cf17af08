"""A self-contained HTML fleet report: the summary table (sortable, worst first)
and, per log that exceeds a limit, the torque-versus-limit plot of its worst
joint as an embedded PNG.  No network access: no external scripts, styles or images."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np

from composedyn.logs.verdict import SEVERITY, counts
from composedyn.writing import printable, write_atomic

COLUMNS = (("path", "log"), ("verdict", "verdict"), ("worst_joint", "worst joint"),
           ("torque_ratio", "torque / limit"), ("velocity_ratio", "velocity / limit"),
           ("measured_ratio", "measured effort / limit"),
           ("residual", "residual RMS [N m]"), ("residual_joint", "residual joint"),
           ("violations", "violations"), ("unchecked", "unchecked limits"), ("samples", "samples"),
           ("duration", "duration [s]"), ("warnings", "warnings"))

_SORT_JS = """
function sortBy(th){const tb=th.closest('table').tBodies[0],i=th.cellIndex,up=th.dataset.dir!=='asc';
th.dataset.dir=up?'asc':'desc';const key=r=>{const c=r.cells[i],v=c.dataset.v;return v===undefined?c.textContent:+v};
const rows=[...tb.rows].sort((a,b)=>{const x=key(a),y=key(b);return (x>y?1:x<y?-1:0)*(up?1:-1)});
rows.forEach(r=>tb.appendChild(r));}
"""
_STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}th{cursor:pointer;background:#eee}
td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}tr.exceeded td:nth-child(2){color:#b00;font-weight:bold}
tr.unreadable td:nth-child(2),tr.damaged td:nth-child(2),tr.inconsistent td:nth-child(2){color:#a60;font-weight:bold}
tr.unchecked td:nth-child(2){color:#a60}img{max-width:100%}"""


def joint_plot_png(report, k: int, dpi: int = 80) -> bytes:
    """PNG bytes: torque and velocity of joint ``k`` of a TrajectoryReport against
    their limit bands, violations shaded red."""
    from composedyn.torque_check.plotting import require_matplotlib

    Figure = require_matplotlib()
    name = report.joint_names[k]
    fig = Figure(figsize=(7, 3.6))
    axes = fig.subplots(2, 1, sharex=True)
    for ax, x, lim, quantity, unit in ((axes[0], report.tau[:, k], report.effort[k], "effort", "N m"),
                                       (axes[1], report.qd[:, k], report.velocity[k], "velocity", "rad/s")):
        if np.isfinite(lim):
            ax.axhspan(-lim, lim, color="tab:green", alpha=0.12, lw=0)
            ax.axhline(lim, color="tab:green", lw=0.8)
            ax.axhline(-lim, color="tab:green", lw=0.8)
        ax.plot(report.t, x, color="tab:blue", lw=1.0)
        for v in report.violations:
            if v.joint == name and v.quantity == quantity:
                ax.axvspan(v.start, v.end, color="tab:red", alpha=0.3, lw=0)
        ax.set_ylabel(f"{'torque' if quantity == 'effort' else 'velocity'}\n[{unit}]", fontsize=8)
    axes[1].set_xlabel("time [s]")
    axes[0].set_title(f"{report.source}: {name} (blue), limits (green), exceeded (red)", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def severity(row) -> tuple:
    """Sort key, worst first: by verdict (unreadable, damaged, inconsistent, exceeded,
    unchecked, within limits), then by the largest limit ratio."""
    rank = SEVERITY.index(row.verdict) if row.verdict in SEVERITY else len(SEVERITY)
    return (rank, -max(row.torque_ratio or 0.0, row.velocity_ratio or 0.0, row.measured_ratio or 0.0))


def fleet_html(rows, title: str) -> str:
    """The page as text; ``rows``: LogRow list (any order, shown worst first; logs by file
    name, the full path in the cell's tooltip)."""
    rows = sorted(rows, key=severity)
    head = "".join(f'<th onclick="sortBy(this)">{html.escape(label)}</th>' for _, label in COLUMNS)
    body, figures = [], []
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            v = getattr(row, key)
            tip = ""
            if key == "path":
                text, tip = Path(v).name or v, f' title="{html.escape(v)}"'
            elif key == "warnings":  # the count; the messages in the tooltip
                text, tip = (str(len(v)), f' title="{html.escape("; ".join(v))}"') if v else ("", "")
            elif key == "unchecked":
                what = "; ".join(f"{q} of {j}" for j, q in v)
                text, tip = (str(len(v)), f' title="{html.escape(what)}"') if v else ("", "")
            elif key == "verdict" and row.error:
                text = "unreadable: " + row.error.removeprefix(f"{row.path}: ")
            elif key == "verdict" and row.findings:
                text = f"{v}: " + "; ".join(f.message for f in row.findings)
            elif row.verdict == "unreadable":
                text = ""
            elif isinstance(v, float):
                text = f"{v:.4g}"
            else:
                text = "" if v is None else str(v)
            num = f' data-v="{"Infinity" if v == np.inf else repr(v)}"' if (
                isinstance(v, (int, float)) and not isinstance(v, bool) and text) else ""
            cells.append(f"<td{num}{tip}>{html.escape(text)}</td>")
        body.append(f'<tr class="{row.verdict.replace(" ", "-")}">{"".join(cells)}</tr>')
        if row.plot is not None:
            data = base64.b64encode(row.plot).decode("ascii")
            figures.append(f"<figure><img alt=\"{html.escape(row.worst_joint or '')} torque of "
                           f"{html.escape(row.path)}\" src=\"data:image/png;base64,{data}\">"
                           f"<figcaption>{html.escape(row.path)}: {html.escape(row.worst_joint or '')}"
                           "</figcaption></figure>")
    summary = f"{len(rows)} log(s): " + ", ".join(f"{n} {v}" for v, n in counts(r.verdict for r in rows).items())
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style><script>{_SORT_JS}</script></head>\n"
            f"<body><h1>{html.escape(title)}</h1><p>{html.escape(summary)}</p>\n"
            f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>\n"
            + ("<h2>Logs exceeding a limit: worst joint</h2>\n" + "\n".join(figures) if figures else "")
            + "\n</body></html>\n")


def write_fleet_html(rows, path, title: str) -> None:
    """Write :func:`fleet_html` to ``path`` atomically (a log name that is not UTF-8 escaped as in JSON)."""
    write_atomic(path, printable(fleet_html(rows, title)))
