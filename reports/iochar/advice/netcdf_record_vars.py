"""netcdf-record-vars: record variables accessed one record at a time in a
classic-format file, where the records of all record variables interleave."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from . import layers as L
from .base import Advice, Context, least, num

ID = "netcdf-record-vars"
CLASSIC = (1, 2, 5)  # NC_FILE_FORMAT: classic, 64-bit offset, CDF5 interleave records


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for prefix, layer in (("NC", "NetCDF"), ("PNETCDF", "PnetCDF")):
        var, fil = ctx.frame(f"{prefix}_VAR"), ctx.frame(f"{prefix}_FILE")
        if var is None or f"{prefix}_VAR_IS_RECORD_VAR" not in var.columns:
            continue
        classic = None
        if fil is not None and f"{prefix}_FILE_FORMAT" in fil.columns:
            fmt = S.col(fil, f"{prefix}_FILE_FORMAT")
            classic = set(fil["path"].to_numpy()[np.isin(fmt, CLASSIC + (0,))])
            if not classic:
                continue  # netCDF-4: HDF5 stores each variable on its own
        m = f"{prefix}_VAR"
        ops = S.concept(var, m, "reads") + S.concept(var, m, "writes")
        rec = (S.col(var, f"{prefix}_VAR_IS_RECORD_VAR") > 0) & (ops > 0)
        files = L.file_of(var["path"].to_numpy(), ctx.paths_in(f"{prefix}_FILE"))
        if classic is not None:
            rec &= np.isin(files, list(classic))
        fp = set(files[rec])
        names = {str(p)[len(f) + 1:] or str(p) for p, f in zip(var["path"].to_numpy()[rec],
                                                                  files[rec])}
        nops = float(ops[rec].sum())
        if len(names) < cfg["min_record_vars"] or nops < cfg["min_ops"]:
            continue
        nbytes = float((S.concept(var, m, "bytes_read") + S.concept(var, m, "bytes_written"))[rec]
                       .sum())
        lay = ctx.layers_of(fp)
        px = lay.get("POSIX", {})
        moved = float(px.get("bytes_read", 0) + px.get("bytes_written", 0))
        amp = (f"; POSIX moved {S.human_bytes(moved)} for {S.human_bytes(nbytes)} of variable "
               f"data ({moved / nbytes:.1f}x, {num(px.get('reads', 0))} reads back)"
               if nbytes and moved >= 1.2 * nbytes else "")
        if layer == "PnetCDF":
            remedy = ("put several records per call (ncmpi_put_vara_*_all with count[0] > 1) "
                      "or post the variables' records together (ncmpi_iput_vara + "
                      "ncmpi_wait_all) so PnetCDF writes them in one pass")
        else:
            remedy = ("put several records per nc_put_vara call (count[0] > 1 along the "
                      "unlimited dimension, buffering records in memory), or store the "
                      "variables with a fixed time dimension, or create the file as netCDF-4 "
                      "(NC_NETCDF4) with nc_def_var_chunking")
            if ctx.parallel(fp):
                remedy += "; in parallel, nc_var_par_access(ncid, varid, NC_COLLECTIVE)"
        out.append(Advice(
            ID, "high",
            f"{m}: {len(names)} record variable(s) in {len(fp)} classic-format file(s) "
            f"accessed {num(nops)} times one record at a time: their records interleave in "
            f"the file, so every access is a small strided one{amp}",
            remedy,
            {"record_vars": len(names), "files": len(fp), "record_var_ops": nops,
             "record_var_bytes": nbytes, "posix_bytes": moved,
             f"{m}_STRIDED_ACCESSES": S.col(var, f"{m}_STRIDED_ACCESSES")[rec].sum()},
            m, least(fp), seconds=ctx.time_of(fp), layers=lay, paths=fp))
    return out
