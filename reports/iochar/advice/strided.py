"""strided-shared: several ranks access one shared file in small pieces interleaved
with each other (each rank jumps over the others' pieces by a fixed stride): the
classic case for collective buffering."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from . import layers as L
from .base import Advice, Context, num, pct
from .remedy import collective

ID = "strided-shared"


def strides(rows: pd.DataFrame) -> pd.Series:
    """Forward stride value -> count, the rows' top-4 STRIDE tables merged."""
    v, c = [], []
    for i in range(1, 5):
        v.append(S.col(rows, f"POSIX_STRIDE{i}_STRIDE"))
        c.append(S.col(rows, f"POSIX_STRIDE{i}_COUNT"))
    v, c = np.concatenate(v), np.concatenate(c)
    keep = (v > 0) & (c > 0)
    return pd.Series(c[keep]).groupby(v[keep]).sum().sort_values(ascending=False)


def candidates(df: pd.DataFrame, cfg: dict) -> np.ndarray:
    """Rows of records that may qualify: shared (reduced, or seen by several ranks)
    with enough reads or writes.  Vectorised, so a log of 10^6 file-per-process
    records costs no per-record Python work."""
    rid = S.column(df, "record_id")
    uniq, code = np.unique(rid, return_inverse=True)
    per_rid = np.bincount(code, minlength=len(uniq))
    multi = (S.column(df, "rank") == -1) | (per_rid[code] > 1)
    if not multi.any():
        return multi
    # reads and writes per record (whole counts: a float64 sum is exact in any order)
    r = np.bincount(code[multi], S.concept(df, "POSIX", "reads")[multi], len(uniq))
    w = np.bincount(code[multi], S.concept(df, "POSIX", "writes")[multi], len(uniq))
    busy = (r >= cfg["min_ops"]) | (w >= cfg["min_ops"])
    return multi & busy[code]


def owner_mpi_ops(ctx: Context, path, key: str) -> float | None:
    """MPI-IO reads or writes (key) of a file that a library above MPI-IO owns; None
    when the file is not one (POSIX's own, or no MPI-IO records)."""
    if ctx.owner.get(path, "POSIX") in ("POSIX", "STDIO"):
        return None
    mp = ctx.frame("MPIIO")
    if mp is None or "path" not in mp.columns:
        return None
    rows = S.rows(mp, S.objects(mp) == path)
    if not len(rows):
        return None
    return float(S.concept(rows, "MPIIO", key.lower()).sum())


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("POSIX")
    if df is None or ctx.nprocs < 2 or "POSIX_STRIDE1_STRIDE" not in df.columns:
        return []
    df = S.rows(df, S.column(df, "record_id") != S.AGGREGATE_ID)
    keep = candidates(df, cfg)
    if not keep.any():  # the common case: nothing to group
        return []
    df = S.rows(df, keep)
    out = []
    for _rid, rows in df.groupby("record_id", sort=False):
        nranks = ctx.nprocs if (rows["rank"] == -1).any() else rows["rank"].nunique()
        if nranks < 2:
            continue
        path = str(rows["path"].iat[0])
        for key, d in (("WRITES", "write"), ("READS", "read")):
            per = S.concept(rows, "POSIX", key.lower())
            ops = float(per.sum())
            # the ranks that access it in this direction (a file rank 0 writes and all
            # read is not written in interleaved pieces)
            n_dir = nranks if (rows["rank"] == -1).any() else \
                len(set(rows["rank"].to_numpy()[per > 0].tolist()))
            if n_dir < 2:
                continue
            nbytes = float(S.concept(rows, "POSIX", "bytes_" + ("written" if d == "write"
                                                                   else "read")).sum())
            # pieces of max_size and more (IOR's 1 MiB transfers) are not small
            if ops < cfg["min_ops"] or not nbytes or nbytes / ops >= cfg["max_size"]:
                continue
            if owner_mpi_ops(ctx, path, key) == 0:
                continue  # a library's file not accessed this way through MPI-IO: a
                # serial writer (rank 0 creating it), not ranks that could be collective
            st = strides(rows)
            # (a file's STRIDE table covers both directions: at most this direction's)
            regular = min(float(st.iloc[:2].sum()) if len(st) else 0.0, ops)
            if regular / ops < cfg["share"]:
                continue
            stride = float(st.index[0])
            size = nbytes / ops
            owner = ctx.owner.get(path, "POSIX")
            if owner == "POSIX":
                rec = (f"open the file with MPI_File_open, describe each rank's pieces with "
                       f"MPI_Type_vector + MPI_File_set_view and call MPI_File_{d}_all "
                       f"(ROMIO collective buffering, romio_cb_{d}=enable, turns them into "
                       "large contiguous accesses); or give each rank one contiguous region "
                       f"so every p{d} is large")
            else:
                rec = collective(owner, d)
            # merged into large accesses, the pieces' bytes still move: what it saves
            # is their per-access latency and lock turns (cost.estimate)
            t = float(S.concept(rows, "POSIX", "time_" + d).sum())
            est = ctx.estimate("POSIX", (ops, nbytes, t), min(regular, ops), (0.0, 0.0))
            interleave = size and abs(stride / size - (n_dir - 1)) < 0.5
            out.append(Advice(
                ID, "high",
                f"{owner}: {num(n_dir)} ranks {d} one shared file in {S.human_bytes(size)} "
                f"pieces {pct(regular / ops)} of them {S.human_bytes(stride)} apart"
                + (f" (interleaved: stride = {n_dir - 1} x piece)" if interleave else ""),
                rec,
                {f"POSIX_{key}": ops, "POSIX_STRIDE1_STRIDE": stride,
                 "strided_ops": regular, "mean_access_bytes": size, "nranks": n_dir},
                L.DATA_MODULE.get(owner, "POSIX"), [path], estimate=est,
                layers=ctx.layers_of([path]), paths={path}))
            break
    return out
