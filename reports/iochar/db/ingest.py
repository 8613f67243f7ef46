"""Ingest: find logs, parse them in parallel (process pool or Dask), write the store.

The parsing side (extract.chunk) is the same function for both engines, and the
writing side (Store.write) runs here, so both engines give identical tables.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context

import pyarrow as pa
import pyarrow.compute as pc

from .. import advice
from . import extract
from .store import Store

LOG_SUFFIXES = (".iochar", ".darshan")
CHUNK = 64  # logs per task: amortizes the task and Arrow overhead, keeps the bar moving
FLUSH = 5000  # logs per written part file set: few files, bounded memory


@dataclass
class Stats:
    found: int = 0
    ingested: int = 0
    errors: int = 0
    skipped: int = 0
    duplicates: int = 0
    rows: int = 0
    seconds: float = 0.0
    error_lines: list = field(default_factory=list)


def discover(paths: list) -> list:
    """Log files named by `paths` (files as given; directories searched recursively
    for *.iochar and *.darshan), in a stable order, each once."""
    out, seen = [], set()
    for p in paths:
        p = os.fsdecode(p)
        if os.path.isdir(p):
            found = []
            for d, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(d, f) for f in files if f.endswith(LOG_SUFFIXES)]
            items = sorted(found)
        elif os.path.exists(p):
            items = [p]
        else:
            raise FileNotFoundError(p)
        for f in items:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


class Progress:
    """A one-line progress bar on stderr (only when asked or stderr is a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = total, 0, enabled
        self.t0, self.last = time.monotonic(), 0.0

    def add(self, n: int):
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.2 or self.done >= self.total):
            self.last = now
            frac = self.done / self.total if self.total else 1.0
            rate = self.done / max(now - self.t0, 1e-9)
            bar = "#" * int(30 * frac)
            sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} logs {rate:,.0f}/s")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


class _Batch:
    """Chunk results waiting to be written; drops logs seen earlier in this run
    (the same bytes under two names)."""

    def __init__(self):
        self.parts: list = []
        self.logs = 0
        self.seen: set = set()

    def add(self, res: dict, stats: Stats) -> None:
        hashes = [h for h in res["hashes"] if h is not None]
        dup = [h for h in hashes if h in self.seen]
        self.seen.update(hashes)
        stats.duplicates += res["duplicates"]
        if dup:
            stats.duplicates += len(dup)
            res = _drop(res, dup)
        stats.skipped += res["skipped"]
        stats.ingested += res["jobs"].num_rows
        stats.errors += res["errors"].num_rows
        stats.rows += sum(t.num_rows for t in res["modules"].values())
        stats.error_lines += [f"{p}: {r}" for p, r in zip(res["errors"]["log_path"].to_pylist(),
                                                         res["errors"]["reason"].to_pylist())]
        self.parts.append(res)
        self.logs += res["jobs"].num_rows + res["errors"].num_rows

    def flush(self, store: Store) -> None:
        if not self.parts:
            return
        cat = {k: pa.concat_tables([p[k] for p in self.parts])
               for k in ("jobs", "summaries", "findings", "errors")}
        mods: dict = {}
        for p in self.parts:
            for m, t in p["modules"].items():
                mods.setdefault(m, []).append(t)
        cat["modules"] = {m: ts[0] if len(ts) == 1 else
                          pa.concat_tables(ts, promote_options="permissive")
                          for m, ts in mods.items()}
        store.write(cat)
        self.parts, self.logs = [], 0


def _drop(res: dict, hashes: list) -> dict:
    """res without the rows of the given content hashes (stored by an earlier chunk of
    this run; extract.chunk already keeps one copy per chunk)."""
    bad = pa.array(sorted(set(hashes)))
    out = dict(res)
    for k in ("jobs", "summaries", "findings"):
        out[k] = res[k].filter(pc.invert(pc.is_in(res[k]["job_id"], bad)))
    out["errors"] = res["errors"].filter(pc.invert(pc.is_in(res["errors"]["hash"], bad)))
    out["modules"] = {m: t.filter(pc.invert(pc.is_in(t["job_id"], bad)))
                      for m, t in res["modules"].items()}
    return out


def _chunks(files: list, size: int) -> list:
    return [files[i:i + size] for i in range(0, len(files), size)]


def _run_pool(chunks, cfg, known, workers):
    ctx = get_context("forkserver" if sys.platform != "win32" else "spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        futs = [pool.submit(extract.chunk, c, cfg, known) for c in chunks]
        # in submission order: of two copies of one log, the first found is kept,
        # whichever engine ran them
        for f in futs:
            yield f.result()


def _run_dask(chunks, cfg, known, scheduler, workers):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise RuntimeError("--scheduler/--workers need Dask: pip install 'dask[distributed]'") from None
    cluster = None
    if scheduler:
        client = Client(scheduler, timeout="30s")
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    try:
        kn = client.scatter([known], broadcast=True)[0]  # a list: scatter the set whole
        futs = [client.submit(extract.chunk, c, cfg, kn, pure=False) for c in chunks]
        for f in futs:  # in submission order, as _run_pool
            yield f.result()
            f.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def ingest(store: Store, paths: list, jobs: int | None = None, scheduler: str | None = None,
           dask_workers: int | None = None, progress: bool | None = None,
           cfg: dict | None = None, chunk: int = CHUNK, flush: int = FLUSH) -> Stats:
    """Add the logs under `paths` to the store; returns counts (never raises for a bad log)."""
    t0 = time.monotonic()
    stats = Stats()
    cfg = cfg or advice.config.load()
    files = discover(paths)
    stats.found = len(files)
    known = store.known_hashes()
    bar = Progress(len(files), sys.stderr.isatty() if progress is None else progress)
    chunks = _chunks(files, max(1, min(chunk, -(-len(files) // (2 * max(jobs or 2, 1))))))
    if scheduler or dask_workers:
        results = _run_dask(chunks, cfg, known, scheduler, dask_workers or 2)
    elif (jobs or os.cpu_count() or 1) > 1 and len(chunks) > 1:
        results = _run_pool(chunks, cfg, known, jobs or os.cpu_count())
    else:
        results = (extract.chunk(c, cfg, known) for c in chunks)
    batch = _Batch()
    for res in results:
        batch.add(res, stats)
        bar.add(len(res["hashes"]) + res["skipped"] + res["duplicates"])
        if batch.logs >= flush:
            batch.flush(store)
    batch.flush(store)
    stats.seconds = time.monotonic() - t0
    return stats
