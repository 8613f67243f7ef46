"""many-seeks: an explicit seek before most accesses, on files the application
accesses itself (a library's seeks are the library's business)."""

from __future__ import annotations

import numpy as np

from .. import summary as S
from .base import Advice, Context, least, num

ID = "many-seeks"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module in ("POSIX", "STDIO"):
        df = ctx.frame(module)
        if df is None:
            continue
        df = ctx.own_frame(module)
        seeks_row = S.concept(df, module, "seeks")
        ops_row = S.concept(df, module, "reads") + S.concept(df, module, "writes")
        seeks, ops = float(seeks_row.sum()), float(ops_row.sum())
        if seeks < cfg["min_seeks"] or not ops or seeks / ops < cfg["per_op"]:
            continue
        paths = set(df["path"].to_numpy()[seeks_row > 0]) if "path" in df.columns else set()
        meta = S.concept(df, module, "time_meta")
        opens = S.concept(df, module, "opens")
        with np.errstate(divide="ignore", invalid="ignore"):
            secs = float(np.where(seeks_row + opens > 0,
                                  meta * seeks_row / np.maximum(seeks_row + opens, 1), 0).sum())
        rec = ("use pread()/pwrite() with the offset instead of lseek() + read()/write()"
               if module == "POSIX" else
               "each fseek() drops the stdio buffer: read/write larger blocks sequentially, or "
               "use pread()/pwrite() on fileno(stream)")
        out.append(Advice(
            ID, "high",
            f"{module}: {num(seeks)} seeks for {num(ops)} accesses ({seeks / ops:.2f} per access)",
            rec, {f"{module}_SEEKS": seeks, "accesses": ops}, module, least(paths),
            seconds=secs, paths=paths))
    return out
