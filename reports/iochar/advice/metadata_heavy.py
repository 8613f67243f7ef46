"""metadata-heavy: open/stat/close time dominates, or many opens/stats per byte."""

from __future__ import annotations

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "metadata-heavy"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):
        ms = ctx.module_summary(module)
        if not ms:
            continue
        meta, rd, wr = (float(ms.get(k + "_total") or 0)
                        for k in ("time_meta", "time_read", "time_write"))
        io = meta + rd + wr
        opens, stats = float(ms.get("opens", 0)), float(ms.get("stats", 0))
        mops = opens + stats
        nbytes = float(ms.get("bytes_read", 0) + ms.get("bytes_written", 0))
        found = []
        # fsync is timed as metadata: when syncs outnumber opens and stats, the meta
        # time is theirs (fsync-storm judges that)
        syncs = float(ms.get("syncs", 0))
        if io and meta / io >= cfg["time_share"] and meta >= cfg["min_time"] and mops >= syncs:
            found.append(f"open/stat/close take {pct(meta / io)} of its I/O time "
                         f"({S.human_time(meta)} over all ranks)")
        if mops >= cfg["min_meta_ops"] and nbytes / mops < cfg["bytes_per_meta_op"]:
            found.append(f"{num(opens)} opens and {num(stats)} stats for "
                         f"{S.human_bytes(nbytes)} of data ({S.human_bytes(nbytes / mops)} "
                         "per open/stat)")
        if not found:
            continue
        files = int(ms.get("files", 0))
        call = "fopen()/fclose()" if module == "STDIO" else "open()/close()"
        recs = [f"open each file once and keep it open instead of {call} around every access "
                f"({num(opens)} opens of {num(files)} files)"]
        if stats:
            recs.append(f"drop the repeated stat()/access()/fstat() calls ({num(stats)}): ask "
                        "once and keep the answer")
        if ctx.nprocs > 1:
            recs.append("let one rank stat()/open() and MPI_Bcast the result, or use one "
                        "shared file through MPI-IO/HDF5/NetCDF instead of many small files")
        if "H5F" in ctx.records and ctx.nprocs > 1 and \
                ctx.total("H5F", "H5F_COLL_METADATA_OPS") == 0:
            recs.append("HDF5: H5Pset_all_coll_metadata_ops(fapl, 1) and "
                        "H5Pset_coll_metadata_write(fapl, 1)")
        out.append(Advice(
            ID, "high", f"{module}: " + "; ".join(found), "; ".join(recs),
            {f"{module}_F_META_TIME": meta, f"{module}_F_READ_TIME": rd,
             f"{module}_F_WRITE_TIME": wr, f"{module}_OPENS": opens,
             f"{module}_STATS": stats, "bytes": nbytes, "files": files,
             "nprocs": ctx.nprocs},
            module, seconds=meta, paths=ctx.paths_in(module)))
    return out
