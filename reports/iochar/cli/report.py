"""iochar-report: job summary and tuning advice as text, JSON or one HTML page."""

from __future__ import annotations

import json
import os
import sys

from .. import advice, callsites, html
from .. import flags as F
from .. import summary as S
from ..jobreport import build, load, load_log
from ..log import LogError, open_job
from ..safetext import TRUNCATED_NOTE
from . import jobs as cj
from .common import ArgParser, escape, run_cli, sanitize, when, write_atomic
from .version import add_version


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
    if s.get("unknown"):
        lines.append("  unknown " + ", ".join(f"{c} in {n:,} record(s)"
                                              for c, n in s["unknown"].items())
                     + ": not known to the log (-1, a negative time), left out of the totals")
    for i, f in enumerate(s["top_files"][:3]):
        lines.append(f"  {'top' if i == 0 else '':<7} {S.human_time(f['time']):>9}  {f['path']}"
                     + (TRUNCATED_NOTE if f.get("truncated") else "")
                     + (" (shared)" if f["shared"] else ""))
    return lines


def text(rep: dict, verbose: bool = False) -> str:
    job = rep["job"]
    out = [f"iochar: {job.get('cmdline') or job.get('exe', '?')}",
           (f"  {job.get('nprocs', '?')} processes on {job.get('nnodes', '?')} node(s), run time "
           f"{S.human_time(job.get('run_time'))} ({when(job.get('start_time'))} -> "
           f"{when(job.get('end_time'))}), job {job.get('jobid', '?')}")]
    if job.get("interpreter"):  # an interpreter's script or module: the program's name
        out.append(f"  program {os.path.basename(str(job.get('program')))} "
                   f"({os.path.basename(str(job['interpreter']))})")
    out += [f"  PARTIAL: {why}" for why in F.reasons(job)]
    if job.get("truncated_paths"):
        out.append(f"  TRUNCATED: {job['truncated_paths']} file name(s) longer than the path "
                   "limit were recorded cut (shown with '[truncated]')")
    out += [f"  WARNING: {w}" for w in html.job_warnings(job)]
    for name, s in rep["modules"].items():
        out += [""] + _module_lines(name, s)
    out += ["", f"advice ({len(rep['advice'])})" if rep["advice"] else "advice: none"]
    for a in rep["advice"]:
        out += [f"  {a.get('rank', '')}. [{a['severity'].upper()}] {a['id']}: {a['message']}"
                + html.cost_note(a.get("cost") or {}),
                f"      -> {a['recommendation']}"]
        if verbose and a.get("example"):
            out += [f"         e.g. {line}" for line in a["example"].splitlines()]
        out += [f"      explains {f['id']}: {f['message']}" for f in a.get("folded") or []]
        if a.get("where"):
            out.append(f"      at {a['where']}")
    out += callsites.text_lines(rep)
    # every line escaped once, here: names, messages and JOB strings come from the log
    return "\n".join(escape(line) for line in out) + "\n"


def _many(args, cfg) -> int:
    """Logs of several jobs (or --list/--job): the job list, then each job's report."""
    jobs, bad = cj.find(args.logs, args.job)
    rows, reps, datas, skipped = [], [], [], []
    for j in jobs:
        try:
            log = open_job(j)
            data = load_log(log)
            rep = build(data, cfg)
        except LogError as e:
            bad.append((j.files[0], str(e)))
            continue
        skipped += getattr(log, "unreadable", [])  # named in the report too
        rows.append(cj.listing(j, rep))
        reps.append(rep)
        datas.append(data)
    if not reps:
        raise cj.nothing_read(bad)
    cj.warn_bad("iochar-report", bad + skipped)
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
        sys.stdout.write(json.dumps(sanitize(doc), indent=1, default=S.json_value) + "\n")
    else:
        sys.stdout.write(cj.table(rows))  # fields escaped by jobs.table/banner
        if not args.list:
            for r, rep in zip(rows, reps):
                sys.stdout.write("\n" + cj.banner(r) + text(rep, args.verbose))
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
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show each remedy's example (code line, command, hint)")
    p.add_argument("--list", action="store_true", help="only list the jobs in the logs given")
    cj.add_job_arg(p)
    add_version(p)
    args = p.parse_args(argv)
    cfg = advice.config.load(args.config)
    if not cj.single_file(args.logs) or args.job is not None or args.list:
        return _many(args, cfg)
    data = load(args.logs)
    rep = build(data, cfg)
    out = json.dumps(sanitize(rep), indent=1, allow_nan=False) + "\n" if args.json else \
        text(rep, args.verbose)
    if args.html:  # rendered whole first, then written to a temp file and renamed
        write_html(args.html, rep, data)
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
