"""One self-contained HTML page (inline CSS, figures as data: URIs, no scripts, no network):
the page's data from a report, laid out by templates/report.html.j2 (Jinja2, autoescaping on)."""

from __future__ import annotations

import functools
import os

import jinja2
from markupsafe import Markup

from . import flags as F
from . import html_observed, plots
from . import summary as S
from .safetext import TRUNCATED_NOTE, escape, object_strings, when


def _text(value):
    """What the template prints: a value's text escaped as in the text report (control
    characters, invalid UTF-8), then HTML-escaped by autoescaping; markup the template
    made itself (a macro's output) passes as it is."""
    return value if isinstance(value, Markup) else escape(value)


@functools.cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"),
                             autoescape=True, finalize=_text, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


def job_rows(job: dict) -> list:
    rows = [("executable", job.get("cmdline") or job.get("exe", "?"))]
    if job.get("interpreter"):  # an interpreter's script or module names the program
        rows.append(("program", f"{os.path.basename(str(job.get('program')))} "
                                f"({os.path.basename(str(job['interpreter']))})"))
    rows += [("processes / nodes", f"{job.get('nprocs', '?')} / {job.get('nnodes', '?')}"),
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
    rows += [("warning", w) for w in job_warnings(job)]
    return rows


def job_warnings(job: dict) -> list:
    """JOB `warnings` (one per line, or already a list) as a list of lines."""
    w = job.get("warnings")
    if isinstance(w, str):
        return [line for line in w.split("\n") if line]
    return [str(x) for x in w] if isinstance(w, list) else []


def module_rows(modules: dict) -> list:
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
    return rows


def unknown_rows(modules: dict) -> list:
    """(module, counter, records) of values the log did not know (Darshan's -1...)."""
    return [(m, c, f"{n:,}") for m, s in modules.items()
            for c, n in (s.get("unknown") or {}).items()]


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


def advice_items(advice: list) -> list:
    out = []
    for a in advice:
        a = a if isinstance(a, dict) else a.to_dict()
        out.append({"severity": a["severity"], "id": a["id"], "message": a["message"],
                    "cost": cost_note(a.get("cost") or {}),
                    "recommendation": a["recommendation"],
                    "example": (a.get("example") or "").splitlines(),
                    "files": a.get("files") or [], "where": a.get("where") or "",
                    "evidence": [(k, f"{v:,}" if isinstance(v, int) else v)
                                 for k, v in a["evidence"].items()]})
    return out


def top_file_rows(modules: dict) -> list:
    # the template escapes each cell once: the path goes in raw, with the truncation note
    return [[m, f["path"] + (TRUNCATED_NOTE if f.get("truncated") else ""),
             "yes" if f["shared"] else "", S.human_time(f["time"]),
             S.human_time(f["time_read"]), S.human_time(f["time_write"]),
             S.human_time(f["time_meta"]), S.human_bytes(f["bytes_read"]),
             S.human_bytes(f["bytes_written"])]
            for m, s in modules.items() for f in s.get("top_files", [])]


@object_strings
def render(report: dict, series: dict | None = None, ranks: dict | None = None,
           observed=None) -> str:
    """report: {"job", "modules", "advice"} as iochar-report --json prints it."""
    job, modules = report["job"], report["modules"]
    series = {m: s for m, s in (series or {}).items() if s is not None}
    ranks = {m: r for m, r in (ranks or {}).items() if r is not None and len(r)}
    module_figures = [{"png": plots.cost_per_module(modules), "alt": "I/O cost per module"},
                      {"png": plots.op_counts(modules), "alt": "operation counts"}] \
        if modules else []
    return _template().render(
        title=job.get("exe", "report"), exe=job.get("exe", "?"), job=job_rows(job),
        advice=advice_items(report.get("advice", [])),
        modules=module_rows(modules), unknown=unknown_rows(modules),
        module_figures=module_figures,
        size_figures=[{"png": plots.size_histogram(m, s["size_histogram"]),
                       "alt": f"{m} access sizes"}
                      for m, s in modules.items() if "size_histogram" in s],
        top_sizes=[[m, S.human_bytes(t["size"]), f"{t['count']:,}"]
                   for m, s in modules.items() for t in s.get("top_sizes", [])],
        io_over_time={"png": plots.io_over_time(series, job.get("run_time", 0)),
                      "alt": "I/O over time"},
        rank_figures=[{"png": plots.rank_imbalance(m, r), "alt": f"{m} per rank"}
                      for m, r in ranks.items()],
        top_files=top_file_rows(modules),
        **html_observed.section(report, observed)) + "\n"
