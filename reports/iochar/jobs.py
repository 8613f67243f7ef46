"""Logs of many jobs in one place: group the files by job (from their JOB sections, not
their names), so a directory holding reduced logs, fork children's logs and sets of
per-rank logs can be listed and reported job by job.

A reduced log, and a log of a process that is no MPI rank written without a job key
(older versions), is one job on its own. Per-rank fallback logs belong together when
they share jobid, exe, cmdline, uid and nprocs (every rank of an MPI job carries rank
0's jobid), hold distinct ranks and overlap in time: all ranks of one job are alive
together between MPI_Init and the first exit, while two job steps with the same batch
jobid run one after the other.

Logs of processes that are no MPI rank carry a job key (JOB `job_key`, runtime/
jobkey.c; docs/log-format.md "Jobs"): a tooled process with its fork and spawn
children, or the tasks of one scheduler step or launcher. They belong together when
they share the key and uid, overlap in time, and no two hold the same launcher rank
(the same program run twice one after another in one step is two jobs). Their ranks
are numbered here (`process_ranks`): the launcher's ranks where it gave them, the
other processes after those, by start time.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import live, program
from .livedir import live_files, settle
from .logformat import (
    HEADER,
    MAGIC,
    ZLIB_MAX_RATIO,
    LogError,
    SectionHeaderError,
    ascii_field,
    inflater_for,
    parse_job,
    payload,
    section_at,
)

CLOCK_SLACK = 5.0  # seconds: node clocks of one job may disagree by this much


def read_job(path: Path) -> dict:
    """The JOB section of one log, without inflating the other sections."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LogError(f"cannot read {path}: {e.strerror or e}") from None
    if data[:8] == live.MAGIC:  # a killed process's live file: the log it holds
        data, _ = live.recovered_log(path)
    return job_from_bytes(data, str(path))


def job_from_bytes(data: bytes, name: str) -> dict:
    """The JOB section of a log's bytes, without inflating the other sections."""
    if len(data) < HEADER.size:
        raise LogError(f"{name}: truncated file or not an iochar log")
    magic, version, hsize, total, nsec, crc = HEADER.unpack_from(data)
    if magic != MAGIC or zlib.crc32(data[:28]) != crc:
        raise LogError(f"{name}: bad magic or header CRC: not an iochar log")
    if total != len(data):
        raise LogError(f"{name}: file is {len(data)} bytes but its header says {total}")
    off = hsize
    for k in range(nsec):
        try:
            kind_b, _, count, pcrc, ulen, clen, start = section_at(data, off, version)
        except SectionHeaderError as e:
            if e.short:
                break
            raise LogError(f"{name}: section {k} {e}") from None
        if ascii_field(kind_b, f"{name}: section {k} kind") == "JOB":
            if start + clen > len(data) or ulen > max(clen, 1) * ZLIB_MAX_RATIO:
                break
            buf = payload(data[start:start + clen], pcrc, ulen, f"{name}: section {k} (JOB)",
                          inflater_for(version))
            return parse_job(buf, count, f"{name}: section {k} (JOB)")
        off = start + clen
    raise LogError(f"{name}: no JOB section")


def _num(v, default=0.0) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default


@dataclass
class Job:
    """One job: its files (one log, or per-rank logs) and the JOB of its lowest rank
    (log.open_job reads it)."""

    files: list
    job: dict
    ranks: list = field(default_factory=list)
    id: str = ""
    unreadable: list = field(default_factory=list)  # [(path, reason)] taken as this job's
    processes: bool = False  # logs of processes with a job key: ranks numbered here

    @property
    def jobid(self) -> str:
        return str(self.job.get("jobid", "?"))

    @property
    def pid(self):
        return self.job.get("pid")

    @property
    def start(self) -> float:
        return self._starts[0] if self._starts else 0.0

    @property
    def end(self) -> float:
        return max([_num(self.job.get("end_time"))] + self._ends)

    def __post_init__(self):
        self._starts, self._ends, self.heads = [], [], []

    def add(self, path, job):
        self.files.append(path)
        self.heads.append(job)
        self.ranks.append(job.get("rank"))
        self._starts = sorted(self._starts + [_num(job.get("start_time"))])
        self._ends.append(_num(job.get("end_time")))
        if not self.processes and job.get("rank", 1 << 62) < self.job.get("rank", 1 << 62):
            self.job = job


