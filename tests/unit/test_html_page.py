"""The HTML page from its template: every value from a log printed escaped exactly once
(the text report's escapes for control characters and invalid UTF-8, then HTML), in
every place the page shows one; the page's parts present or left out with the data."""

import os

import pytest

from iochar import html, html_observed, plots
from iochar.safetext import TRUNCATED_NOTE

# a name as the reader holds it (a byte that is not UTF-8 as a lone surrogate), and the
# page's text for it: safetext's escapes, then HTML's, each once
ODD = os.fsdecode(b"<a\"b'&c\x1b[1m\xff")
SHOWN = "&lt;a&#34;b&#39;&amp;c\\x1b[1m\\xff"


@pytest.fixture(autouse=True)
def no_figures(monkeypatch):
    """Figures stubbed (they are tested on their own): this is about the page's text."""
    for mod, names in ((plots, ("cost_per_module", "op_counts", "size_histogram",
                                "io_over_time", "rank_imbalance")),
                       (html_observed, ("offset_vs_time", "rank_vs_time"))):
        for name in names:
            monkeypatch.setattr(mod, name, lambda *a, _n=name, **k: f"PNG{_n}")


def module(**kw) -> dict:
    s = {"files": 1, "files_shared": 0, "reads": 2, "writes": 3, "bytes_read": 4096,
         "bytes_written": 0, "time_read": 0.5, "time_write": 0.25, "time_meta": 0.0,
         "slowest_rank": {"rank": 0, "time": 0.75}, "share_of_runtime": {"io": 0.5},
         "bandwidth": {"total": 8192}}
    return {**s, **kw}


class Observed:
    trace = [1]  # any non-empty trace: the figures are stubbed


def odd_report() -> dict:
    """ODD in every text a log can bring to the page (22 places)."""
    top = {"path": ODD, "truncated": True, "shared": False, "time": 1.0, "time_read": 0.5,
           "time_write": 0.5, "time_meta": 0.0, "bytes_read": 1, "bytes_written": 2}
    return {
        "job": {"exe": ODD, "cmdline": ODD, "nprocs": 4, "nnodes": 1, "jobid": ODD,
                "user": ODD, "hostname": ODD, "version": ODD, "warnings": f"{ODD}\nsecond"},
        "modules": {"POSIX": module(top_files=[top], unknown={ODD: 2},
                                    size_histogram={"read": {"0_100": 1}})},
        "advice": [{"id": ODD, "severity": "warn", "message": ODD, "recommendation": ODD,
                    "example": f"{ODD}\nline 2", "files": [ODD, ODD], "where": ODD,
                    "evidence": {ODD: 1_000_000, "text": ODD}, "cost": {"io_time_share": 0.5}}],
        "callsites": [{"module": "POSIX", "site": ODD, "stack": ["x", ODD, ODD], "reads": 1,
                       "writes": 0, "meta": 0, "bytes_read": 1, "bytes_written": 0,
                       "dominant_size": None, "time_read": 0.1, "time_write": 0.0,
                       "time_meta": 0.0, "nranks": 1}],
        "trace": {"segments": 2000, "dropped": 10}}


def test_every_value_from_a_log_is_escaped_once():
    page = html.render(odd_report(), {}, {}, Observed())
    page.encode("utf-8")  # no lone surrogate left: valid UTF-8 on disk
    assert not [c for c in page if not c.isprintable() and c != "\n"]
    assert page.count(SHOWN) == 22
    assert "&amp;lt;" not in page and "&amp;#" not in page and "<a" not in page
    for part in (f"<title>iochar: {SHOWN}</title>", f"<h1>iochar report: {SHOWN}</h1>",
                 f"<td>{SHOWN} / {SHOWN} / {SHOWN}</td>", f"<td>{SHOWN}</td></tr>",
                 f"<b>{SHOWN}</b> &mdash; {SHOWN} (50% of I/O time)<p>&rarr; {SHOWN}</p>",
                 f'<pre class="example">{SHOWN}\nline 2</pre>',
                 f'<p class="muted">files: {SHOWN}, {SHOWN}</p>',
                 f'<p class="muted">at {SHOWN}</p>',
                 f'<td class="l">{SHOWN}</td><td>1,000,000</td>', f"<td>{SHOWN}</td>",
                 f'<td class="l">{SHOWN}{TRUNCATED_NOTE}</td>',
                 f'<td class="l">POSIX</td><td class="l">{SHOWN}</td><td>2</td>',
                 f'<td class="l">{SHOWN}</td><td class="l">{SHOWN} &lt; {SHOWN}</td>',
                 "<p class=\"muted\">2,000 segments; 10 dropped when IOCHAR_TRACE_MEMORY "
                 "filled (the first ones are kept)</p>"):
        assert part in page, part


def test_parts_follow_the_data():
    bare = html.render({"job": {}, "modules": {}}, None, None)
    assert "<title>iochar: report</title>" in bare and "<h1>iochar report: ?</h1>" in bare
    assert "No advice: nothing in the counters matched a rule." in bare
    assert '<p class="muted">none</p>' in bare  # no top files
    assert bare.count("<img") == 1 and 'alt="I/O over time"' in bare
    for absent in ("Access sizes", "Per-rank balance", "Call sites", "Trace", "did not know"):
        assert absent not in bare
    full = html.render(odd_report(), {}, {}, Observed())
    assert [a.split('"')[1] for a in full.split("alt=")[1:]] == [
        "I/O cost per module", "operation counts", "POSIX access sizes", "I/O over time",
        "offset vs time", "rank vs time"]
    assert 'src="data:image/png;base64,PNGop_counts"' in full
    no_figures = {**odd_report(), "trace": {"segments": 1, "dropped": 0}}
    page = html.render(no_figures, {}, {}, None)  # a trace summary, no trace rows
    assert '<p class="muted">1 segments</p>' in page and "rank vs time" not in page
