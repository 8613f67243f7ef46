"""random-access: a large share of non-sequential reads or writes."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "random-access"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        if f"{module}_SEQ_READS" not in df.columns and f"{module}_SEQ_WRITES" not in df.columns:
            continue
        shared = df["rank"].to_numpy() == -1
        for key in ("READS", "WRITES"):
            ops = S.concept(df, module, key.lower())
            seq = S.col(df, f"{module}_SEQ_{key}")
            # Each rank's first access in a direction is never sequential (it follows
            # no byte); do not count those: one per per-rank row, up to nprocs per shared row.
            first = np.minimum(ops, np.where(shared, ctx.nprocs, 1)).sum()
            n = float(ops.sum())
            rnd = max(n - float(seq.sum()) - float(first), 0.0)
            if n <= 0 or rnd < cfg["min_ops"] or rnd / n < cfg["share"]:
                continue
            share = rnd / n
            d = key.lower()
            rec = ("use collective I/O (MPI_File_*_all): ROMIO two-phase sorts the pieces into "
                   "contiguous file domains" if "MPIIO" in ctx.records else
                   "reorder accesses by offset (sort requests, or read one larger contiguous "
                   "region and pick the pieces in memory); with MPI, collective MPI-IO "
                   "reorganizes them for you")
            out.append(Advice(
                ID, "high" if share >= cfg["high_share"] else "warn",
                f"{module}: {pct(share)} of {d} ({num(rnd)} of {num(n)}) are not sequential",
                rec,
                {f"{module}_{key}": n, f"{module}_SEQ_{key}": float(seq.sum()),
                 f"{module}_CONSEC_{key}": float(S.col(df, f"{module}_CONSEC_{key}").sum()),
                 f"random_{d}": rnd},
                module))
    return out
