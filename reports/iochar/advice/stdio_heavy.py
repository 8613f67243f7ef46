"""stdio-heavy: a large share of bytes or operations go through buffered STDIO in small
calls (per-value fprintf/fscanf, tiny fread/fwrite). Large binary fwrite calls are as
good as write(): judged by the mean size of a call, never by the bytes alone."""

from __future__ import annotations

from .. import summary as S
from .base import Advice, Context, least, pct

ID = "stdio-heavy"


def check(ctx: Context, cfg: dict) -> list[Advice]:
    df = ctx.frame("STDIO")
    if df is None:
        return []
    real = ctx.own_rows("STDIO")  # regular files only: not <STDOUT>, pipes or terminals
    sb = float(((S.concept(df, "STDIO", "bytes_read") + S.concept(df, "STDIO", "bytes_written"))
                * real).sum())
    so = float(((S.concept(df, "STDIO", "reads") + S.concept(df, "STDIO", "writes"))
                * real).sum())
    if not so or sb / so >= cfg["small_call"]:
        return []  # large calls: the stream buffer adds a copy, nothing to fix
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
        f"{pct(oshare)} of operations ({so:,.0f})"
    t = (S.concept(df, "STDIO", "time_read") + S.concept(df, "STDIO", "time_write") +
         S.concept(df, "STDIO", "time_meta")) * real
    paths = set(S.objects(df)[real].tolist()) if "path" in df.columns else set()
    rd = float((S.concept(df, "STDIO", "reads") * real).sum())
    reading = rd * 2 > so  # most calls read: the remedy in the read direction
    rec = ("read bulk data in binary with fread of whole arrays (or read()/MPI-IO/HDF5) "
           "instead of fscanf/fgets per value: text parsing is CPU-bound" if reading else
           "write bulk data in binary with fwrite of whole arrays (or write()/MPI-IO/HDF5) "
           "instead of fprintf per value: text formatting is CPU-bound")
    example = ("fread(field, sizeof(double), n, f);  /* not fscanf(f, \"%lg\", &x) per "
               "value */" if reading else
               "fwrite(field, sizeof(double), n, f);  /* not fprintf(f, \"%g\\n\", x) per "
               "value */")
    return [Advice(
        ID, "high",
        f"STDIO: {what} go through buffered stdio in calls of "
        f"{S.human_bytes(sb / so)} on average"
        + (" (fread/fscanf)" if reading else " (fwrite/fprintf)"),
        rec,
        {"STDIO_BYTES": sb, "STDIO_OPS": so, "POSIX_BYTES": pb, "POSIX_OPS": po,
         "mean_call_bytes": sb / so, "stdio_bytes_share": bshare, "stdio_ops_share": oshare},
        "STDIO", least(paths), seconds=float(t.sum()), paths=paths, example=example)]
