"""Benchmark: summary + advice on a 1,000,000-record POSIX frame (issue 5: under 10 s)."""

import time

import numpy as np
import pandas as pd

from iochar import advice
from iochar import summary as S

# The access-size bins of runtime/counters.h (the reports read them from a log's names;
# this frame is built by hand, so it names them).
BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
        "10M_100M", "100M_1G", "1G_PLUS")

def main(n: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"rank": rng.integers(-1, 1024, n),
                       "record_id": np.arange(n, dtype=np.uint64),
                       "path": np.array([f"/scratch/f{i}" for i in range(n)], dtype=object)})
    ints = ["POSIX_OPENS", "POSIX_READS", "POSIX_WRITES", "POSIX_SEEKS", "POSIX_STATS",
            "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_READ",
            "POSIX_SEQ_READS", "POSIX_SEQ_WRITES", "POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES",
            "POSIX_RW_SWITCHES", "POSIX_FILE_NOT_ALIGNED", "POSIX_FILE_ALIGNMENT",
            *[f"POSIX_SIZE_{d}_{b}" for d in ("READ", "WRITE") for b in BINS],
            *[f"POSIX_ACCESS{i}_{k}" for i in range(1, 5) for k in ("ACCESS", "COUNT")]]
    for c in ints:
        df[c] = rng.integers(0, 1000, n)
    for c in ("POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME",
              "POSIX_F_SLOWEST_RANK_TIME", "POSIX_F_FASTEST_RANK_TIME"):
        df[c] = rng.random(n)
    job = {"nprocs": 1024, "start_time": 0.0, "end_time": 3600.0}
    t0 = time.perf_counter()
    rep = S.summarize(job, {"POSIX": df})
    t1 = time.perf_counter()
    found = advice.evaluate(advice.Context(rep["job"], {"POSIX": df}, summary=rep))
    t2 = time.perf_counter()
    print(f"records {n:,}: summary {t1 - t0:.2f} s, advice {t2 - t1:.2f} s "
          f"({len(found)} findings), total {t2 - t0:.2f} s (budget 10 s)")


if __name__ == "__main__":
    main()
