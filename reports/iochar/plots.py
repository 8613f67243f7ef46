"""Figures for the HTML report: matplotlib (Agg canvas) to base64 PNG, from plain data.

Text in figures comes from logs (file names, module names): it is escaped
(safetext.escape) and never parsed as mathtext or TeX, so `$\\foo$` shows literally
and cannot fail the page. Values go to matplotlib as float64: a counter of 2**63-1
(or a sum past int64) plots instead of overflowing.
"""

from __future__ import annotations

import base64
import functools
import io
import math

import matplotlib
import numpy as np
from matplotlib.figure import Figure  # Agg canvas, no pyplot global state or display
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    MultipleLocator,
    NullFormatter,
    ScalarFormatter,
)

from . import schema as R
from . import summary as S
from .safetext import escape

COLORS = {"read": "#4C72B0", "write": "#DD8452", "meta": "#55A868"}
# every Text created while a figure is built and drawn reads these
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}
MAX_BARS = 4096  # bars per panel (ranks): more is unreadable and slow to draw


def literal_text(fn):
    """Build and render the figure with mathtext and TeX off (rc_context is scoped:
    the caller's own matplotlib settings are untouched)."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        with matplotlib.rc_context(LITERAL_TEXT):
            return fn(*args, **kw)
    return wrapper


def floats(values) -> np.ndarray:
    """Values as finite float64 (ints past int64 included; nan/inf as 0)."""
    out = np.array([_float(v) for v in values], dtype=np.float64) \
        if not isinstance(values, np.ndarray) else values.astype(np.float64)
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def _float(v) -> float:
    try:
        return float(v or 0)
    except (OverflowError, TypeError, ValueError):
        return 0.0


def to_png(fig) -> str:
    """Render and close a figure; base64 PNG text for a data: URI."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def new_figure(*args, figsize, **kw):
    # constrained layout keeps titles, labels and outside legends from overlapping
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(*args, **kw)


def legend_beside(ax, **kw):
    """The legend right of the axes, never over the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  fontsize=kw.pop("fontsize", 8), frameon=False, **kw)


def plain_seconds(axis):
    """Time axes: full values (0.65771), not an offset (1e-5+6.577e-1) to add in one's head."""
    axis.set_major_formatter(ScalarFormatter(useOffset=False))


def integer_ticks(axis):
    """Rank and count axes: whole numbers only, as many as the axis' length suits (as
    matplotlib's default locator). min_n_ticks=1: with one rank (an axis from -0.4 to
    0.4) it would otherwise fall back to fractional ticks."""
    axis.set_major_locator(MaxNLocator("auto", integer=True, min_n_ticks=1))


def log_counts(axis):
    """A symlog count axis labelled '0', '1', '10', '1,000' as plain text: matplotlib's
    own log labels are mathtext, which literal_text turns off (they would print as
    `$\\mathdefault{10^{3}}$`)."""
    axis.set_major_formatter(FuncFormatter(_power_of_ten))


def _power_of_ten(v: float, _pos=None) -> str:
    # the locator puts major ticks at 0 and powers of ten; anything else stays unlabelled
    if v == 0 or float(math.log10(abs(v))).is_integer():
        return f"{v:,.0f}"
    return ""


def binary_axis(axis, vmax: float):
    """Byte axes: ticks at powers-of-two steps labelled in B/KiB/MiB/GiB."""
    vmax = max(float(vmax), 1.0) if math.isfinite(float(vmax)) else 1.0
    step = 2.0 ** max(math.ceil(math.log2(vmax / 6)), 0)
    axis.set_major_locator(MultipleLocator(step))
    # a tick below 0 (the axes' margin under offset 0) is no amount of bytes
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: S.human_bytes(v) if v >= 0 else ""))


def no_data(ax, text="no data"):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#888")
    ax.set_xticks([])
    ax.set_yticks([])


@literal_text
def cost_per_module(modules: dict) -> str:
    """Stacked read/write/meta time (per-process average) per module."""
    names = [escape(m) for m in modules]
    fig, ax = new_figure(figsize=(7, 0.5 + 0.45 * max(len(names), 1)))
    left = np.zeros(len(names))
    for kind in ("read", "write", "meta"):
        v = floats([modules[m].get(f"time_{kind}") for m in modules])
        ax.barh(names, v, left=left, color=COLORS[kind], label=kind)
        left += v
    if not names:
        no_data(ax)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per process (average)")
    ax.set_title("I/O cost per module")
    legend_beside(ax)
    return to_png(fig)


