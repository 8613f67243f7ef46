"""Ingest: find logs, parse them in parallel (process pool or Dask), write the store.

The parsing side (extract.chunk) is the same function for both engines, and the
writing side (Store.write) runs here, so both engines give identical tables.
"""

from __future__ import annotations

import itertools
import os
import resource
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import forkserver, get_context

import pyarrow as pa
import pyarrow.compute as pc

from .. import advice
from .. import jobs as J
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
    cpu: float = 0.0  # CPU seconds the parsing side spent (all workers): the work to do
    # CPU seconds of every process (this one, and each worker's whole life up to its
    # last chunk: start-up, parsing, sending results): the work plus the overheads
    cpu_all: float = 0.0
    workers_cpu: dict = field(default_factory=dict)  # pid -> CPU seconds
    peak_rss: int = 0  # bytes: the largest peak RSS of a parsing process (worker)
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


def progress_bar(total: int, enabled: bool):
    """A progress bar on stderr (tqdm), drawn only when asked or stderr is a terminal."""
    from tqdm import tqdm  # heavy (pulls importlib.metadata, email): only ingest draws a bar
    return tqdm(total=total, unit="log", file=sys.stderr, disable=not enabled,
                mininterval=0.2, dynamic_ncols=True)


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
        stats.cpu += res.get("cpu", 0.0)
        if "proc" in res:
            pid, cpu = res["proc"]
            stats.workers_cpu[pid] = max(cpu, stats.workers_cpu.get(pid, 0.0))
        stats.peak_rss = max(stats.peak_rss, res.get("rss", 0))
        stats.ingested += res["jobs"].num_rows
        stats.errors += res["errors"].num_rows
        stats.rows += sum(t.num_rows for t in res["modules"].values())
        stats.error_lines += [f"{p}: {r}" for p, r in zip(res["errors"]["log_path"].to_pylist(),
                                                         res["errors"]["reason"].to_pylist())]
        self.parts.append(res)
        self.logs += res["jobs"].num_rows + res["errors"].num_rows

    def take(self) -> dict:
        """The batch's tables, concatenated (Store.write's argument); empties it."""
        cat = {k: pa.concat_tables([p[k] for p in self.parts])
               for k in ("jobs", "summaries", "findings", "errors")}
        mods: dict = {}
        for p in self.parts:
            for m, t in p["modules"].items():
                mods.setdefault(m, []).append(t)
        cat["modules"] = {m: ts[0] if len(ts) == 1 else
                          pa.concat_tables(ts, promote_options="permissive")
                          for m, ts in mods.items()}
        self.parts, self.logs = [], 0
        return cat


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


