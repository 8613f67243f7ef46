"""The readers never crash and never blow up, whatever the log holds.

A seeded structure-aware fuzz run over real logs (tests/helpers/readerfuzz.py; cases
and seed from IOCHAR_FUZZ_CASES / IOCHAR_FUZZ_SEED, longer runs: bench/fuzz_readers.py),
and the crash corpus (tests/corpus/crashes/, one file per crash kind ever found) through
every entry point, in process and through the console scripts.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import crashcorpus
import iochar
import readerfuzz as F
from iochar import html_observed, jobreport, plots
from iochar.cli import diff, parser, report
from iochar.flags import PARTIAL

HERE = Path(__file__).resolve().parent
HELPERS = HERE.parent / "helpers"
CASES = int(os.environ.get("IOCHAR_FUZZ_CASES", 5000))
SEED = int(os.environ.get("IOCHAR_FUZZ_SEED", 20261123))


def test_seeded_fuzz_no_crash_bounded_memory():
    """>= 5,000 mutated logs (by default) in one process: LogError or a report, nothing
    else; the process stays under 1 GiB resident."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE.parents[1] / "reports"), str(HELPERS)]))
    p = subprocess.run([sys.executable, str(HELPERS / "readerfuzz.py"), "--cases", str(CASES),
                        "--seed", str(SEED)], capture_output=True, text=True, env=env,
                       timeout=1800)
    stats = json.loads(p.stdout)
    assert stats["crashes"] == [], json.dumps(stats["crashes"][:10], indent=1)
    assert p.returncode == 0, p.stderr[-2000:]
    assert stats["cases"] == CASES
    # both sides were exercised: the validation (rejections) and the reporters
    assert stats["rejected"] > CASES // 10 and stats["opened"] > CASES // 10, stats
    assert stats["report"] > 0 and stats["html"] > 0 and stats["cli"] > 0, stats
    assert stats["maxrss_bytes"] < 1 << 30, stats["maxrss_bytes"]


def _job(path: Path):
    """The case's bytes (a list for a directory of per-rank logs) and the seed to diff
    its report against."""
    v3 = path.name.startswith(("v2_", "v3_"))
    if path.is_dir():
        return [p.read_bytes() for p in sorted(path.glob("*.iochar"))], \
            "v3/ranks" if v3 else "ranks"
    return path.read_bytes(), "v3/posix.iochar" if v3 else "posix.iochar"


def test_crash_corpus_is_described():
    found = {p.name for p in F.CRASHES.iterdir() if p.suffix == ".iochar" or p.is_dir()}
    assert found == set(crashcorpus.EXPECT)


