"""HTML parts for what the observers recorded: the call-site table and the trace
views (offset vs time per file, rank vs time), from plain data."""

from __future__ import annotations

import numpy as np

from . import plots
from . import summary as S
from .safetext import escape

COLORS = {"read": "#4C72B0", "write": "#DD8452", "meta": "#55A868"}
MAX_FILES = 6  # offset-vs-time panels
MAX_RANK_ROWS = 128  # rank-vs-time rows: the ranks with the most segments


@plots.literal_text
def offset_vs_time(trace) -> str:
    """One panel per file (the busiest): each segment a line from start to end at its offset."""
    data = trace[(trace["op"] != "meta") & (trace["offset"] >= 0) & (trace["length"] > 0)]
    # grouped by record id, not path: a path may hold bytes that are not UTF-8, which
    # pandas cannot use as a group key
    ids = list(data.groupby("record_id")["length"].sum()
               .sort_values(ascending=False, kind="stable").index[:MAX_FILES]) or [None]
    fig, axes = plots._subplots(len(ids), 1, figsize=(9, 0.6 + 2.2 * len(ids)),
                                squeeze=False)
    for ax, rid in zip(axes[:, 0], ids):
        d = data[data["record_id"] == rid] if rid is not None else data.iloc[:0]
        if d.empty:
            plots._empty(ax)
            continue
        path = d["path"].iat[0]
        for op in ("read", "write"):
            x = d[d["op"] == op]
            if len(x):
                mid = (x["offset"] + x["length"] / 2).to_numpy()
                ax.errorbar(x["start"].to_numpy(), mid, yerr=(x["length"] / 2).to_numpy(),
                            fmt="none", ecolor=COLORS[op], elinewidth=2, label=op)
                ax.hlines(mid, x["start"], np.maximum(x["end"], x["start"]), colors=COLORS[op])
        ax.set_title(escape(path), fontsize=9, loc="left")
        ax.set_ylabel("offset (bytes)")
        ax.legend(loc="upper left", fontsize=8)
    axes[-1, 0].set_xlabel("seconds since job start")
    return plots.to_png(fig)


@plots.literal_text
def rank_vs_time(trace) -> str:
    """Each rank a row; each segment a bar from start to end, coloured by operation."""
    busiest = trace["rank"].value_counts(sort=True).index[:MAX_RANK_ROWS]
    trace = trace[trace["rank"].isin(busiest)]
    ranks = sorted(busiest)
    fig, ax = plots._subplots(figsize=(9, 0.8 + 0.3 * max(len(ranks), 1)))
    row = {r: i for i, r in enumerate(ranks)}
    for op in ("read", "write", "meta"):
        x = trace[trace["op"] == op]
        if len(x):
            y = x["rank"].map(row).to_numpy()
            width = np.maximum((x["end"] - x["start"]).to_numpy(), 1e-6)
            ax.barh(y, width, left=x["start"].to_numpy(), height=0.7, color=COLORS[op],
                    label=op)
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([str(r) for r in ranks], fontsize=8)
    ax.set_ylabel("rank")
    ax.set_xlabel("seconds since job start")
    ax.legend(loc="upper right", fontsize=8)
    return plots.to_png(fig)


def section(report: dict, observed=None, esc=str, table=None, img=None) -> list:
    """HTML parts (a list of strings) for call sites and trace; empty when none."""
    parts = []
    sites = report.get("callsites") or []
    if sites:
        rows = [[s["module"], s["site"], " < ".join(s["stack"][1:4]), f"{s['reads']:,}",
                 f"{s['writes']:,}", f"{s['meta']:,}", S.human_bytes(s["bytes_read"]),
                 S.human_bytes(s["bytes_written"]),
                 S.human_bytes(s["dominant_size"]) if s["dominant_size"] is not None else "",
                 S.human_time(s["time_read"] + s["time_write"] + s["time_meta"]),
                 f"{s['nranks']:,}"] for s in sites]
        parts += ["<h2>Call sites</h2>",
                  table(["module", "site", "called from", "reads", "writes", "meta", "read",
                         "written", "dominant size", "time", "ranks"], rows, left=3)]
    tr = report.get("trace")
    trace = getattr(observed, "trace", None)
    if tr:
        note = (f"{tr['segments']:,} segments" + (f"; {tr['dropped']:,} dropped when "
                "IOCHAR_TRACE_MEMORY filled (the first ones are kept)" if tr["dropped"] else ""))
        parts += ["<h2>Trace</h2>", f"<p class='muted'>{esc(note)}</p>"]
        if trace is not None and len(trace):
            parts += [img(offset_vs_time(trace), "offset vs time"),
                      img(rank_vs_time(trace), "rank vs time")]
    return parts
