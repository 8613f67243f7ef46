"""Cross-rank reduction of records by their schema's ops (the C reducer's rules, in numpy).

Used to merge per-rank fallback logs of one job into the view a reduced log gives.
Ties are broken toward the lowest rank; top-4 tables order by count desc, value asc.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .flags import PARTIAL, flags
from .frames import text_column
from .logformat import LogError
from .schema import OP, OPS, topk_tables  # noqa: F401  (re-exported)

_MIN_NZ = (OP["MIN_NZ"], OP["TS_START"])
_MAX = (OP["MAX"], OP["TS_END"], OP["MAXT"])
_SUM = (OP["SUM"], OP["BYTES"], OP["TIME"])


def merge_jobs(jobs: list, files: list) -> dict:
    """JOB of the merged view: start=min, end=max, partial bits OR-ed, fold counts summed."""
    for j, f in zip(jobs, files):
        if not isinstance(j.get("rank"), int):
            raise LogError(f"cannot merge {f}: not a per-rank log (its JOB has no rank)")
    ranks = [j["rank"] for j in jobs]
    if len(set(ranks)) != len(ranks):
        dup = next(r for r in ranks if ranks.count(r) > 1)
        raise LogError(f"cannot merge: two logs of rank {dup}")
    # a job's processes (one job key) may run different programs (a launcher's tasks)
    same_key = len({j.get("job_key") for j in jobs}) == 1 and bool(jobs[0].get("job_key"))
    for key in ("nprocs",) if same_key else ("nprocs", "exe"):
        vals = {j.get(key) for j in jobs}
        if len(vals) > 1:
            raise LogError(f"cannot merge logs of different jobs ({key} differs: "
                           f"{', '.join(map(str, sorted(vals, key=str)))})")
    for j, f in zip(jobs, files):
        for key in ("start_time", "end_time"):
            v = j.get(key, 0.0)
            # epoch seconds within a century of now: anything else would shift
            # counters and series by absurd amounts
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) \
                    or not (0 <= v < 1e11):
                raise LogError(f"cannot merge {f}: its JOB {key} {v!r} is not a time")
    order = sorted(range(len(jobs)), key=lambda i: ranks[i])
    job = dict(jobs[order[0]])  # lowest rank's (rank 0's when present) for the rest
    del job["rank"]
    starts = [j["start_time"] for j in jobs if isinstance(j.get("start_time"), (int, float))]
    ends = [j["end_time"] for j in jobs if isinstance(j.get("end_time"), (int, float))]
    if starts:
        job["start_time"] = min(starts)
    if ends:
        job["end_time"] = max(ends)
    job["partial"] = 0
    for j in jobs:
        job["partial"] |= flags(j)
        for k, v in j.items():
            if (k == "folded_files" or k.startswith("folded.")) and isinstance(v, int) \
                    and j is not jobs[order[0]]:
                job[k] = job.get(k, 0) + v
    job["merged_logs"] = len(jobs)
    return job


def note_missing_ranks(job: dict, jobs: list) -> None:
    """Per-rank logs of an MPI job that lack some ranks: JOB `missing_ranks` names them
    ("2,3") and `partial` bit MISSING_RANKS (16) is set."""
    ranks = {j.get("rank") for j in jobs}
    nprocs = job.get("nprocs")
    if not all(isinstance(r, int) for r in ranks) or not isinstance(nprocs, int) or \
            isinstance(nprocs, bool) or not 0 < nprocs <= 1 << 24:
        return
    missing = [r for r in range(nprocs) if r not in ranks]
    if missing:
        job["missing_ranks"] = ",".join(map(str, missing))
        job["partial"] = int(job.get("partial") or 0) | PARTIAL["MISSING_RANKS"]


class _Groups:
    """Contiguous groups of rows (sorted by record_id, rank) and numpy reductions over them."""

    def __init__(self, sizes: np.ndarray):
        self.sizes = sizes
        self.starts = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(sizes[:-1], out=self.starts[1:])
        self.n = int(sizes.sum())
        self.pos = np.arange(self.n)

    def sum(self, x):
        return np.add.reduceat(x, self.starts)

    def max(self, x):
        return np.maximum.reduceat(x, self.starts)

    def first(self, cond):
        """Row index of the first row where cond holds, else the group's first row."""
        idx = np.minimum.reduceat(np.where(cond, self.pos, self.n), self.starts)
        return np.where(idx < self.starts + self.sizes, idx, self.starts)

    def arg(self, x, best):
        """Row index of the first row whose x equals the group's best (max or min)."""
        return self.first(x == np.repeat(best.reduceat(x, self.starts), self.sizes))

    def var(self, x):
        x = x.astype(np.float64)
        mean = self.sum(x) / self.sizes
        return self.sum((x - np.repeat(mean, self.sizes)) ** 2) / self.sizes


