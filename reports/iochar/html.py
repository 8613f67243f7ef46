"""One self-contained HTML page (inline CSS, figures as data: URIs, no scripts, no network)."""

from __future__ import annotations

import html

from . import flags as F
from . import html_observed, plots
from . import summary as S
from .safetext import TRUNCATED_NOTE, escape, object_strings, when

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left} .muted{color:#777}
.adv{border-left:5px solid #999;padding:.4em .8em;margin:.6em 0;background:#fafafa}
.adv.high{border-color:#c0392b} .adv.warn{border-color:#e67e22} .adv.info{border-color:#2980b9}
.sev{font-weight:bold;text-transform:uppercase;font-size:11px;margin-right:.5em}
.high .sev{color:#c0392b} .warn .sev{color:#e67e22} .info .sev{color:#2980b9}
img{max-width:100%;display:block;margin:.5em 0} .grid{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.grid img{max-width:520px}
"""


def esc(x) -> str:
    """Text from a log in HTML: control characters and invalid UTF-8 escaped as in the
    text report, then HTML-escaped."""
    return html.escape(escape(x))


def img(b64: str, alt: str) -> str:
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{b64}">'


def table(head: list, rows: list, left: int = 1) -> str:
    th = "".join(f'<th class="{"l" if i < left else ""}">{esc(h)}</th>' for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{esc(c)}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    head_row = f"<tr>{th}</tr>" if any(head) else ""
    return f"<table>{head_row}{body}</table>"


def job_section(job: dict) -> str:
    rows = [("executable", job.get("cmdline") or job.get("exe", "?")),
            ("processes / nodes", f"{job.get('nprocs', '?')} / {job.get('nnodes', '?')}"),
            ("run time", S.human_time(job.get("run_time"))),
            ("start / end", f"{when(job.get('start_time'))} / {when(job.get('end_time'))}"),
            ("job id / user / host",
             f"{job.get('jobid', '?')} / {job.get('user', '?')} / {job.get('hostname', '?')}"),
            ("iochar", job.get("version", "?"))]
    if job.get("partial"):
        folded = job.get("folded_files", 0)
        rows.append(("partial log", f"flags {job['partial']}, {folded} files folded"))
    rows += [("partial", why) for why in F.reasons(job)]
    if job.get("truncated_paths"):
        rows.append(("truncated names", f"{job['truncated_paths']} file names longer than the "
                     "path limit were recorded cut"))
    for w in job_warnings(job):
        rows.append(("warning", w))
    return table(["", ""], rows)


def job_warnings(job: dict) -> list:
    """JOB `warnings` (one per line, or already a list) as a list of lines."""
    w = job.get("warnings")
    if isinstance(w, str):
        return [line for line in w.split("\n") if line]
    return [str(x) for x in w] if isinstance(w, list) else []


def module_table(modules: dict) -> str:
    head = ["module", "files", "shared", "read ops", "write ops", "bytes read", "bytes written",
            "read time", "write time", "meta time", "slowest rank", "share of run", "bandwidth"]
    rows = []
    for m, s in modules.items():
        sl = s.get("slowest_rank", {})
        rows.append([m, f"{s['files']:,}", f"{s['files_shared']:,}", f"{s['reads']:,}",
                     f"{s['writes']:,}", S.human_bytes(s["bytes_read"]),
                     S.human_bytes(s["bytes_written"]), S.human_time(s["time_read"]),
                     S.human_time(s["time_write"]), S.human_time(s["time_meta"]),
                     f"{sl.get('rank')} ({S.human_time(sl.get('time'))})",
                     f"{100 * (s['share_of_runtime']['io'] or 0):.1f}%",
                     S.human_bytes(s["bandwidth"]["total"]) + "/s"])
    unknown = [(m, c, f"{n:,}") for m, s in modules.items()
               for c, n in (s.get("unknown") or {}).items()]
    if unknown:  # Darshan's -1 and negative times: in no total above
        return table(head, rows) + "<p class='muted'>Values the log did not know (-1, a " \
            "negative time), left out of the totals:</p>" + \
            table(["module", "counter", "records"], unknown, left=2)
    return table(head, rows)


def cost_note(cost: dict) -> str:
    """' (12.3 s over all ranks, 4% of the run)': what a finding costs, in the run's
    terms (its share of the I/O time, or of the bytes, when the run time is unknown)."""
    if "run_share" in cost:
        share = _share(cost["run_share"]) if cost["run_share"] or not cost["seconds"] \
            else "<0.001%"
        return f" ({S.human_time(cost['seconds'])} over all ranks, {share} of the run)"
    if "io_time_share" in cost:
        return f" ({_share(cost['io_time_share'])} of I/O time)"
    if "bytes_share" in cost:
        return f" ({_share(cost['bytes_share'])} of bytes)"
    return ""


def _share(x: float) -> str:
    """A share in percent that rounds neither a real cost to 0% nor a part to 100%."""
    p = 100 * float(x or 0)
    if p <= 0 or p >= 100:
        return f"{max(min(p, 100), 0):.0f}%"
    return f"{p:.1g}%" if p < 1 else f"{p:.1f}%" if p < 10 else f"{min(p, 99):.0f}%"


def advice_section(advice: list) -> str:
    if not advice:
        return '<p class="muted">No advice: nothing in the counters matched a rule.</p>'
    out = []
    for a in advice:
        a = a if isinstance(a, dict) else a.to_dict()
        ev = table(["counter", "value"], [(k, f"{v:,}" if isinstance(v, int) else v)
                                          for k, v in a["evidence"].items()])
        files = ("<p class='muted'>files: " + ", ".join(esc(f) for f in a["files"]) + "</p>"
                 if a.get("files") else "")
        out.append(f'<div class="adv {esc(a["severity"])}"><span class="sev">{esc(a["severity"])}'
                   f'</span><b>{esc(a["id"])}</b> &mdash; {esc(a["message"])}'
                   f'{esc(cost_note(a.get("cost") or {}))}'
                   f'<p>&rarr; {esc(a["recommendation"])}</p>'
                   + ('<pre class="example">' + "\n".join(
                       esc(line) for line in a["example"].splitlines()) + "</pre>"
                      if a.get("example") else "") + f'{files}'
                   + (f"<p class='muted'>at {esc(a['where'])}</p>" if a.get("where") else "")
                   + f'<details><summary>evidence</summary>{ev}</details></div>')
    return "".join(out)


def top_files(modules: dict) -> str:
    # table() escapes each cell once: the path goes in raw, with the truncation note
    rows = [[m, f["path"] + (TRUNCATED_NOTE if f.get("truncated") else ""),
             "yes" if f["shared"] else "", S.human_time(f["time"]),
             S.human_time(f["time_read"]), S.human_time(f["time_write"]),
             S.human_time(f["time_meta"]), S.human_bytes(f["bytes_read"]),
             S.human_bytes(f["bytes_written"])]
            for m, s in modules.items() for f in s.get("top_files", [])]
    return table(["module", "path", "shared", "time (all ranks)", "read time", "write time",
                  "meta time", "bytes read", "bytes written"], rows, left=2) \
        if rows else "<p class='muted'>none</p>"


@object_strings
def render(report: dict, series: dict | None = None, ranks: dict | None = None,
           observed=None) -> str:
    """report: {"job", "modules", "advice"} as iochar-report --json prints it."""
    job, modules = report["job"], report["modules"]
    series = {m: s for m, s in (series or {}).items() if s is not None}
    ranks = {m: r for m, r in (ranks or {}).items() if r is not None and len(r)}
    parts = [f"<h1>iochar report: {esc(job.get('exe', '?'))}</h1>", job_section(job),
             "<h2>Advice</h2>", advice_section(report.get("advice", [])),
             "<h2>Modules</h2>", module_table(modules)]
    if modules:
        parts += ['<div class="grid">', img(plots.cost_per_module(modules), "I/O cost per module"),
                  img(plots.op_counts(modules), "operation counts"), "</div>"]
    hists = [img(plots.size_histogram(m, s["size_histogram"]), f"{m} access sizes")
             for m, s in modules.items() if "size_histogram" in s]
    if hists:
        parts += ["<h2>Access sizes</h2>", '<div class="grid">', *hists, "</div>"]
        tops = [[m, S.human_bytes(t["size"]), f"{t['count']:,}"]
                for m, s in modules.items() for t in s.get("top_sizes", [])]
        if tops:
            parts.append(table(["module", "common access size", "count"], tops))
    parts += ["<h2>I/O over time</h2>", img(plots.io_over_time(series, job.get("run_time", 0)),
                                            "I/O over time")]
    if ranks:
        parts += ["<h2>Per-rank balance</h2>", '<div class="grid">',
                  *[img(plots.rank_imbalance(m, r), f"{m} per rank") for m, r in ranks.items()],
                  "</div>"]
    parts += ["<h2>Top files by I/O time</h2>", top_files(modules)]
    parts += html_observed.section(report, observed, esc, table, img)  # call sites, trace
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>iochar: {esc(job.get('exe', 'report'))}</title><style>{CSS}</style></head>"
            "<body>" + "\n".join(parts) + "</body></html>\n")
