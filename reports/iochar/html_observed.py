"""The page's parts for what the observers recorded: the call-site table's rows and the
trace views (offset vs time per file, rank vs time), from plain data."""

from __future__ import annotations

import os

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection

from . import plots
from . import summary as S
from .safetext import escape

COLORS = {"read": "#4C72B0", "write": "#DD8452", "meta": "#55A868"}
MAX_FILES = 6  # offset-vs-time panels


def _floats(col) -> np.ndarray:
    return col.to_numpy(dtype=np.float64)


@plots.literal_text
def offset_vs_time(trace) -> str:
    """One panel per file (the busiest): each segment a line from start to end at its offset."""
    data = trace[(trace["op"] != "meta") & (trace["offset"] >= 0) & (trace["length"] > 0)]
    # grouped by record id, not path: a path may hold bytes that are not UTF-8, which
    # pandas cannot use as a group key
    if "record_id" not in data:  # a hand-built frame: the path's bytes are the key
        data = data.assign(record_id=[os.fsencode(p) for p in data["path"]])
    ids = list(data.groupby("record_id")["length"].sum()
               .sort_values(ascending=False, kind="stable").index[:MAX_FILES]) or [None]
    fig, axes = plots.new_figure(len(ids), 1, figsize=(9, 0.6 + 2.2 * len(ids)),
                                squeeze=False)
    for ax, rid in zip(axes[:, 0], ids):
        d = data[data["record_id"] == rid] if rid is not None else data.iloc[:0]
        if d.empty:
            plots.no_data(ax)
            continue
        path = d["path"].iat[0]
        for op in ("read", "write"):
            x = d[d["op"] == op]
            if len(x):
                # two collections per op (the span of bytes, the span of time): drawing
                # costs the same for 10 segments or 150,000
                t0, t1 = _floats(x["start"]), _floats(x["end"])
                lo, n = _floats(x["offset"]), _floats(x["length"])
                mid = lo + n / 2
                ax.add_collection(LineCollection(
                    np.stack([np.c_[t0, lo], np.c_[t0, lo + n]], axis=1),
                    colors=COLORS[op], linewidths=2, label=op))
                ax.add_collection(LineCollection(
                    np.stack([np.c_[t0, mid], np.c_[np.maximum(t1, t0), mid]], axis=1),
                    colors=COLORS[op]))
        ax.autoscale_view()
        ax.set_title(escape(path), fontsize=9, loc="left")
        ax.set_ylabel("offset")
        plots.binary_axis(ax.yaxis, float((d["offset"] + d["length"]).max()))
        plots.legend_beside(ax)
        plots.plain_seconds(ax.xaxis)
    axes[-1, 0].set_xlabel("seconds since job start")
    fig.suptitle("File offsets over time")
    return plots.to_png(fig)


@plots.literal_text
def rank_vs_time(trace) -> str:
    """Each rank a row; each segment a bar from start to end, coloured by operation."""
    ranks = sorted(trace["rank"].unique())
    fig, ax = plots.new_figure(figsize=(9, 0.8 + 0.3 * min(max(len(ranks), 1), 32)))
    for op in ("read", "write", "meta"):
        x = trace[trace["op"] == op]
        if len(x):  # one collection of rectangles per op, not a patch per segment
            y, t0 = _floats(x["rank"]), _floats(x["start"])
            t1 = t0 + np.maximum(_floats(x["end"]) - t0, 1e-6)
            box = np.stack([np.c_[t0, y - 0.35], np.c_[t1, y - 0.35], np.c_[t1, y + 0.35],
                            np.c_[t0, y + 0.35]], axis=1)
            ax.add_collection(PolyCollection(box, facecolors=COLORS[op], edgecolors="none",
                                             label=op))
    ax.autoscale_view()
    plots.integer_ticks(ax.yaxis)
    ax.set_ylabel("rank")
    ax.set_xlabel("seconds since job start")
    ax.set_title("Ranks over time")
    plots.legend_beside(ax)
    return plots.to_png(fig)


def section(report: dict, observed=None) -> dict:
    """The page's data for call sites and the trace: `callsites` (table rows) and
    `trace` ({"note", "figures"}, or None when the log has no trace)."""
    rows = [[s["module"], s["site"], " < ".join(s["stack"][1:4]), f"{s['reads']:,}",
             f"{s['writes']:,}", f"{s['meta']:,}", S.human_bytes(s["bytes_read"]),
             S.human_bytes(s["bytes_written"]),
             S.human_bytes(s["dominant_size"]) if s["dominant_size"] is not None else "",
             S.human_time(s["time_read"] + s["time_write"] + s["time_meta"]),
             f"{s['nranks']:,}"] for s in report.get("callsites") or []]
    tr = report.get("trace")
    if not tr:
        return {"callsites": rows, "trace": None}
    note = (f"{tr['segments']:,} segments" + (f"; {tr['dropped']:,} dropped when "
            "IOCHAR_TRACE_MEMORY filled (the first ones are kept)" if tr["dropped"] else ""))
    trace = getattr(observed, "trace", None)
    figures = [{"png": offset_vs_time(trace), "alt": "offset vs time"},
               {"png": rank_vs_time(trace), "alt": "rank vs time"}] \
        if trace is not None and len(trace) else []
    return {"callsites": rows, "trace": {"note": note, "figures": figures}}
