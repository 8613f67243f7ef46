"""iochar-top: what the jobs on this node are doing now, from their live files.

One line per job (scheduler id, user, program, processes here, ranks): read and write
MiB/s, operations/s, the share of the interval its processes spent in I/O, totals so far;
refreshed every --interval seconds, on a terminal with rich, as plain text in a pipe;
--json prints one JSON document a line per sample (iochar/livemonitor.py, iochar/liveview.py).
"""

from __future__ import annotations

import json
import os
import pwd
import sys
import time

from .. import livedir, livemonitor
from .common import ArgParser, CliError, escape, run_cli, sanitize
from .version import add_version

# column: (heading, JSON key, format)
COLUMNS = {
    "job": ("JOB", "job", "s"), "user": ("USER", "user", "s"), "program": ("PROGRAM", "program", "s"),
    "procs": ("PROCS", "processes", "d"), "ranks": ("RANKS", "ranks", "d"),
    "state": ("STATE", "state", "s"),
    "read": ("READ MiB/s", "read_bytes_per_s", "mib"), "write": ("WRITE MiB/s", "write_bytes_per_s", "mib"),
    "reads": ("READS/s", "reads_per_s", "f"), "writes": ("WRITES/s", "writes_per_s", "f"),
    "meta": ("META/s", "meta_ops_per_s", "f"), "io": ("IO%", "io_share", "pct"),
    "read_total": ("READ", "bytes_read", "bytes"), "write_total": ("WRITTEN", "bytes_written", "bytes"),
    "meta_total": ("META OPS", "meta_ops", "d"), "io_time": ("IO s", "io_time", "f"),
}
DEFAULT_SORT = "write"


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def cell(v, fmt: str) -> str:
    if v is None:
        return "-"
    if fmt == "mib":
        return f"{v / 1048576:.2f}"
    if fmt == "f":
        return f"{v:.1f}"
    if fmt == "pct":
        return f"{100 * v:.0f}"
    if fmt == "bytes":
        return _human(v)
    if fmt == "d":
        return str(int(v))
    return escape(v)


def state_text(d: dict) -> str:
    s = d["state"]
    if d.get("killed") and s == "running":
        return f"running, {d['killed']} killed"
    return s