def expand(paths) -> list:
    """Files named, and the *.iochar logs of directories named, in a stable order."""
    files = []
    for it in paths:
        p = Path(it)
        if p.is_dir():
            found = sorted(p.glob("*.iochar"))
            if settle(p, found):  # processes gone without their log: logs now
                found = sorted(p.glob("*.iochar"))
            found += live_files(p, found)  # processes still running, or not settled
            if not found:
                raise LogError(f"no *.iochar logs in {p}")
            files += found
        else:
            files.append(p)
    if not files:
        raise LogError("no log files given")
    return files


def _same_run(key_of, group: Job, path, job) -> bool:
    return (key_of(job) == key_of(group.job) and job["rank"] not in group.ranks
            and _num(job.get("start_time")) <= group.end + CLOCK_SLACK)


def group(files: list) -> tuple[list, list]:
    """(jobs sorted by start time, [(path, reason)] of files that are not readable logs)."""
    heads, bad = [], []
    for p in files:
        try:
            heads.append((p, read_job(p)))
        except LogError as e:
            bad.append((p, str(e)))
    jobs = group_heads(heads)
    _name(jobs)
    return jobs, bad


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def process_log(job: dict) -> bool:
    """A log of a process that is no MPI rank, with the job key that groups it."""
    return isinstance(job.get("job_key"), str) and bool(job["job_key"]) \
        and not _int(job.get("rank"))


def _task(job: dict):
    """(launcher rank, its variable) of a task's JOB, else None."""
    r = job.get("task_rank")
    return (r, str(job.get("task_rank_from") or "")) if _int(r) and 0 <= r < 1 << 24 else None


def process_ranks(jobs: list) -> list:
    """Ranks for the JOBs of one job's process logs, in their order: the launcher's
    ranks of the tasks whose rank variable most of them have (a tie: the larger world
    size, then the name), then every other process (the launcher, fork and spawn
    children, tasks of another variable or with a rank given twice) after the highest
    of those ranks and the world size, in start-time order (then pid)."""
    count: dict = {}
    for j in jobs:
        t = _task(j)
        if t:
            w = j.get("world_size") if _int(j.get("world_size")) else 0
            n, wmax = count.get(t[1], (0, 0))
            count[t[1]] = (n + 1, max(wmax, w))
    primary = max(count, key=lambda s: (*count[s], s)) if count else None
    ranks: list = [None] * len(jobs)
    used: set = set()
    for i, j in enumerate(jobs):
        t = _task(j)
        if t and t[1] == primary and t[0] not in used:
            ranks[i] = t[0]
            used.add(t[0])
    base = max([max(used) + 1] + [count[primary][1]]) if used else 0
    base = min(base, (1 << 24) - len(jobs))
    rest = sorted((i for i in range(len(jobs)) if ranks[i] is None),
                  key=lambda i: (_num(jobs[i].get("start_time")), _num(jobs[i].get("pid")), i))
    for k, i in enumerate(rest):
        ranks[i] = base + k
    return ranks


def _join_processes(open_groups: list, p, j) -> Job:
    """The open group of process logs this log belongs to, or a new one."""
    key, t, start = (j["job_key"], str(j.get("uid"))), _task(j), _num(j.get("start_time"))
    for g in reversed(open_groups):  # the latest first
        if g.key == key and start <= g.end + CLOCK_SLACK and not (t and t in g.tasks):
            break
    else:
        g = Job([], j, processes=True)
        g.key, g.tasks = key, set()
        open_groups.append(g)
    g.add(p, j)
    if t:
        g.tasks.add(t)
    return g


