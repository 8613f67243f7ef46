"""The live view's jobs (iochar-top, iochar-exporter): the processes read from a live
directory (livescan.py finds the files, liveview.py reads each) grouped into jobs, and
per job its totals, rates, share of time in I/O, busiest files and the exporter's
labelled series.

A job on a node is (user, scheduler job id, program); it stays while any of its
processes runs, its ended processes' last values kept so that no total goes down, and
goes `keep` samples after its last process ended (a killed job shows as such for a
minute). Sums go through numpy per (module, file system) group of rows, cached per
process: its rows only grow."""

from __future__ import annotations

import os
import re
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from . import live, livedir, program
from .livebulk import distinct, first_of
from .livescan import scan
from .liveview import FLOATS, INTS, NF, NI, LiveFile, Sample, Scratch, keep_freed_memory
from .logformat import LogError

META_OPS = ("opens", "stats", "seeks", "syncs")
# The modules whose calls reach the operating system: a job's totals are theirs (MPI-IO,
# HDF5 and NetCDF calls end in POSIX calls, counted there too).
BASE_MODULES = ("POSIX", "STDIO")


class Mounts:
    """This node's mount points (/proc/self/mountinfo), longest first: the file system a
    path is on is the longest mount point it starts with."""

    def __init__(self, text: str | None = None):
        if text is None:
            try:
                with open("/proc/self/mountinfo", "rb") as f:
                    text = f.read(1 << 20).decode(errors="surrogateescape")
            except OSError:
                text = ""
        points = set()
        for ln in text.splitlines():
            parts = ln.split()
            if len(parts) > 4:
                points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4]))
        self.points = sorted(points | {"/"}, key=len, reverse=True)

    def of(self, path: str) -> str:
        if not path.startswith("/"):
            return "-"  # <STDOUT>, <AGGREGATE>...
        for p in self.points:
            if path == p or path.startswith(p if p.endswith("/") else p + "/"):
                return p
        return "/"


def _segments(cells):
    """The distinct cells of a sorted array and where each one's run starts."""
    if not len(cells):
        return cells, cells
    starts = np.concatenate([[0], np.flatnonzero(np.diff(cells)) + 1])
    return cells[starts], starts


# ---- processes into jobs ---------------------------------------------------------------

@dataclass
class Proc:
    """A process as the live view shows it."""
    sample: Sample
    status: str  # running, finishing, killed, exited, aborted, ended

    @property
    def header(self):
        return self.sample.header


def status_of(s: Sample, alive: bool) -> str:
    h = s.header
    if h["state"] == live.LOGGED or s.unlinked:
        return "ended"
    if h["state"] == 1:
        return "exited"
    if h["state"] == 2:
        return "aborted"
    if not alive:
        return "killed"  # state 0 and gone: a signal or the launcher (which is not known)
    return "finishing" if h["end_wall"] > 0 else "running"


def job_key(h: dict) -> tuple:
    """A job on this node: the scheduler id (rank 0's pid without one), user, program."""
    # the runtime's name for it (a 20480-byte header's job keys), else program.py's rule
    job = {"program": h.get("jobkey", {}).get("program", ""), "exe": h["exe"],
           "cmdline": h["cmdline"]}
    return (h["uid"], h["jobid"] or str(h["pid"]), program.name(job))


class Reader:
    """Reads a live directory sample after sample, keeping each live file open between
    samples (read by descriptor, never reopened by name)."""

    def __init__(self, top, uids=None):
        self.top, self.uids = top, uids
        self.open: dict = {}  # (dev, ino) -> LiveFile
        self.problems: list = []
        self.scratch = Scratch()  # its files' read buffers (callers serialize sample())

    def sample(self) -> list:
        """[Proc] of every live file now, and of those gone since the last sample (read
        once more through the descriptor: their last values)."""
        sc = scan(self.top, self.uids)
        self.problems = list(sc.problems)
        seen = set()
        procs = []
        for fd, shown, uid in sc.files:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            if ident in self.open:
                os.close(fd)
            else:
                self.open[ident] = LiveFile(fd, shown, uid, self.scratch)
            seen.add(ident)
        for ident in list(self.open):
            lf = self.open[ident]
            try:
                s = lf.read()
            except (LogError, OSError, ValueError, IndexError, struct.error) as e:
                msg = str(e) if isinstance(e, LogError) else f"{lf.name}: {e}"
                self.problems.append(f"{msg}; skipped")
                lf.close()
                del self.open[ident]
                continue
            if ident not in seen:
                s.unlinked = True
            h = s.header
            st = status_of(s, livedir.alive(h) if h["pid"] > 0 else False)
            if ident not in seen or st == "ended":
                lf.close()
                del self.open[ident]
            if h["pid"] == 0:
                continue  # killed while its file was being made: no record
            procs.append(Proc(s, st))
        return procs

    def close(self):
        for lf in self.open.values():
            lf.close()
        self.open.clear()