@literal_text
def op_counts(modules: dict) -> str:
    """Grouped bars of operation counts per module (log scale)."""
    kinds = ("reads", "writes", "opens", "seeks", "stats", "syncs")
    names = [escape(m) for m in modules]
    fig, ax = new_figure(figsize=(7, 3))
    x = np.arange(len(names))
    w = 0.8 / len(kinds)
    for i, k in enumerate(kinds):
        ax.bar(x + i * w, floats([modules[m].get(k) for m in modules]), w, label=k)
    ax.set_xticks(x + 0.4 - w / 2, names)
    ax.set_yscale("symlog")
    log_counts(ax.yaxis)
    ax.set_ylabel("operations")
    ax.set_title("Operation counts")
    legend_beside(ax)
    if not names:
        no_data(ax)
    return to_png(fig)


@literal_text
def size_histogram(module: str, hist: dict) -> str:
    """Read and write counts per access-size bin."""
    fig, ax = new_figure(figsize=(7, 2.8))
    bins = sorted({b for kind in ("read", "write") for b in hist.get(kind, {})},
                  key=R.bin_bounds)  # the bins the log names, smallest first
    x = np.arange(len(bins))
    for off, kind in ((-0.2, "read"), (0.2, "write")):
        ax.bar(x + off, floats([hist.get(kind, {}).get(b) for b in bins]), 0.4,
               color=COLORS[kind], label=kind + "s")
    ax.set_xticks(x, bins, rotation=30, fontsize=8)
    integer_ticks(ax.yaxis)
    ax.set_ylabel("operations")
    ax.set_title(f"{escape(module)} access sizes")
    legend_beside(ax)
    return to_png(fig)


@literal_text
def io_over_time(series: dict, run_time: float = 0.0) -> str:
    """Bytes read and written per time bin, one panel per module."""
    mods = [m for m, s in series.items() if s is not None]
    fig, axes = new_figure(max(len(mods), 1), 1, figsize=(7, 1.2 + 1.6 * max(len(mods), 1)),
                             squeeze=False, sharex=True)
    for ax, m in zip(axes[:, 0], mods):
        s = series[m]
        w = float(s["width"])
        t = np.arange(len(s["bytes_read"])) * w
        for kind, key in (("read", "bytes_read"), ("write", "bytes_written")):
            ax.step(t, floats(np.asarray(s[key])) / w / 2**20, where="post",
                    color=COLORS[kind], label=kind)
        ax.set_ylabel(f"{escape(m)}\nMiB/s", fontsize=8)
        legend_beside(ax, fontsize=7)
    if not mods:
        no_data(axes[0, 0], "no time series in the log")
    else:
        if run_time and np.isfinite(float(run_time)) and float(run_time) > 0:
            axes[-1, 0].set_xlim(0, float(run_time))
        axes[-1, 0].set_xlabel("seconds since job start")
    fig.suptitle("I/O over time")
    return to_png(fig)


@literal_text
def rank_imbalance(module: str, ranks) -> str:
    """Per-rank bytes and stacked read/write/meta time (from RANKS); past MAX_BARS
    ranks, the ones with the most I/O time."""
    fig, (a1, a2) = new_figure(2, 1, figsize=(7, 4), sharex=True)
    r = ranks.groupby("rank", as_index=False).sum()
    if len(r) > MAX_BARS:
        t = sum(floats(r[f"{k}_time"].to_numpy()) for k in ("read", "write", "meta"))
        r = r.iloc[np.sort(np.argsort(-t, kind="stable")[:MAX_BARS])]
    x = r["rank"].to_numpy()
    rd, wr = floats(r["bytes_read"].to_numpy()), floats(r["bytes_written"].to_numpy())
    a1.bar(x, rd, color=COLORS["read"], label="read")
    a1.bar(x, wr, bottom=rd, color=COLORS["write"], label="written")
    a1.set_ylabel("bytes")
    binary_axis(a1.yaxis, float((rd + wr).max()) if len(r) else 1.0)
    legend_beside(a1, fontsize=7)
    fig.suptitle(f"{escape(module)} per rank")
    bottom = np.zeros(len(r))
    for kind in ("read", "write", "meta"):
        v = floats(r[f"{kind}_time"].to_numpy())
        a2.bar(x, v, bottom=bottom, color=COLORS[kind], label=kind)
        bottom += v
    a2.set_ylabel("seconds")
    a2.set_xlabel("rank")
    integer_ticks(a2.xaxis)
    legend_beside(a2, fontsize=7)
    return to_png(fig)


