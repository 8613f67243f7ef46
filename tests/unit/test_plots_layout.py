"""Figures of the HTML page, checked on the drawn matplotlib objects: legends beside the
data, titles clear of each other, whole-number rank ticks, byte offsets in binary units,
tick labels as plain text (mathtext is off: a `$...$` label would print raw)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.text import Text

from figures import keeping, shown
from iochar import html_observed, plots
from report_frames import ranks_frame


@pytest.fixture
def figures(monkeypatch):
    return keeping(monkeypatch)


@pytest.fixture(scope="module")
def every_figure():
    with pytest.MonkeyPatch.context() as mp:
        return draw_all(keeping(mp))


def extent(artist, fig):
    return artist.get_window_extent(fig.canvas.get_renderer())


def overlap(a, b) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def trace(nranks=5):
    rows = []
    for r in range(nranks):
        for i in range(4):
            rows.append({"path": f"/scratch/out.{i % 2}", "rank": r, "op": "write",
                         "start": 0.1 * i + 0.01 * r, "end": 0.1 * i + 0.01 * r + 0.005,
                         "offset": (r * 4 + i) * 3 * (1 << 20), "length": 3 << 20})
    return pd.DataFrame(rows)


def draw_all(figures):
    mods = {m: {"time_read": 1.0, "time_write": 2.0, "time_meta": 0.5, "reads": 10,
                "writes": 20, "opens": 3, "seeks": 0, "stats": 1, "syncs": 1}
            for m in ("POSIX", "MPIIO", "STDIO")}
    plots.cost_per_module(mods)
    plots.op_counts(mods)
    plots.size_histogram("POSIX", {"read": {"0_100": 50}, "write": {"1M_4M": 80}})
    t = np.arange(50)
    s = {"width": 1.0, "bytes_read": t * 1000, "bytes_written": t[::-1] * 1000,
         "reads": t, "writes": t}
    plots.io_over_time({"POSIX": s, "MPIIO": s}, 50.0)
    plots.rank_imbalance("POSIX", ranks_frame(np.linspace(1, 2, 5)))
    html_observed.offset_vs_time(trace())
    html_observed.rank_vs_time(trace())
    return figures


def test_legends_never_over_the_data(every_figure):
    checked = 0
    for fig in every_figure:
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is not None:
                assert not overlap(extent(leg, fig), extent(ax.patch, fig)), ax.get_title()
                checked += 1
    assert checked >= 10


def test_titles_do_not_overlap(every_figure):
    for fig in every_figure:
        texts = [t for ax in fig.axes for t in (ax.title, ax._left_title) if t.get_text()]
        if fig._suptitle is not None:
            texts.append(fig._suptitle)
        boxes = [extent(t, fig) for t in texts]
        axes = [extent(ax.patch, fig) for ax in fig.axes]
        for i, b in enumerate(boxes):
            assert not any(overlap(b, c) for c in boxes[i + 1:])
            assert not any(overlap(b, a) for a in axes), texts[i].get_text()


def test_rank_ticks_are_whole_numbers(figures):
    # 3 ranks: matplotlib's own locator would put ticks at 0.5 steps
    plots.rank_imbalance("POSIX", ranks_frame(np.linspace(1, 2, 3)))
    html_observed.rank_vs_time(trace(3))
    imb, rvt = figures
    for axis in (imb.axes[1].xaxis, rvt.axes[0].yaxis):
        ticks = [v for v in axis.get_ticklocs() if axis.get_view_interval()[0] <= v
                 <= axis.get_view_interval()[1]]
        assert ticks and all(float(v).is_integer() for v in ticks)


def test_one_rank_is_ticked_at_rank_0_only(figures):
    """A module one rank used: one bar at x=0, ticked 0 (not -0.4 ... 0.4)."""
    plots.rank_imbalance("POSIX", ranks_frame([1.0]))
    html_observed.rank_vs_time(trace(1))
    imb, rvt = figures
    assert shown(imb.axes[1].xaxis) == [(0.0, "0")]
    assert shown(rvt.axes[0].yaxis) == [(0.0, "0")]


def test_operation_counts_are_whole_numbers(figures):
    plots.size_histogram("POSIX", {"read": {"0_100": 2}, "write": {"1M_4M": 1}})
    (fig,) = figures
    assert shown(fig.axes[0].yaxis) == [(0.0, "0"), (1.0, "1"), (2.0, "2")]


def test_log_count_axis_labels_are_plain_text(figures):
    """The symlog 'Operation counts' axis: '1,000', not `$\\mathdefault{10^{3}}$`."""
    mods = {"POSIX": {"time_read": 1.0, "time_write": 2.0, "time_meta": 0.5, "reads": 10**6,
                      "writes": 2000, "opens": 3, "seeks": 0, "stats": 1, "syncs": 1}}
    plots.op_counts(mods)
    (fig,) = figures
    assert [t for _, t in shown(fig.axes[0].yaxis)] == [
        "0", "1", "10", "100", "1,000", "10,000", "100,000", "1,000,000"]


def test_no_text_in_any_figure_is_markup(every_figure):
    texts = [t.get_text() for fig in every_figure for t in fig.findobj(Text)]
    assert len([t for t in texts if t]) > 100
    assert [t for t in texts if "$" in t or "\\" in t] == []


def test_offsets_in_binary_units(figures):
    html_observed.offset_vs_time(trace())
    (fig,) = figures
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(lb.endswith(("B", "KiB", "MiB", "GiB")) for lb in labels)
    assert "MiB" in " ".join(labels)
    assert ax.yaxis.get_offset_text().get_text() == ""  # no "1e7" multiplier
    step = np.diff(ax.get_yticks())[0]
    assert step == 2 ** int(np.log2(step))  # powers of two
