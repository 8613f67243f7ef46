"""netcdf-record-vars: many record variables interleaved in a classic-format file."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num

ID = "netcdf-record-vars"
CLASSIC = (1, 2, 5)  # NC_FILE_FORMAT: classic, 64-bit offset, CDF5 interleave records


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for prefix in ("NC", "PNETCDF"):
        var, fil = ctx.frame(f"{prefix}_VAR"), ctx.frame(f"{prefix}_FILE")
        if var is None or f"{prefix}_VAR_IS_RECORD_VAR" not in var.columns:
            continue
        if fil is not None and f"{prefix}_FILE_FORMAT" in fil.columns:
            fmt = S.col(fil, f"{prefix}_FILE_FORMAT")
            if len(fmt) and not np.isin(fmt, CLASSIC + (0,)).any():
                continue  # netCDF-4: HDF5 stores each variable on its own
        m = f"{prefix}_VAR"
        ops = S.concept(var, m, "reads") + S.concept(var, m, "writes")
        rec = (S.col(var, f"{prefix}_VAR_IS_RECORD_VAR") > 0) & (ops > 0)
        nvars = int(var.loc[rec, "record_id"].nunique())
        nops = float(ops[rec].sum())
        if nvars < cfg["min_record_vars"] or nops < cfg["min_ops"]:
            continue
        out.append(Advice(
            ID, "warn",
            f"{m}: {nvars} record variables accessed ({num(nops)} puts/gets); in classic "
            "formats their records interleave, so each access is strided across all of them",
            "write/read several records per call (count > 1 along the unlimited dimension), "
            "use fixed-size dimensions where possible, or netCDF-4 (HDF5) format with chunking",
            {"record_vars": nvars, "record_var_ops": nops,
             f"{m}_STRIDED_ACCESSES": S.col(var, f"{m}_STRIDED_ACCESSES")[rec].sum()},
            m))
    return out
