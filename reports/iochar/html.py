"""Self-contained HTML pages (inline CSS, figures as data: URIs, no scripts, no network):
the job page's data from a report, laid out by templates/report.html.j2, and the
template environment every page shares (templates/base.html.j2; Jinja2, autoescaping on)."""

from __future__ import annotations

import functools
import os

import jinja2
from markupsafe import Markup

from . import flags as F
from . import html_observed, jobviews, plots
from . import summary as S
from .safetext import TRUNCATED_NOTE, escape, object_strings, when


def _text(value):
    """What the template prints: a value's text escaped as in the text report (control
    characters, invalid UTF-8), then HTML-escaped by autoescaping; markup the template
    made itself (a macro's output) passes as it is."""
    return value if isinstance(value, Markup) else escape(value)


@functools.cache
def template(name: str = "report.html.j2") -> jinja2.Template:
    """A page template of templates/ (all extend base.html.j2), in the one environment."""
    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"),
                             autoescape=True, finalize=_text, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    return env.get_template(name)


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
    terms (its share of the I/O time, or of the bytes, when the run time is unknown).
    A cost model's estimate says what it rests on: "about 40 s: 28 to 55 s" when fitted,
    "up to 12 min" when the log supports only bounds (advice/cost.py)."""
    if "run_share" in cost:
        share = _share(cost["run_share"]) if cost["run_share"] or not cost["seconds"] \
            else "<0.001%"
        if cost.get("fitted") == 0:
            return (f" (up to {S.human_time(cost['seconds'])} over all ranks, up to {share} "
                    "of the run)")
        if cost.get("fitted") and cost.get("high_s", 0) > cost.get("low_s", 0):
            return (f" (about {S.human_time(cost['seconds'])}: "
                    f"{S.human_time(cost['low_s'])} to {S.human_time(cost['high_s'])} over "
                    f"all ranks, {share} of the run)")
        return f" ({S.human_time(cost['seconds'])} over all ranks, {share} of the run)"
    if "io_time_share" in cost:
        return f" ({'up to ' if cost.get('fitted') == 0 else ''}" \
               f"{_share(cost['io_time_share'])} of I/O time)"
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


def heatmap_section(heatmaps: dict | None, job: dict, dxt=None) -> dict:
    """The rank x time figures (POSIX, MPIIO, STDIO that moved bytes) and their note;
    a Darshan log without HEATMAP but with DXT: from its DXT segments."""
    nprocs = int(job.get("nprocs") or 1) if str(job.get("nprocs", "")).isdigit() else 1
    figs, per = [], 1
    src = "Darshan's HEATMAP module" if job.get("source") == "darshan" else \
        "the per-rank time series the runtime keeps (no trace needed)"
    if not any(h is not None and len(h["ranks"]) for h in (heatmaps or {}).values()) \
            and dxt is not None and len(dxt):
        heatmaps = jobviews.heat_from_trace(dxt, job.get("run_time", 0))
        src = "Darshan's DXT segments (the log has no HEATMAP module)"
    for m in jobviews.HEAT_MODULES:
        h = (heatmaps or {}).get(m)
        if h is None or not len(h["ranks"]):
            continue
        mat = jobviews.heat_matrix(h, nprocs)
        per = max(per, mat["per_row"])
        figs.append({"png": plots.heatmap(m, mat, job.get("run_time", 0)),
                     "alt": f"{m} heatmap"})
    note = f"Bytes read and written per rank and time bin, from {src}" + \
        (f"; {per:,} neighbouring ranks summed a row." if per > 1 else ".")
    return {"heatmaps": figs, "heatmap_note": note}


def view_rows(records: dict | None, mounts) -> dict:
    """Tables and figures of data access by file system and of files by kind."""
    fs = jobviews.file_systems(records or {}, mounts) if records else []
    kinds = jobviews.file_kinds(records or {}) if records else []
    return {
        "file_systems": [[r["mount_point"] or "(other)", r["fs_type"] or "?", f"{r['files']:,}",
                          f"{r['reads']:,}", f"{r['writes']:,}", S.human_bytes(r["bytes_read"]),
                          S.human_bytes(r["bytes_written"])] for r in fs],
        "file_system_figure": {"png": plots.file_system_bytes(fs), "alt": "bytes per file system"}
        if fs else None,
        "file_kinds": [[r["module"], r["kind"], f"{r['files']:,}", S.human_bytes(r["bytes_read"]),
                        S.human_bytes(r["bytes_written"]), S.human_bytes(r["avg_size"]),
                        S.human_bytes(r["max_size"])] for r in kinds if r["files"] or
                       r["kind"] == "all"]}


def _dxt_section(dxt) -> dict | None:
    """A Darshan log's DXT segments drawn as the trace (iochar's own trace: None)."""
    if dxt is None or not len(dxt):
        return None
    return {"note": f"{len(dxt):,} DXT segments (Darshan's extended tracing)",
            "figures": [{"png": html_observed.offset_vs_time(dxt), "alt": "offset vs time"},
                        {"png": html_observed.rank_vs_time(dxt), "alt": "rank vs time"}]}


@object_strings
def render(report: dict, series: dict | None = None, ranks: dict | None = None,
           observed=None, heatmaps: dict | None = None, records: dict | None = None,
           mounts=None, dxt=None) -> str:
    """report: {"job", "modules", "advice"} as iochar-report --json prints it; the rest
    from the log (jobreport.load_log's data): series, ranks, observed (call sites,
    trace), heatmaps (Log.heatmap per module), records and mounts (file systems and
    file kinds), dxt (a Darshan log's DXT segments as a trace frame)."""
    job, modules = report["job"], report["modules"]
    series = {m: s for m, s in (series or {}).items() if s is not None}
    ranks = {m: r for m, r in (ranks or {}).items() if r is not None and len(r)}
    module_figures = [{"png": plots.cost_per_module(modules), "alt": "I/O cost per module"},
                      {"png": plots.op_counts(modules), "alt": "operation counts"}] \
        if modules else []
    observed_part = html_observed.section(report, observed)
    if observed_part["trace"] is None:
        observed_part["trace"] = _dxt_section(dxt)
    return template().render(
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
        **heatmap_section(heatmaps, job, dxt),
        **view_rows(records, mounts),
        pattern_figure={"png": plots.access_pattern(modules), "alt": "access pattern"}
        if any(s.get("pattern") for s in modules.values()) else None,
        rank_figures=[{"png": plots.rank_imbalance(m, r), "alt": f"{m} per rank"}
                      for m, r in ranks.items()],
        top_files=top_file_rows(modules),
        **observed_part) + "\n"
