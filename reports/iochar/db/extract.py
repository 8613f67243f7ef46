"""Turn logs into table rows (Arrow): runs on the parsing side (pool process or Dask worker).

One call handles a chunk of logs and returns one Arrow table per store table, so the
per-log cost is the reader, the summary and the advice, not DataFrame plumbing.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import advice
from .. import jobs as J
from .. import schema as R
from .. import summary as S
from ..darshan import DarshanLog, is_darshan
from ..log import LogError, from_bytes
from ..log import open as open_log

HASH_BYTES = 16  # blake2b-128 of the file's bytes: the job_id and the incremental key
MODULE_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,31}$")
# Bins wholly below this are "small" accesses of the site summary (the small-io rule's size).
SMALL_BELOW = 1 << 20
# The bottom layer, whose bytes are what reached the file system (MPI-IO, HDF5 and
# NetCDF bytes pass through POSIX again, so adding every module would count them twice).
BOTTOM = ("POSIX", "STDIO")

JOB_FIELDS = [("job_id", pa.string()), ("jobid", pa.string()), ("exe", pa.string()),
              ("interpreter", pa.string()), ("cmdline", pa.string()), ("nprocs", pa.int64()), ("nnodes", pa.int64()),
              ("uid", pa.int64()), ("user", pa.string()), ("hostname", pa.string()),
              ("start_time", pa.float64()), ("end_time", pa.float64()),
              ("run_time", pa.float64()), ("bytes_read", pa.int64()),
              ("bytes_written", pa.int64()), ("reads", pa.int64()), ("writes", pa.int64()),
              ("io_time", pa.float64()), ("modules", pa.string()), ("source", pa.string()),
              ("log_path", pa.string()), ("log_bytes", pa.int64()), ("date", pa.string())]
SUMMARY_FIELDS = [("job_id", pa.string()), ("module", pa.string()), ("files", pa.int64()),
                  ("opens", pa.int64()), ("reads", pa.int64()), ("writes", pa.int64()),
                  ("seeks", pa.int64()), ("stats", pa.int64()), ("syncs", pa.int64()),
                  ("bytes_read", pa.int64()), ("bytes_written", pa.int64()),
                  ("time_read", pa.float64()), ("time_write", pa.float64()),
                  ("time_meta", pa.float64()), ("slowest_time", pa.float64()),
                  ("top_size", pa.int64()), ("small_ops", pa.int64()),
                  ("random_ops", pa.int64()), ("date", pa.string())]
FINDING_FIELDS = [("job_id", pa.string()), ("id", pa.string()), ("severity", pa.string()),
                  ("module", pa.string()), ("message", pa.string()), ("date", pa.string())]
ERROR_FIELDS = [("log_path", pa.string()), ("hash", pa.string()), ("reason", pa.string()),
                ("ingested_at", pa.float64())]
SCHEMAS = {name: pa.schema(f) for name, f in (("jobs", JOB_FIELDS), ("summaries", SUMMARY_FIELDS),
                                              ("findings", FINDING_FIELDS), ("errors", ERROR_FIELDS))}


def text_path(path: str) -> str:
    """A file name (or any text from a log) as storable text: bytes that are not UTF-8
    (surrogate-escaped by os.fsdecode and the reader) become \\xNN, so every row is
    valid UTF-8 for Parquet. The one conversion for every text column of the store;
    the db's text output then escapes the rest (safetext.escape)."""
    try:
        path.encode()
        return path
    except UnicodeEncodeError:
        raw = os.fsencode(path)
        return raw.decode("utf-8", "backslashreplace")


INT64 = (-(1 << 63), (1 << 63) - 1)


def _storable(v):
    """A value Parquet can hold: text made valid UTF-8 (text_path), an integer beyond
    int64 (sums of counters near 2^63: hostile or corrupt logs) saturated."""
    if isinstance(v, str):
        return text_path(v)
    if isinstance(v, int) and not INT64[0] <= v <= INT64[1]:
        return min(max(v, INT64[0]), INT64[1])
    return v


def _storable_rows(rows: list) -> list:
    return [{k: _storable(v) for k, v in r.items()} for r in rows]


def _text_frame(df: pd.DataFrame) -> pd.DataFrame:
    """df with every text column made storable (text_path): a copy."""
    df = df.copy(deep=False)
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = [text_path(v) if isinstance(v, str) else v for v in df[c]]
    return df


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=HASH_BYTES).hexdigest()


def _date(t) -> str:
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(float(t)))
    except (TypeError, ValueError, OverflowError, OSError):
        return "unknown"


def _int(v, default=0) -> int:
    try:
        f = float(v)
        return int(f) if np.isfinite(f) else default
    except (TypeError, ValueError):
        return default


