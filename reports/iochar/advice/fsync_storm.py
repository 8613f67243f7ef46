"""fsync-storm: a sync (or stdio flush) every few writes."""

from __future__ import annotations

from .base import Advice, Context, num, pct

ID = "fsync-storm"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ctx.records:
        ms = ctx.module_summary(module)
        syncs, writes = float(ms.get("syncs", 0)), float(ms.get("writes", 0))
        stdio = module == "STDIO"
        low, per = (cfg["min_flushes"], cfg["flushes_per_write"]) if stdio else \
            (cfg["min_syncs"], cfg["per_write"])
        if syncs < low or not writes and module not in ("H5F", "NC_FILE", "PNETCDF_FILE"):
            continue
        if writes and syncs / writes < per:
            continue
        what = "fflush" if stdio else "sync"
        out.append(Advice(
            ID, "warn",
            f"{module}: {num(syncs)} {what} calls for {num(writes)} writes"
            + (f" (one per {writes / syncs:.1f} writes)" if writes else ""),
            "sync once at the end of a phase (or at checkpoint boundaries), not after each "
            "write; every sync waits for the storage and defeats write-back caching",
            {f"{module}_syncs": syncs, f"{module}_WRITES": writes,
             "syncs_per_write": syncs / writes if writes else 0}, module))
        _ = pct
    return out
