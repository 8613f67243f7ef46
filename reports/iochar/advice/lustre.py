"""lustre: storage-level causes from the Lustre layout of the files (Darshan's LUSTRE
module, iochar's POSIX_LUSTRE_* counters): a large shared file on one stripe (ROMIO
then writes it through one aggregator, every other rank waits), and a slow OST (the
files one OST holds take many times as long per byte as the files on the others);
and, as the finding `stripe-size`, a stripe size that does not fit the accesses (each
access cut into many small stripe pieces, or ranks' writes straddling stripes so two
ranks write in one stripe and take turns for its lock)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import summary as S
from .base import Advice, Context, least, num

ID = "lustre"


def layouts(ctx: Context) -> pd.DataFrame | None:
    """One row per file with a known layout: record_id, stripe_size, stripe_count and
    osts (a tuple of OST indices; iochar logs know the first one only); None when no
    file has one (most logs: no frame built)."""
    lu = ctx.frame("LUSTRE")
    if lu is not None and "LUSTRE_STRIPE_COUNT" in lu.columns:
        lu = lu.drop_duplicates("record_id")
        ids = lu["LUSTRE_OST_IDS"] if "LUSTRE_OST_IDS" in lu.columns else \
            pd.Series([""] * len(lu))
        rid = S.column(lu, "record_id")
        size = S.col(lu, "LUSTRE_STRIPE_SIZE").copy()
        count = S.col(lu, "LUSTRE_STRIPE_COUNT").copy()
        comp = ctx.lustre_components  # a composite's component the accesses fell in
        for i, r in enumerate(rid.tolist()):
            if r in comp:
                size[i], count[i] = comp[r][0], comp[r][1]
        return pd.DataFrame({
            "record_id": rid, "stripe_size": size, "stripe_count": count,
            "osts": [tuple(int(o) for o in str(s).split(",") if o) for s in ids]})
    px = ctx.frame("POSIX")
    if px is None or "POSIX_LUSTRE_STRIPE_COUNT" not in px.columns:
        return None
    cnt = S.col(px, "POSIX_LUSTRE_STRIPE_COUNT")
    if not (cnt > 0).any():
        return None
    px = S.rows(px, cnt > 0).drop_duplicates("record_id")
    first = S.col(px, "POSIX_LUSTRE_STRIPE_OFFSET")
    cnt = S.col(px, "POSIX_LUSTRE_STRIPE_COUNT").copy()
    size = S.col(px, "POSIX_LUSTRE_STRIPE_SIZE").copy()
    rid = S.column(px, "record_id")
    comp = ctx.lustre_components  # the LUSTRE module's components: where the bytes fell
    for i, r in enumerate(rid.tolist()):
        if r in comp:
            size[i], cnt[i] = comp[r][0], comp[r][1]
    return pd.DataFrame({
        "record_id": rid, "stripe_size": size, "stripe_count": cnt,
        "osts": [(int(o),) if c == 1 and o >= 0 else () for o, c in zip(first, cnt)]})


def stripes_for(ctx: Context, nbytes: float) -> int:
    """A stripe count to suggest: about one per 4 GiB, 4 to 64, a power of two."""
    want = min(max(nbytes / (4 << 30), 4), 64)
    return int(2 ** np.ceil(np.log2(want)))


def single_stripe(ctx: Context, cfg: dict, lay: pd.DataFrame) -> list[Advice]:
    px = ctx.frame("POSIX")
    if px is None or ctx.nprocs < 2:
        return []
    f = ctx.files("POSIX")
    f = f.frame().merge(lay[["record_id", "stripe_count", "stripe_size"]], on="record_id")
    nbytes = S.column(f, "bytes_read") + S.column(f, "bytes_written")
    hit = (S.column(f, "stripe_count") == 1) & S.column(f, "shared").astype(bool) & \
        (nbytes >= cfg["min_bytes"])
    out = []
    coll = ctx.collective_paths
    for i in np.flatnonzero(hit):
        path = f["path"].iat[i]
        rows = px[px["record_id"] == f["record_id"].iat[i]]
        top = float(S.col(rows, "POSIX_SLOWEST_RANK_BYTES").max()) if len(rows) else 0.0
        # few writers: ROMIO's Lustre driver takes one aggregator per stripe, and a
        # rank that moves most of the bytes is the one writer of an independent pattern
        one = path in coll or top >= 0.5 * nbytes[i]
        if not one:
            continue
        secs = ctx.time_of([path])
        n = stripes_for(ctx, nbytes[i])
        size = int(f["stripe_size"].iat[i]) or 1 << 20
        unit = max(size, 4 << 20)
        d = path.rsplit("/", 1)[0] or "/"
        who = "one MPI-IO aggregator (collective calls)" if path in coll else \
            f"one rank ({S.human_bytes(top)} of {S.human_bytes(nbytes[i])})"
        out.append(Advice(
            ID, "high",
            f"Lustre: shared file of {S.human_bytes(nbytes[i])} on one stripe (one OST), "
            f"written through {who} while {num(ctx.nprocs)} ranks wait",
            f"stripe the file over more OSTs before it is created: lfs setstripe -c {n} -S "
            f"{unit >> 20}M on its directory, or the MPI-IO hints striping_factor={n}, "
            f"striping_unit={unit} at MPI_File_open with MPI_MODE_CREATE (ROMIO then uses "
            f"{n} aggregators; cb_nodes={n})",
            {"LUSTRE_STRIPE_COUNT": 1, "LUSTRE_STRIPE_SIZE": size, "bytes": float(nbytes[i]),
             "POSIX_SLOWEST_RANK_BYTES": top, "collective": path in coll,
             "nprocs": ctx.nprocs},
            "POSIX", [str(path)], seconds=secs, layers=ctx.layers_of([path]), paths={path},
            floor="warn",
            example=f"lfs setstripe -c {n} -S {unit >> 20}M {d}\n"
                    f"MPI_Info_set(info, \"striping_factor\", \"{n}\");\n"
                    f"MPI_Info_set(info, \"striping_unit\", \"{unit}\");\n"
                    f"MPI_Info_set(info, \"cb_nodes\", \"{n}\");"))
    return out


def slow_ost(ctx: Context, cfg: dict, lay: pd.DataFrame) -> list[Advice]:
    """Per OST, the seconds per byte of the data its files moved (a file striped over k
    OSTs gives each 1/k of its bytes and time): an OST far slower than the median."""
    if "POSIX" not in ctx.records:
        return []
    f = ctx.files("POSIX").frame().merge(lay[["record_id", "osts"]], on="record_id")
    nbytes = S.column(f, "bytes_read") + S.column(f, "bytes_written")
    t = S.column(f, "time_read") + S.column(f, "time_write")
    keep = (nbytes >= cfg["min_file_bytes"]) & (t > 0) & (f["osts"].map(len) > 0).to_numpy()
    if keep.sum() < cfg["min_files"]:
        return []
    rows = [(o, b / len(os_), s / len(os_), p) for os_, b, s, p in
            zip(f["osts"][keep], nbytes[keep], t[keep], f["path"][keep]) for o in os_]
    per = pd.DataFrame(rows, columns=["ost", "bytes", "time", "path"])
    g = per.groupby("ost").agg(bytes=("bytes", "sum"), time=("time", "sum"),
                               files=("path", "nunique"))
    if len(g) < cfg["min_osts"]:
        return []
    spb = g["time"] / g["bytes"]
    typical = float(spb.median())
    worst = spb.idxmax()
    factor = float(spb[worst] / typical) if typical > 0 else 0.0
    if factor < cfg["factor"]:
        return []
    paths = set(per.loc[per["ost"] == worst, "path"])
    slow_t = float(g.at[worst, "time"])
    excess = slow_t - typical * float(g.at[worst, "bytes"])
    # the ranks on the slow OST finish last; the others wait for them at the next
    # collective step: the delay of the slowest file, paid by every rank
    per_file = excess / max(int(g.at[worst, "files"]), 1)
    secs = min(per_file * ctx.nprocs, ctx.run_time * ctx.nprocs) if ctx.run_time else excess
    others = [int(o) for o in g.index if o != worst]
    return [Advice(
        ID, "high",
        f"Lustre: OST {worst} is {factor:.0f}x slower per byte than the median of "
        f"{len(g)} OSTs: its {int(g.at[worst, 'files'])} file(s) took "
        f"{S.human_time(slow_t / g.at[worst, 'files'])} each on average; every rank waits "
        "for them",
        f"tell the site's storage staff (OST index {worst}, this job's id and time: the "
        "target may be failing or overloaded); until it is fixed, create the files on "
        f"other OSTs (lfs setstripe -o with the OST list) or over more OSTs so no file "
        "sits on it alone",
        {"ost": int(worst), "seconds_per_GiB": float(spb[worst]) * (1 << 30),
         "median_seconds_per_GiB": typical * (1 << 30), "slowdown": factor,
         "files_on_ost": int(g.at[worst, "files"]), "osts": len(g)},
        "POSIX", sorted(paths)[:3], seconds=secs, paths=paths,
        example="lfs setstripe -c 1 -o " + ",".join(str(o) for o in others[:8])
                + " DIR   # new files on these OSTs only"
                + "\nlfs find DIR --ost " + str(worst) + "   # which files sit on it")]


def lfs_size(n: float) -> str:
    """A stripe size as lfs setstripe -S takes it (a multiple of 64 KiB)."""
    n = int(n)
    return f"{n >> 20}M" if n % (1 << 20) == 0 else f"{n >> 10}K"


def stripe_size(ctx: Context, cfg: dict, lay: pd.DataFrame) -> list[Advice]:
    """The most common access size of each Lustre file against its stripe size, per
    POSIX row (a rank's or the shared record): `large` accesses of stripe_ratio stripes
    or more on a stripe under 1 MiB (each is cut into that many small RPCs), `straddle`
    independent writes by several ranks of a stripeable size (a multiple of 64 KiB)
    that is not a multiple of the stripe (pieces of two ranks share stripes and their
    locks). Collective files are left out of `straddle`: aggregators write stripes."""
    px = ctx.frame("POSIX")
    if px is None or "POSIX_ACCESS1_ACCESS" not in px.columns:
        return []
    lay = lay[S.column(lay, "stripe_size") > 0]
    keep = ctx.regular_rows("POSIX") & (S.column(px, "record_id") != S.AGGREGATE_ID) & \
        np.isin(S.column(px, "record_id"), S.column(lay, "record_id"))
    if not len(lay) or not keep.any():
        return []
    sub = px[keep]
    rid = S.column(sub, "record_id")
    unit = pd.Series(S.column(lay, "stripe_size"), index=S.column(lay, "record_id"))
    stripe = unit[~unit.index.duplicated()].reindex(rid).to_numpy(np.float64)
    size, cnt = S.col(sub, "POSIX_ACCESS1_ACCESS"), S.col(sub, "POSIX_ACCESS1_COUNT")
    reads, writes = S.concept(sub, "POSIX", "reads"), S.concept(sub, "POSIX", "writes")
    ops = reads + writes
    secs = (S.concept(sub, "POSIX", "time_read") + S.concept(sub, "POSIX", "time_write")) * \
        cnt / np.maximum(ops, 1)
    common = (size > 0) & (cnt >= cfg["stripe_share"] * ops)
    f = ctx.files("POSIX")
    shared = np.isin(rid, S.column(f, "record_id")[S.column(f, "shared").astype(bool)])
    coll = np.isin(S.objects(sub), list(ctx.collective_paths))
    kinds = {
        "large": common & (stripe < 1 << 20) & (size >= cfg["stripe_ratio"] * stripe),
        "straddle": common & shared & ~coll & (writes >= reads) & (size % (64 << 10) == 0)
        & (size % np.maximum(stripe, 1) != 0)}
    out = []
    for kind, hit in kinds.items():
        n = float(cnt[hit].sum())
        if n < cfg["stripe_min_ops"]:
            continue
        worst = int(np.flatnonzero(hit)[np.argmax(secs[hit])])
        c, st = float(size[worst]), float(stripe[worst])
        paths = set(S.objects(sub)[hit].tolist())
        d = "write" if writes[hit].sum() >= reads[hit].sum() else "read"
        if kind == "large":
            want = min(max(c // (64 << 10) * (64 << 10), 1 << 20), 4 << 20)
            what = (f"{num(n)} {d}s of {S.human_bytes(c)} on a {S.human_bytes(st)} stripe: "
                    f"each is cut into {c / st:.0f} stripe pieces (small RPCs)")
            why = f"a stripe size of {S.human_bytes(want)} or more"
        else:
            want = c
            what = (f"{num(n)} {d}s of {S.human_bytes(c)} by several ranks into "
                    f"{S.human_bytes(st)} stripes of a shared file: {S.human_bytes(c)} is "
                    f"not a multiple of the stripe, so two ranks write in one stripe and "
                    "take turns for its lock")
            why = f"the stripe size each rank writes ({S.human_bytes(want)})"
        top = least(paths, 1)[0]
        dirname = str(top).rsplit("/", 1)[0] or "/"
        out.append(Advice(
            "stripe-size", "high", f"Lustre: {what}",
            f"create the file with {why}: lfs setstripe -S {lfs_size(want)} on its "
            f"directory, or the MPI-IO hint striping_unit={int(want)} at MPI_File_open with "
            "MPI_MODE_CREATE" + ("" if kind == "large" else
                                 "; or write collectively (aggregators write whole stripes)"),
            {"LUSTRE_STRIPE_SIZE": st, "common_size": c, f"{d}s": n, "kind": kind,
             "suggested_stripe_size": want},
            "POSIX", least(paths), seconds=float(secs[hit].sum()),
            layers=ctx.layers_of(paths), paths=paths,
            example=f"lfs setstripe -S {lfs_size(want)} {dirname}\n"
                    f"MPI_Info_set(info, \"striping_unit\", \"{int(want)}\");"))
    return out


def check(ctx: Context, cfg: dict) -> list[Advice]:
    lay = layouts(ctx)
    if lay is None or not len(lay):
        return []
    return single_stripe(ctx, cfg, lay) + slow_ost(ctx, cfg, lay) + \
        stripe_size(ctx, cfg, lay)
