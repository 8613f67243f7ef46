"""iochar-parser: every counter of every record, one per line (like darshan-parser)."""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from .. import parser_views as V
from ..anonymize import anonymize, load_key
from ..darshan_export import export, write_new
from ..live import recover
from ..livedir import recover_node
from ..log import LogError, open_job
from ..log import open as open_log
from . import jobs as cj
from .common import ArgParser, escape, run_cli, show_path
from .version import add_version

CHUNK = 4096  # rows formatted at a time: bounded memory, and `| head` stops early


def _fmt(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _lines(log, modules):
    yield from _header(log)
    for m in log.mounts.itertuples(index=False):
        yield f"# mount: {escape(m.mount_point)} {escape(m.fs_type)} {m.block_size}"
    cut = getattr(log, "truncated_ids", set())
    for mod in modules:
        schema = log.schema(mod)
        df = log.records(mod)
        yield ""
        yield f"# module {mod}: {len(df)} records, {len(schema)} counters, schema version " \
              f"{log.schema_version(mod)}"
        yield "#<module> <rank> <record id> <counter> <value> <file name>"
        names = [n for n, _ in schema]
        # one conversion per dtype block, not per counter; numpy formats float64 as
        # the shortest repr that round-trips
        kinds = [dt.kind for dt in df.dtypes[names]] if names else []
        blocks = [[j for j, k in enumerate(kinds) if (k == "f") == f] for f in (False, True)]
        for i in range(0, len(df), CHUNK):
            part = df.iloc[i:i + CHUNK]
            vals = np.empty((len(part), len(names)), dtype=object)
            for cols in blocks:
                if cols:
                    block = part[[names[j] for j in cols]].to_numpy()
                    text = block.astype(str)
                    if block.dtype.kind == "f":  # NaN: a value the log did not know
                        text[np.isnan(block)] = "unknown"
                    vals[:, cols] = text
            out = []
            for rank, rid, path, row in zip(part["rank"].tolist(), part["record_id"].tolist(),
                                            part["path"].tolist(), vals.tolist()):
                # names are escaped: one record's lines can never forge another's
                pre, post = f"{mod} {rank} {rid} ", f" {show_path(path, rid in cut)}\n"
                out.append("".join(f"{pre}{n} {v}{post}" for n, v in zip(names, row)))
            yield "".join(out).rstrip("\n")

def _header(log):
    yield "# iochar log: " + " ".join(map(escape, log.files))
    for k, v in log.job.items():
        yield f"# {escape(k)}: {escape(_fmt(v))}"
    yield "# modules: " + " ".join(log.modules)


def _views(log, modules, args):
    """--total, --file, --perf for each module, on the filtered records."""
    yield from _header(log)
    filtered = args.rank is not None or args.path is not None
    for mod in modules:
        df = V.filter_records(log.records(mod), args.rank, args.path)
        if args.total:
            yield ""
            yield f"# module {mod}: totals over {len(df)} records"
            yield from map(escape, V.total_lines(mod, df, log.schema(mod)))
        if args.file:
            yield ""
            yield f"# module {mod}: per-file summary"
            yield from map(escape, V.file_lines(mod, df))
        if args.perf:
            yield ""
            yield f"# module {mod}: performance"
            # the per-rank totals cover every record: with a filter, estimate from records
            yield from map(escape, V.perf_lines(mod, df, log.job,
                                                None if filtered else log.ranks(mod)))


def _trace(log, modules, args, jid):
    """--trace: the log's trace (or a Darshan log's DXT), one access a line."""
    df, dropped, source = V.trace_of(log)
    if df is None:
        if not args.json:
            yield from _header(log)  # (the job's keys: partial, unreadable logs...)
            yield ("# no trace in this log (iochar: run with IOCHAR_TRACE=1; Darshan: "
                   "DXT_POSIX/DXT_MPIIO records, DXT_ENABLE_IO_TRACE=1)")
        return
    df = V.filter_trace(df, args.module, args.rank, args.path)
    if args.json:
        for chunk in V.trace_lines(df, escape, as_json=True):
            if jid is not None and chunk:  # several jobs: each object says whose
                chunk = "\n".join(ln[:-1] + f',"job":{json.dumps(escape(jid))}}}'
                                  for ln in chunk.split("\n"))
            if chunk:
                yield chunk
        return
    yield from _header(log)
    yield (f"# trace ({source}): {len(df)} accesses"
           + (f", {dropped} calls not kept (IOCHAR_TRACE_MEMORY full)" if dropped else ""))
    yield V.TRACE_HEAD
    yield from (c for c in V.trace_lines(df, escape) if c)


def _dump(log, modules, args):
    if args.total or args.file or args.perf:
        return _views(log, modules, args)
    if args.rank is not None or args.path is not None:
        return _lines(_Filtered(log, args.rank, args.path), modules)
    return _lines(log, modules)


class _Filtered:
    """A log whose records() keeps only the rows that pass --rank/--path."""

    def __init__(self, log, rank, path):
        self._log, self._rank, self._path = log, rank, path

    def __getattr__(self, name):
        return getattr(self._log, name)

    def records(self, mod):
        return V.filter_records(self._log.records(mod), self._rank, self._path)


def _recover_node(args) -> int:
    """The epilogue (iochar/livedir.py): the logs written, one a line; each file it could
    not recover, one line on stderr (exit 2; the file stays for another try)."""
    if not args.recover or args.logs or args.output:
        raise LogError("--livedir goes with --recover and no LOG or -o")
    written, problems = recover_node(args.livedir, args.into, args.jobid)
    for p in written:
        sys.stdout.write(escape(str(p)) + "\n")
    sys.stdout.flush()
    for msg in problems:
        sys.stderr.write(f"iochar-parser: {escape(msg)}\n")
    return 2 if problems else 0


def main(argv=None) -> int:
    return run_cli("iochar-parser", _main, argv)


def _main(argv) -> int:
    ap = ArgParser(prog="iochar-parser",
                   description="Print every counter of every record of a log.")
    ap.add_argument("logs", nargs="*", metavar="LOG",
                    help="a log, per-rank logs of one job, or a directory; logs of several "
                         "jobs are printed job by job")
    ap.add_argument("--module", action="append", metavar="M",
                    help="only this module (repeatable)")
    ap.add_argument("--rank", type=int, metavar="R",
                    help="only records of rank R (-1: records reduced over several ranks)")
    ap.add_argument("--path", metavar="PATTERN",
                    help="only records whose path contains PATTERN (a glob if it has * ? [)")
    ap.add_argument("--total", action="store_true",
                    help="per module, every counter combined over the records by its op")
    ap.add_argument("--file", action="store_true",
                    help="per-file summary: ranks, bytes, read/write type, unique/shared")
    ap.add_argument("--perf", action="store_true",
                    help="per module performance estimates (docs/parser.md)")
    ap.add_argument("--trace", action="store_true",
                    help="the trace (IOCHAR_TRACE=1), or a Darshan log's DXT records, one "
                         "access a line: rank, module, op, offset, length, start, end, "
                         "thread, record id, file")
    ap.add_argument("--json", action="store_true",
                    help="with --trace: one JSON object per access and line (JSON Lines)")
    cj.add_job_arg(ap)
    add_version(ap)
    ap.add_argument("--recover", action="store_true",
                    help="write the log each live file (.*.live) holds, print its name")
    ap.add_argument("-o", "--output", metavar="OUT",
                    help="with --recover and one live file, or --anonymize: write the log there")
    ap.add_argument("--to-darshan", metavar="OUT",
                    help="write the job as a Darshan log (format 3.41) at OUT (never "
                         "replacing a file); see docs/log-format.md")
    ap.add_argument("--anonymize", action="store_true",
                    help="write the job as a log whose names (paths, user, host, program, "
                         "arguments) are keyed hashes, numbers kept, at -o OUT")
    ap.add_argument("--key", metavar="FILE",
                    help="with --anonymize: the key (made, 0600, when missing); logs "
                         "anonymized with one key share hashed names. Default: a new key "
                         "each run")
    ap.add_argument("--livedir", metavar="D",
                    help="with --recover, a job epilogue: every live file left in live "
                         "directory D becomes a log in the tree under --into, then goes")
    ap.add_argument("--into", metavar="ROOT",
                    help="with --livedir: the log root (default: the configured IOCHAR_LOGROOT)")
    ap.add_argument("--jobid", metavar="ID", help="with --livedir: only batch job ID's files")
    args = ap.parse_args(argv)
    bad = []
    if args.livedir is not None:
        return _recover_node(args)
    if not args.logs:
        ap.error("a LOG is needed (or --recover --livedir D)")
    if args.json and not args.trace:
        ap.error("--json goes with --trace")
    if args.trace and (args.total or args.file or args.perf):
        ap.error("--trace prints on its own: not with --total, --file or --perf")
    if args.key and not args.anonymize:
        ap.error("--key goes with --anonymize")
    if args.anonymize:
        if not args.output or args.recover or args.to_darshan or args.trace:
            ap.error("--anonymize takes -o OUT (and not --recover, --to-darshan, --trace)")
        key = load_key(args.key) if args.key else os.urandom(32)
        log = open_log(args.logs[0] if len(args.logs) == 1 else args.logs, job=args.job)
        print(escape(str(write_new(args.output, anonymize(log, key)))))
        return 0
    if args.to_darshan:
        log = open_log(args.logs[0] if len(args.logs) == 1 else args.logs, job=args.job)
        print(escape(str(export(log, args.to_darshan))))
        return 0
    if args.recover:
        if args.output and len(args.logs) > 1:
            raise LogError("-o takes one live file")
        for f in args.logs:
            print(escape(recover(f, args.output)))
        return 0
    if cj.single_file(args.logs) and args.job is None:
        logs = [(None, open_log(args.logs[0]))]
    else:
        jobs, bad = cj.find(args.logs, args.job)
        logs = [(j.id if len(jobs) > 1 else None, j) for j in jobs]
    skipped, shown = [], 0
    for jid, log in logs:
        if not hasattr(log, "modules"):  # a job: read one at a time
            try:
                log = open_job(log)
            except LogError as e:
                if jid is None:  # the only job: its error is the command's
                    raise
                bad.append((log.files[0], str(e)))
                continue
            skipped += getattr(log, "unreadable", [])  # named in the header too
        if jid is not None and not args.json:  # several jobs: each introduced by its id
            sys.stdout.write(f"# job: {escape(jid)}\n")
        shown += 1
        if args.trace:
            for line in _trace(log, args.module, args, jid):
                sys.stdout.write(line + "\n")
            continue
        modules = args.module or log.modules
        for m in modules:
            if m not in log.modules:
                raise LogError(f"module {m} not in log (modules: "
                               f"{' '.join(log.modules) or 'none'})")
            log.records(m)  # read (and check) everything before printing anything
        for line in _dump(log, modules, args):
            sys.stdout.write(line + "\n")
    sys.stdout.flush()
    if not shown:  # nothing printed: one error, not a warning per job
        raise cj.nothing_read(bad)
    cj.warn_bad("iochar-parser", bad + skipped)
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
