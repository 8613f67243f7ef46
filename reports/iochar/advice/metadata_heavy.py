"""metadata-heavy: metadata time dominates, many opens/stats per byte, or many files."""

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
        meta_avg = float(ms.get("time_meta") or 0)
        mops = float(ms.get("opens", 0) + ms.get("stats", 0))
        nbytes = float(ms.get("bytes_read", 0) + ms.get("bytes_written", 0))
        found = []
        if io and meta / io >= cfg["time_share"] and meta_avg >= cfg["min_time"]:
            found.append(f"metadata is {pct(meta / io)} of I/O time "
                         f"({S.human_time(meta_avg)} per process)")
        if mops >= cfg["min_meta_ops"] and nbytes / mops < cfg["bytes_per_meta_op"]:
            found.append(f"{num(mops)} opens/stats for {S.human_bytes(nbytes)} of data "
                         f"({S.human_bytes(nbytes / mops)} per open/stat)")
        many = ms.get("files_unique", 0)
        if ctx.nprocs > 1 and many >= cfg["min_files"]:
            found.append(f"{num(many)} files each used by one rank "
                         f"({many / ctx.nprocs:.1f} per rank)")
        if not found:
            continue
        recs = [("use fewer, larger files (a shared file through MPI-IO, HDF5 or NetCDF), "
                "open once and keep files open, avoid repeated stat/open in loops")]
        if "H5F" in ctx.records and ctx.nprocs > 1 and \
                ctx.total("H5F", "H5F_COLL_METADATA_OPS") == 0:
            recs.append("HDF5: H5Pset_all_coll_metadata_ops(fapl, 1) and "
                        "H5Pset_coll_metadata_write(fapl, 1)")
        runtime_share = (ms.get("share_of_runtime") or {}).get("meta", 0) or 0
        out.append(Advice(
            ID, "high" if runtime_share >= cfg["high_runtime_share"] else "warn",
            f"{module}: " + "; ".join(found), "; ".join(recs),
            {f"{module}_F_META_TIME": meta, f"{module}_F_READ_TIME": rd,
             f"{module}_F_WRITE_TIME": wr, f"{module}_OPENS": ms.get("opens", 0),
             f"{module}_STATS": ms.get("stats", 0), "bytes": nbytes,
             "files_unique": many, "nprocs": ctx.nprocs},
            module))
    return out