def _min_nz(g: _Groups, x):
    big = np.inf if x.dtype.kind == "f" else np.iinfo(np.int64).max
    m = np.minimum.reduceat(np.where(x != 0, x, big), g.starts)
    return np.where(m == big, 0, m)


def parse_topk(buf: bytes, count: int, schema: list, what: str):
    """TOPK payload (docs/log-format.md) -> (record ids, int64 array (count, tables, 2, slots)).
    Raises LogError when its sizes disagree with its header or the module's schema."""
    if len(buf) < 8:
        raise LogError(f"{what}: TOPK payload of {len(buf)} bytes has no header")
    slots, ntab = np.frombuffer(buf, dtype="<u4", count=2)
    if not 1 <= slots <= 4096 or ntab != len(topk_tables(schema)):
        raise LogError(f"{what}: TOPK with {slots} slots x {ntab} tables does not fit the "
                       f"schema's {len(topk_tables(schema))} tables")
    row = 8 + 16 * int(slots) * int(ntab)
    if len(buf) != 8 + row * count:
        raise LogError(f"{what}: TOPK payload size {len(buf)} inconsistent with {count} rows")
    raw = np.frombuffer(buf, dtype=np.uint8, offset=8).reshape(count, row)
    ids = raw[:, :8].copy().view("<u8").ravel()
    tabs = raw[:, 8:].copy().view("<i8").reshape(count, int(ntab), 2, int(slots))
    return ids, tabs


def whole_tables(df: pd.DataFrame, schema: list, part_tables: list) -> np.ndarray:
    """(len(df), tables, 2, slots) tables for the rows of df (concatenated per-rank frames,
    in order); part_tables: per part, (row count, (ids, tables) or None). A part without
    TOPK sections contributes its logged top-4 entries."""
    tabs = topk_tables(schema)
    slots = max([t[1].shape[3] for _, t in part_tables if t is not None] + [len(tabs[0][0])])
    out = np.zeros((len(df), len(tabs), 2, slots), dtype=np.int64)
    names = [n for n, _ in schema]
    at = 0
    for n, t in part_tables:
        sub = df.iloc[at:at + n]
        for j, (vi, ci) in enumerate(tabs):
            k = len(vi)
            out[at:at + n, j, 0, :k] = sub[[names[i] for i in vi]].to_numpy()
            out[at:at + n, j, 1, :k] = sub[[names[i] for i in ci]].to_numpy()
        if t is not None:
            ids, arr = t
            pos = pd.Index(ids).get_indexer(sub["record_id"].to_numpy())
            have = pos >= 0
            out[at:at + n][have, :, :, :arr.shape[3]] = arr[pos[have]]
            out[at:at + n][have, :, :, arr.shape[3]:] = 0
        at += n
    return out


def _topk(g: _Groups, vals: np.ndarray, cnts: np.ndarray, k: int | None = None):
    """Merge (n, w) value/count tables per group: counts added by value, k largest kept
    (k = w by default)."""
    k = vals.shape[1] if k is None else k
    grp = np.repeat(np.repeat(np.arange(len(g.sizes)), g.sizes), vals.shape[1])
    v, c = vals.ravel(), cnts.ravel()
    keep = c != 0
    grp, v, c = grp[keep], v[keep], c[keep]
    o = np.lexsort((v, grp))
    grp, v, c = grp[o], v[o], c[o]
    new = np.ones(len(v), dtype=bool)
    new[1:] = (grp[1:] != grp[:-1]) | (v[1:] != v[:-1])
    at = np.flatnonzero(new)
    grp, v, c = grp[at], v[at], np.add.reduceat(c, at) if len(at) else c[:0]
    o = np.lexsort((v, -c, grp))
    grp, v, c = grp[o], v[o], c[o]
    first = np.searchsorted(grp, grp)  # index of each row's group's first entry
    slot = np.arange(len(grp)) - first
    top = slot < k
    out_v = np.zeros((len(g.sizes), k), dtype=vals.dtype)
    out_c = np.zeros((len(g.sizes), k), dtype=cnts.dtype)
    out_v[grp[top], slot[top]] = v[top]
    out_c[grp[top], slot[top]] = c[top]
    return out_v, out_c


