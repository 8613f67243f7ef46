"""The array forms the summary and the advice use instead of per-log frames: the same
values pandas gave (NaN skipped as Series reductions skip it, duplicate ranks summed,
one layer-table row per file and layer)."""

import numpy as np
import pandas as pd

from iochar import advice
from iochar import summary as S
from report_frames import MiB, frame, job


def test_reductions_skip_nan_as_series_do():
    for v in ([3.0, np.nan, 7.0, 7.0, 1.0], [np.nan, 2.0, 2.0], [5.0], [0.0, -1.0, -1.0]):
        a, s = np.array(v), pd.Series(v)
        assert (S.argmax(a), S.argmin(a)) == (s.idxmax(), s.idxmin())
        assert (S.nanmax(a), S.nanmin(a)) == (s.max(), s.min())
    assert np.isnan(S.nanmax(np.array([np.nan])))


def test_rank_arrays_sum_a_ranks_records_and_spread_shared_ones():
    df = frame([  # rank 1 has two files; the shared file's slowest rank took 4 s
        {"path": "/a", "rank": 1, "POSIX_F_READ_TIME": 1.0, "POSIX_BYTES_READ": 100},
        {"path": "/b", "rank": 1, "POSIX_F_WRITE_TIME": 2.0, "POSIX_BYTES_WRITTEN": 50},
        {"path": "/c", "rank": 0, "POSIX_F_META_TIME": 0.5},
        {"path": "/s", "rank": -1, "POSIX_F_WRITE_TIME": 6.0, "POSIX_F_META_TIME": 2.0,
         "POSIX_F_SLOWEST_RANK_TIME": 4.0, "POSIX_BYTES_WRITTEN": 400}])
    rank, per, exact = S.rank_arrays(df, "POSIX", 4, None)
    assert not exact and rank.tolist() == [0, 1]
    # the shared record's 4 s split 3:1 as its write:meta time, its bytes / 4 ranks
    assert per["time_read"].tolist() == [0.0, 1.0]
    assert per["time_write"].tolist() == [3.0, 5.0]
    assert per["time_meta"].tolist() == [1.5, 1.0]
    assert per["bytes"].tolist() == [100.0, 250.0]
    f, _ = S.rank_times(df, "POSIX", 4, None)
    assert f.index.tolist() == [0, 1] and f["time_write"].tolist() == [3.0, 5.0]
    s = S.summarize(job(nprocs=4), {"POSIX": df})["modules"]["POSIX"]
    assert s["slowest_rank"]["rank"] == 1 and s["slowest_rank"]["time"] == 7.0
    assert s["fastest_rank"] == {"rank": 0, "time": 4.5}


def test_layer_table_one_row_per_file_and_layer():
    px = frame([{"path": "/d/x.dat", "rank": r, "POSIX_OPENS": 1, "POSIX_WRITES": 4,
                 "POSIX_BYTES_WRITTEN": 4 * MiB, "POSIX_F_WRITE_TIME": 1.0} for r in (0, 1)]
               + [{"path": "/d/log", "rank": 0, "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": 10}])
    mp = frame([{"path": "/d/x.dat", "rank": -1, "MPIIO_COLL_OPENS": 2, "MPIIO_COLL_WRITES": 8,
                 "MPIIO_BYTES_WRITTEN": 8 * MiB, "MPIIO_F_WRITE_TIME": 3.0}])
    ctx = advice.Context(job(nprocs=2), {"POSIX": px, "MPIIO": mp})
    t = ctx.layer_table
    assert isinstance(t, S.Table) and len(t) == 3
    rows = sorted(zip(S.objects(t), S.objects(t, "layer"), S.column(t, "writes").tolist(),
                      S.column(t, "nranks").tolist(), S.column(t, "time").tolist()))
    assert rows == [("/d/log", "POSIX", 1.0, 1, 0.0), ("/d/x.dat", "MPIIO", 8.0, 2, 3.0),
                    ("/d/x.dat", "POSIX", 8.0, 2, 2.0)]
    assert ctx.owner.to_dict() == {"/d/x.dat": "MPIIO", "/d/log": "POSIX"}
    assert dict(zip(ctx._path_codes[1], ctx.file_time.tolist())) == \
        {"/d/x.dat": 3.0, "/d/log": 0.0}
