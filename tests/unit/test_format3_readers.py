"""Readers on format-3 logs (issue 31): per-rank directories with bad members, costs
bounded by the file (front-coded names, RECORDS counts, the trace pictures), and
Darshan's unknown values. The crash corpus (tests/corpus/crashes/v2_*, v3_*) runs
every entry point on each class; these tests check what each must show."""

import contextlib
import io
import json
import random
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest

import iochar
import readerfuzz as F
from iochar import codec, html_observed, plots
from iochar.cli import parser, report

ONE_BAD = F.CRASHES / "v3_ranks_one_bad"
ALL_BAD = F.CRASHES / "v3_ranks_all_bad"


def cli(main, *argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_directory_with_one_bad_rank_reports_the_others(tmp_path):
    """The job from ranks 0, 1 and 3; rank 2's log named with its own error (text,
    JSON, HTML, parser), its rank missing; one warning, about rank2 alone."""
    bad = f"{ONE_BAD}/rank2.iochar: section 6 (NAMES): path 0 holds a NUL byte"
    code, out, err = cli(report.main, ONE_BAD)
    assert code == 0
    assert "  PARTIAL: no readable log or live file for ranks 2\n" in out
    assert f"  PARTIAL: left out, unreadable: {bad}\n" in out
    assert err == f"iochar-report: warning: skipped {bad}\n"
    code, out, _ = cli(report.main, ONE_BAD, "--json")
    job = json.loads(out)["job"]
    assert (code, job["missing_ranks"], job["unreadable_logs"], job["merged_logs"]) == \
        (0, "2", bad, 3)
    code, out, _ = cli(report.main, ONE_BAD, "--html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert code == 0 and "left out, unreadable: " in page and "rank2.iochar" in page
    code, out, err = cli(parser.main, ONE_BAD)
    assert code == 0 and f"# unreadable_logs: {bad}\n" in out and "# missing_ranks: 2\n" in out
    assert err.count("\n") == 1 and "rank2.iochar" in err and "rank0.iochar" not in err
    # the three that read give the numbers of those three ranks merged
    log = iochar.open(ONE_BAD)
    three = iochar.open([ONE_BAD / f"rank{i}.iochar" for i in (0, 1, 3)])
    pd.testing.assert_frame_equal(log.records("POSIX"), three.records("POSIX"))


@pytest.mark.parametrize("main, extra", [(report.main, []), (report.main, ["--json"]),
                                         (report.main, ["--html", "OUT"]), (parser.main, [])])
def test_directory_with_no_readable_rank_is_one_error(main, extra, tmp_path):
    argv = [ALL_BAD] + [tmp_path / "r.html" if a == "OUT" else a for a in extra]
    code, out, err = cli(main, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and ": error: none of the 4 logs of this job reads: " in err
    assert not (tmp_path / "r.html").exists()


def _names(rng: random.Random) -> list:
    """Names that exercise both decoders: many short ones sharing prefixes, then a few
    long ones that share long prefixes with each other (the row-by-row finish)."""
    out = [b"/d/%d/%s" % (rng.randrange(5), bytes(rng.choices(b"abc", k=rng.randrange(1, 9))))
           for _ in range(rng.randrange(1, 60))]
    long = bytes(rng.choices(b"xyz/", k=rng.randrange(100, 4000)))
    out += [long[:rng.randrange(50, len(long))] + bytes(rng.choices(b"pq", k=rng.randrange(4)))
            for _ in range(rng.randrange(0, 6))]
    return out


def test_front_coded_names_decode_exactly_both_ways():
    rng = random.Random(31)
    for _ in range(200):
        paths = _names(rng)
        ids = codec.fnv1a64_many(paths)
        ids[rng.randrange(len(ids))] ^= np.uint64(1)  # an explicit id too
        got_ids, got = codec.decode_names(codec.encode_names(ids, paths), len(paths), "t")
        assert got == paths and (got_ids == ids).all()


def test_one_long_name_is_decoded_row_by_row_not_column_by_column():
    """One 4,000-byte name: the rows finish it from byte 0 (a column per byte cost
    ~9.5 us each: a 4 MiB name took 30-37 s)."""
    paths = [b"/x" * 2000]
    buf = codec.encode_names(codec.fnv1a64_many(paths), paths)
    with mock.patch.object(codec, "_front_rows", wraps=codec._front_rows) as rows:
        ids, got = codec.decode_names(buf, 1, "t")
    assert got == paths and rows.call_args.args[1] == 0
    assert int(ids[0]) == iochar.writer.fnv1a64(paths[0])


def test_name_longer_than_the_path_limit_is_an_error():
    with pytest.raises(iochar.LogError, match="path 0 is 4194304 bytes, more than the 4105"):
        iochar.open(F.CRASHES / "v3_name_of_4_mib.iochar")
    log = iochar.open(F.CRASHES / "v3_names_300_of_4105_bytes.iochar")
    long = [p for p in log.names.values() if len(p) == 4105]
    assert len(long) == 300 and len({p[:-1] for p in long}) == 1


@pytest.mark.parametrize("name, count", [("v3_records_1e6_in_few_bytes.iochar", 10**6),
                                         ("v2_records_1e7_in_few_bytes.iochar", 10**7)])
def test_records_count_checked_against_its_bytes(name, count):
    with pytest.raises(iochar.LogError, match=f"{count} records cannot fit in \\d+ bytes"):
        iochar.open(F.CRASHES / name)


def _figure(fn, trace):
    """The matplotlib figure fn draws (its PNG not rendered)."""
    figs = []
    with mock.patch.object(plots, "to_png", side_effect=lambda fig: figs.append(fig) or ""):
        fn(trace)
    return figs[0]


def test_trace_pictures_are_a_few_collections_whatever_the_rows():
    """150,000 trace rows: one collection per operation (and per file panel), no
    patch per row (a bar per row: 29,000 rows took 32 s)."""
    n, rng = 150_000, np.random.default_rng(0)
    start = np.sort(rng.random(n) * 100)
    trace = pd.DataFrame({
        "module": "POSIX", "rank": rng.integers(0, 64, n), "thread": 1,
        "record_id": rng.integers(0, 3, n).astype(np.uint64), "offset": rng.integers(0, 1 << 30, n),
        "length": rng.integers(1, 1 << 20, n), "start": start, "end": start + 0.001,
        "op": rng.choice(["read", "write", "meta"], n)})
    trace["path"] = "/f" + trace["record_id"].astype(str)
    ax = _figure(html_observed.rank_vs_time, trace).axes[0]
    assert len(ax.patches) == 0 and len(ax.collections) == 3
    paths = ax.collections[0].get_paths()
    assert len(paths) == (trace["op"] == "read").sum()
    fig = _figure(html_observed.offset_vs_time, trace)
    assert [len(a.collections) for a in fig.axes[:3]] == [4, 4, 4]
    assert all(len(a.lines) == 0 and len(a.patches) == 0 for a in fig.axes)


def test_darshan_unknown_values_are_unknown_not_numbers():
    dmod = pytest.importorskip("darshan")  # PyDarshan is optional
    example = Path(dmod.__file__).parent / "examples" / "example_logs" / "example.darshan"
    log = iochar.open(str(example))
    stdio = log.records("STDIO")
    t = stdio["STDIO_F_WRITE_TIME"]
    assert t.isna().sum() == 1  # Darshan wrote -2662.7 s (a broken clock)
    code, out, _ = cli(report.main, example)
    assert code == 0 and "-1300169" not in out and " -" not in out.split("STDIO")[1]
    assert "unknown STDIO_F_WRITE_TIME in 1 record(s)" in out
    code, out, _ = cli(report.main, example, "--json")
    s = json.loads(out)["modules"]["STDIO"]
    assert s["unknown"] == {"STDIO_F_WRITE_TIME": 1}
    assert s["time_write_total"] == pytest.approx(t.sum(skipna=True), abs=1e-6)  # the known ones
    code, out, _ = cli(parser.main, example, "--module", "STDIO")
    assert out.count("STDIO_F_WRITE_TIME unknown ") == 1
    code, out, _ = cli(parser.main, example, "--total", "--module", "STDIO")
    assert f"total_STDIO_F_WRITE_TIME: {float(t.sum(skipna=True))!r}\n" in out


def test_darshan_unknown_rule_per_counter():
    from iochar.darshan import unknown_as_nan
    body = pd.DataFrame({"POSIX_READS": [3, -1], "POSIX_FASTEST_RANK": [-1, 2],
                         "POSIX_STRIDE1_STRIDE": [-5, 7], "POSIX_RENAMED_FROM": [-9, 0],
                         "POSIX_F_READ_TIME": [np.nan, -0.5], "POSIX_F_META_TIME": [0.5, 1.0]})
    out = unknown_as_nan(body)
    assert out["POSIX_READS"].tolist()[0] == 3 and np.isnan(out["POSIX_READS"][1])
    assert np.isnan(out["POSIX_FASTEST_RANK"][0]) and out["POSIX_FASTEST_RANK"][1] == 2
    assert out["POSIX_STRIDE1_STRIDE"].tolist() == [-5, 7]  # a stride may be negative
    assert out["POSIX_RENAMED_FROM"].tolist() == [-9, 0]  # a record id
    assert out["POSIX_F_READ_TIME"].isna().all()
    assert out["POSIX_F_META_TIME"].dtype == np.float64 and out["POSIX_F_META_TIME"].tolist() == \
        [0.5, 1.0]
