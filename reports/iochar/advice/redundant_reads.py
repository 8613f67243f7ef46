"""redundant-reads: a file read several times over (bytes read >> its size)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from .base import Advice, Context, num

ID = "redundant-reads"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    out = []
    for module, df in ctx.records.items():
        mb = f"{module}_MAX_BYTE_READ"
        if mb not in df.columns:
            continue
        g = pd.DataFrame({"record_id": df["record_id"].to_numpy(),
                          "read": S.concept(df, module, "bytes_read"),
                          "size": S.col(df, mb) + 1}).groupby("record_id", sort=False)
        per = pd.DataFrame({"read": g["read"].sum(), "size": g["size"].max()})
        excess = per["read"] - per["size"]
        factor = per["read"] / per["size"]
        hit = (factor >= cfg["factor"]) & (excess >= cfg["min_excess"])
        if not hit.any():
            continue
        worst = excess[hit].idxmax()
        paths = df.drop_duplicates("record_id").set_index("record_id")["path"] \
            if "path" in df.columns else None
        files = [str(paths[r]) for r in excess[hit].nlargest(3).index] if paths is not None else []
        out.append(Advice(
            ID, "warn",
            f"{module}: {num(hit.sum())} file(s) read {float(factor[worst]):.1f}x over "
            f"(worst: {S.human_bytes(per.at[worst, 'read'])} read from a "
            f"{S.human_bytes(per.at[worst, 'size'])} file); "
            f"{S.human_bytes(excess[hit].sum())} read more than once",
            "read once and keep it in memory, or read on one rank and MPI_Bcast it "
            "(or use MPI-IO collective reads so the data is fetched once)",
            {f"{module}_BYTES_READ": float(per.at[worst, "read"]),
             f"{module}_MAX_BYTE_READ": float(per.at[worst, "size"] - 1),
             "read_factor": float(factor[worst]), "files": int(hit.sum()),
             "excess_bytes": float(np.sum(excess[hit]))},
            module, files))
    return out
