"""small-io: many reads or writes smaller than the small-size threshold."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "small-io"
SKIP = ("STDIO",)  # libc buffers small STDIO calls; stdio-heavy covers that module

RECOMMEND = {
    "POSIX": "aggregate into larger requests (buffer in memory, write whole blocks), or use "
             "MPI-IO collective I/O (MPI_File_write_all: ROMIO two-phase merges small pieces)",
    "MPIIO": "use collective calls (MPI_File_*_all) so two-phase I/O merges the pieces, or "
             "describe the whole pattern with one file view and one call",
    "H5D": "write larger hyperslabs per H5Dwrite, use larger chunks (H5Pset_chunk) and "
           "collective transfers (H5Pset_dxpl_mpio H5FD_MPIO_COLLECTIVE)",
}
DEFAULT_RECOMMEND = ("access whole records or slabs per call and use collective I/O "
                     "(nc_var_par_access NC_COLLECTIVE / ncmpi_*_all)")


def small_counts(df, module: str, direction: str, size: float, top: list) -> tuple:
    """(per-record small ops below `size`, module total, bin counters used).

    Bins wholly below `size` count fully; the bin containing `size` counts minus the
    top-4 access sizes known to be >= size (so exact 1 MiB accesses are not small).
    """
    per = np.zeros(len(df))
    used = {}
    lower = 0
    boundary = 0.0
    for b, upper in zip(S.SIZE_BINS, S.BIN_UPPER):
        name = f"{module}_SIZE_{direction}_{b}"
        v = S.col(df, name)
        if upper < size:
            per += v
            used[name] = v.sum()
        elif lower < size:
            big = sum(t["count"] for t in top if size <= t["size"] <= upper)
            boundary = max(v.sum() - big, 0.0)
            used[name] = v.sum()
        lower = upper
    return per, per.sum() + boundary, used


def stripe_unit(ctx: Context) -> float:
    """The stripe size when the log knows it: the MPI-IO striping_unit hint, else the
    largest Lustre stripe size (the LUSTRE frame of Darshan logs, or iochar's
    POSIX_LUSTRE_STRIPE_SIZE), else 0."""
    df = ctx.frame("MPIIO")
    hint = float(S.col(df, "MPIIO_HINT_STRIPING_UNIT").max()) if df is not None else 0.0
    if hint > 0:
        return hint
    lustre, posix = ctx.frame("LUSTRE"), ctx.frame("POSIX")
    if lustre is not None and len(lustre):
        return float(S.col(lustre, "LUSTRE_STRIPE_SIZE").max())
    if posix is not None and len(posix):
        return float(S.col(posix, "POSIX_LUSTRE_STRIPE_SIZE").max())
    return 0.0


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    size = cfg["size"]
    if cfg["use_stripe_unit"] and stripe_unit(ctx) > 0:
        size = stripe_unit(ctx)
    for module, df in ctx.records.items():
        if module in SKIP or not S.has_bins(df, module):
            continue
        ms = ctx.module_summary(module)
        if module == "MPIIO":
            coll = ctx.total(module, "MPIIO_COLL_READS") + ctx.total(module, "MPIIO_COLL_WRITES")
            if coll >= 0.5 * max(ms.get("reads", 0) + ms.get("writes", 0), 1):
                continue  # collective buffering already merges small pieces
        top = ms.get("top_sizes", [])
        for direction, key in (("READ", "reads"), ("WRITE", "writes")):
            ops = float(ms.get(key, 0))
            per, small, used = small_counts(df, module, direction, size, top)
            if ops <= 0 or small < cfg["min_ops"] or small / ops < cfg["share"]:
                continue
            share = small / ops
            typical = next((t["size"] for t in top if t["size"] < size), None)
            worst = np.argsort(-per, kind="stable")[:3]
            files = [str(df["path"].iat[i]) for i in worst if per[i] > 0] \
                if "path" in df.columns else []
            evidence = {f"{module}_{key.upper()}": ops, f"small_{key}": small,
                        "small_size": size, **{k: v for k, v in used.items() if v}}
            out.append(Advice(
                ID, "high" if share >= cfg["high_share"] else "warn",
                f"{module}: {pct(share)} of {key} ({num(small)} of {num(ops)}) are smaller "
                f"than {S.human_bytes(size)}"
                + (f"; most common size {S.human_bytes(typical)}" if typical else ""),
                RECOMMEND.get(module, DEFAULT_RECOMMEND), evidence, module, files))
    return out
