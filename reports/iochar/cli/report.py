"""iochar-report: job summary and tuning advice as text, JSON or one HTML page."""

from __future__ import annotations

import json
import sys

from .. import advice, callsites, html
from .. import flags as F
from .. import summary as S
from ..log import LogError
from ..log import open as open_log
from ..safetext import TRUNCATED_NOTE, object_strings
from . import jobs as cj
from .common import ArgParser, escape, run_cli, sanitize, when, write_atomic
from .version import add_version


def load(paths: list) -> dict:
    """Plain data of one job from a log, several per-rank logs, or a directory."""
    return load_log(open_log(paths[0] if len(paths) == 1 else paths))


def load_log(log) -> dict:
    """Plain data of one job from an open iochar.Log."""
    data = S.gather(log)
    data["observed"] = callsites.from_log(log)  # call sites, trace (None: not recorded)
    # names cut at the runtime's path limit (a Darshan log has none)
    data["truncated"] = log.truncated_paths() if hasattr(log, "truncated_paths") else set()
    return data


@object_strings
def build(data: dict, cfg: dict | None = None) -> dict:
    """{"job", "modules", "advice"}: the report as --json prints it (docs/report-json.md)."""
    rep = S.summarize(data["job"], data["records"], data.get("ranks"), data.get("schemas"))
    ctx = advice.Context(rep["job"], data["records"], data.get("ranks"), rep,
                         mounts=data.get("mounts"))
    rep["advice"] = [a.to_dict() for a in advice.evaluate(ctx, cfg)]
    callsites.annotate(rep, data.get("observed"))
    cut = data.get("truncated") or set()
    for s in rep["modules"].values():
        for f in s.get("top_files", []):
            if f["path"] in cut:
                f["truncated"] = True
    warnings = html.job_warnings(rep["job"])
    if warnings:
        rep["job"]["warnings"] = warnings
    return rep


def _module_lines(name: str, s: dict) -> list:
    sl, share = s["slowest_rank"], s["share_of_runtime"]
    lines = [
        (f"{name:<7} files {s['files']:,} (read-only {s['files_read_only']:,}, write-only "
        f"{s['files_write_only']:,}, read-write {s['files_read_write']:,}; shared "
        f"{s['files_shared']:,}, unique {s['files_unique']:,})"),
        (f"  ops     reads {s['reads']:,}  writes {s['writes']:,}  opens {s['opens']:,}  "
        f"seeks {s['seeks']:,}  stats {s['stats']:,}  syncs {s['syncs']:,}"),
        (f"  bytes   read {S.human_bytes(s['bytes_read'])}  written "
        f"{S.human_bytes(s['bytes_written'])}"),
        (f"  time    read {S.human_time(s['time_read'])}  write {S.human_time(s['time_write'])}  "
        f"meta {S.human_time(s['time_meta'])} per process; slowest rank {sl['rank']}: "
        f"{S.human_time(sl['time'])} ({100 * (share['io'] or 0):.1f}% of run time)"),
    ]
    bw = s["bandwidth"]
    if s["bytes_read"] or s["bytes_written"]:
        lines.append(f"  rate    {S.human_bytes(bw['total'])}/s by slowest rank (read "
                     f"{S.human_bytes(bw['read'])}/s, write {S.human_bytes(bw['write'])}/s)")
    pat = s.get("pattern")
    if pat and (pat["read"]["ops"] or pat["write"]["ops"]):
        lines.append("  pattern " + "  ".join(
            f"{d}s seq {100 * p['sequential']:.0f}% consec {100 * p['consecutive']:.0f}% "
            f"random {100 * p['random']:.0f}%" for d, p in pat.items() if p["ops"]))
    hist = s.get("size_histogram")
    if hist:
        for d in ("read", "write"):
            bins = [f"{b}:{n:,}" for b, n in hist[d].items() if n]
            if bins:
                lines.append(f"  {d + ' sz':<7} " + " ".join(bins))
    if s["top_sizes"]:
        lines.append("  common  " + ", ".join(f"{S.human_bytes(t['size'])} x{t['count']:,}"
                                              for t in s["top_sizes"]))
    for i, f in enumerate(s["top_files"][:3]):
        lines.append(f"  {'top' if i == 0 else '':<7} {S.human_time(f['time']):>9}  {f['path']}"
                     + (TRUNCATED_NOTE if f.get("truncated") else "")
                     + (" (shared)" if f["shared"] else ""))
    return lines


def _partial_reasons(job: dict) -> list:
    """One line per bit of the JOB `partial` flags (docs/log-format.md)."""
    flags, out = int(job.get("partial") or 0), []  # bits named in iochar/flags.py
    if flags & F.FOLDED:
        out.append(f"{job.get('folded_files', 0)} files past the memory bound were folded into "
                   "<AGGREGATE> records (totals stay exact)")
    if flags & F.PER_RANK:
        out.append("merged from per-rank logs: " + (
            "a rank could not take part in reducing the records at MPI_Finalize"
            if job.get("finalized") else "the job did not reach MPI_Finalize"))
    if flags & F.TRACE_FULL:
        out.append("the trace filled its buffer; later calls were counted, not traced")
    if flags & F.LIVE:
        how = {"killed": "killed by a signal", "_exit": "left by _exit",
               "MPI_Abort": "ended by MPI_Abort"}.get(job.get("ended_by"), "ended abnormally")
        out.append("counters recovered from live files of processes that wrote no log "
                   f"(this one: {how}); a call in flight at the end may be counted in part")
    if flags & F.MISSING_RANKS:
        out.append(f"no log or live file for ranks {job.get('missing_ranks', '?')}")
    if flags & F.IO_URING:
        out.append("a process used io_uring: its reads and writes are in no counter")
    if flags & F.SHARED_MAP:
        out.append("a recorded file was mapped shared and writable: stores through the mapping "
                   "are in no write counter")
    return out


