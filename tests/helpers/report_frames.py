"""Hand-built record frames and logs for the reporter tests (summary, advice, html, CLIs)."""

import numpy as np
import pandas as pd

from iochar import advice
from iochar import summary as S
from iochar.log import OP
from iochar.writer import fnv1a64, write_log

MiB = 1 << 20


def frame(rows: list) -> pd.DataFrame:
    """rows: dicts with path, rank and counters; missing counters are 0."""
    cols = []
    for r in rows:
        cols += [k for k in r if k not in ("path", "rank", "record_id") and k not in cols]
    df = pd.DataFrame({
        "rank": np.array([r.get("rank", 0) for r in rows], dtype=np.int64),
        "record_id": np.array([fnv1a64(r["path"]) for r in rows], dtype=np.uint64),
        "path": [r["path"] for r in rows]})
    for c in cols:
        v = [r.get(c, 0) for r in rows]
        df[c] = np.array(v, dtype=np.float64 if "_F_" in c else np.int64)
    return df


def op_of(name: str) -> int:
    """The reduction op a counter of this name has in the C lists (for writing logs)."""
    if "_F_" in name:
        if "TIMESTAMP" in name:
            return OP["TS_START"] if "START" in name else OP["TS_END"]
        if name.endswith(("_READ_TIME", "_WRITE_TIME", "_META_TIME")) and "_MAX_" not in name:
            return OP["TIME"]
        return OP["MAX"]
    if name.endswith(("_BYTES_READ", "_BYTES_WRITTEN")):
        return OP["BYTES"]
    if "_HINT_" in name or "LUSTRE_" in name or name.endswith(("_ALIGNMENT", "_LAYOUT",
                                                                "_FORMAT")):
        return OP["ANY"]
    return OP["SUM"]


def write(path, job: dict, frames: dict, ranks: dict | None = None, series=None):
    write_log_mounts(path, job, frames, None, ranks, series)


def write_log_mounts(path, job: dict, frames: dict, mounts, ranks=None, series=None):
    """write(), with a MOUNTS section: [(mount_point, fs_type, block_size)] or None."""
    mods = {m: {"schema": [(c, op_of(c)) for c in df.columns[3:]], "records": df}
            for m, df in frames.items()}
    # integer counters come first in a log, then floating ones
    for spec in mods.values():
        spec["schema"].sort(key=lambda t: "_F_" in t[0])
    write_log(path, job, mods, ranks=ranks, series=series, mounts=mounts)


def ranks_frame(write_time, read_time=None, nbytes=MiB) -> pd.DataFrame:
    n = len(write_time)
    return pd.DataFrame({"rank": np.arange(n), "reads": 0, "writes": 10,
                         "bytes_read": 0, "bytes_written": nbytes,
                         "read_time": read_time if read_time is not None else np.zeros(n),
                         "write_time": np.asarray(write_time, dtype=float), "meta_time": 0.0})


def run_advice(job: dict, frames: dict, ranks: dict | None = None, cfg=None) -> dict:
    """{rule id: [Advice]} for these frames."""
    ctx = advice.Context(job, frames, ranks)
    out = {}
    for a in advice.evaluate(ctx, cfg):
        out.setdefault(a.id, []).append(a)
    return out


def job(nprocs=4, nnodes=1, run=100.0):
    return {"nprocs": nprocs, "nnodes": nnodes, "start_time": 1700000000.0,
            "end_time": 1700000000.0 + run, "exe": "/home/u/app", "cmdline": "/home/u/app",
            "jobid": "7", "version": "0.1.0"}


def good_pattern(nprocs=16, nnodes=4):
    """Few large aligned collective accesses: 16 ranks x 16 collective 4 MiB writes to one
    shared file; ROMIO's 4 aggregators issue aligned 16 MiB POSIX writes."""
    n_coll = nprocs * 16
    mpiio = frame([{"path": "/scratch/out.dat", "rank": -1, "MPIIO_COLL_OPENS": nprocs,
                    "MPIIO_COLL_WRITES": n_coll, "MPIIO_BYTES_WRITTEN": n_coll * 4 * MiB,
                    "MPIIO_SIZE_WRITE_1M_4M": n_coll, "MPIIO_ACCESS1_ACCESS": 4 * MiB,
                    "MPIIO_ACCESS1_COUNT": n_coll, "MPIIO_HINT_CB_NODES": nnodes,
                    "MPIIO_HINT_ROMIO_CB_WRITE": 3, "MPIIO_HINT_ROMIO_DS_WRITE": 3,
                    "MPIIO_HINT_STRIPING_FACTOR": 8, "MPIIO_HINT_STRIPING_UNIT": 4 * MiB,
                    "MPIIO_SLOWEST_RANK": 3, "MPIIO_SLOWEST_RANK_BYTES": 64 * MiB,
                    "MPIIO_FASTEST_RANK": 5, "MPIIO_FASTEST_RANK_BYTES": 64 * MiB,
                    "MPIIO_F_WRITE_TIME": nprocs * 2.0, "MPIIO_F_META_TIME": nprocs * 0.01,
                    "MPIIO_F_SLOWEST_RANK_TIME": 2.1, "MPIIO_F_FASTEST_RANK_TIME": 1.9}])
    agg_writes = n_coll // 4  # 16 MiB each
    posix = frame([{"path": "/scratch/out.dat", "rank": -1, "POSIX_OPENS": nprocs,
                    "POSIX_WRITES": agg_writes, "POSIX_BYTES_WRITTEN": agg_writes * 16 * MiB,
                    "POSIX_SEQ_WRITES": agg_writes - nnodes, "POSIX_CONSEC_WRITES": agg_writes - 8,
                    "POSIX_SIZE_WRITE_10M_100M": agg_writes, "POSIX_ACCESS1_ACCESS": 16 * MiB,
                    "POSIX_ACCESS1_COUNT": agg_writes, "POSIX_FILE_ALIGNMENT": 4096,
                    "POSIX_FILE_NOT_ALIGNED": 0, "POSIX_MAX_BYTE_WRITTEN": n_coll * 4 * MiB - 1,
                    "POSIX_SLOWEST_RANK": 0, "POSIX_SLOWEST_RANK_BYTES": 256 * MiB,
                    "POSIX_FASTEST_RANK": 7, "POSIX_FASTEST_RANK_BYTES": 0,
                    "POSIX_F_WRITE_TIME": 7.5, "POSIX_F_META_TIME": 0.05,
                    "POSIX_F_SLOWEST_RANK_TIME": 1.9, "POSIX_F_FASTEST_RANK_TIME": 0.0}])
    ranks = {"MPIIO": ranks_frame(np.full(nprocs, 2.0) + np.linspace(0, 0.1, nprocs),
                                  nbytes=64 * MiB)}
    return job(nprocs, nnodes), {"MPIIO": mpiio, "POSIX": posix}, ranks


__all__ = ["S", "frame", "good_pattern", "job", "ranks_frame", "run_advice", "small_writes", "write",
           "write_log_mounts"]


def small_writes(n=20000, size_bin="1K_10K", size=4096, path="/scratch/a.dat"):
    """One rank writing n accesses of `size` bytes to one file (the small-io case)."""
    return frame([{"path": path, "rank": 0, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * size,
                   f"POSIX_SIZE_WRITE_{size_bin}": n, "POSIX_ACCESS1_ACCESS": size,
                   "POSIX_ACCESS1_COUNT": n, "POSIX_SEQ_WRITES": n - 1,
                   "POSIX_CONSEC_WRITES": n - 1, "POSIX_FILE_ALIGNMENT": 4096,
                   "POSIX_F_WRITE_TIME": 3.0}])
