"""iochar-db: many logs in one embedded store (Parquet + DuckDB); ingest, summary, sql,
history, the site page (report --html), export."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .. import __version__, advice, compare, safetext
from .. import summary as S
from ..cli.common import ArgParser, run_cli
from . import queries
from .export import export_darshan
from .ingest import ingest
from .store import Store, StoreError

PROG = "iochar-db"


def escape(s) -> str:
    """A stored value as safe text (the one escaper, iochar.safetext); NULL as "-"."""
    return "-" if s is None else safetext.escape(s)


def _cmd_ingest(args) -> int:
    store = Store(args.store, create=True)
    cfg = advice.config.load(args.config)
    st = ingest(store, args.paths, jobs=args.jobs, scheduler=args.scheduler,
                dask_workers=args.workers, progress=True if args.progress else None, cfg=cfg)
    for line in st.error_lines[:20]:
        print(f"{PROG}: skipped bad log: {escape(line)}", file=sys.stderr)
    if len(st.error_lines) > 20:
        print(f"{PROG}: ... and {len(st.error_lines) - 20} more (see the errors table)",
              file=sys.stderr)
    rate = st.rows / st.seconds if st.seconds else 0.0
    print(f"ingested {st.ingested} logs ({st.rows:,} records, {rate:,.0f} rows/s) in "
          f"{st.seconds:.1f} s; {st.errors} unreadable (errors table); {st.skipped} already "
          f"stored; {st.duplicates} duplicates")
    return 0


def _when(t) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(t))) if t else "-"


def _summary_text(s: dict) -> str:
    t = s["totals"]
    out = [f"site summary: {t['jobs']:,} jobs, {t['users']:,} users, {t['programs']:,} programs "
           f"({_when(t['first_start'])} -> {_when(t['last_end'])} UTC); {t['errors']:,} "
           "unreadable logs",
           f"  moved {S.human_bytes(t['bytes_read'])} read, {S.human_bytes(t['bytes_written'])} "
           f"written; I/O time {S.human_time(t['io_time'])} (slowest ranks, summed over jobs)"]
    w = s.get("window") or {}
    if w.get("since") is not None or w.get("until") is not None:
        out.append(f"  window: jobs started from {_when(w.get('since')) if w.get('since') else '-'}"
                   f" until before {_when(w.get('until')) if w.get('until') else '-'} UTC")
    sh = s["shares"]
    out.append(f"  POSIX: {100 * sh['small']:.1f}% of {sh['posix_ops']:,} accesses < 1 MiB, "
               f"{100 * sh['random']:.1f}% random; metadata {100 * sh['metadata']:.1f}% of I/O time")
    out += ["", "top jobs by I/O time"]
    for r in s["top_jobs"]:
        out.append(f"  {S.human_time(r['io_time']):>10} {S.human_bytes(r['bytes']):>10}  "
                   f"{r['nprocs']:>5} procs  {escape(r['user'])}  {escape(r['exe'])}  "
                   f"job {escape(r['jobid'])}  {escape(r['log_path'])}")
    for key, title in (("top_users", "top users by I/O time"),
                       ("top_programs", "top programs by I/O time"),
                       ("top_programs_by_bytes", "top programs by bytes")):
        out += ["", title]
        for r in s[key]:
            out.append(f"  {S.human_time(r['io_time']):>10} {S.human_bytes(r['bytes']):>10} "
                       f"{r['jobs']:>7,} jobs  {escape(r['name'])}")
    out += ["", "most common findings"]
    for r in s["findings"]:
        out.append(f"  {r['id']:<20} {r['jobs']:>7,} jobs ({r['high']:,} high)")
    if s["errors"]:
        out += ["", "unreadable logs (first ones)"]
        out += [f"  {escape(r['log_path'])}: {escape(r['reason'])}" for r in s["errors"]]
    return "\n".join(out) + "\n"


def _cmd_summary(args) -> int:
    s = queries.summary(Store(args.store).connect(), args.top, args.since, args.until)
    sys.stdout.write(json.dumps(s, indent=1, default=S.json_value) + "\n" if args.json
                     else _summary_text(s))
    return 0


def _cmd_sql(args) -> int:
    import duckdb  # heavy (tens of ms): imported by the one command that queries
    con = Store(args.store).connect()
    try:
        cur = con.execute(args.query)
    except duckdb.Error as e:
        raise StoreError(f"query failed: {str(e).splitlines()[0]}") from None
    if cur.description is None:
        return 0
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    if args.json:
        print(json.dumps([dict(zip(names, r)) for r in rows], default=str, indent=1))
    else:
        print("\t".join(escape(n) for n in names))
        for r in rows:
            print("\t".join(escape(v) for v in r))
    return 0


def _cmd_history(args) -> int:
    con = Store(args.store).connect()
    h = queries.history(con, args.exe, args.threshold, args.time_threshold, args.since,
                        args.until)
    if not h["runs"]:
        raise StoreError(f"no runs of {escape(args.exe)!s} in the store"
                         + (" in that window" if args.since or args.until else ""))
    if args.plot:
        queries.plot_history(h, args.plot)
    if args.json:
        print(json.dumps(h, indent=1, default=S.json_value))
    else:
        out = [f"history of {escape(args.exe)}: {len(h['runs'])} runs, {h['regressions']} "
               "regressed (iochar-diff rules, each run against the one before)",
               f"  {'start (UTC)':<16} {'job':>10} {'procs':>5} {'I/O time':>10} "
               f"{'bytes':>10} {'ops':>10}  verdict"]
        for r in h["runs"]:
            out.append(f"  {_when(r['start_time']):<16} {escape(r['jobid']):>10} {r['nprocs']:>5} "
                       f"{S.human_time(r['io_time']):>10} "
                       f"{S.human_bytes(r['bytes_read'] + r['bytes_written']):>10} "
                       f"{r['reads'] + r['writes']:>10,}  {r['verdict']}"
                       + (": " + "; ".join(r["regressions"]) if r["regressions"] else ""))
        sys.stdout.write("\n".join(out) + "\n")
    return 1 if args.fail_on_regression and h["regressions"] else 0


def _cmd_report(args) -> int:
    from . import site  # matplotlib and Jinja2: only the command that draws loads them
    d = site.write(Store(args.store).connect(), args.html, args.since, args.until, args.top,
                   args.pages, store=str(args.store))
    t = d["totals"]
    print(f"wrote {escape(args.html)}: {t['jobs']:,} jobs, {t['findings']:,} findings, "
          f"{d['high_total']:,} jobs with HIGH findings"
          + (f"; {len([r for r in d['high_jobs'] if 'page' not in r])} job pages in "
             f"{escape(args.pages)}" if args.pages else ""))
    return 0


def _cmd_export(args) -> int:
    res = export_darshan(Store(args.store), args.darshan)
    for path, why in res.failed:
        print(f"{PROG}: not exported: {escape(path)}: {escape(why)}", file=sys.stderr)
    print(f"exported {len(res.written)} logs to {escape(args.darshan)}; "
          f"{len(res.existing)} already there (not overwritten); {len(res.failed)} failed; "
          f"{res.darshan} were Darshan logs")
    return 1 if res.failed else 0


def _positive(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {s!r}")
    return v


def _since(s: str) -> float:
    try:
        return queries.parse_when(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _until(s: str) -> float:
    try:
        return queries.parse_when(s, end=True)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


WINDOW_HELP = ("YYYY-MM-DD (a UTC day) or an ISO time (UTC unless it names an offset); "
               "jobs are picked by their start")


def _window(p) -> None:
    p.add_argument("--since", type=_since, metavar="DATE",
                   help="only jobs started at or after DATE: " + WINDOW_HELP)
    p.add_argument("--until", type=_until, metavar="DATE",
                   help="only jobs started before DATE's end (a day counts whole) or "
                        "before the time given")


def parser() -> ArgParser:
    p = ArgParser(prog=PROG, description="Many iochar (and Darshan) logs in one embedded "
                  "store: Parquet files queried with DuckDB.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    p.add_argument("--store", required=True, metavar="DIR", help="the store directory")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           parser_class=ArgParser)
    i = sub.add_parser("ingest", help="add logs and directories of logs to the store")
    i.add_argument("paths", nargs="+", metavar="PATH", help="logs, or directories searched "
                   "recursively for *.iochar and *.darshan")
    i.add_argument("--jobs", type=_positive, metavar="N",
                   help="parsing processes of the embedded path (default: one per core)")
    i.add_argument("--scheduler", metavar="ADDRESS",
                   help="parse on this Dask distributed scheduler (tcp://host:8786)")
    i.add_argument("--workers", type=_positive, metavar="N",
                   help="parse on a local Dask cluster of N worker processes")
    i.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    i.add_argument("--config", metavar="TOML", help="advice thresholds, as iochar-report")
    s = sub.add_parser("summary", help="the site view: top jobs, users, programs, findings")
    s.add_argument("--json", action="store_true", help="print it as JSON")
    s.add_argument("--top", type=_positive, default=queries.TOP, metavar="N",
                   help=f"rows per list (default {queries.TOP})")
    _window(s)
    r = sub.add_parser("report", help="the site page: one self-contained HTML file")
    r.add_argument("--html", required=True, metavar="OUT", help="write the page here")
    r.add_argument("--pages", metavar="DIR", help="also render the job page of each job "
                   "with HIGH findings into DIR (from its log), linked from the page")
    r.add_argument("--top", type=_positive, default=queries.TOP, metavar="N",
                   help=f"rows per list (default {queries.TOP}; {queries.HIGH_ROWS} x N jobs "
                        "with HIGH findings)")
    _window(r)
    q = sub.add_parser("sql", help="run a DuckDB query over the store's tables")
    q.add_argument("query", metavar="QUERY")
    q.add_argument("--json", action="store_true", help="rows as a JSON list of objects")
    h = sub.add_parser("history", help="one program's runs over time, regressions flagged")
    h.add_argument("--exe", required=True, metavar="NAME", help="program path or name")
    h.add_argument("--plot", metavar="FILE", help="write the trend plot (PNG, SVG, PDF)")
    h.add_argument("--json", action="store_true", help="print the runs as JSON")
    h.add_argument("--threshold", type=float, default=10.0, metavar="PCT",
                   help="as iochar-diff --threshold (default 10)")
    h.add_argument("--time-threshold", type=float, default=compare.TIME_THRESHOLD,
                   metavar="PCT", help="as iochar-diff --time-threshold")
    h.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when a run regressed")
    _window(h)
    e = sub.add_parser("export", help="write the stored jobs' logs in another format")
    e.add_argument("--darshan", required=True, metavar="OUTDIR",
                   help="one Darshan log (format 3.41) per iochar job, read again from the "
                        "logs where they were ingested")
    return p


COMMANDS = {"ingest": _cmd_ingest, "summary": _cmd_summary, "sql": _cmd_sql,
            "history": _cmd_history, "report": _cmd_report, "export": _cmd_export}


def main(argv=None) -> int:
    return run_cli(PROG, _main, argv)  # anything unexpected: one line, exit 2


def _main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (StoreError, advice.ConfigError, RuntimeError) as e:
        msg = str(e)
    except FileNotFoundError as e:
        msg = f"{escape(e.args[0] if e.args else e)}: no such file or directory"
    except OSError as e:
        msg = f"{escape(e.filename)}: {e.strerror}" if e.filename else str(e)
    except KeyboardInterrupt:
        msg = "interrupted"
    print(f"{PROG}: error: {msg.splitlines()[0] if msg else 'failed'}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
