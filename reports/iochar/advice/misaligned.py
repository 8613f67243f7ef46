"""misaligned: file offsets not aligned to the file system block (or stripe) size."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num, pct
from .small_io import stripe_unit

ID = "misaligned"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        name = f"{module}_FILE_NOT_ALIGNED"
        if name not in df.columns:
            continue
        reads = S.concept(df, module, "reads")
        ops = float((reads + S.concept(df, module, "writes")).sum())
        # A read-to-EOF loop ends with a 0-byte read at offset = file size, rarely
        # block-aligned (Python reads every module it imports that way): up to one
        # such probe per open of a file that was read is not counted against it.
        per_file = S.col(df, name)
        probes = np.minimum(per_file, np.minimum(S.concept(df, module, "opens"), reads))
        bad = float((per_file - probes).sum())
        if ops <= 0 or bad < cfg["min_ops"] or bad / ops < cfg["share"]:
            continue
        align = float(S.col(df, f"{module}_FILE_ALIGNMENT").max())
        stripe = stripe_unit(ctx)
        paths = set(df["path"][S.col(df, name) > 0]) if "path" in df.columns else set()
        recs = [f"align offsets and sizes to {S.human_bytes(stripe or align)}"
                + (" (the stripe size)" if stripe else " (the file system block size)")]
        if paths & ctx.paths_in("H5F"):
            cur = ctx.total("H5F", "H5F_ALIGNMENT")
            recs.append("HDF5: H5Pset_alignment(fapl, threshold, "
                        f"{S.human_bytes(stripe or max(align, 1 << 20))})"
                        + (f" (now {S.human_bytes(cur)})" if cur else ""))
        if paths & (ctx.paths_in("NC_FILE") | ctx.paths_in("PNETCDF_FILE")):
            recs.append("NetCDF-4 has no per-file alignment call (netCDF-C >= 4.9 has the "
                        "process-wide nc_set_alignment); classic files: nc__enddef v_align, "
                        "PnetCDF: nc_header_align_size/nc_var_align_size hints")
        if "MPIIO" in ctx.records:
            recs.append("MPI-IO: set striping_unit and give each rank stripe-aligned domains")
        share = bad / ops
        out.append(Advice(
            ID, "high" if share >= cfg["high_share"] else "warn",
            f"{module}: {pct(share)} of accesses ({num(bad)} of {num(ops)}) are not aligned to "
            f"{S.human_bytes(align)}",
            "; ".join(recs),
            {name: bad, f"{module}_FILE_ALIGNMENT": align, "accesses": ops,
             "eof_probes_not_counted": float(probes.sum()),
             **({"MPIIO_HINT_STRIPING_UNIT": stripe} if stripe else {})},
            module, sorted(paths)[:3]))
    return out