@pytest.mark.parametrize("name", sorted(crashcorpus.EXPECT))
def test_crash_corpus_every_entry_point(name, tmp_path):
    expect = crashcorpus.EXPECT[name]
    path = F.CRASHES / name
    data, base = _job(path)
    ctx = F.Context(tmp_path)
    partial = isinstance(expect, tuple)
    with F.no_addr2line(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if expect is None or partial:
            rep = F.entry_points(data, name, ctx, with_html=True, base=base)
            assert rep["modules"]
            assert (tmp_path / "report.html").stat().st_size > 1000
            if partial:  # the ranks that read, the others named, their ranks missing
                assert re.search(expect[1], rep["job"]["unreadable_logs"])
                assert rep["job"]["partial"] & PARTIAL["MISSING_RANKS"]
                nbad = len(set(re.findall(r"rank\d+\.iochar|\[\d+\]",
                                          rep["job"]["unreadable_logs"])))
                # one log left is the job itself, not a merge
                assert rep["job"].get("merged_logs", 1) == len(data) - nbad
        else:
            with pytest.raises(iochar.LogError, match=expect):
                F.entry_points(data, name, ctx, base=base)
        # a directory as a user gives it; the page was rendered in process above; the
        # console scripts print text and JSON
        for argv, code, out, err, cpu in F.run_clis([str(path)], str(F.CORPUS / base.replace(
                "ranks", "rank0.iochar")), tmp_path, with_html=False):
            assert F.cli_problem(argv, code, out, err, cpu) is None, (argv, code, err)
            if partial and argv[0] == str(path):  # (not iochar-diff BASE DIR) each skipped
                # log warned, by its name
                assert code == 0 and re.search(expect[1], err), (argv, err)
                assert "PARTIAL: left out, unreadable: " in out or "unreadable_logs" in out
            elif expect is None or partial:  # iochar-diff may warn (different programs)
                assert code in (0, 1) and ": error: " not in err, (argv, err)
            else:  # one error line, nothing else
                assert code == 2 and re.search(expect, err) and err.count("\n") == 1, (argv, err)
                assert out == "", (argv, out)
    assert not list(tmp_path.glob(".iochar-*.tmp"))  # no temp file left behind


def test_series_widths_far_apart_stay_small():
    log = iochar.open(F.CRASHES / "series_widths_2p40_apart.iochar")
    s = log.series("POSIX")
    one = iochar.open(F.CORPUS / "posix.iochar").series("POSIX")
    # the coarse series' width wins; the fine one collapses into its first bin
    assert s["width"] == one["width"] * 2.0**40
    assert len(s["bytes_written"]) <= len(one["bytes_written"])
    assert s["bytes_written"].sum() == 2 * one["bytes_written"].sum()


def test_nprocs_at_the_bound_reports_without_reindexing_to_it():
    data = jobreport.load([str(F.CRASHES / "nprocs_max_with_ranks.iochar")])
    assert data["job"]["nprocs"] == 1 << 24
    rep = jobreport.build(data)
    assert rep["job"]["nprocs"] == 1 << 24  # built in bounded time and memory


def test_counter_at_int64_max_renders(tmp_path):
    code = report.main([str(F.CRASHES / "counter_2p63_minus_1.iochar"), "--html",
                        str(tmp_path / "r.html")])
    assert code == 0 and "<img" in (tmp_path / "r.html").read_text()


def test_plot_text_is_never_mathtext():
    """A title that is invalid mathtext ($\\frac{1}$) renders as text; the caller's own
    matplotlib settings are untouched."""
    import matplotlib
    import pandas as pd

    trace = pd.DataFrame({"module": ["POSIX"] * 2, "rank": [0, 1], "thread": [1, 1],
                          "record_id": np.array([1, 2], np.uint64), "offset": [0, 10],
                          "length": [10, 10], "start": [0.0, 0.1], "end": [0.05, 0.2],
                          "op": ["write", "read"], "path": ["/tmp/$\\frac{1}$", "$\\foo$"]})
    assert html_observed.offset_vs_time(trace)
    assert html_observed.rank_vs_time(trace)
    assert plots.size_histogram("$\\foo$", {"read": {"0_100": 2**63 - 1}})
    assert matplotlib.rcParams["text.parse_math"] is True


def test_html_failure_leaves_no_page(tmp_path, monkeypatch):
    """The page is rendered whole, written to a temp file and renamed: a failure keeps
    the previous page and leaves no partial or temp file."""
    out = tmp_path / "r.html"
    out.write_text("previous page")

    def boom(*a, **k):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(report.html, "render", boom)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = report.main([str(F.CORPUS / "posix.iochar"), "--html", str(out)])
    assert code == 2 and err.getvalue().count("\n") == 1
    assert out.read_text() == "previous page"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


@pytest.mark.parametrize("main, prog", [(report.main, "iochar-report"),
                                        (parser.main, "iochar-parser")])
def test_cli_guard_turns_any_exception_into_one_line(main, prog, monkeypatch):
    def boom(*a, **k):
        raise KeyError("bad\nthing\x1b[2J")

    monkeypatch.setattr(iochar.log, "_read", boom)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(F.CORPUS / "posix.iochar")])
    assert code == 2 and out.getvalue() == ""
    line = err.getvalue()
    assert line.startswith(f"{prog}: error: ") and line.count("\n") == 1
    assert "\x1b" not in line and "\\x1b[2J" in line


def test_diff_cli_bad_log_is_one_line(tmp_path):
    bad = tmp_path / "bad.iochar"
    bad.write_bytes((F.CRASHES / "start_time_nan.iochar").read_bytes())
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = diff.main([str(F.CORPUS / "posix.iochar"), str(bad)])
    assert code == 2 and err.getvalue().startswith("iochar-diff: error: ")
    assert err.getvalue().count("\n") == 1 and "not a time" in err.getvalue()
