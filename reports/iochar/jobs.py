"""Logs of many jobs in one place: group the files by job (from their JOB sections, not
their names), so a directory holding reduced logs, fork children's logs and sets of
per-rank logs can be listed and reported job by job.

A log without a `rank` key in its JOB (a reduced log, a serial process, a fork
child) is one job on its own. Per-rank fallback logs belong together when they share
jobid, exe, cmdline, uid and nprocs (every rank of an MPI job carries rank 0's jobid),
hold distinct ranks and overlap in time: all ranks of one job are alive together
between MPI_Init and the first exit, while two job steps with the same batch jobid
run one after the other.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import live
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
    name = str(path)
    if data[:8] == live.MAGIC:  # a killed process's live file: the log it holds
        data, _ = live.recovered_log(path)
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
        self._starts, self._ends = [], []

    def add(self, path, job):
        self.files.append(path)
        self.ranks.append(job.get("rank"))
        self._starts = sorted(self._starts + [_num(job.get("start_time"))])
        self._ends.append(_num(job.get("end_time")))
        if job.get("rank", 1 << 62) < self.job.get("rank", 1 << 62):
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


def group_heads(heads: list) -> list:
    """Jobs (sorted by start time) from [(path, JOB dict)] of readable logs: per-rank
    logs of one run together, every other log a job of its own (iochar-db ingest
    groups the logs it has read already with this)."""
    jobs = []

    def key_of(j):
        return tuple(str(j.get(k)) for k in ("jobid", "exe", "cmdline", "uid", "nprocs"))

    open_groups: list = []
    for p, j in sorted(heads, key=lambda h: (_num(h[1].get("start_time")), str(h[0]))):
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
    return os.path.basename(str(job.get("exe") or "?"))
