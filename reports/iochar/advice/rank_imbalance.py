"""rank-imbalance: slowest vs fastest rank time (or bytes), per module and per shared file."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, pct

ID = "rank-imbalance"


def top_module(ctx: Context) -> str | None:
    """The interface the application called: MPI-IO's ranks are balanced by design
    under collective buffering even when only aggregators touch POSIX."""
    for m in ("MPIIO", "POSIX", "STDIO"):
        if m in ctx.records:
            return m
    return None


def per_rank(ctx: Context, module: str):
    """Per-rank I/O time and the number of ranks it stands for. Ranks with no I/O in the
    module did zero: the lowest such rank stands for them all, so the work is bounded by
    the log's rows, never by nprocs (a number the log states)."""
    per, exact = S.rank_times(ctx.frame(module), module, ctx.nprocs, ctx.ranks.get(module))
    t = (per["time_read"] + per["time_write"] + per["time_meta"])
    n = len(t)
    if exact and ctx.nprocs > 1 and n < ctx.nprocs:
        have = set(t.index.tolist())
        idle = next(r for r in range(n + 1) if r not in have)
        t = t.copy()
        t.loc[idle] = 0.0
        t = t.sort_index()
        n = ctx.nprocs
    return t, n


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    m = top_module(ctx)
    if m is not None and ctx.nprocs > 1:
        t, nranks = per_rank(ctx, m)
        if nranks > 1:
            slow, fast = float(t.max()), float(t.min())
            mean = float(t.sum()) / nranks
            if slow >= cfg["min_time"] and (slow - fast) / slow >= cfg["ratio"]:
                out.append(Advice(
                    ID, "warn",
                    f"{m}: slowest rank {int(t.idxmax())} spends {S.human_time(slow)} in I/O, "
                    f"fastest rank {int(t.idxmin())} {S.human_time(fast)}, mean "
                    f"{S.human_time(mean)} ({pct((slow - fast) / slow)} imbalance)",
                    "rebalance the data each rank reads/writes (or spread I/O over more "
                    "ranks / aggregators); on Lustre check the stripe count covers the writers",
                    {"slowest_rank": int(t.idxmax()), "slowest_rank_time": slow,
                     "fastest_rank": int(t.idxmin()), "fastest_rank_time": fast,
                     "mean_rank_time": mean, "ranks": nranks}, m))
    for module, df in ctx.records.items():
        s, f = f"{module}_F_SLOWEST_RANK_TIME", f"{module}_F_FASTEST_RANK_TIME"
        if s not in df.columns:
            continue
        shared = (df["rank"].to_numpy() == -1)
        if module == "POSIX" and "path" in df.columns:
            shared &= ~df["path"].isin(ctx.collective_paths).to_numpy()
        slow, fast = S.col(df, s), S.col(df, f)
        sb, fb = S.col(df, f"{module}_SLOWEST_RANK_BYTES"), S.col(df, f"{module}_FASTEST_RANK_BYTES")
        with np.errstate(divide="ignore", invalid="ignore"):
            tr = np.where(slow > 0, (slow - fast) / slow, 0.0)
            br = np.where(np.maximum(sb, fb) > 0, np.abs(sb - fb) / np.maximum(sb, fb), 0.0)
        hit = shared & (((slow >= cfg["min_time"]) & (tr >= cfg["ratio"])) |
                        ((np.maximum(sb, fb) >= cfg["min_bytes"]) & (br >= cfg["bytes_ratio"])))
        if not hit.any():
            continue
        i = int(np.argmax(np.where(hit, slow, -1)))
        paths = df["path"].to_numpy()[hit] if "path" in df.columns else []
        out.append(Advice(
            ID, "warn",
            f"{module}: {int(hit.sum())} shared file(s) with stragglers; worst: slowest rank "
            f"{S.human_time(slow[i])} vs fastest {S.human_time(fast[i])}, bytes "
            f"{S.human_bytes(sb[i])} vs {S.human_bytes(fb[i])}",
            "give ranks equal shares of the shared file, align each rank's region to the "
            "stripe size, and check the stripe count (lfs getstripe)",
            {s: slow[i], f: fast[i], f"{module}_SLOWEST_RANK_BYTES": sb[i],
             f"{module}_FASTEST_RANK_BYTES": fb[i],
             f"{module}_SLOWEST_RANK": S.col(df, f"{module}_SLOWEST_RANK")[i],
             f"{module}_FASTEST_RANK": S.col(df, f"{module}_FASTEST_RANK")[i],
             "files": int(hit.sum())},
            module, [str(p) for p in paths[:3]]))
    return out
