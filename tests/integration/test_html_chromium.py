"""The HTML report rendered in headless Chromium: figures drawn, no console errors, offline;
its text and its figures' tick labels as a reader sees them."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from cdp import Browser, check_in_browser
from figures import keeping, shown, tick_labels
from iochar import html
from iochar import summary as S
from iochar.safetext import object_strings
from report_frames import MiB, frame, good_pattern, ranks_frame, run_advice, small_writes
from tool import LIB, mpiexec, run, workload

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "report-screenshot.png"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("IOCHAR_CHROMIUM_AS_USER"),
                             reason="the headless chromium recipe here runs as root (--no-sandbox)")
HAVE_CHROMIUM = pytest.mark.skipif(CHROMIUM is None,
                                   reason="chromium is not installed (apt-get install chromium)")

# Names as a log holds them (bytes that are not UTF-8 as lone surrogates), and as the page
# must show them: the text report's escapes (\x1b, \xff), applied once; `<`, `&` and quotes
# as themselves.
EXE, EXE_SHOWN = "/home/u/<app> & co\a", "/home/u/<app> & co\\x07"
LOG_FILE = os.fsdecode(b"/s/<log>&\"'\x1b[1m\xff.txt")
LOG_FILE_SHOWN = "/s/<log>&\"'\\x1b[1m\\xff.txt"


@object_strings  # frames holding a name that is not UTF-8, as the log reader builds them
def demo_page() -> str:
    """A job with a good MPI-IO phase, small POSIX writes, STDIO on rank 0 alone (to an
    oddly named file) and a time series."""
    j, frames, ranks = good_pattern()
    j["exe"] = j["cmdline"] = EXE
    frames["POSIX"] = frame(frames["POSIX"].to_dict("records") + [
        {**small_writes(20000).iloc[0].to_dict(), "rank": 3}])
    frames["STDIO"] = frame([{"path": LOG_FILE, "rank": 0, "STDIO_WRITES": 5000,
                              "STDIO_BYTES_WRITTEN": 400000, "STDIO_SIZE_WRITE_0_100": 5000,
                              "STDIO_F_WRITE_TIME": 0.3}])
    ranks["POSIX"] = ranks_frame(np.r_[8.0, np.linspace(1, 2, 15)], nbytes=256 * MiB)
    ranks["STDIO"] = ranks_frame([0.3], nbytes=400000)
    rep = S.summarize(j, frames, ranks)
    rep["advice"] = [a.to_dict() for v in run_advice(j, frames, ranks).values() for a in v]
    t = np.arange(100)
    series = {"MPIIO": {"width": 1.0, "bytes_read": np.zeros(100, int),
                        "bytes_written": (np.exp(-((t - 60) / 8.0) ** 2) * 2e8).astype(int),
                        "reads": np.zeros(100, int), "writes": np.ones(100, int)},
              "POSIX": {"width": 1.0, "bytes_read": (np.exp(-((t - 10) / 4.0) ** 2) * 5e7)
                        .astype(int), "bytes_written": (t % 20 < 3) * 10**7,
                        "reads": np.ones(100, int), "writes": np.ones(100, int)}}
    return html.render(rep, series, ranks)


def test_page_is_self_contained():
    page = demo_page()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page
    assert page.count("data:image/png;base64,") >= 6
    assert "small-io" in page and "evidence" in page


def chromium(args: list, tmp_path):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
           "--v=0", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)


@HAVE_CHROMIUM
@AS_ROOT
def test_chromium_draws_the_page(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(demo_page())
    shot = tmp_path / "shot.png"
    r = chromium([f"--screenshot={shot}", "--window-size=1200,3000", page.as_uri()], tmp_path)
    assert shot.exists(), r.stderr[-2000:]
    px = image.imread(shot)[..., :3]
    assert px.std() > 0.05  # not blank
    # the figures are drawn: a good share of pixels are neither white nor near-white
    assert (px.mean(axis=2) < 0.9).mean() > 0.02
    console = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == []
    dom = chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert dom.stdout.count("<img") >= 6 and "Uncaught" not in dom.stderr


PAGE_TEXT_JS = """(() => ({title: document.title, h1: document.querySelector('h1').innerText,
  cells: [...document.querySelectorAll('td')].map(td => td.innerText),
  alts: [...document.images].map(i => i.alt), text: document.body.innerText}))()"""


@HAVE_CHROMIUM
@AS_ROOT
def test_demo_page_as_a_reader_sees_it(tmp_path, monkeypatch):
    """In Chromium, names from the log read as the text report prints them, escaped once
    (not `&lt;`, not `&amp;lt;`). The figures are PNGs: their tick labels are read from the
    very figures this page drew: counts on the log axis as plain numbers (not mathtext
    such as `$\\mathdefault{10^{3}}$`, which prints raw with mathtext off), and a module
    one rank used ticked at rank 0 alone (not -0.4 ... 0.4)."""
    figures = keeping(monkeypatch)
    page = tmp_path / "report.html"
    page.write_text(demo_page())
    with Browser(tmp_path / "cdp-profile") as b:
        b.open(page.as_uri())
        seen = b.evaluate(PAGE_TEXT_JS)
        assert b.errors() == []
    assert seen["title"] == f"iochar: {EXE_SHOWN}"
    assert seen["h1"] == f"iochar report: {EXE_SHOWN}"
    assert seen["cells"][:2] == ["executable", EXE_SHOWN] and LOG_FILE_SHOWN in seen["cells"]
    for wrong in ("&lt;", "&amp;", "&#", "\x1b", "\x07", "\\\\"):
        assert wrong not in seen["text"]
    assert "STDIO per rank" in seen["alts"]

    drawn = {fig.get_suptitle() or fig.axes[0].get_title(): fig for fig in figures}
    assert len(drawn) == len(figures) == len(seen["alts"])
    counts = drawn["Operation counts"].axes[0].yaxis
    assert [t for _, t in shown(counts)] == ["0", "1", "10", "100", "1,000", "10,000"]
    assert shown(drawn["STDIO per rank"].axes[1].xaxis) == [(0.0, "0")]
    assert [t for _, t in shown(drawn["MPIIO per rank"].axes[1].xaxis)] == \
        ["0", "2", "4", "6", "8", "10", "12", "14", "16"]
    for title, fig in drawn.items():
        labels = tick_labels(fig)
        assert labels and not [t for t in labels if "$" in t or "\\" in t], title


@HAVE_CHROMIUM
@AS_ROOT
def test_demo_page_in_chromium_devtools(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(demo_page())
    shot = check_in_browser(page, tmp_path, page.read_text().count("<img"))
    px = image.imread(tmp_path.joinpath("s.png").open("wb").write(shot) and tmp_path / "s.png")
    assert px.shape[1] == 1200 and px.shape[0] > 2000  # the whole page, not the viewport


@HAVE_CHROMIUM
@AS_ROOT
@pytest.mark.skipif(not LIB.exists() or shutil.which("mpiexec.mpich") is None,
                    reason="needs the MPICH build and mpiexec.mpich")
def test_traced_mpi_job_page_in_chromium(tmp_path):
    """A real 4-rank job with call sites and the trace: every view, and the screenshot
    kept in docs/ (refreshed when IOCHAR_UPDATE_SCREENSHOT=1)."""
    p = run(mpiexec(4) + [workload("mpi_workload")], tmp_path,
            env={"IOCHAR_TRACE": "1", "IOCHAR_CALLSITES": "1"})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (log,) = tmp_path.glob("*.iochar")
    page = tmp_path / "report.html"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "reports")}
    subprocess.run([sys.executable, "-m", "iochar.cli.report", str(log), "--html", str(page)],
                   check=True, capture_output=True, env=env)
    text = page.read_text()
    for alt in ("I/O over time", "POSIX per rank", "MPIIO per rank", "offset vs time",
                "rank vs time"):
        assert f'alt="{alt}"' in text
    shot = check_in_browser(page, tmp_path, text.count("<img"))
    if os.environ.get("IOCHAR_UPDATE_SCREENSHOT"):
        SCREENSHOT.write_bytes(shot)


@HAVE_CHROMIUM
@AS_ROOT
def test_browser_check_catches_overlap_broken_image_and_repeated_header(tmp_path):
    png = f'<img alt="ok" src="data:image/png;base64,{demo_png()}">'
    bad = {"overlap": f'<div style="position:relative">{png}<table style="margin-top:-40px">'
                      '<tr><th>a</th></tr></table></div>',
           "broken": '<img alt="broken" src="data:image/png;base64,AAAA">',
           "header": "<table><tr><th>read</th><th>read</th></tr><tr><td>1</td><td>2</td></tr>"
                     "</table>"}
    for what, body in bad.items():
        page = tmp_path / f"{what}.html"
        page.write_text(f"<!DOCTYPE html><html><body>{body}</body></html>")
        with pytest.raises(AssertionError):
            check_in_browser(page, tmp_path, body.count("<img"))


def demo_png() -> str:
    from iochar import plots
    return plots.size_histogram("POSIX", {"read": {"0_100": 3}, "write": {"1K_10K": 5}})
