"""redundant-reads: a file read several times over (bytes read >> its size)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from .base import Advice, Context, num
from .remedy import HDF5_CACHE, HDF5_CACHE_EXAMPLE, is_hdf5

ID = "redundant-reads"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):  # the bytes that reach the system, once
        df = ctx.frame(module)
        mb = f"{module}_MAX_BYTE_READ"
        if df is None or mb not in df.columns:
            continue
        df = S.rows(df, S.column(df, "record_id") != S.AGGREGATE_ID)
        nranks = np.where(S.column(df, "rank") == -1, ctx.nprocs, 1)
        rid = S.column(df, "record_id")
        cols = {"read": S.concept(df, module, "bytes_read"),
                "size": S.col(df, mb) + 1, "time": S.concept(df, module, "time_read"),
                "nranks": nranks}
        if S.all_distinct(rid):  # one row per file: no grouping, and most logs stop here
            with np.errstate(divide="ignore", invalid="ignore"):
                fac = cols["read"] / cols["size"]
            if not ((fac >= cfg["factor"]) &
                    (cols["read"] - cols["size"] >= cfg["min_excess"])).any():
                continue
            per = pd.DataFrame(cols, index=pd.Index(rid, name="record_id"))
        else:
            g = pd.DataFrame({"record_id": rid, **cols}).groupby("record_id", sort=False)
            per = pd.DataFrame({"read": g["read"].sum(), "size": g["size"].max(),
                                "time": g["time"].sum(), "nranks": g["nranks"].sum()})
        excess = per["read"] - per["size"]
        factor = per["read"] / per["size"]
        hit = (factor >= cfg["factor"]) & (excess >= cfg["min_excess"])
        if not hit.any():
            continue
        worst = excess[hit].idxmax()
        paths = df.drop_duplicates("record_id").set_index("record_id")["path"] \
            if "path" in df.columns else None
        files = [str(paths[r]) for r in excess[hit].nlargest(3).index] if paths is not None else []
        allp = {str(paths[r]) for r in excess[hit].index} if paths is not None else set()
        secs = float((per["time"] * excess / per["read"])[hit].sum())
        many = int(per.at[worst, "nranks"]) > 1
        nr = int(per.at[worst, "nranks"])
        rec = (f"read it on one rank and MPI_Bcast it to the {nr} ranks that read it (or "
               "MPI_File_read_all, which fetches each byte once)"
               if many and ctx.mpi else
               # processes of a launcher (torchrun, srun tasks, a process pool): no MPI
               f"read it in one process and share it with the {nr} processes that read it "
               "(a broadcast over the job's communication library, e.g. torch.distributed."
               "broadcast_object_list, or one copy per node in shared memory such as "
               "/dev/shm or a numpy.memmap the processes open)"
               if many else
               "read the file once and keep it in memory (or mmap it) instead of reading it "
               "again on every pass")
        example = ""
        if is_hdf5(ctx, files)[0]:  # re-read chunks: HDF5's chunk cache is too small
            rec = HDF5_CACHE + "; else " + rec
            example = HDF5_CACHE_EXAMPLE
        out.append(Advice(
            ID, "high",
            f"{module}: {num(hit.sum())} file(s) read {float(factor[worst]):.1f}x over "
            f"(worst: {S.human_bytes(per.at[worst, 'read'])} read from a "
            f"{S.human_bytes(per.at[worst, 'size'])} file"
            + (f" by {int(per.at[worst, 'nranks'])} ranks" if many else "") + "); "
            f"{S.human_bytes(excess[hit].sum())} read more than once",
            rec,
            {f"{module}_BYTES_READ": float(per.at[worst, "read"]),
             f"{module}_MAX_BYTE_READ": float(per.at[worst, "size"] - 1),
             "read_factor": float(factor[worst]), "files": int(hit.sum()),
             "excess_bytes": float(np.sum(excess[hit])), "excess_read_time_s": secs},
            # priced by bytes: a page cache makes local re-reads look free, a shared
            # file system serves every byte again (and there its seconds are the price)
            module, files, nbytes=float(np.sum(excess[hit])), seconds=secs,
            layers=ctx.layers_of(allp), paths=allp, example=example))
    return out