def group_heads(heads: list) -> list:
    """Jobs (sorted by start time) from [(path, JOB dict)] of readable logs: per-rank
    logs of one run together, process logs of one job together (ranks numbered),
    every other log a job of its own (iochar-db ingest groups the logs it has read
    already with this)."""
    jobs = []

    def key_of(j):
        return tuple(str(j.get(k)) for k in ("jobid", "exe", "cmdline", "uid", "nprocs"))

    open_groups: list = []
    proc_groups: list = []
    for p, j in sorted(heads, key=lambda h: (_num(h[1].get("start_time")), str(h[0]))):
        if process_log(j):
            g = _join_processes(proc_groups, p, j)
            if len(g.files) == 1:
                jobs.append(g)
            continue
        if not isinstance(j.get("rank"), int) or isinstance(j.get("rank"), bool):
            jobs.append(Job([p], j, [None]))
            jobs[-1]._starts, jobs[-1]._ends = [_num(j.get("start_time"))], []
            continue
        for g in open_groups:
            if _same_run(key_of, g, p, j):
                g.add(p, j)
                break
        else:
            g = Job([], j)
            g.add(p, j)
            open_groups.append(g)
            jobs.append(g)
    for g in proc_groups:
        g.ranks = process_ranks(g.heads) if len(g.files) > 1 else [None]
        if len(g.files) > 1:  # the lowest rank's JOB stands for the job (log.merge_jobs)
            g.job = g.heads[g.ranks.index(min(g.ranks))]
    jobs.sort(key=lambda g: (g.start, g.jobid, str(g.files[0])))
    return jobs


def _name(jobs: list):
    """Ids to pick a job by: the jobid, or jobid:pid where a jobid is not unique
    (fork children share their parent's jobid; job steps share the batch jobid)."""
    count: dict = {}
    for g in jobs:
        count[g.jobid] = count.get(g.jobid, 0) + 1
    seen: dict = {}
    for g in jobs:
        g.id = g.jobid if count[g.jobid] == 1 else f"{g.jobid}:{g.pid}"
        n = seen[g.id] = seen.get(g.id, 0) + 1
        if n > 1:  # same jobid and pid (pid reuse): fall back to the position
            g.id = f"{g.id}#{n}"


def pick(jobs: list, want: str) -> Job:
    """The job whose id is `want`, or the only one whose jobid is `want`."""
    exact = [g for g in jobs if g.id == want]
    if exact:
        return exact[0]
    by_jobid = [g for g in jobs if g.jobid == want]
    if len(by_jobid) == 1:
        return by_jobid[0]
    if by_jobid:
        raise LogError(f"job {want} matches {len(by_jobid)} jobs: pick one of "
                       + ", ".join(g.id for g in by_jobid))
    raise LogError(f"no job {want} (jobs: {', '.join(g.id for g in jobs) or 'none'})")


def find(paths, want: str | None = None) -> tuple[list, list]:
    """Group the logs under `paths` by job; with `want`, only that job."""
    jobs, bad = group(expand(paths))
    if want is not None:  # files that are not logs are no concern once the job is found
        try:
            return [pick(jobs, want)], []
        except LogError as e:
            if not bad:
                raise
            raise LogError(f"{e}; {len(bad)} unreadable file(s) skipped, e.g. {bad[0][1]}") \
                from None
    if not jobs:
        raise LogError(bad[0][1] if len(bad) == 1 else f"no readable log among {len(bad)} "
                       f"files (e.g. {bad[0][1]})")
    if bad and len(jobs) == 1 and jobs[0].ranks != [None]:
        # one job's per-rank logs and files that do not read: taken as its lost ranks
        jobs[0].unreadable, bad = bad, []
    return jobs, bad


def exe_name(job: dict) -> str:
    """The program's name (an interpreter's script or module: program.py)."""
    return program.name(job)