@literal_text
def heatmap(module: str, mat: dict, run_time: float = 0.0) -> str:
    """Bytes moved per rank (rows) and time bin (columns), a log colour scale; white
    where nothing moved."""
    from matplotlib.colors import LogNorm

    b = mat["bytes"]
    rows, nb = b.shape
    fig, ax = new_figure(figsize=(9, 2.2 + min(rows, 64) * 0.05))
    w = mat["width"]
    pos = b[b > 0]
    if pos.size:
        shown = np.where(b > 0, b, np.nan)
        im = ax.imshow(shown, aspect="auto", interpolation="nearest", origin="lower",
                       cmap="viridis", norm=LogNorm(vmin=float(pos.min()), vmax=float(pos.max())),
                       extent=(0, nb * w, -0.5, rows - 0.5))
        cb = fig.colorbar(im, ax=ax, pad=0.01)
        cb.set_label("bytes per bin", fontsize=8)
        # plain-text labels at powers of ten (LogNorm's own are mathtext, turned off here)
        cb.ax.yaxis.set_major_locator(LogLocator(base=10))
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: S.human_bytes(v)))
        cb.ax.yaxis.set_minor_formatter(NullFormatter())
        if run_time and np.isfinite(float(run_time)) and 0 < float(run_time) < nb * w:
            ax.set_xlim(0, max(float(run_time), w))
    else:
        no_data(ax)
    per = mat["per_row"]
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{int(v) * per:,}"))
    integer_ticks(ax.yaxis)
    ax.set_ylabel("rank" if per == 1 else f"rank ({per:,} a row)")
    ax.set_xlabel(f"seconds since job start ({w:.3g} s bins)")
    plain_seconds(ax.xaxis)
    ax.set_title(f"{escape(module)}: bytes read and written per rank over time "
                 f"({S.human_bytes(mat['read'])} read, {S.human_bytes(mat['written'])} written)",
                 fontsize=10)
    return to_png(fig)


PATTERN_COLORS = {"consecutive": "#2E8B57", "sequential": "#8FBC8F", "random": "#C0392B",
                  "first access": "#BBBBBB"}


@literal_text
def access_pattern(modules: dict) -> str:
    """Per module and direction, the accesses' shares: consecutive, sequential (not
    consecutive), random, and each file's first access (neither); beside them, the
    read/write mix of operations and of bytes."""
    rows = []
    for m, s in modules.items():
        for d in ("read", "write"):
            p = (s.get("pattern") or {}).get(d)
            if p and p["ops"]:
                con, seq, rnd = (float(p[k] or 0) for k in ("consecutive", "sequential",
                                                            "random"))
                rows.append((f"{escape(m)} {d}s", {
                    "consecutive": con, "sequential": max(seq - con, 0.0), "random": rnd,
                    "first access": max(1.0 - seq - rnd, 0.0)}))
    mix = [(escape(m), float(s.get("reads") or 0), float(s.get("writes") or 0),
            float(s.get("bytes_read") or 0), float(s.get("bytes_written") or 0))
           for m, s in modules.items() if (s.get("reads") or 0) + (s.get("writes") or 0)]
    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 0.9 + 0.32 * max(len(rows), 2 * len(mix), 2)),
                               width_ratios=(3, 2))
    left = np.zeros(len(rows))
    for k, c in PATTERN_COLORS.items():
        v = 100 * floats([r[1][k] for r in rows])
        a1.barh([r[0] for r in rows], v, left=left, color=c, label=k)
        left += v
    if not rows:
        no_data(a1, "no sequential/consecutive counters")
    a1.invert_yaxis()
    a1.set_xlim(0, 100)
    a1.set_xlabel("% of accesses")
    a1.set_title("Access pattern", fontsize=10)
    a1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25 if len(rows) < 4 else -0.12),
              ncol=4, fontsize=7, frameon=False)
    labels, rd, wr = [], [], []
    for m, r, w, br, bw in mix:
        for what, x, y in (("ops", r, w), ("bytes", br, bw)):
            labels.append(f"{m} {what}")
            rd.append(100 * x / (x + y) if x + y else 0.0)
            wr.append(100 * y / (x + y) if x + y else 0.0)
    a2.barh(labels, rd, color=COLORS["read"], label="read")
    a2.barh(labels, wr, left=rd, color=COLORS["write"], label="write")
    if not labels:
        no_data(a2)
    a2.invert_yaxis()
    a2.set_xlim(0, 100)
    a2.set_xlabel("% of operations / of bytes")
    a2.set_title("Read/write mix", fontsize=10)
    legend_beside(a2, fontsize=7)
    return to_png(fig)


@literal_text
def file_system_bytes(rows: list) -> str:
    """Bytes read and written per file system (mount point and type)."""
    names = [f"{escape(r['mount_point']) or '(other)'} [{escape(r['fs_type']) or '?'}]"
             for r in rows]
    fig, ax = new_figure(figsize=(7, 0.7 + 0.4 * max(len(rows), 1)))
    rd = floats([r["bytes_read"] for r in rows])
    wr = floats([r["bytes_written"] for r in rows])
    ax.barh(names, rd, color=COLORS["read"], label="read")
    ax.barh(names, wr, left=rd, color=COLORS["write"], label="written")
    if not rows:
        no_data(ax)
    ax.invert_yaxis()
    binary_axis(ax.xaxis, float((rd + wr).max()) if len(rows) else 1.0)
    ax.set_title("Data access by file system", fontsize=10)
    legend_beside(ax)
    return to_png(fig)
