"""fsync-storm: a sync (or stdio flush) every few writes."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least, num

ID = "fsync-storm"
CALL = {"POSIX": "fsync()/fdatasync()", "STDIO": "fflush()", "MPIIO": "MPI_File_sync",
        "H5F": "H5Fflush", "H5D": "H5Dflush", "NC_FILE": "nc_sync",
        "PNETCDF_FILE": "ncmpi_sync"}


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        ms = ctx.module_summary(module)
        syncs, writes = float(ms.get("syncs", 0)), float(ms.get("writes", 0))
        stdio = module == "STDIO"
        low, per = (cfg["min_flushes"], cfg["flushes_per_write"]) if stdio else \
            (cfg["min_syncs"], cfg["per_write"])
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
            least(paths), seconds=secs, paths=paths))
    return out
