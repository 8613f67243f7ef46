"""file-per-process: each rank writes its own files, many of them, at scale."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num
from .remedy import direction

ID = "file-per-process"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    if ctx.nprocs < cfg["min_nprocs"]:
        return out
    for module in ("POSIX", "STDIO"):
        ms = ctx.module_summary(module)
        many = int(ms.get("files_unique", 0)) if ms else 0
        if many < cfg["min_files"]:
            continue
        files = ctx.files(module)
        own = ~S.column(files, "shared").astype(bool)
        secs = float(np.nansum(S.column(files, "time_meta")[own]))  # as Series.sum()
        d = direction(float(ms.get("reads", 0)), float(ms.get("writes", 0)))
        out.append(Advice(
            ID, "high",
            f"{module}: {num(many)} files each used by one rank ({many / ctx.nprocs:.1f} per "
            f"rank, {ctx.nprocs} ranks): every file costs the metadata server a create, "
            "open and close",
            f"{d} one shared file per step through MPI-IO (MPI_File_open on the "
            f"communicator + MPI_File_{d}_at_all at rank offsets), HDF5 or NetCDF with the "
            f"MPI-IO driver, or group ranks so one rank per node {d}s a file",
            {"files_unique": many, "nprocs": ctx.nprocs, f"{module}_OPENS": ms.get("opens", 0),
             f"{module}_F_META_TIME": secs},
            module, seconds=secs, paths=set(S.objects(files)[own].tolist())))
    return out
