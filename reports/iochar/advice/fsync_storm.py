"""fsync-storm: a sync every few writes. fflush() is not a sync (it hands the stream's
buffer to the kernel, which caches it): STDIO is not judged here."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least, num

ID = "fsync-storm"
CALL = {"POSIX": "fsync()/fdatasync()", "MPIIO": "MPI_File_sync",
        "H5F": "H5Fflush", "H5D": "H5Dflush", "NC_FILE": "nc_sync",
        "PNETCDF_FILE": "ncmpi_sync"}


EXAMPLE = {"POSIX": "for (...) write(fd, buf, n);\nfsync(fd);  /* once, after the loop */",
           "MPIIO": "MPI_File_write_at_all(fh, ...);  /* every step */\n"
                    "MPI_File_sync(fh);  /* once per checkpoint */"}


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        if module not in CALL:
            continue
        ms = ctx.module_summary(module)
        syncs, writes = float(ms.get("syncs", 0)), float(ms.get("writes", 0))
        low, per = cfg["min_syncs"], cfg["per_write"]
        if syncs < low or not writes and module not in ("H5F", "NC_FILE", "PNETCDF_FILE"):
            continue
        if writes and syncs / writes < per:
            continue
        srow = S.concept(df, module, "syncs")
        paths = set(df["path"].to_numpy()[srow > 0]) if "path" in df.columns else set()
        # syncs are timed as metadata (POSIX_F_META_TIME): the meta time of the files
        # synced, less what their opens may have taken, is what the syncs cost
        opens = S.concept(df, module, "opens")
        meta = S.concept(df, module, "time_meta")
        with np.errstate(divide="ignore", invalid="ignore"):
            secs = float(np.where(srow > 0, meta * srow / np.maximum(srow + opens, 1), 0).sum())
        call = CALL.get(module, "sync")
        out.append(Advice(
            ID, "high",
            f"{module}: {num(syncs)} {call} calls for {num(writes)} writes"
            + ("" if not writes else f" (one per {writes / syncs:.1f} writes)"
               if syncs <= writes else f" ({syncs / writes:.1f} per write)"),
            f"call {call} once at the end of a phase or checkpoint, not after each write: "
            "every sync waits for the storage and defeats write-back caching",
            {f"{module}_syncs": syncs, f"{module}_WRITES": writes,
             "syncs_per_write": syncs / writes if writes else 0}, module,
            least(paths), seconds=secs, paths=paths,
            example=EXAMPLE.get(module, "")))
    return out
