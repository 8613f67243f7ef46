"""summary.py on hand-built frames: file classes, ops, times, slowest rank, patterns, speed."""


import numpy as np
import pandas as pd

from iochar import summary as S
from report_frames import MiB, frame, good_pattern, job, ranks_frame


def files_frame():
    return frame([
        {"path": "/s/in", "rank": -1, "POSIX_OPENS": 4, "POSIX_READS": 8, "POSIX_BYTES_READ": 800,
         "POSIX_SEQ_READS": 4, "POSIX_CONSEC_READS": 2, "POSIX_F_READ_TIME": 4.0,
         "POSIX_F_SLOWEST_RANK_TIME": 2.0, "POSIX_SIZE_READ_0_100": 8,
         "POSIX_ACCESS1_ACCESS": 100, "POSIX_ACCESS1_COUNT": 8},
        {"path": "/s/out0", "rank": 0, "POSIX_OPENS": 1, "POSIX_WRITES": 2,
         "POSIX_BYTES_WRITTEN": 2 * MiB, "POSIX_F_WRITE_TIME": 1.0, "POSIX_SIZE_WRITE_100K_1M": 2,
         "POSIX_ACCESS1_ACCESS": MiB, "POSIX_ACCESS1_COUNT": 2, "POSIX_ACCESS2_ACCESS": 100,
         "POSIX_ACCESS2_COUNT": 1},
        {"path": "/s/out1", "rank": 1, "POSIX_OPENS": 1, "POSIX_WRITES": 1, "POSIX_READS": 1,
         "POSIX_BYTES_WRITTEN": MiB, "POSIX_BYTES_READ": 10, "POSIX_F_WRITE_TIME": 0.5,
         "POSIX_F_META_TIME": 0.25},
        {"path": "/s/cfg", "rank": 2, "POSIX_OPENS": 1, "POSIX_STATS": 3,
         "POSIX_F_META_TIME": 0.1},
        {"path": "<STDOUT>", "rank": 0, "POSIX_WRITES": 5, "POSIX_BYTES_WRITTEN": 50},
    ])


def test_files_ops_bytes():
    s = S.summarize(job(), {"POSIX": files_frame()})["modules"]["POSIX"]
    assert (s["files"], s["files_read_only"], s["files_write_only"], s["files_read_write"]) == \
        (5, 1, 2, 1)
    assert (s["files_shared"], s["files_unique"]) == (1, 3)  # <STDOUT> is neither
    assert (s["opens"], s["reads"], s["writes"], s["stats"]) == (7, 9, 8, 3)
    assert (s["bytes_read"], s["bytes_written"]) == (810, 3 * MiB + 50)
    assert s["time_read"] == 1.0 and s["time_write"] == 0.375  # per process (4 procs)
    assert s["top_sizes"] == [{"size": 100, "count": 9}, {"size": MiB, "count": 2}]
    assert s["size_histogram"]["read"]["0_100"] == 8
    assert [f["path"] for f in s["top_files"]] == ["/s/in", "/s/out0", "/s/out1", "/s/cfg"]
    # random leaves out each reading record's first access (2 records read)
    assert s["pattern"]["read"] == {"ops": 9, "sequential": round(4 / 9, 6),
                                    "consecutive": round(2 / 9, 6), "random": round(3 / 9, 6)}
    assert s["counters"]["POSIX_OPENS"] == 7


def test_slowest_rank_estimate_without_ranks():
    # Darshan's estimate: own records + the shared record's slowest-rank time.
    s = S.summarize(job(), {"POSIX": files_frame()})["modules"]["POSIX"]
    sl = s["slowest_rank"]
    assert sl["rank"] == 0 and not sl["exact"]
    assert sl["time"] == 3.0 and sl["time_read"] == 2.0 and sl["time_write"] == 1.0
    assert s["share_of_runtime"]["io"] == 0.03  # of the 100 s run


