"""The HTML report rendered in headless Chromium: figures drawn, no console errors, offline."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from matplotlib import image

from iochar import html
from iochar import summary as S
from report_frames import MiB, frame, good_pattern, ranks_frame, run_advice
from test_advice_rules import small_writes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def demo_page() -> str:
    """A job with a good MPI-IO phase, small POSIX writes, STDIO and a time series."""
    j, frames, ranks = good_pattern()
    frames["POSIX"] = frame(frames["POSIX"].to_dict("records") + [
        {**small_writes(20000).iloc[0].to_dict(), "rank": 3}])
    frames["STDIO"] = frame([{"path": "/s/log.txt", "rank": 0, "STDIO_WRITES": 5000,
                              "STDIO_BYTES_WRITTEN": 400000, "STDIO_SIZE_WRITE_0_100": 5000,
                              "STDIO_F_WRITE_TIME": 0.3}])
    ranks["POSIX"] = ranks_frame(np.r_[8.0, np.linspace(1, 2, 15)], nbytes=256 * MiB)
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


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("IOCHAR_CHROMIUM_AS_USER"),
                    reason="the headless chromium recipe here runs as root (--no-sandbox)")
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
