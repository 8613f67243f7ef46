"""random-access: reads or writes that jump around the file with no regular stride,
on files the application accesses itself (POSIX/STDIO), and on files it accesses with
independent MPI-IO calls only: there POSIX sees the application's own offsets (no
two-phase aggregator reorders them), so the jumps are named at the MPI-IO layer with
its remedy. A library's own pattern under HDF5/NetCDF files, and ROMIO's under
collective calls, is judged by those rules."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "random-access"


def stride_counts(df, module: str) -> np.ndarray:
    """Accesses per row explained by the row's top-4 forward strides (a regular
    pattern; a backward gap is a jump back, whatever its size)."""
    n = np.zeros(len(df))
    for i in range(1, 5):
        n += S.col(df, f"{module}_STRIDE{i}_COUNT") * (S.col(df, f"{module}_STRIDE{i}_STRIDE") > 0)
    return n


def independent_mpiio_rows(ctx: Context) -> np.ndarray:
    """POSIX rows of files MPI-IO owns and accessed with independent calls only."""
    df = ctx.frame("POSIX")
    if "MPIIO" not in ctx.records or "path" not in df.columns:
        return np.zeros(len(df), bool)
    keep = (S.column(df, "record_id") != S.AGGREGATE_ID) & ctx.regular_rows("POSIX")
    paths = S.objects(df)
    keep &= ctx.owner_of(paths, "POSIX") == "MPIIO"
    if ctx.collective_paths and keep.any():
        keep &= ~np.isin(paths, list(ctx.collective_paths))
    return keep


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, layer in (("POSIX", "POSIX"), ("STDIO", "STDIO"), ("POSIX", "MPIIO")):
        df = ctx.frame(module)
        if df is None or f"{module}_CONSEC_READS" not in df.columns or \
                layer == "MPIIO" and "MPIIO" not in ctx.records:
            continue
        df = ctx.own_frame(module) if layer != "MPIIO" else \
            S.rows(df, independent_mpiio_rows(ctx))
        shared = df["rank"].to_numpy() == -1
        best = None
        for key in ("READS", "WRITES"):
            ops = S.concept(df, module, key.lower())
            seq = S.col(df, f"{module}_SEQ_{key}")
            con = S.col(df, f"{module}_CONSEC_{key}")
            # Each rank's first access in a direction follows nothing: not counted.
            first = np.minimum(ops, np.where(shared, ctx.nprocs, 1))
            jumps = np.maximum(ops - con - first, 0)
            if float(jumps.sum()) < cfg["min_ops"]:  # random ones are fewer still
                continue
            # Jumps by one of the few most common strides are a regular (strided)
            # pattern, not random; the strided-shared rule judges those.
            regular = np.minimum(stride_counts(df, module), jumps)
            rnd = np.where(regular >= cfg["regular"] * np.maximum(jumps, 1), 0, jumps - regular)
            n, r = float(ops.sum()), float(rnd.sum())
            if n <= 0 or r < cfg["min_ops"] or r / n < cfg["share"]:
                continue
            if best is None or r > best[1]:
                # a jump costs an access's latency (a seek, a lost read-ahead): what
                # sorting the accesses saves; the bytes move anyway (cost.estimate)
                mine = rnd > 0  # the rows with jumps: the finding's scope
                moved = S.concept(df, module, "bytes_read" if key == "READS" else
                                  "bytes_written")[mine].sum()
                t = S.col(df, f"{module}_F_{key[:-1]}_TIME")[mine].sum()
                est = ctx.estimate(module, (float(ops[mine].sum()), float(moved), float(t)),
                                   r, (0.0, 0.0))
                back = float(np.maximum(ops - seq - first, 0).sum())
                best = (key, r, n, float(seq.sum()), float(con.sum()), back, rnd, est)
        if best is None:
            continue
        key, r, n, seq, con, back, rnd, est = best
        d = key.lower()[:-1]
        paths = set(df["path"].to_numpy()[rnd > 0]) if "path" in df.columns else set()
        files = [str(df["path"].iat[i]) for i in np.argsort(-rnd, kind="stable")[:3]
                 if rnd[i] > 0] if "path" in df.columns else []
        call = {"POSIX": "pread", "STDIO": "fread"}[module] if d == "read" else \
            {"POSIX": "pwrite", "STDIO": "fwrite"}[module]
        rec = (f"sort the requests by offset and {d} larger contiguous regions per {call} "
               f"call (then pick the pieces in memory)" if d == "read" else
               f"sort the records by offset before the {call} calls, or stage them in "
               "memory and write contiguous blocks")
        if layer == "MPIIO":
            top = S.top_sizes(df[rnd > 0], "POSIX")
            size = f" of {S.human_bytes(top[0]['size'])}" if top else ""
            rec = (f"describe each rank's pieces with a file view (MPI_File_set_view with an "
                   f"indexed or subarray filetype) and {d} them with one collective "
                   f"MPI_File_{d}_all (or MPI_File_{d}_at_all): ROMIO sorts and merges "
                   f"them into large contiguous accesses; else sort the offsets and {d} "
                   f"larger regions per independent MPI_File_{d}_at call")
            if not ctx.parallel(paths):  # one rank's file: no collective remedy
                rec = (f"sort the offsets and {d} larger contiguous regions per "
                       f"MPI_File_{d}_at call (a file view with an indexed filetype lets "
                       f"one call {d} them all)")
            example = ("MPI_Type_create_indexed_block(n, len, offsets, MPI_BYTE, &ft); "
                       "MPI_Type_commit(&ft);\nMPI_File_set_view(fh, 0, MPI_BYTE, ft, "
                       f"\"native\", MPI_INFO_NULL);\nMPI_File_{d}_all(fh, buf, total, "
                       "MPI_BYTE, &status);")
            out.append(Advice(
                ID, "high",
                f"MPIIO (independent calls): {pct(r / n)} of {d}s{size} ({num(r)} of "
                f"{num(n)}) jump to an irregular offset ({num(back)} backwards; POSIX "
                "sees the calls' own offsets)",
                rec,
                {f"POSIX_{key}": n, f"POSIX_SEQ_{key}": seq, f"POSIX_CONSEC_{key}": con,
                 f"random_{d}s": r, f"backward_{d}s": back, "MPIIO_COLL_ops": 0},
                "MPIIO", files, estimate=est, layers=ctx.layers_of(paths), paths=paths,
                example=example))
            continue
        if ctx.nprocs > 1:
            rec += ("; with MPI, MPI_File_read_at_all/MPI_File_write_at_all over an indexed "
                    "file view lets ROMIO sort and merge them")
        out.append(Advice(
            ID, "high",
            f"{module}: {pct(r / n)} of {d}s ({num(r)} of {num(n)}) jump to an irregular "
            f"offset ({num(back)} backwards)",
            rec,
            {f"{module}_{key}": n, f"{module}_SEQ_{key}": seq, f"{module}_CONSEC_{key}": con,
             f"random_{d}s": r, f"backward_{d}s": back},
            module, files, estimate=est, layers=ctx.layers_of(paths), paths=paths))
    return out