def _str(v) -> str | None:
    return None if v is None else str(v)


def _open(path: str, data: bytes):
    if is_darshan(path):
        return DarshanLog(path)
    return from_bytes(data, path)


def _module_row(job_id: str, m: str, s: dict, date: str) -> dict:
    hist = s.get("size_histogram") or {}
    small = sum(hist.get(d, {}).get(b, 0) for d in ("read", "write") for b in hist.get(d, {})
                if R.bin_bounds(b)[1] <= SMALL_BELOW)
    pat = s.get("pattern") or {}
    rnd = sum(round(p["random"] * p["ops"]) for p in pat.values())
    return {"job_id": job_id, "module": m, **{k: _int(s[k]) for k in (
        "files", "opens", "reads", "writes", "seeks", "stats", "syncs", "bytes_read",
        "bytes_written")},
        "time_read": float(s["time_read"] or 0), "time_write": float(s["time_write"] or 0),
        "time_meta": float(s["time_meta"] or 0),
        "slowest_time": float(s["slowest_rank"]["time"] or 0),
        "top_size": s["top_sizes"][0]["size"] if s.get("top_sizes") else 0,
        "small_ops": int(small), "random_ops": int(rnd), "date": date}


def _rank_log(job: dict) -> bool:
    """A per-rank log (the MPI reduction did not run): one of a set that is one job."""
    r = job.get("rank")
    return isinstance(r, int) and not isinstance(r, bool)


def one(path, cfg: dict, known: frozenset = frozenset()) -> dict:
    """Everything one log contributes: {"hash", "job", "summaries", "findings",
    "records": {module: DataFrame}} or {"hash", "error"}; {"skip"} when known;
    {"hash", "rank_log": (path, JOB)} for a per-rank log or a process log (JOB
    job_key), which ingest groups with the other ranks of its job (jobs.group_heads)
    and hands back as a tuple of paths: one job, whose job_id hashes its files' hashes
    (one file: that file's hash)."""
    grouped = isinstance(path, (list, tuple))
    paths = list(path) if grouped else [path]
    shown = text_path(str(paths[0]))
    try:
        datas = [Path(p).read_bytes() for p in paths]
    except OSError as e:
        return {"hash": None, "log_path": shown, "error": f"cannot read: {e.strerror or e}"}
    hashes = [content_hash(d) for d in datas]
    h = hashes[0] if len(hashes) == 1 else \
        content_hash(b"".join(bytes.fromhex(x) for x in hashes))
    size = sum(len(d) for d in datas)
    if h in known:
        return {"skip": True, "hash": h}
    path = str(paths[0])
    if not grouped and not is_darshan(path):
        try:  # a process of a job of several (JOB job_key): grouped first, parsed once
            head = J.job_from_bytes(datas[0], path)
            if J.process_log(head):
                return {"hash": h, "rank_log": (path, head)}
        except LogError:
            pass  # its error comes from reading it whole, below
    try:
        log = open_log(paths) if len(paths) > 1 else _open(path, datas[0])
        datas = None
        if not grouped and not isinstance(log, DarshanLog) and _rank_log(log.job):
            return {"hash": h, "rank_log": (path, log.job)}
        d = S.gather(log)
        files: dict = {}
        rep = S.summarize(d["job"], d["records"], d["ranks"], d["schemas"], top=0,
                          files=files)
        # as iochar-report builds it (mounts give the advice block sizes)
        ctx = advice.Context(rep["job"], d["records"], d["ranks"], rep, mounts=d["mounts"],
                             files=files)
        found = advice.evaluate(ctx, cfg)
    except LogError as e:
        msg = str(e)
        msg = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg.replace(path, shown)
        return {"hash": h, "log_path": shown, "error": msg}
    except Exception as e:  # a log must never stop the ingest: record why instead
        return {"hash": h, "log_path": shown, "error": f"{type(e).__name__}: {e}"}
    job, mods = rep["job"], rep["modules"]
    date = _date(job.get("start_time"))
    bottom = [m for m in BOTTOM if m in mods] or list(mods)[:1]
    # the program by its name: an interpreter's script or module (iochar/program.py)
    row = {"job_id": h, "jobid": _str(job.get("jobid")), "exe": _str(job.get("program")),
           "interpreter": _str(job.get("interpreter")) or None,
           "cmdline": _str(job.get("cmdline")), "nprocs": _int(job.get("nprocs"), 1),
           "nnodes": _int(job.get("nnodes"), 1) if "nnodes" in job else None,
           "uid": _int(job.get("uid"), -1) if "uid" in job else None,
           "user": _str(job.get("user")), "hostname": _str(job.get("hostname")),
           "start_time": float(job.get("start_time") or 0),
           "end_time": float(job.get("end_time") or 0), "run_time": float(job["run_time"]),
           "bytes_read": sum(mods[m]["bytes_read"] for m in bottom),
           "bytes_written": sum(mods[m]["bytes_written"] for m in bottom),
           "reads": sum(mods[m]["reads"] for m in bottom),
           "writes": sum(mods[m]["writes"] for m in bottom),
           # the slowest rank's time in the module where it spent most (upper layers
           # include the lower ones' time, so a sum would count it twice)
           "io_time": max((float(s["slowest_rank"]["time"] or 0) for s in mods.values()),
                          default=0.0),
           "modules": " ".join(log.modules), "source": _str(job.get("source")) or "iochar",
           "log_path": shown, "log_bytes": size, "date": date}
    # job_id and date columns are added per chunk (merge_frames), not per log
    recs = {m: df for m, df in d["records"].items() if MODULE_NAME.match(m) and len(df)}
    return {"hash": h, "job": row,
            "summaries": [_module_row(h, m, s, date) for m, s in mods.items()],
            "findings": [{"job_id": h, "id": a.id, "severity": a.severity, "module": a.module,
                          "message": a.message, "date": date} for a in found],
            "records": recs}


