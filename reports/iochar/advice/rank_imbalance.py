"""rank-imbalance: slowest vs fastest rank time (or bytes), per module and per shared file."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, pct

ID = "rank-imbalance"
# the call whose size sets each rank's share of a shared file, per module judged
SHARE_CALL = {"STDIO": "fwrite/fread", "MPIIO": "MPI_File_write_at/read_at",
              "H5D": "H5Dwrite/H5Dread hyperslab", "PNETCDF_VAR": "ncmpi_put_vara/get_vara"}


def top_module(ctx: Context) -> str | None:
    """The interface the application called: MPI-IO's ranks are balanced by design
    under collective buffering even when only aggregators touch POSIX."""
    for m in ("MPIIO", "POSIX", "STDIO"):
        if m in ctx.records:
            return m
    return None


def per_rank(ctx: Context, module: str):
    """(ranks ascending, seconds and bytes of each, how many ranks they stand for).
    Ranks with no I/O in the module did zero: the lowest such rank stands for them
    all, so the work is bounded by the log's rows, never by nprocs (a number the log
    states)."""
    # regular files only: rank 0 writing <STDOUT> or a pipe is not an imbalance
    df = S.rows(ctx.frame(module), ctx.regular_rows(module))
    rank, per, exact = S.rank_arrays(df, module, ctx.nprocs, ctx.ranks.get(module))
    t = per["time_read"] + per["time_write"] + per["time_meta"]
    b = per["bytes"]
    n = len(t)
    if exact and ctx.nprocs > 1 and n < ctx.nprocs:
        have = set(rank.tolist())
        idle = next(r for r in range(n + 1) if r not in have)
        order = np.argsort(np.append(rank, idle), kind="stable")
        rank = np.append(rank, idle)[order]
        t, b, n = np.append(t, 0.0)[order], np.append(b, 0.0)[order], ctx.nprocs
    return rank, t, b, n


def regular_paths(ctx: Context, module: str) -> set:
    df = ctx.frame(module)
    if "path" not in df.columns:
        return set()
    return set(S.objects(df)[ctx.regular_rows(module)].tolist())


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    m = top_module(ctx)
    if m is not None and ctx.nprocs > 1 and ctx.regular_rows(m).any():
        rank, t, b, nranks = per_rank(ctx, m)
        # NaN skipped, as pandas' Series reductions do
        t_mean, b_mean = float(np.nansum(t)) / nranks, float(np.nansum(b)) / nranks
        b_max, b_min = float(S.nanmax(b)), float(S.nanmin(b))
        # Time alone varies with contention and noise; the application can only
        # change what it gives each rank to do: the bytes must be uneven too.
        uneven = b_max > 0 and (b_max - b_min) / b_max >= cfg["bytes_ratio"]
        if nranks > 1 and uneven:
            slow, fast = float(S.nanmax(t)), float(S.nanmin(t))
            r_slow, r_fast = int(rank[S.argmax(t)]), int(rank[S.argmin(t)])
            spread = (slow - fast) / slow if slow > 0 else 0.0  # no rank timed: bytes alone
            timed = slow >= cfg["min_time"] and spread >= cfg["ratio"]
            if timed or b_max >= cfg["min_bytes"]:
                # Priced by bytes: the busiest rank's excess over an even share is what
                # balancing removes from the I/O phase; its time is noisy (page cache,
                # a loaded node) while the bytes are what the application decides.
                who = {"MPIIO": "each rank's MPI_File_write_at_all/read_at_all count",
                       "STDIO": "the data each rank passes to fwrite/fread"}.get(
                           m, "the data each rank passes to write()/read()")
                out.append(Advice(
                    ID, "high",
                    f"{m}: slowest rank {r_slow} spends {S.human_time(slow)} in I/O, "
                    f"fastest rank {r_fast} {S.human_time(fast)}, mean "
                    f"{S.human_time(t_mean)} ({pct(spread)} imbalance)",
                    f"give every rank an equal share of the data ({who}), or gather the "
                    "data of the busy rank onto the others first; with MPI-IO, collective "
                    "calls (cb_nodes aggregators) spread the writing",
                    {"slowest_rank": r_slow, "slowest_rank_time": slow,
                     "fastest_rank": r_fast, "fastest_rank_time": fast,
                     "mean_rank_time": t_mean, "ranks": nranks,
                     "max_rank_bytes": b_max, "min_rank_bytes": b_min}, m,
                    nbytes=(b_max - b_mean) * nranks,
                    # every rank waits for the slowest at the next collective step
                    seconds=(slow - t_mean) * nranks, paths=regular_paths(ctx, m)))
    for module, df in ctx.records.items():
        if out:
            break  # one finding: the job's ranks are uneven, shared files included
        s, f = f"{module}_F_SLOWEST_RANK_TIME", f"{module}_F_FASTEST_RANK_TIME"
        if s not in df.columns:
            continue
        shared = (df["rank"].to_numpy() == -1)
        if module in ("POSIX", "STDIO", "MPIIO"):
            # judged at the layer that owns the file: ROMIO aggregators or a library's
            # metadata writer make lower-layer ranks uneven by design
            shared &= ctx.own_rows(module)
        slow, fast = S.col(df, s), S.col(df, f)
        sb, fb = S.col(df, f"{module}_SLOWEST_RANK_BYTES"), S.col(df, f"{module}_FASTEST_RANK_BYTES")
        with np.errstate(divide="ignore", invalid="ignore"):
            tr = np.where(slow > 0, (slow - fast) / slow, 0.0)
            br = np.where(np.maximum(sb, fb) > 0, np.abs(sb - fb) / np.maximum(sb, fb), 0.0)
        # uneven bytes are the cause the application controls; time alone is noise
        hit = shared & (br >= cfg["bytes_ratio"]) & \
            (((slow >= cfg["min_time"]) & (tr >= cfg["ratio"])) |
             (np.maximum(sb, fb) >= cfg["min_bytes"]))
        if not hit.any():
            continue
        i = int(np.argmax(np.where(hit, slow, -1)))
        paths = df["path"].to_numpy()[hit] if "path" in df.columns else []
        share = float(tr[i]) / 2  # half the gap, on average, is waiting on the slowest
        out.append(Advice(
            ID, "high",
            f"{module}: {int(hit.sum())} shared file(s) with stragglers; worst: slowest rank "
            f"{S.human_time(slow[i])} vs fastest {S.human_time(fast[i])}, bytes "
            f"{S.human_bytes(sb[i])} vs {S.human_bytes(fb[i])}",
            "give every rank an equal share of the shared file (the size of each rank's "
            f"{SHARE_CALL.get(module, 'pwrite/MPI_File_write_at')}), align each rank's "
            "region to the stripe size, and check the stripe count (lfs getstripe)",
            {s: slow[i], f: fast[i], f"{module}_SLOWEST_RANK_BYTES": sb[i],
             f"{module}_FASTEST_RANK_BYTES": fb[i],
             f"{module}_SLOWEST_RANK": S.col(df, f"{module}_SLOWEST_RANK")[i],
             f"{module}_FASTEST_RANK": S.col(df, f"{module}_FASTEST_RANK")[i],
             "files": int(hit.sum())},
            module, [str(p) for p in paths[:3]],
            seconds=share * ctx.time_of(set(paths)), paths=set(paths)))
    return out
