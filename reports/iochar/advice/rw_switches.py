"""rw-switches: reads and writes interleaved on the same files, beyond one change of
direction per open (write a file, then read it back, is a normal phase change)."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least, num, pct

ID = "rw-switches"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):
        df = ctx.frame(module)
        name = f"{module}_RW_SWITCHES"
        if df is None or name not in df.columns:
            continue
        df = ctx.own_frame(module)
        raw = S.col(df, name)
        per = np.maximum(raw - np.maximum(S.concept(df, module, "opens"), 1), 0)
        sw = float(per.sum())
        ops_row = S.concept(df, module, "reads") + S.concept(df, module, "writes")
        ops = float(ops_row.sum())
        if sw < cfg["min_switches"] or not ops or sw / ops < cfg["share"]:
            continue
        paths = set(df["path"].to_numpy()[per > 0]) if "path" in df.columns else set()
        t = S.concept(df, module, "time_read") + S.concept(df, module, "time_write")
        with np.errstate(divide="ignore", invalid="ignore"):
            secs = float(np.where(ops_row > 0, t * per / np.maximum(ops_row, 1), 0).sum())
        calls = "read()/write()" if module == "POSIX" else "fread/fwrite"
        out.append(Advice(
            ID, "high",
            f"{module}: {num(sw)} switches between reading and writing beyond one per open "
            f"({pct(sw / ops)} of {num(ops)} accesses)",
            f"separate the read and write phases: read what you need first (one large "
            f"{calls} per region), modify it in memory, then write it back in one pass",
            {name: float(raw.sum()), "excess_switches": sw, "accesses": ops}, module,
            least(paths), seconds=secs, paths=paths))
    return out
