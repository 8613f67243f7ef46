"""The report's figures as matplotlib objects, for tests that look at what a reader sees
in them (the page itself holds PNGs): keep each figure plots.to_png renders, and read
an axis' tick labels."""

from matplotlib.backends.backend_agg import FigureCanvasAgg

from iochar import plots


def keeping(mp) -> list:
    """Make plots.to_png (through monkeypatch `mp`) keep the figures it renders; the
    list fills as figures are drawn."""
    kept = []
    real = plots.to_png

    def keep(fig):
        out = real(fig)
        FigureCanvasAgg(fig).draw()  # lay out again on a canvas we can measure
        kept.append(fig)
        return out

    mp.setattr(plots, "to_png", keep)
    return kept


def shown(axis) -> list:
    """(position, text) of the major tick labels inside the axis' view."""
    lo, hi = sorted(axis.get_view_interval())
    i = 0 if axis.axis_name == "x" else 1
    return [(float(t.get_position()[i]), t.get_text()) for t in axis.get_majorticklabels()
            if lo <= t.get_position()[i] <= hi]


def tick_labels(fig) -> list:
    """Every tick label text shown in the figure's axes."""
    return [t for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for _, t in shown(axis)]
