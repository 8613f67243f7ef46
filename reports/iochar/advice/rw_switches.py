"""rw-switches: reads and writes interleaved on the same files."""

from __future__ import annotations

from .. import summary as S
from .base import Advice, Context, num, pct

ID = "rw-switches"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        name = f"{module}_RW_SWITCHES"
        if name not in df.columns:
            continue
        sw = float(S.col(df, name).sum())
        ops = float((S.concept(df, module, "reads") + S.concept(df, module, "writes")).sum())
        if sw < cfg["min_switches"] or not ops or sw / ops < cfg["share"]:
            continue
        out.append(Advice(
            ID, "warn",
            f"{module}: {num(sw)} switches between reading and writing ({pct(sw / ops)} of "
            f"{num(ops)} accesses)",
            "separate read and write phases (read what you need first, then write), which "
            "keeps caches and file-system locks effective", {name: sw, "accesses": ops}, module))
    return out