def merge_frames(frames: list) -> pa.Table:
    """Frames of one module from many logs, as (job_id, date, frame) -> one Arrow table
    (job_id first, date last). Frames with the same columns (one tool version) are
    concatenated in pandas; the groups are then unified by Arrow, so a counter missing
    from some logs is NULL there and keeps its type."""
    groups: dict = {}
    for job_id, date, df in frames:
        groups.setdefault(tuple(df.columns), []).append((job_id, date, df))
    tables = []
    for g in groups.values():
        df = pd.concat([f for _, _, f in g], ignore_index=True) if len(g) > 1 else \
            g[0][2].copy(deep=False)
        lens = [len(f) for _, _, f in g]
        df.insert(0, "job_id", np.repeat(np.array([j for j, _, _ in g], dtype=object), lens))
        df["date"] = np.repeat(np.array([d for _, d, _ in g], dtype=object), lens)
        try:
            tables.append(pa.Table.from_pandas(df, preserve_index=False))
        except UnicodeEncodeError:  # names that are not UTF-8 (rare: converted then)
            tables.append(pa.Table.from_pandas(_text_frame(df), preserve_index=False))
    return tables[0] if len(tables) == 1 else \
        pa.concat_tables(tables, promote_options="permissive")


def _table(rows: list, name: str) -> pa.Table:
    schema = SCHEMAS[name]
    if not rows:
        return schema.empty_table()
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except (UnicodeEncodeError, OverflowError):  # names not UTF-8, huge sums (rare)
        return pa.Table.from_pylist(_storable_rows(rows), schema=schema)


def chunk(paths: list, cfg: dict | None = None, known: frozenset = frozenset()) -> dict:
    """Parse a chunk of logs; returns {"jobs", "summaries", "findings", "errors": Arrow
    tables, "modules": {module: Arrow table}, "hashes": [...], "skipped": n (already
    stored), "duplicates": n (same bytes earlier in this chunk), "ranked": [(path, JOB, hash)]
    of per-rank logs (to be grouped by job, then parsed as tuples of paths), "cpu":
    seconds of CPU this chunk took, "proc": (pid, CPU seconds of that process so far)}."""
    cfg = cfg or advice.config.load()
    jobs, sums, finds, errs, recs, skipped, hashes = [], [], [], [], {}, 0, []
    ranked: list = []
    dups = 0
    now, cpu = time.time(), time.process_time()
    for p in paths:
        r = one(p, cfg, known)
        if r.get("skip"):
            skipped += 1
            continue
        if "rank_log" in r:
            ranked.append((*r["rank_log"], r["hash"]))
            continue
        if r["hash"] is not None and r["hash"] in hashes:  # same bytes, another name
            dups += 1
            continue
        hashes.append(r["hash"])
        if "error" in r:
            errs.append({"log_path": r["log_path"], "hash": r["hash"], "reason": r["error"],
                         "ingested_at": now})
            continue
        jobs.append(r["job"])
        sums += r["summaries"]
        finds += r["findings"]
        for m, df in r["records"].items():
            recs.setdefault(m, []).append((r["hash"], r["job"]["date"], df))
    modules = {m: merge_frames(frames) for m, frames in recs.items()}
    return {"jobs": _table(jobs, "jobs"), "summaries": _table(sums, "summaries"),
            "findings": _table(finds, "findings"), "errors": _table(errs, "errors"),
            "modules": modules, "hashes": hashes, "skipped": skipped,
            "duplicates": dups, "ranked": ranked, "cpu": time.process_time() - cpu,
            "proc": (os.getpid(), time.process_time())}