def _parse(paths: list, cfg: dict, known: frozenset) -> dict:
    """extract.chunk, plus the peak RSS of the process that ran it (the memory bound
    per worker that docs/site-scale.md states, measured on every run)."""
    res = extract.chunk(paths, cfg, known)
    res["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return res


def _first_copies(ranked: list, files: list, seen: set, stats: Stats) -> list:
    """[(path, JOB)] of the per-rank and process logs, each content once (the first
    found, as for other logs): a copy under another name would be one more process of
    its own job."""
    order = {str(f): i for i, f in enumerate(files)}
    out, hashes = [], set(seen)
    for path, head, h in sorted(ranked, key=lambda t: order.get(str(t[0]), len(order))):
        if h in hashes:
            stats.duplicates += 1
            continue
        hashes.add(h)
        out.append((path, head))
    return out


def _chunks(files: list, size: int) -> list:
    return [files[i:i + size] for i in range(0, len(files), size)]


def _single_threaded() -> bool:
    """This process runs one thread (no native pool yet: DuckDB, Arrow), so a fork
    copies a consistent state."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class _Pool:
    """A process pool started before the parent looks at the store: forked (instant:
    the parent has imported the parsing side) while this process has one thread, else
    from a forkserver that imports it once. Started early, its start-up overlaps the
    search for logs and the read of the stored hashes."""

    def __init__(self, workers: int):
        fork = sys.platform == "linux" and _single_threaded()
        ctx = get_context("fork" if fork else "forkserver" if sys.platform != "win32"
                          else "spawn")
        if not fork and sys.platform != "win32":
            ctx.set_forkserver_preload(["iochar.db.extract"])
        self.pool = ProcessPoolExecutor(workers, mp_context=ctx)
        for _ in range(workers):  # every worker starts now (a fork pool: all on the first)
            self.pool.submit(os.getpid)

    def run(self, chunks, cfg, known):
        futs = [self.pool.submit(_parse, c, cfg, known) for c in chunks]
        # in submission order: of two copies of one log, the first found is kept,
        # whichever engine ran them
        for f in futs:
            yield f.result()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


# Dask settings for a local ingest. Each task parses a chunk of logs (about a second of
# CPU), so what serves many short tasks is overhead here: the sampling profiler (a
# thread walking the running task's stack every 10 ms), work stealing (equal tasks,
# queued evenly), and the monitors' 20-100 ms periods (event-loop tick, worker memory,
# system): with them an idle 2-worker cluster took ~80 ms of CPU a second, ~20 without.
# Worker processes fork from a server (not spawned: a fresh interpreter each, importing
# distributed and the parsing side again, and ~2 s to shut down).
DASK_LOCAL = {
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.work-stealing": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.multiprocessing-method": "forkserver",
}


class _Dask:
    """A Dask client (a LocalCluster of `workers` processes unless given a scheduler),
    connected before the parent looks at the store. A local cluster's worker processes
    fork from a server that has imported distributed and the parsing side once (the
    pool's, when it runs already), not each a fresh interpreter importing both."""

    def __init__(self, scheduler, workers):
        if not scheduler:
            # started first: the server's imports run beside this process's own
            # import of distributed below
            forkserver.set_forkserver_preload(["distributed", "iochar.db.extract"])
            forkserver.ensure_running()
        try:
            import dask  # optional and heavy: Dask only when asked
            from distributed import Client, LocalCluster
        except ImportError:
            raise RuntimeError("--scheduler/--workers need Dask: "
                               "pip install 'dask[distributed]'") from None
        self.cluster, self.warm, self.shared = None, [], None
        if scheduler:
            self.client = Client(scheduler, timeout="30s")
            # kept until run(): a released future's task may be cancelled
            self.warm = [self.client.submit(_import_extract, pure=False, workers=[w])
                         for w in self.client.scheduler_info()["workers"]]
            return
        with dask.config.set(DASK_LOCAL):
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=40)
        self.client = Client(self.cluster)

    def run(self, chunks, cfg, known):
        client = self.client
        if self.shared is None:  # once: scattered again, the same key (its hash) could
            # be released by the first run's futures after the second run's tasks need it
            self.shared = [client.scatter([x], broadcast=True)[0] for x in (known, cfg)]
        kn, cf = self.shared
        # A window of tasks in flight: a worker keeps each result until the client takes
        # it, in submission order (as _Pool.run), so without a window one slow chunk
        # would let the other workers' results pile up; with it a worker holds at most
        # the window's results, and two tasks per thread keep every worker busy.
        threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
        todo, futs = iter(chunks), deque()
        for c in itertools.islice(todo, 2 * max(threads, 1) + 1):
            futs.append(client.submit(_parse, c, cf, kn, pure=False))
        while futs:
            f = futs.popleft()
            res = f.result()
            f.release()
            futs.extend(client.submit(_parse, c, cf, kn, pure=False)
                        for c in itertools.islice(todo, 1))
            yield res

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _import_extract():
    import iochar.db.extract  # noqa: F401  (the task itself: a worker imports the parsing side)


class _Writer:
    """Writes batches of the store in a thread (pyarrow's Parquet writer releases the
    GIL), so the parent keeps collecting results while the previous batch is written."""

    def __init__(self, store: Store):
        self.store, self.pending = store, None
        self.pool = ThreadPoolExecutor(1)

    def submit(self, tables: dict) -> None:
        self.wait()
        self.pending = self.pool.submit(self.store.write, tables)

    def wait(self) -> None:
        if self.pending is not None:
            self.pending.result()
            self.pending = None

    def close(self) -> None:
        try:
            self.wait()
        finally:
            self.pool.shutdown()


def ingest(store: Store, paths: list, jobs: int | None = None, scheduler: str | None = None,
           dask_workers: int | None = None, progress: bool | None = None,
           cfg: dict | None = None, chunk: int = CHUNK, flush: int = FLUSH) -> Stats:
    """Add the logs under `paths` to the store; returns counts (never raises for a bad log)."""
    t0, cpu0 = time.monotonic(), time.process_time()
    stats = Stats()
    cfg = cfg or advice.config.load()
    workers = jobs or os.cpu_count() or 1
    dask = bool(scheduler or dask_workers)
    engine = _Dask(scheduler, dask_workers or 2) if dask else _Pool(workers) \
        if workers > 1 else None
    try:
        _ingest(store, paths, stats, engine, cfg, chunk, flush, progress,
                dask_workers or 2 if dask else workers)
    finally:
        if engine is not None:
            engine.close()
    stats.seconds = time.monotonic() - t0
    stats.workers_cpu.pop(os.getpid(), None)  # parsed in this process: counted below
    stats.cpu_all = time.process_time() - cpu0 + sum(stats.workers_cpu.values())
    return stats


def _ingest(store, paths, stats, engine, cfg, chunk, flush, progress, workers) -> None:
    files = discover(paths)
    stats.found = len(files)
    known = store.known_hashes()
    bar = progress_bar(len(files), sys.stderr.isatty() if progress is None else progress)
    chunks = _chunks(files, max(1, min(chunk, -(-len(files) // (2 * workers)))))

    def run(chunks):
        if engine is not None and (isinstance(engine, _Dask) or len(chunks) > 1):
            return engine.run(chunks, cfg, known)
        return (_parse(c, cfg, known) for c in chunks)

    # batches of at most `flush` logs, and at least four over the run, so that the
    # last one (written after the last result) is a small part of the work
    flush = max(min(flush, -(-len(files) // 4)), chunk)
    batch, writer, ranked = _Batch(), _Writer(store), []
    try:
        for res in run(chunks):
            batch.add(res, stats)
            ranked += res["ranked"]
            bar.update(len(res["hashes"]) + res["skipped"] + res["duplicates"]
                       + len(res["ranked"]))
            if batch.logs >= flush:
                writer.submit(batch.take())
        # per-rank logs (a job whose MPI reduction did not run): one job per set, as
        # iochar-report groups them, parsed once all of them are known
        groups = [tuple(str(p) for _, p in sorted(zip(g.ranks, g.files)))
                  for g in J.group_heads(_first_copies(ranked, files, batch.seen, stats))]
        for res in run(_chunks(groups, chunk)) if groups else ():
            batch.add(res, stats)
        if batch.parts:
            writer.submit(batch.take())
    finally:
        bar.close()
        writer.close()
