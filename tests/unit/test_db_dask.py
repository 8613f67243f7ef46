"""iochar-db on Dask distributed gives the same tables as the embedded path."""

import pytest

pytest.importorskip("duckdb")
distributed = pytest.importorskip("distributed")

from iochar.db import Store, ingest  # noqa: E402
from test_db import make_site  # noqa: E402

TABLES = {"jobs": "job_id", "summaries": "job_id, module", "findings": "job_id, id, module",
          "posix": "job_id, rank, record_id", "errors": "log_path"}


def test_dask_tables_identical(tmp_path):
    make_site(tmp_path / "logs")
    embedded = Store(tmp_path / "embedded", create=True)
    ingest(embedded, [tmp_path / "logs"], jobs=1, progress=False)
    # threads, not processes: the same code path (tasks pickled through the scheduler
    # protocol) in a second instead of the seconds per worker process start costs
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = Store(tmp_path / "dask", create=True)
        st = ingest(dask, [tmp_path / "logs"], scheduler=cluster.scheduler_address,
                    progress=False, chunk=2)
    assert (st.ingested, st.errors, st.duplicates) == (7, 1, 1)
    a, b = embedded.connect(), dask.connect()
    for table, key in TABLES.items():
        cols = "* EXCLUDE (ingested_at)" if table == "errors" else "*"
        sql = f"SELECT {cols} FROM {table} ORDER BY {key}"
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table
    assert a.execute("SELECT count(*) FROM posix").fetchone()[0] == 14