@dataclass
class Job:
    key: tuple
    user: str
    program: str
    procs: dict = field(default_factory=dict)  # sample key -> Proc (the latest)
    nprocs: int = 0
    start: float = 0.0
    ended_at: int | None = None  # the sample count when none of it ran any more
    fs_labels: dict = field(default_factory=dict)  # fs -> its series' label (sticky)

    @property
    def jobid(self) -> str:
        return self.key[1]

    def running(self) -> bool:
        return any(p.status == "running" for p in self.procs.values())

    def count(self, status: str) -> int:
        return sum(p.status == status for p in self.procs.values())


def group(procs: list, jobs: dict | None = None, tick: int = 0) -> dict:
    """Processes into jobs (key: job_key); with the `jobs` of the samples before, a job
    keeps the last values of its processes that ended while any of it still runs."""
    jobs = {} if jobs is None else jobs
    now = set()
    for p in procs:
        h = p.header
        k = job_key(h)
        j = jobs.get(k)
        if j is None or j.ended_at is not None:
            j = jobs[k] = Job(k, h["user"] or str(h["uid"]), k[2])
        j.procs[p.sample.key] = p
        j.nprocs = max(j.nprocs, h["nprocs"] if h["mpi_initialized"] else 0)
        j.start = min(j.start or h["start_wall"], h["start_wall"])
        now.add(k)
    for k, j in jobs.items():
        if j.ended_at is None and not j.running():
            j.ended_at = tick
        for p in j.procs.values():
            if k not in now and p.status in ("running", "finishing"):
                p.status = "ended"  # its file went without a last read
    return jobs


# ---- what the tools show: jobs with totals, rates and series ------------------------------

@dataclass
class JobView:
    """One job at one sample: totals (BASE_MODULES), rates over `window` seconds, the
    share of that window its processes spent in I/O, and (when asked) its busiest files."""
    job: Job
    state: str
    ints: dict
    floats: dict
    rates: dict
    window: float
    io_share: float
    files: list = field(default_factory=list)  # [{module, fs, path, bytes..., *_per_s}]

    def as_json(self) -> dict:
        j, i = self.job, self.ints
        d = {"job": j.jobid, "user": j.user, "program": j.program,
             "processes": j.count("running") + j.count("finishing"), "ranks": j.nprocs or None,
             "state": self.state, "killed": j.count("killed"),
             "bytes_read": i["bytes_read"], "bytes_written": i["bytes_written"],
             "reads": i["reads"], "writes": i["writes"],
             "meta_ops": sum(i[k] for k in META_OPS), **{k: i[k] for k in META_OPS},
             "read_bytes_per_s": self.rates["bytes_read"],
             "write_bytes_per_s": self.rates["bytes_written"],
             "reads_per_s": self.rates["reads"], "writes_per_s": self.rates["writes"],
             "meta_ops_per_s": sum(self.rates[k] for k in META_OPS),
             **{f"{k}_per_s": self.rates[k] for k in META_OPS},
             "io_time": sum(self.floats.values()), "io_share": self.io_share,
             "rate_window": self.window, "start": j.start}
        if self.files:
            d["files"] = self.files
        return d


