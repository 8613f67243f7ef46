"""stdio-heavy: a large share of bytes or operations go through buffered STDIO."""

from __future__ import annotations

from .. import summary as S
from .base import Advice, Context, least, num, pct

ID = "stdio-heavy"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("STDIO")
    if df is None:
        return []
    real = ~df["path"].isin(S.SPECIAL_PATHS).to_numpy() if "path" in df.columns else True
    sb = float(((S.concept(df, "STDIO", "bytes_read") + S.concept(df, "STDIO", "bytes_written"))
                * real).sum())
    so = float(((S.concept(df, "STDIO", "reads") + S.concept(df, "STDIO", "writes"))
                * real).sum())
    px = ctx.module_summary("POSIX")
    pb = float(px.get("bytes_read", 0) + px.get("bytes_written", 0))
    po = float(px.get("reads", 0) + px.get("writes", 0))
    bshare = sb / (sb + pb) if sb + pb else 0.0
    oshare = so / (so + po) if so + po else 0.0
    by_bytes = sb >= cfg["min_bytes"] and bshare >= cfg["bytes_share"]
    by_ops = so >= cfg["min_ops"] and oshare >= cfg["ops_share"]
    if not (by_bytes or by_ops):
        return []
    what = f"{pct(bshare)} of bytes ({S.human_bytes(sb)})" if by_bytes else \
        f"{pct(oshare)} of operations ({num(so)})"
    t = (S.concept(df, "STDIO", "time_read") + S.concept(df, "STDIO", "time_write") +
         S.concept(df, "STDIO", "time_meta")) * real
    paths = set(df["path"][real]) if "path" in df.columns else set()
    return [Advice(
        ID, "high",
        f"STDIO: {what} go through buffered stdio (fread/fwrite/fprintf)",
        "write bulk data in binary with fwrite of whole arrays (or write()/MPI-IO/HDF5) "
        "instead of fprintf/fscanf per value: text formatting is CPU-bound",
        {"STDIO_BYTES": sb, "STDIO_OPS": so, "POSIX_BYTES": pb, "POSIX_OPS": po,
         "stdio_bytes_share": bshare, "stdio_ops_share": oshare},
        "STDIO", least(paths), seconds=float(t.sum()), paths=paths)]
