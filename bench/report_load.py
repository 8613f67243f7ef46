"""Time writing and loading a synthetic log of N records (default 1,000,000): prints seconds.

    python bench/report_load.py [N] [--keep PATH]
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import iochar
from iochar.log import OP
from iochar.writer import write_log


def schema():
    """POSIX-sized: 70 integer and 17 floating counters, every op kind present."""
    ints = [(f"POSIX_C{i}", OP["SUM"]) for i in range(56)]
    ints += [(f"POSIX_ACCESS{i}_ACCESS", OP["TOPK_VAL"]) for i in range(1, 5)]
    ints += [(f"POSIX_ACCESS{i}_COUNT", OP["TOPK_CNT"]) for i in range(1, 5)]
    ints += [("POSIX_BYTES_READ", OP["BYTES"]), ("POSIX_BYTES_WRITTEN", OP["BYTES"]),
             ("POSIX_FASTEST_RANK", OP["FAST_RANK"]), ("POSIX_SLOWEST_RANK", OP["SLOW_RANK"]),
             ("POSIX_MODE", OP["ANY"]), ("POSIX_MAX_READ_TIME_SIZE", OP["MAXT_SIZE"])]
    floats = [(f"POSIX_F_T{i}", OP["TIME"]) for i in range(3)]
    floats += [(f"POSIX_F_TS{i}", OP["TS_START"]) for i in range(4)]
    floats += [(f"POSIX_F_TE{i}", OP["TS_END"]) for i in range(4)]
    floats += [("POSIX_F_MAX_READ_TIME", OP["MAXT"]), ("POSIX_F_VARIANCE_RANK_TIME", OP["VAR_TIME"]),
               ("POSIX_F_VARIANCE_RANK_BYTES", OP["VAR_BYTES"]), ("POSIX_F_FAST", OP["FAST_TIME"]),
               ("POSIX_F_SLOW", OP["SLOW_TIME"]), ("POSIX_F_X", OP["MAXT"])]
    return ints + floats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args()
    n, sch, rng = args.n, schema(), np.random.default_rng(1)
    ids = rng.choice(np.iinfo(np.int64).max, n, replace=False).astype(np.uint64)
    df = pd.DataFrame({"record_id": ids, "rank": rng.integers(0, 1024, n)})
    for name, _ in sch:
        df[name] = rng.random(n) if "_F_" in name else rng.integers(0, 1000, n)
    names = dict(zip(ids.tolist(), (f"/scratch/run/out.{i:07d}.dat" for i in range(n))))
    path = args.keep or Path(tempfile.mkdtemp()) / "bench.iochar"
    t = time.perf_counter()
    write_log(path, {"nprocs": 1024, "start_time": 0.0, "end_time": 1.0}, {"POSIX": {
        "schema": sch, "records": df}}, names, chunk=n // 8 or None)
    print(f"write {n} records: {time.perf_counter() - t:.2f} s ({path.stat().st_size >> 20} MiB)")
    t = time.perf_counter()
    log = iochar.open(path)
    t1 = time.perf_counter()
    frame = log.records("POSIX")
    t2 = time.perf_counter()
    print(f"open: {t1 - t:.2f} s, records(): {t2 - t1:.2f} s, total {t2 - t:.2f} s, "
          f"{len(frame)} rows")
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
