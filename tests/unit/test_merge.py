"""Merging per-rank fallback logs of one job: hand-computed reductions by schema op."""

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.log import OP
from iochar.merge import reduce_records
from iochar.writer import fnv1a64, write_log
from logdata import make_job

OPS = [("X_OPENS", "SUM"), ("X_MODE", "ANY"), ("X_BYTES_READ", "BYTES"),
       ("X_BYTES_WRITTEN", "BYTES"), ("X_MAX_BYTE", "MAX"), ("X_MINX", "MIN_NZ"),
       ("X_MAX_READ_TIME_SIZE", "MAXT_SIZE"),
       ("X_A1", "TOPK_VAL"), ("X_A2", "TOPK_VAL"), ("X_A3", "TOPK_VAL"), ("X_A4", "TOPK_VAL"),
       ("X_C1", "TOPK_CNT"), ("X_C2", "TOPK_CNT"), ("X_C3", "TOPK_CNT"), ("X_C4", "TOPK_CNT"),
       ("X_FASTEST_RANK", "FAST_RANK"), ("X_FASTEST_RANK_BYTES", "FAST_BYTES"),
       ("X_SLOWEST_RANK", "SLOW_RANK"), ("X_SLOWEST_RANK_BYTES", "SLOW_BYTES"),
       ("X_F_OPEN_START", "TS_START"), ("X_F_CLOSE_END", "TS_END"), ("X_F_READ_TIME", "TIME"),
       ("X_F_WRITE_TIME", "TIME"), ("X_F_MAX_READ_TIME", "MAXT"), ("X_F_FAST_TIME", "FAST_TIME"),
       ("X_F_SLOW_TIME", "SLOW_TIME"), ("X_F_VAR_TIME", "VAR_TIME"),
       ("X_F_VAR_BYTES", "VAR_BYTES")]
SCHEMA = [(n, OP[o]) for n, o in OPS]
SHARED, SOLO = "/d/shared", "/d/solo"


def row(rank, path, **v):
    r = {"rank": rank, "record_id": fnv1a64(path), "path": path}
    r.update({n: v.get(n[2:], 0.0 if "_F_" in n else 0) for n, _ in SCHEMA})
    return r


# rank 0 starts at 100.0, rank 1 at 100.5, rank 2 at 101.0 (timestamps are log-relative)
R0 = row(0, SHARED, OPENS=1, BYTES_READ=100, MAX_BYTE=99, MAX_READ_TIME_SIZE=100,
         A1=100, A2=10, A3=7, C1=3, C2=1, C3=1, FASTEST_RANK=0, F_OPEN_START=0.75,
         F_CLOSE_END=2.0, F_READ_TIME=0.25, F_MAX_READ_TIME=0.125)
R2 = row(2, SHARED, OPENS=2, MODE=0o644, BYTES_READ=50, BYTES_WRITTEN=30, MAX_BYTE=200,
         MINX=7, MAX_READ_TIME_SIZE=40, A1=10, A2=100, A3=5, A4=20, C1=2, C2=2, C3=7, C4=3,
         F_OPEN_START=0.25, F_CLOSE_END=2.0, F_READ_TIME=0.5, F_WRITE_TIME=0.25,
         F_MAX_READ_TIME=0.0625)
R1 = row(1, SOLO, OPENS=4, MODE=0o600, MINX=3, F_OPEN_START=0.0, F_CLOSE_END=3.0,
         F_READ_TIME=1.5, FASTEST_RANK=1)
EXPECT_SHARED = {
    "X_OPENS": 3, "X_MODE": 0o644, "X_BYTES_READ": 150, "X_BYTES_WRITTEN": 30, "X_MAX_BYTE": 200, "X_MINX": 7,
    "X_MAX_READ_TIME_SIZE": 100,  # from rank 0, whose MAX_READ_TIME 0.125 is the larger
    # merged table: 5:7, 100:5, 10:3, 20:3 (tie: smaller value first), 7:1 dropped
    "X_A1": 5, "X_A2": 100, "X_A3": 10, "X_A4": 20, "X_C1": 7, "X_C2": 5, "X_C3": 3, "X_C4": 3,
    "X_FASTEST_RANK": 0, "X_FASTEST_RANK_BYTES": 100, "X_SLOWEST_RANK": 2, "X_SLOWEST_RANK_BYTES": 80,
    "X_F_OPEN_START": 0.75,  # rank 2's 0.25 + 1.0 shift = 1.25
    "X_F_CLOSE_END": 3.0, "X_F_READ_TIME": 0.75, "X_F_WRITE_TIME": 0.25, "X_F_MAX_READ_TIME": 0.125,
    "X_F_FAST_TIME": 0.25, "X_F_SLOW_TIME": 0.75,
    "X_F_VAR_TIME": 0.0625,  # times 0.25, 0.75
    "X_F_VAR_BYTES": 100.0}  # bytes 100, 80


