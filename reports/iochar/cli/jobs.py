"""Several jobs given to a CLI (a directory of many jobs' logs, or files of several jobs):
the job list and the per-job loop shared by iochar-report, iochar-parser, iochar-diff."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import jobs as J
from .. import summary as S
from ..log import LogError
from ..safetext import escape

# Layers that reach the file system; MPI-IO, HDF5 and NetCDF sit on top of POSIX, so
# their bytes and time are already counted there.
FS_MODULES = ("POSIX", "STDIO")


def add_job_arg(p, help_extra: str = ""):
    p.add_argument("--job", metavar="ID",
                   help="with logs of several jobs, only this one (an id as --list shows, "
                        "or its jobid)" + help_extra)


def single_file(paths: list) -> bool:
    """One file named (not a directory): read it as before, with the reader's own errors."""
    return len(paths) == 1 and not Path(paths[0]).is_dir()


def find(paths: list, want: str | None):
    """(jobs, bad files) under the paths; raises LogError when nothing is usable."""
    return J.find(paths, want)


def warn_bad(prog: str, bad: list):
    for p, why in bad:
        what = why if str(p) in why else f"{p}: {why}"  # the reader's errors name the file
        print(f"{prog}: warning: skipped {escape(what)}", file=sys.stderr)


def nothing_read(bad: list) -> LogError:
    """The one error when no job given could be read: the reason when one, else the
    count and the first."""
    if len(bad) == 1:
        return LogError(bad[0][1])
    return LogError(f"no job could be read from {len(bad)} logs or jobs; first: {bad[0][1]}")


def listing(job: J.Job, rep: dict) -> dict:
    """One row of the job list: what identifies the job and its I/O at a glance.

    bytes and I/O time come from the file-system layers (POSIX + STDIO); a log with
    neither uses its busiest module. I/O time is the slowest rank's, per layer, added.
    """
    mods = rep["modules"]
    fs = [m for m in FS_MODULES if m in mods]
    if not fs and mods:
        fs = [max(mods, key=lambda m: mods[m]["bytes_read"] + mods[m]["bytes_written"])]
    jb = rep["job"]
    return {"id": job.id, "jobid": job.jobid, "exe": jb.get("exe", "?"),
            "program": J.exe_name(jb), "interpreter": jb.get("interpreter") or "",
            "nprocs": jb.get("nprocs"), "start_time": jb.get("start_time"),
            "run_time": jb.get("run_time"), "logs": [str(f) for f in job.files],
            "bytes_read": sum(mods[m]["bytes_read"] for m in fs),
            "bytes_written": sum(mods[m]["bytes_written"] for m in fs),
            "io_time": round(sum(float(mods[m]["slowest_rank"]["time"] or 0) for m in fs), 9)}


def _when(t) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t))) if t else "?"


def table(rows: list) -> str:
    """The job list as text, one line per job."""
    head = (f"{'job':<16} {'exe':<20} {'nprocs':>6} {'start':<19} {'read':>10} "
            f"{'written':>10} {'I/O time':>9} logs")
    out = [head]
    for r in rows:
        exe = escape(r.get("program") or J.exe_name({"exe": r["exe"]}))
        out.append(f"{escape(r['id']):<16} {exe:<20} {r['nprocs']!s:>6} "
                   f"{_when(r['start_time']):<19} {S.human_bytes(r['bytes_read']):>10} "
                   f"{S.human_bytes(r['bytes_written']):>10} {S.human_time(r['io_time']):>9} "
                   f"{len(r['logs'])}")
    return "\n".join(out) + "\n"


def banner(r: dict) -> str:
    prog = f"{r['program']} ({r['exe']})" if r.get("interpreter") else r["exe"]
    return (f"==== job {escape(r['id'])}: {escape(prog)}, {r['nprocs']} processes, "
            f"{len(r['logs'])} log(s) ====\n")
