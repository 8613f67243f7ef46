"""Synthetic schemas, records and jobs for the reader/writer/merge/parser tests."""

import numpy as np
import pandas as pd

from iochar.log import OP
from iochar.writer import fnv1a64

BINS = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
        "10M_100M", "100M_1G", "1G_PLUS"]


def posix_like_schema(m="POSIX"):
    """Mirrors wrappers/posix_counters.h's shape: every op kind appears."""
    ints = [(f"{m}_OPENS", "SUM"), (f"{m}_READS", "SUM"), (f"{m}_WRITES", "SUM"),
            (f"{m}_MODE", "ANY"), (f"{m}_BYTES_READ", "BYTES"), (f"{m}_BYTES_WRITTEN", "BYTES"),
            (f"{m}_MAX_BYTE_READ", "MAX"), (f"{m}_MIN_THING", "MIN_NZ"),
            (f"{m}_MAX_READ_TIME_SIZE", "MAXT_SIZE"), (f"{m}_MAX_WRITE_TIME_SIZE", "MAXT_SIZE")]
    ints += [(f"{m}_SIZE_READ_{b}", "SUM") for b in BINS]
    ints += [(f"{m}_ACCESS{i}_ACCESS", "TOPK_VAL") for i in range(1, 5)]
    ints += [(f"{m}_ACCESS{i}_COUNT", "TOPK_CNT") for i in range(1, 5)]
    ints += [(f"{m}_FASTEST_RANK", "FAST_RANK"), (f"{m}_FASTEST_RANK_BYTES", "FAST_BYTES"),
             (f"{m}_SLOWEST_RANK", "SLOW_RANK"), (f"{m}_SLOWEST_RANK_BYTES", "SLOW_BYTES")]
    floats = [(f"{m}_F_OPEN_START_TIMESTAMP", "TS_START"), (f"{m}_F_CLOSE_END_TIMESTAMP", "TS_END"),
              (f"{m}_F_READ_TIME", "TIME"), (f"{m}_F_WRITE_TIME", "TIME"),
              (f"{m}_F_META_TIME", "TIME"), (f"{m}_F_MAX_READ_TIME", "MAXT"),
              (f"{m}_F_MAX_WRITE_TIME", "MAXT"), (f"{m}_F_FASTEST_RANK_TIME", "FAST_TIME"),
              (f"{m}_F_SLOWEST_RANK_TIME", "SLOW_TIME"),
              (f"{m}_F_VARIANCE_RANK_TIME", "VAR_TIME"), (f"{m}_F_VARIANCE_RANK_BYTES", "VAR_BYTES")]
    return [(n, OP[op]) for n, op in ints + floats]


def random_records(schema, n, nprocs=4, seed=0, paths=None):
    """n rows with random counters (ints >= 0, floats with full-precision fractions)."""
    rng = np.random.default_rng(seed)
    paths = paths or [f"/scratch/data/file{i}.dat" for i in range(n)]
    df = pd.DataFrame({"rank": rng.integers(-1, nprocs, n), "record_id":
                       np.array([fnv1a64(p) for p in paths], dtype=np.uint64), "path": paths})
    for name, _ in schema:
        df[name] = rng.random(n) * 10 if "_F_" in name else rng.integers(0, 1 << 40, n)
    return df


def make_job(**kw):
    job = {"version": "0.1.0", "format": 1, "nprocs": 4, "nnodes": 1, "uid": 1000, "pid": 42,
           "start_time": 1700000000.25, "end_time": 1700000010.5, "exe": "/home/u/app",
           "cmdline": "/home/u/app -n 3 in.dat", "jobid": "1234", "hostname": "node001",
           "user": "u", "partial": 0, "memory_bound": 1 << 26, "finalized": 1,
           "mpi": "Open MPI v4.1.4"}
    job.update(kw)
    return job