def write_rank(tmp_path, rank, start, end, rows, width, bins, partial=2):
    job = make_job(nprocs=3, rank=rank, start_time=start, end_time=end, partial=partial,
                   pid=1000 + rank, folded_files=rank)
    path = tmp_path / f"u_app_id1_r{rank}.iochar"
    write_log(path, job, {"X": {"schema": SCHEMA, "records": pd.DataFrame(rows)}},
              series={"X": {"width": width, "bytes_read": bins, "bytes_written": [0] * len(bins),
                                "reads": [1] * len(bins), "writes": [0] * len(bins)}},
              ranks={"X": {"rank": [rank], "reads": [rank], "writes": [0], "bytes_read": [0],
                               "bytes_written": [0], "read_time": [0.0], "write_time": [0.0],
                               "meta_time": [0.0]}},
              mounts=[("/", "ext4", 4096)])
    return path


@pytest.fixture
def logs(tmp_path):
    return [write_rank(tmp_path, 0, 100.0, 110.0, [R0], 0.001, [1, 2, 3, 4]),
            write_rank(tmp_path, 1, 100.5, 111.0, [R1], 0.001, [1]),
            write_rank(tmp_path, 2, 101.0, 109.0, [R2], 0.002, [10, 20], partial=3)]


def test_merged_job(logs):
    job = iochar.open(logs).job
    assert job["start_time"] == 100.0 and job["end_time"] == 111.0
    assert job["nprocs"] == 3 and job["pid"] == 1000 and "rank" not in job
    assert job["partial"] == 3 and job["folded_files"] == 0 + 1 + 2
    assert job["merged_logs"] == 3


def test_merged_records_exact(logs, tmp_path):
    log = iochar.open(tmp_path)  # the directory: same as the list
    df = log.records("X")
    assert df["rank"].tolist() == [-1, 1] or df["rank"].tolist() == [1, -1]
    shared = df[df.path == SHARED].iloc[0]
    assert shared["rank"] == -1 and shared["record_id"] == fnv1a64(SHARED)
    for k, v in EXPECT_SHARED.items():
        assert shared[k] == v, k
    solo = df[df.path == SOLO].iloc[0]
    assert solo["rank"] == 1 and solo["X_OPENS"] == 4 and solo["X_MODE"] == 0o600
    assert solo["X_F_OPEN_START"] == 0.0  # unset timestamps stay 0
    assert solo["X_F_CLOSE_END"] == 3.5  # shifted by 100.5 - 100.0
    assert df["X_F_READ_TIME"].dtype == np.float64 and df["X_OPENS"].dtype == np.int64


def test_merged_series_ranks_mounts(logs):
    log = iochar.open(logs)
    s = log.series("X")  # coarsened to 2 ms, rank 1 shifted 250 bins, rank 2 500 bins
    assert s["width"] == 0.002
    expect = np.zeros(502, dtype=np.int64)
    expect[:2] = [3, 7]
    expect[250] += 1
    expect[500:502] += [10, 20]
    assert s["bytes_read"].tolist() == expect.tolist()
    assert sorted(log.ranks("X")["rank"].tolist()) == [0, 1, 2]
    assert log.mounts["mount_point"].tolist() == ["/"]


def test_reduce_records_is_order_independent_and_reusable():
    df = pd.DataFrame([R2, R1, R0])
    df.loc[0, "X_F_OPEN_START"] = 1.25  # what the shift gives
    df.loc[0, "X_F_CLOSE_END"] = 3.0
    out = reduce_records(df, SCHEMA)
    a = out[out["rank"] == -1].iloc[0]
    for k, v in EXPECT_SHARED.items():
        assert a[k] == v, k
    assert list(out.columns) == list(df.columns)


def test_refuses_to_merge_unrelated_logs(tmp_path, logs):
    other = tmp_path / "full.iochar"
    write_log(other, make_job(nprocs=3), {"X": {"schema": SCHEMA, "records": pd.DataFrame([R0])}})
    with pytest.raises(iochar.LogError, match="not a per-rank log"):
        iochar.open([logs[0], other])
    with pytest.raises(iochar.LogError, match="two logs of rank 0"):
        iochar.open([logs[0], logs[0]])
    diff = tmp_path / "diff.iochar"
    write_log(diff, make_job(nprocs=8, rank=5), {"X": {"schema": SCHEMA,
                                                       "records": pd.DataFrame([R0])}})
    with pytest.raises(iochar.LogError, match="nprocs differs"):
        iochar.open([logs[0], diff])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "yesterday", 1e300])
def test_bad_start_time_of_a_rank_log_is_named(tmp_path, bad):
    """Per-rank logs are merged with time shifts: a rank whose start time is not
    a time is refused with a named LogError, never a crash."""
    paths = []
    for rank in (0, 1):
        job = {"nprocs": 2, "rank": rank, "exe": "/a", "partial": 2,
               "start_time": 1.7e9 if rank == 0 else bad, "end_time": 1.7e9 + 5}
        p = tmp_path / f"r{rank}.iochar"
        write_log(p, job, {})
        paths.append(str(p))
    with pytest.raises(iochar.LogError, match="not a time"):
        iochar.open(paths)
