"""Figures of the HTML page, checked on the drawn matplotlib objects: legends beside the
data, titles clear of each other, whole-number rank ticks, byte offsets in binary units."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from iochar import html_observed, plots
from report_frames import ranks_frame


def _keeping(mp):
    """Make plots.to_png keep the figures it renders, for inspection."""
    kept = []
    real = plots.to_png

    def keep(fig):
        out = real(fig)
        FigureCanvasAgg(fig).draw()  # lay out again on a canvas we can measure
        kept.append(fig)
        return out

    mp.setattr(plots, "to_png", keep)
    return kept


@pytest.fixture
def figures(monkeypatch):
    return _keeping(monkeypatch)


@pytest.fixture(scope="module")
def every_figure():
    with pytest.MonkeyPatch.context() as mp:
        return draw_all(_keeping(mp))


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