def test_slowest_rank_exact_from_ranks_and_bandwidth():
    r = ranks_frame([1.0, 4.0, 2.0, 2.0], nbytes=MiB)
    s = S.summarize(job(), {"POSIX": files_frame()}, {"POSIX": r})["modules"]["POSIX"]
    assert s["slowest_rank"] == {"rank": 1, "exact": True, "time": 4, "time_read": 0,
                                 "time_write": 4, "time_meta": 0}
    assert s["bandwidth"]["write"] == (3 * MiB + 50) / 4.0


def test_per_rank_rows_of_one_file_are_one_shared_file():
    df = frame([{"path": "/s/x", "rank": r, "POSIX_WRITES": 1} for r in range(4)])
    s = S.summarize(job(), {"POSIX": df})["modules"]["POSIX"]
    assert (s["files"], s["files_shared"], s["files_unique"], s["writes"]) == (1, 1, 0, 4)


def test_modules_map_and_missing_columns():
    j, frames, ranks = good_pattern()
    rep = S.summarize(j, frames, ranks)
    m = rep["modules"]["MPIIO"]
    assert m["writes"] == 256 and m["opens"] == 16 and m["bytes_written"] == 256 * 4 * MiB
    assert rep["job"]["run_time"] == 100.0
    nc = frame([{"path": "/s/o.nc:v", "rank": 0, "NC_VAR_PUTS": 3, "NC_VAR_GETS": 2}])
    assert S.summarize(job(), {"NC_VAR": nc})["modules"]["NC_VAR"]["writes"] == 3
    pn = frame([{"path": "/s/o.nc:v", "rank": 0, "PNETCDF_VAR_INDEP_PUTS": 3,
                 "PNETCDF_VAR_COLL_PUTS": 4}])
    assert S.summarize(job(), {"PNETCDF_VAR": pn})["modules"]["PNETCDF_VAR"]["writes"] == 7
    odd = frame([{"path": "/s/q", "rank": 0, "NEWMOD_READS": 5}])
    assert S.summarize(job(), {"NEWMOD": odd})["modules"]["NEWMOD"]["reads"] == 5


def test_million_records_summarize_exactly():
    """Scale without a clock: speed is bench/report_speed.py's (a timed test flakes
    on a loaded machine); here 10^6 records must still sum exactly."""
    n = 1_000_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"rank": rng.integers(0, 1024, n), "record_id": np.arange(n, dtype=np.uint64),
                       "path": np.array([f"/s/f{i}" for i in range(n)], dtype=object)})
    for c in ("POSIX_OPENS", "POSIX_READS", "POSIX_WRITES", "POSIX_BYTES_READ",
              "POSIX_BYTES_WRITTEN", "POSIX_SEQ_READS", "POSIX_SEQ_WRITES",
              *[f"POSIX_SIZE_WRITE_{b}" for b in ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M",
                                                 "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")],
              *[f"POSIX_ACCESS{i}_{k}" for i in range(1, 5) for k in ("ACCESS", "COUNT")]):
        df[c] = rng.integers(0, 1000, n)
    for c in ("POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME"):
        df[c] = rng.random(n)
    s = S.summarize(job(1024), {"POSIX": df})["modules"]["POSIX"]
    assert s["files"] == n
    assert (s["reads"], s["writes"]) == (int(df["POSIX_READS"].sum()), int(df["POSIX_WRITES"].sum()))
    assert s["bytes_written"] == int(df["POSIX_BYTES_WRITTEN"].sum())


def test_human_time_renders_days_past_a_day():
    assert S.human_time(0.0123) == "12.3 ms"
    assert S.human_time(90) == "1.5 min"
    assert S.human_time(3 * 3600) == "3.00 h"
    assert S.human_time(13711.79 * 3600) == "571 d 8 h"  # not "13711.79 h"
    assert S.human_time(86400) == "1 d 0 h"
    assert S.human_time(2000 * 86400 + 7 * 3600) == "2,000 d 7 h"
