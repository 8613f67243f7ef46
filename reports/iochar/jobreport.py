"""One job's report as plain data: load a log (or per-rank logs, or a directory) and
build the summary, advice and call-site annotations that every output format prints
(docs/report-json.md). Shared by iochar-report and iochar-diff, which never import
each other."""

from __future__ import annotations

from . import advice, callsites, html
from . import summary as S
from .darshan import DarshanLog, dxt_trace
from .log import open as open_log
from .safetext import object_strings


def load(paths: list) -> dict:
    """Plain data of one job from a log, several per-rank logs, or a directory."""
    return load_log(open_log(paths[0] if len(paths) == 1 else paths))


def load_log(log) -> dict:
    """Plain data of one job from an open iochar.Log."""
    data = S.gather(log)
    data["observed"] = callsites.from_log(log)  # call sites, trace (None: not recorded)
    # bytes per rank over time (HEAT sections, a Darshan log's HEATMAP): the page's heatmap
    data["heatmaps"] = {m: log.heatmap(m) for m in log.modules} if hasattr(log, "heatmap") \
        else {}
    # a Darshan log's DXT segments, drawn as the trace (iochar's own is in `observed`)
    data["dxt"] = dxt_trace(log.path) if isinstance(log, DarshanLog) else None
    # names cut at the runtime's path limit (a Darshan log has none)
    data["truncated"] = log.truncated_paths() if hasattr(log, "truncated_paths") else set()
    return data


@object_strings
def build(data: dict, cfg: dict | None = None) -> dict:
    """{"job", "modules", "advice"}: the report as --json prints it (docs/report-json.md)."""
    files: dict = {}  # per-file frames the summary builds, reused by the advice
    rep = S.summarize(data["job"], data["records"], data.get("ranks"), data.get("schemas"),
                      files=files)
    observed = data.get("observed")  # its trace times each access: the cost model's fit
    ctx = advice.Context(rep["job"], data["records"], data.get("ranks"), rep,
                         mounts=data.get("mounts"), files=files,
                         trace=getattr(observed, "trace", None))
    rep["advice"] = [a.to_dict() for a in advice.evaluate(ctx, cfg)]
    callsites.annotate(rep, data.get("observed"))
    cut = data.get("truncated") or set()
    for s in rep["modules"].values():
        for f in s.get("top_files", []):
            if f["path"] in cut:
                f["truncated"] = True
    warnings = html.job_warnings(rep["job"])
    if warnings:
        rep["job"]["warnings"] = warnings
    return rep