class Monitor:
    """Samples a live directory again and again; jobs keep their ended processes' last
    values until none of their processes runs, then go after `keep` more samples."""

    def __init__(self, top, uids=None, keep: int = 0, mounts: Mounts | None = None):
        keep_freed_memory()  # a monitor's process reads and reads again
        self.reader = Reader(top, uids)
        self.jobs: dict = {}
        self.tick = 0
        self.keep = keep
        self.mounts = mounts or Mounts()
        self._fs: dict = {}
        self._fs_ids: dict = {}  # owner uid -> [record ids sorted, their fs (_fs_names)]
        self._fs_names: list = []
        self._fs_ix: dict = {}
        self._gid: dict = {}  # (module, fs) -> group number
        self._gkeys: list = []
        self._gbase: list = []
        self._groups: dict = {}  # sample key -> (rows, (groups, order, starts), group of each)
        self._sum_cache: dict = {}  # job key -> (tick, sums)
        self._prev: dict = {}  # job key -> (time, ints, floats, {file: bytes})

    @property
    def problems(self):
        return self.reader.problems

    def fs_of(self, path: str) -> str:
        fs = self._fs.get(path)
        if fs is None:
            if len(self._fs) > 1 << 17:
                self._fs.clear()
            fs = self._fs[path] = self.mounts.of(path)
        return fs

    def step(self, files: int = 0) -> list:
        """[JobView] of the jobs running now (and those ended fewer than `keep` samples
        ago, state "ended"); `files` > 0: each with its busiest files."""
        self.tick += 1
        now = time.time()
        procs = self.reader.sample()
        group(procs, self.jobs, self.tick)
        out = []
        for k, j in list(self.jobs.items()):
            if j.ended_at is not None and self.tick - j.ended_at >= max(self.keep, 0) and \
                    not self._recently_killed(j, now):
                del self.jobs[k]
                self._prev.pop(k, None)
                self._sum_cache.pop(k, None)
                for sk in j.procs:
                    self._groups.pop(sk, None)
                continue
            out.append(self._view(j, now, files))
        return out

    @staticmethod
    def _recently_killed(j: Job, now: float) -> bool:
        """A job whose processes were killed shows as such for a minute after its last
        read (its live files stay until the epilogue recovers them)."""
        return j.count("killed") > 0 and not j.running() and \
            any(now - p.sample.when < 60 for p in j.procs.values()) and \
            all(p.status in ("killed", "exited", "aborted") for p in j.procs.values())

    def _view(self, j: Job, now: float, files: int) -> JobView:
        ti, tf = self.totals(j)
        prev = self._prev.get(j.key)
        if prev is None:  # first sight: the averages since the job started
            window = max(now - j.start, 1e-3)
            pi, pf, pfiles = np.zeros(NI, np.int64), np.zeros(NF), {}
        else:
            window = max(now - prev[0], 1e-3)
            pi, pf, pfiles = prev[1], prev[2], prev[3]
        rates = {q: float(max(int(ti[n]) - int(pi[n]), 0)) / window for n, q in enumerate(INTS)}
        nproc = max(j.count("running") + j.count("finishing"), 1)
        share = min(max(float(tf.sum() - pf.sum()), 0.0) / (window * nproc), 1.0)
        if j.running():
            state = "running"
        elif j.count("killed") and all(p.status in ("killed", "exited", "aborted")
                                       for p in j.procs.values()):
            state = "killed"
        else:
            state = "ended"
        fl, cur = ([], {})
        if files > 0:
            fl, cur = self._files(j, files, window, pfiles)
        self._prev[j.key] = (now, ti, tf, cur)
        return JobView(j, state, {q: int(ti[n]) for n, q in enumerate(INTS)},
                       {q: float(tf[n]) for n, q in enumerate(FLOATS)}, rates, window, share, fl)

    def _files(self, j: Job, n: int, window: float, pfiles: dict):
        """The n files of job j with the most bytes moved in the window (a file's rows of
        every process and module summed by (module, path))."""
        cur: dict = {}
        for p in j.procs.values():
            s = p.sample
            moved = s.ints[:, 0] + s.ints[:, 1]
            for r in np.flatnonzero(moved):
                key = (s.modules[r], s.paths[r])
                v = cur.setdefault(key, np.zeros(4, np.int64))
                v += s.ints[r, :4]
        rows = []
        for key, v in cur.items():
            old = pfiles.get(key)
            d = v - old if old is not None else v  # a file new to the list moved v since
            rows.append((int(d[0] + d[1]), key, v, d, window))
        rows.sort(key=lambda r: (-r[0], r[1]))
        out = [{"module": k[0], "fs": self.fs_of(k[1]), "path": k[1],
                "bytes_read": int(v[0]), "bytes_written": int(v[1]), "reads": int(v[2]),
                "writes": int(v[3]), "read_bytes_per_s": max(int(d[0]), 0) / w,
                "write_bytes_per_s": max(int(d[1]), 0) / w}
               for _, k, v, d, w in rows[:n]]
        return out, cur

    def _rows(self, s: Sample):
        """Sample s's rows by (module, fs) group: (the groups, the rows sorted by group,
        where each group starts in that order), cached per process (its rows only grow)."""
        have = self._groups.get(s.key)
        n = len(s.paths)
        if have is not None and have[0] == n:
            return have[1]
        have = None if have is None else have[2]
        start = 0 if have is None else len(have)
        if s.ids is None:  # a sample made by hand: row by row
            keys = [(s.modules[r], self.fs_of(s.paths[r])) for r in range(start, n)]
            new = np.asarray([self._group_of(k) for k in keys], np.int64)
        else:
            fs = self._fs_rows(s, start, n)
            code = (s.mids[start:n].astype(np.int64) << 32) | fs
            pairs = distinct(code)
            fsn = self._fs_names
            gids = np.asarray([self._group_of((s.names[c >> 32], fsn[c & 0xFFFFFFFF]))
                               for c in pairs.tolist()], np.int64)
            new = gids[np.searchsorted(pairs, code)]
        rows = new if have is None else np.concatenate([have, new])
        order = np.argsort(rows, kind="stable")
        groups, starts = _segments(rows[order])
        self._groups[s.key] = (n, (groups, order, starts), rows)
        return groups, order, starts

    def _group_of(self, key: tuple) -> int:
        g = self._gid.get(key)
        if g is None:
            g = self._gid[key] = len(self._gkeys)
            self._gkeys.append(key)
            self._gbase.append(key[0] in BASE_MODULES)
        return g

    def _fs_rows(self, s: Sample, start: int, n: int) -> np.ndarray:
        """The file system (an index in _fs_names) of rows start..n of sample s. A path's
        is kept by its record id (the hash of the path) for the file's owner: the 64
        copies of one program's 2,000 names are looked up 2,000 times, not 128,000; one
        user's file can mislabel only that user's series."""
        ids = s.ids[start:n]
        out = np.empty(n - start, np.int64)
        agg = s.aggs[start:n]
        cache = self._fs_ids.setdefault(s.owner, [np.zeros(0, np.uint64), np.zeros(0, np.int64)])
        cid, cfs = cache
        pos = np.minimum(np.searchsorted(cid, ids), max(len(cid) - 1, 0))
        hit = (cid[pos] == ids) if len(cid) else np.zeros(len(ids), bool)
        hit &= ~agg
        out[hit] = cfs[pos[hit]]
        out[agg] = self._fs_index("-")
        miss = np.flatnonzero(~hit & ~agg)
        if len(miss):
            u, first = first_of(ids[miss])
            fs = np.asarray([self._fs_index(self.mounts.of(s.paths[start + int(miss[i])]))
                             for i in first.tolist()], np.int64)
            out[miss] = fs[np.searchsorted(u, ids[miss])]
            if len(cid) + len(u) > 1 << 17:
                cid, cfs = cid[:0], cfs[:0]
            cid, cfs = np.concatenate([cid, u]), np.concatenate([cfs, fs])
            o = np.argsort(cid, kind="stable")
            cache[0], cache[1] = cid[o], cfs[o]
        return out

    def _fs_index(self, fs: str) -> int:
        i = self._fs_ix.get(fs)
        if i is None:
            i = self._fs_ix[fs] = len(self._fs_names)
            self._fs_names.append(fs)
        return i

    def _sums(self, j: Job):
        """Per (module, fs) group: ints and floats of job j summed over its processes
        (once a sample: the totals and the series share it)."""
        got = self._sum_cache.get(j.key)
        if got is not None and got[0] == self.tick:
            return got[1], got[2]
        parts = []
        for p in j.procs.values():
            groups, order, starts = self._rows(p.sample)
            if len(order):
                parts.append((groups, np.add.reduceat(p.sample.ints[order], starts),
                              np.add.reduceat(p.sample.floats[order], starts)))
        g = len(self._gkeys)
        si, sf = np.zeros((g, NI), np.int64), np.zeros((g, NF))
        for groups, pi, pf in parts:  # groups are distinct within a part
            si[groups] += pi
            sf[groups] += pf
        self._sum_cache[j.key] = (self.tick, si, sf)
        return si, sf

    def totals(self, j: Job) -> tuple:
        """ints, floats of job j over the modules whose calls reach the system."""
        si, sf = self._sums(j)
        base = np.asarray(self._gbase[:len(si)], bool)
        return si[base].sum(axis=0), sf[base].sum(axis=0)

    def series(self, j: Job, max_fs: int = 16) -> dict:
        """(module, fs) -> (ints, floats) of job j: the exporter's labelled series. A job's
        first max_fs file systems get a series each, any later one shares fs="other"
        (a label once given stays: the counters stay monotonic)."""
        si, sf = self._sums(j)
        out: dict = {}
        for g in np.flatnonzero(si.any(axis=1) | sf.any(axis=1)):
            m, fs = self._gkeys[g]
            label = j.fs_labels.get(fs)
            if label is None:
                label = j.fs_labels[fs] = fs if len(j.fs_labels) < max_fs else "other"
            key = (m, label)
            if key in out:
                out[key] = (out[key][0] + si[g], out[key][1] + sf[g])
            else:
                out[key] = (si[g].copy(), sf[g].copy())
        return out

    def close(self):
        self.reader.close()