def reduce_group_rows(m: pd.DataFrame, sizes: np.ndarray, schema: list,
                      tables: np.ndarray | None = None) -> pd.DataFrame:
    """Reduce consecutive groups of rows (lengths `sizes`, each sorted by rank) to one row
    each with rank -1, following each counter's op. tables: whole top-k tables of m's rows
    (whole_tables' layout), merged instead of the logged top-4 entries when given."""
    g = _Groups(sizes)
    names = [n for n, _ in schema]
    col = {n: m[n].to_numpy() for n in names}
    rank = m["rank"].to_numpy()
    time = sum((col[n].astype(np.float64) for n, op in schema if op == OP["TIME"]),
               np.zeros(g.n))
    nbytes = sum((col[n].astype(np.int64) for n, op in schema if op == OP["BYTES"]),
                 np.zeros(g.n, dtype=np.int64))
    fast, slow = g.arg(time, np.minimum), g.arg(time, np.maximum)
    maxt = [n for n, op in schema if op == OP["MAXT"]]
    maxt_size = [n for n, op in schema if op == OP["MAXT_SIZE"]]
    if len(maxt_size) > len(maxt):
        raise ValueError(f"{len(maxt_size)} MAXT_SIZE counters but only {len(maxt)} MAXT")
    out = {"rank": np.full(len(sizes), -1, dtype=np.int64),
           "record_id": m["record_id"].to_numpy()[g.starts]}
    if "path" in m:
        out["path"] = m["path"].to_numpy()[g.starts]
    for n, op in schema:
        x = col[n]
        if op in _SUM:
            r = g.sum(x)
        elif op in _MAX:
            r = g.max(x)
        elif op in _MIN_NZ:
            r = _min_nz(g, x)
        elif op == OP["ANY"]:
            r = x[g.first(x != 0)]
        elif op == OP["MAXT_SIZE"]:
            r = x[g.arg(col[maxt[maxt_size.index(n)]], np.maximum)]
        elif op in (OP["FAST_RANK"], OP["SLOW_RANK"]):
            r = rank[fast if op == OP["FAST_RANK"] else slow]
        elif op in (OP["FAST_BYTES"], OP["SLOW_BYTES"]):
            r = nbytes[fast if op == OP["FAST_BYTES"] else slow]
        elif op in (OP["FAST_TIME"], OP["SLOW_TIME"]):
            r = time[fast if op == OP["FAST_TIME"] else slow]
        elif op == OP["VAR_TIME"]:
            r = g.var(time)
        elif op == OP["VAR_BYTES"]:
            r = g.var(nbytes)
        elif op in (OP["TOPK_VAL"], OP["TOPK_CNT"]):
            continue  # whole tables below
        else:
            raise ValueError(f"counter {n} has unknown reduction op {op}")
        out[n] = np.asarray(r).astype(x.dtype, copy=False)
    for t, (vi, ci) in enumerate(topk_tables(schema)):
        vn, cn = [names[i] for i in vi], [names[i] for i in ci]
        if tables is None:
            tv, tc = _topk(g, m[vn].to_numpy(), m[cn].to_numpy())
        else:  # whole tables: exact while every rank's table was (no bound here)
            tv, tc = _topk(g, tables[:, t, 0, :], tables[:, t, 1, :], len(vi))
        for j in range(len(vi)):
            out[vn[j]], out[cn[j]] = tv[:, j], tc[:, j]
    keys = ["rank", "record_id"] + (["path"] if "path" in m else [])
    if "path" in out:
        out["path"] = text_column(out["path"])  # names may hold non-UTF-8 bytes
    return pd.DataFrame({k: out[k] for k in keys + names})


def reduce_records(df: pd.DataFrame, schema: list, tables: np.ndarray | None = None
                   ) -> pd.DataFrame:
    """Rows of one record_id from >= 2 ranks become one rank -1 row; others stay.
    Result sorted by record_id then rank, columns as `df`. tables: whole top-k tables
    aligned with df's rows (whole_tables)."""
    if any(not 0 <= op < len(OPS) for _, op in schema):
        bad = next(n for n, op in schema if not 0 <= op < len(OPS))
        raise ValueError(f"counter {bad} has an unknown reduction op")
    order = np.lexsort((df["rank"].to_numpy(), df["record_id"].to_numpy()))
    df = df.iloc[order].reset_index(drop=True)
    if tables is not None:
        tables = tables[order]
    rid = df["record_id"].to_numpy()
    if len(df) == 0:
        return df
    starts = np.flatnonzero(np.r_[True, rid[1:] != rid[:-1]])
    sizes = np.diff(np.r_[starts, len(df)])
    multi_row = np.repeat(sizes >= 2, sizes)
    if not multi_row.any():
        return df
    reduced = reduce_group_rows(df[multi_row].reset_index(drop=True), sizes[sizes >= 2], schema,
                                None if tables is None else tables[multi_row])
    out = pd.concat([df[~multi_row], reduced[df.columns]], ignore_index=True)
    return out.sort_values(["record_id", "rank"], kind="stable", ignore_index=True)