def text(rep: dict) -> str:
    job = rep["job"]
    out = [f"iochar: {job.get('cmdline') or job.get('exe', '?')}",
           (f"  {job.get('nprocs', '?')} processes on {job.get('nnodes', '?')} node(s), run time "
           f"{S.human_time(job.get('run_time'))} ({when(job.get('start_time'))} -> "
           f"{when(job.get('end_time'))}), job {job.get('jobid', '?')}")]
    out += [f"  PARTIAL: {why}" for why in _partial_reasons(job)]
    if job.get("truncated_paths"):
        out.append(f"  TRUNCATED: {job['truncated_paths']} file name(s) longer than the path "
                   "limit were recorded cut (shown with '[truncated]')")
    out += [f"  WARNING: {w}" for w in html.job_warnings(job)]
    for name, s in rep["modules"].items():
        out += [""] + _module_lines(name, s)
    out += ["", f"advice ({len(rep['advice'])})" if rep["advice"] else "advice: none"]
    for a in rep["advice"]:
        cost = a.get("cost") or {}
        share = cost.get("io_time_share", cost.get("bytes_share"))
        what = "of I/O time" if "io_time_share" in cost else "of bytes"
        out += [f"  {a.get('rank', '')}. [{a['severity'].upper()}] {a['id']}: {a['message']}"
                + (f" ({100 * share:.0f}% {what})" if share is not None else ""),
                f"      -> {a['recommendation']}"]
        out += [f"      explains {f['id']}: {f['message']}" for f in a.get("folded") or []]
        if a.get("where"):
            out.append(f"      at {a['where']}")
    out += callsites.text_lines(rep)
    # every line escaped once, here: names, messages and JOB strings come from the log
    return "\n".join(escape(line) for line in out) + "\n"


def _many(args, cfg) -> int:
    """Logs of several jobs (or --list/--job): the job list, then each job's report."""
    jobs, bad = cj.find(args.logs, args.job)
    rows, reps, datas = [], [], []
    for j in jobs:
        try:
            data = load_log(j.open())
            rep = build(data, cfg)
        except LogError as e:
            bad.append((j.files[0], str(e)))
            continue
        rows.append(cj.listing(j, rep))
        reps.append(rep)
        datas.append(data)
    cj.warn_bad("iochar-report", bad)
    if args.html:
        if len(reps) != 1:
            raise LogError(f"{len(reps)} jobs: pick one with --job to write HTML "
                           f"(jobs: {', '.join(r['id'] for r in rows) or 'none'})")
        write_html(args.html, reps[0], datas[0])
    if len(reps) == 1 and not args.list:  # one job: the usual report
        sys.stdout.write(json.dumps(sanitize(reps[0]), indent=1, allow_nan=False) + "\n"
                         if args.json else text(reps[0]))
    elif args.json:
        doc = {"jobs": [r if args.list else {**r, "report": rep} for r, rep in zip(rows, reps)]}
        sys.stdout.write(json.dumps(sanitize(doc), indent=1, default=S._py) + "\n")
    else:
        sys.stdout.write(cj.table(rows))  # fields escaped by jobs.table/banner
        if not args.list:
            for r, rep in zip(rows, reps):
                sys.stdout.write("\n" + cj.banner(r) + text(rep))
    return 2 if bad else 0


def write_html(out: str, rep: dict, data: dict):
    """Render the page whole, then write it to a temp file and rename it into place."""
    write_atomic(out, html.render(rep, data["series"], data["ranks"], data.get("observed")))


def main(argv=None) -> int:
    return run_cli("iochar-report", _main, argv)


def _main(argv) -> int:
    p = ArgParser(prog="iochar-report", description="Summarize an iochar log and give advice.")
    p.add_argument("logs", nargs="+", metavar="LOG",
                   help="a log, per-rank logs of one job, or a directory; logs of several "
                        "jobs are listed and reported one by one")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--html", metavar="OUT", help="also write a self-contained HTML page")
    p.add_argument("--config", metavar="TOML", help="override advice thresholds")
    p.add_argument("--list", action="store_true", help="only list the jobs in the logs given")
    cj.add_job_arg(p)
    add_version(p)
    args = p.parse_args(argv)
    cfg = advice.config.load(args.config)
    if not cj.single_file(args.logs) or args.job is not None or args.list:
        return _many(args, cfg)
    data = load(args.logs)
    rep = build(data, cfg)
    out = json.dumps(sanitize(rep), indent=1, allow_nan=False) + "\n" if args.json else text(rep)
    if args.html:  # rendered whole first, then written to a temp file and renamed
        write_html(args.html, rep, data)
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
