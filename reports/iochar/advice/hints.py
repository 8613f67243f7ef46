"""hints: effective MPI-IO hints that contradict the observed access pattern."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least, num, pct
from .small_io import small_counts

ID = "hints"
DISABLE, ENABLE = 2, 1  # MPIIO_HINT_ROMIO_* values: 0 unknown, 1 enable, 2 disable, 3 auto


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("MPIIO")
    if df is None:
        return []
    out = []
    top = S.top_sizes(df, "MPIIO")
    where: dict = {}

    def kw() -> dict:  # the files, their time and layers: built for a finding only
        if not where:
            paths = set(df["path"]) if "path" in df.columns else set()
            where.update(seconds=ctx.time_of(paths), layers=ctx.layers_of(paths),
                         paths=paths, files=least(paths))
        return where
    for d, key in (("WRITE", "writes"), ("READ", "reads")):
        hint = f"MPIIO_HINT_ROMIO_CB_{d}"
        ds = f"MPIIO_HINT_ROMIO_DS_{d}"
        ops = float(S.concept(df, "MPIIO", key).sum())
        if ops < cfg["min_ops"]:
            continue
        small = small_counts(df, "MPIIO", d, cfg["small_size"], top)[1]
        coll = float(S.col(df, f"MPIIO_COLL_{d}S").sum())
        views = float(S.col(df, "MPIIO_VIEWS").sum())
        cb = S.col(df, hint)
        if (cb == DISABLE).any() and small / ops >= cfg["small_share"] and (coll or views):
            out.append(Advice(
                ID, "high",
                f"MPIIO: collective buffering disabled (romio_cb_{key[:-1]}=disable) while "
                f"{pct(small / ops)} of {num(ops)} {key} are smaller than "
                f"{S.human_bytes(cfg['small_size'])} and strided",
                f"MPI_Info_set(info, \"romio_cb_{key[:-1]}\", \"enable\") (or drop the "
                "setting: the default is automatic) before MPI_File_open, so two-phase I/O "
                "merges the small pieces into large contiguous accesses",
                {hint: DISABLE, f"MPIIO_{key.upper()}": ops, f"small_{key}": small,
                 f"MPIIO_COLL_{d}S": coll, "MPIIO_VIEWS": views}, "MPIIO", floor="warn",
                **kw()))
        indep = float(S.col(df, f"MPIIO_INDEP_{d}S").sum())
        large = ops - small_counts(df, "MPIIO", d, cfg["large_size"], top)[1]
        if (S.col(df, ds) == ENABLE).any() and indep >= cfg["min_ops"] and \
                large / ops >= cfg["large_share"]:
            out.append(Advice(
                ID, "high",
                f"MPIIO: data sieving enabled (romio_ds_{key[:-1]}=enable) for {num(indep)} "
                f"independent {key}, {pct(large / ops)} of them >= "
                f"{S.human_bytes(cfg['large_size'])}",
                f"MPI_Info_set(info, \"romio_ds_{key[:-1]}\", \"disable\"): for large "
                "pieces sieving reads (and for writes locks and rewrites) whole buffers "
                "around them for nothing",
                {ds: ENABLE, f"MPIIO_INDEP_{d}S": indep, f"large_{key}": large}, "MPIIO",
                **kw()))
    nbytes = float(S.concept(df, "MPIIO", "bytes_read").sum()
                   + S.concept(df, "MPIIO", "bytes_written").sum())
    coll = float(S.expr(df, "MPIIO_COLL_READS+MPIIO_COLL_WRITES").sum())
    cbn = S.col(df, "MPIIO_HINT_CB_NODES")
    cbn = float(cbn[cbn > 0].min()) if (cbn > 0).any() else 0.0
    if cbn and coll and nbytes >= cfg["min_bytes"] and cbn < ctx.nnodes / 2:
        out.append(Advice(
            ID, "high",
            f"MPIIO: cb_nodes={cbn:.0f} aggregators for {ctx.nnodes} nodes moving "
            f"{S.human_bytes(nbytes)} collectively",
            f"MPI_Info_set(info, \"cb_nodes\", \"{ctx.nnodes}\") (about the number of "
            "nodes, or a multiple of the stripe count)",
            {"MPIIO_HINT_CB_NODES": cbn, "nnodes": ctx.nnodes, "bytes": nbytes}, "MPIIO", **kw()))
    out += buffer_rounds(ctx, df, cfg)
    sf = S.col(df, "MPIIO_HINT_STRIPING_FACTOR")
    if (sf == 1).any() and ctx.nprocs >= cfg["min_nprocs"] and nbytes >= cfg["min_bytes"] \
            and (df["rank"] == -1).any():
        out.append(Advice(
            ID, "high",
            f"MPIIO: shared file striped over 1 target (striping_factor=1) with "
            f"{ctx.nprocs} processes moving {S.human_bytes(nbytes)}",
            "stripe the file over more targets: MPI_Info_set(info, \"striping_factor\", "
            "\"N\") at MPI_File_open with MPI_MODE_CREATE, or lfs setstripe -c N on the "
            "directory",
            {"MPIIO_HINT_STRIPING_FACTOR": 1, "nprocs": ctx.nprocs, "bytes": nbytes},
            "MPIIO", **kw()))
    return out


def buffer_rounds(ctx: Context, df, cfg: dict) -> list[Advice]:
    """cb_buffer_size smaller than what each aggregator takes per collective call:
    ROMIO then runs several exchange-and-write rounds per call."""
    cbs, cbn = S.col(df, "MPIIO_HINT_CB_BUFFER_SIZE"), S.col(df, "MPIIO_HINT_CB_NODES")
    coll = S.expr(df, "MPIIO_COLL_READS+MPIIO_COLL_WRITES")
    indep = S.expr(df, "MPIIO_INDEP_READS+MPIIO_INDEP_WRITES")
    nbytes = S.concept(df, "MPIIO", "bytes_read") + S.concept(df, "MPIIO", "bytes_written")
    ranks = np.where(df["rank"].to_numpy() == -1, ctx.nprocs, 1)
    sel = (coll > 0) & (indep == 0) & (cbs > 0)
    if not sel.any():
        return []
    with np.errstate(divide="ignore", invalid="ignore"):
        per_call = np.where(sel, nbytes / np.maximum(coll / ranks, 1), 0)
        rounds = np.where(sel, per_call / np.maximum(cbn, 1) / np.maximum(cbs, 1), 0)
    i = int(np.argmax(rounds))
    if rounds[i] < cfg["min_rounds"] or coll[sel].sum() < cfg["min_coll_ops"]:
        return []
    want = per_call[i] / max(cbn[i], 1)
    mib = max(int(np.ceil(want / (1 << 20))), 1)
    paths = set(df["path"].to_numpy()[sel & (rounds >= cfg["min_rounds"])])
    return [Advice(
        ID, "warn",
        f"MPIIO: each collective call moves {S.human_bytes(per_call[i])} through "
        f"{cbn[i]:.0f} aggregator(s) with cb_buffer_size={S.human_bytes(cbs[i])}: "
        f"{rounds[i]:.0f} two-phase rounds per call",
        f"MPI_Info_set(info, \"cb_buffer_size\", \"{mib << 20}\") ({mib} MiB), or more "
        f"aggregators (cb_nodes, now {cbn[i]:.0f})",
        {"MPIIO_HINT_CB_BUFFER_SIZE": cbs[i], "MPIIO_HINT_CB_NODES": cbn[i],
         "bytes_per_call": per_call[i], "rounds_per_call": rounds[i]},
        "MPIIO", least(paths), seconds=ctx.time_of(paths) * (1 - 1 / rounds[i]),
        layers=ctx.layers_of(paths), paths=paths)]