def _interval(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise CliError(f"--interval: not a number of seconds: {s!r}") from None
    if not 0.05 <= v <= 86400:
        raise CliError(f"--interval: {s} seconds is out of range (0.05 to 86400)")
    return v


def _uid_of(user: str) -> int:
    if user.isdigit():
        return int(user)
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise CliError(f"--user: no user {user!r} on this node") from None


def parser() -> ArgParser:
    p = ArgParser(prog="iochar-top", description="Live I/O of the jobs running on this node "
                  "(their live files: docs/log-format.md).")
    add_version(p)
    p.add_argument("--once", action="store_true", help="print one sample and exit")
    p.add_argument("--json", action="store_true", help="one JSON document per sample, one a line")
    p.add_argument("--interval", metavar="S", help="seconds between samples (default 2); with "
                   "--once: rates over S seconds (default: since each job started)")
    p.add_argument("--livedir", metavar="DIR", help="the live directory (default: IOCHAR_LIVEDIR "
                   "as the runtime sees it, else /dev/shm)")
    p.add_argument("--user", metavar="U", help="only this user's jobs (name or uid)")
    p.add_argument("--job", metavar="ID", help="only this job (scheduler id)")
    p.add_argument("--sort", metavar="COL", default=DEFAULT_SORT,
                   help=f"sort by column, largest first: {', '.join(COLUMNS)} (default {DEFAULT_SORT})")
    p.add_argument("--files", metavar="N", type=int, default=0,
                   help="also each job's N busiest files (module, file system, rates)")
    p.add_argument("--count", metavar="N", type=int, default=0,
                   help="stop after N samples (0: until interrupted)")
    return p


def document(views: list, args, now: float) -> dict:
    jobs = [v.as_json() for v in views if _wanted(v, args)]
    key = COLUMNS[args.sort][1]
    text = COLUMNS[args.sort][2] == "s"
    jobs.sort(key=lambda d: (str(d[key]) if text else -(d[key] or 0), d["job"], d["program"]))
    return {"time": now, "jobs": sanitize(jobs)}


def _wanted(v, args) -> bool:
    if v.state == "ended":
        return False
    if args.job is not None and v.job.jobid != args.job:
        return False
    if args.uid is not None and v.job.key[0] != args.uid:
        return False
    return True


def cells(doc: dict) -> dict:
    """Column -> its heading and the text of each job's cell (plain, fitting, rich_table)."""
    return {c: [head] + [state_text(d) if c == "state" else cell(d[key], fmt)
                         for d in doc["jobs"]]
            for c, (head, key, fmt) in COLUMNS.items()}


def plain(doc: dict, files: bool) -> str:
    """The sample as a plain text table (a pipe, a file)."""
    cols = list(cells(doc).values())
    rows = [list(r) for r in zip(*cols)]
    widths = [max(len(x) for x in col) for col in cols]
    out = [f"iochar-top  {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(doc['time']))}  "
           f"{len(doc['jobs'])} job(s)"]
    for r in rows:
        out.append("  ".join(v.ljust(w) if i < 3 else v.rjust(w)
                             for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    if files:
        for d in doc["jobs"]:
            for f in d.get("files", []):
                out.append(f"  {escape(d['job'])} {f['module']:<6} {escape(f['fs'])}  "
                           f"r {f['read_bytes_per_s'] / 1048576:.2f} MiB/s  "
                           f"w {f['write_bytes_per_s'] / 1048576:.2f} MiB/s  {escape(f['path'])}")
    return "\n".join(out) + "\n"


# the columns a narrow terminal keeps, first to last (a sort column is always kept)
PRIORITY = ("job", "user", "program", "state", "write", "read", "io", "meta", "procs",
            "writes", "reads", "write_total", "read_total", "ranks", "meta_total", "io_time")


def fitting(texts: dict, width: int, sort: str) -> list:
    """The columns that fit a terminal `width` wide, in table order: by PRIORITY, each as
    wide as its heading or widest cell of `texts` (cells(), and its border and padding)."""
    need = {c: max(len(x) for x in col) + 3 for c, col in texts.items()}
    keep, used = {sort}, need[sort] + 1
    for c in PRIORITY:
        if c not in keep and used + need[c] <= width:
            keep.add(c)
            used += need[c]
    return [c for c in COLUMNS if c in keep]


def rich_table(doc: dict, files: bool, width: int = 200, sort: str = DEFAULT_SORT):
    """The sample for a terminal: the jobs' table (the columns that fit), then with
    --files a table of each job's busiest files."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    texts = cells(doc)
    cols = fitting(texts, width, sort)
    t = Table(title=f"iochar-top  {time.strftime('%H:%M:%S', time.localtime(doc['time']))}  "
              f"{len(doc['jobs'])} job(s)", title_justify="left", expand=False)
    for c in cols:
        t.add_column(COLUMNS[c][0], justify="left" if c in ("job", "user", "program", "state")
                     else "right", no_wrap=True, overflow="ellipsis")
    for i, d in enumerate(doc["jobs"], 1):
        t.add_row(*[Text(texts[c][i], style="red" if c == "state" and d.get("killed") else "")
                    for c in cols])
    if not files or not any(d.get("files") for d in doc["jobs"]):
        return t
    ft = Table(title="busiest files", title_justify="left", expand=False)
    for head, right in (("JOB", False), ("MODULE", False), ("FS", False),
                        ("READ MiB/s", True), ("WRITE MiB/s", True), ("PATH", False)):
        ft.add_column(head, justify="right" if right else "left", no_wrap=True,
                      overflow="ellipsis")
    for d in doc["jobs"]:
        for f in d.get("files", []):
            ft.add_row(Text(escape(d["job"])), Text(f["module"]), Text(escape(f["fs"])),
                       Text(cell(f["read_bytes_per_s"], "mib")),
                       Text(cell(f["write_bytes_per_s"], "mib")), Text(escape(f["path"])))
    return Group(t, ft)


def main_(argv) -> int:
    args = parser().parse_args(argv)
    if args.sort not in COLUMNS:
        raise CliError(f"--sort: no column {args.sort!r} (columns: {', '.join(COLUMNS)})")
    if args.files < 0 or args.files > 1000 or args.count < 0:
        raise CliError("--files and --count take a number >= 0 (--files at most 1000)")
    interval = _interval(args.interval) if args.interval is not None else None
    args.uid = _uid_of(args.user) if args.user is not None else None
    top = args.livedir or str(livedir.live_dir())
    if args.livedir and not os.path.isdir(top):  # a DIR given is a DIR meant: a typo says so
        raise CliError(f"live directory {top}: no such directory")
    # (the default one is made by the node's first tooled process: none yet, no jobs)
    if os.geteuid() != 0 and args.uid is not None and args.uid != os.geteuid():
        raise CliError("--user: only root sees other users' jobs")
    mon = livemonitor.Monitor(top, None if args.uid is None else {args.uid})
    said: set = set()
    tty = sys.stdout.isatty() and not args.json
    try:
        if args.once:
            views = mon.step(args.files)
            if interval is not None:  # rates over the interval given
                time.sleep(interval)
                views = mon.step(args.files)
            _emit(mon, views, args, tty, said, None)
            return 0
        return _loop(mon, args, interval or 2.0, tty, said)
    finally:
        mon.close()


def _problems(mon, said: set):
    for line in mon.problems:
        if line not in said:
            said.add(line)
            print(f"iochar-top: skipped: {escape(line)}", file=sys.stderr)


def _emit(mon, views, args, tty, said, live_display):
    _problems(mon, said)
    doc = document(views, args, time.time())
    if args.json:
        if mon.problems:
            doc["skipped"] = [escape(x) for x in mon.problems]
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()
    elif live_display is not None:
        live_display.update(rich_table(doc, args.files > 0, live_display.console.width,
                                       args.sort))
    elif tty:
        from rich.console import Console
        con = Console()
        con.print(rich_table(doc, args.files > 0, con.width, args.sort))
    else:
        sys.stdout.write(plain(doc, args.files > 0))
        sys.stdout.flush()


def _loop(mon, args, interval: float, tty: bool, said: set) -> int:
    n = 0
    display = None
    if tty:
        from rich.live import Live
        display = Live(auto_refresh=False, screen=False)
        display.start()
    try:
        while True:
            views = mon.step(args.files)
            _emit(mon, views, args, tty, said, display)
            if display is not None:
                display.refresh()
            n += 1
            if args.count and n >= args.count:
                return 0
            time.sleep(interval)
    finally:
        if display is not None:
            display.stop()


def main(argv=None) -> int:
    return run_cli("iochar-top", main_, argv)


if __name__ == "__main__":
    sys.exit(main())
