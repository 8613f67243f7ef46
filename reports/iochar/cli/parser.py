"""iochar-parser: every counter of every record, one per line (like darshan-parser)."""

from __future__ import annotations

import sys

import numpy as np

from ..log import LogError
from ..log import open as open_log
from .common import ArgParser, escape, run_cli, show_path

CHUNK = 4096  # rows formatted at a time: bounded memory, and `| head` stops early


def _fmt(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _lines(log, modules):
    yield "# iochar log: " + " ".join(map(escape, log.files))
    for k, v in log.job.items():
        yield f"# {escape(k)}: {escape(_fmt(v))}"
    yield "# modules: " + " ".join(log.modules)
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
                    vals[:, cols] = part[[names[j] for j in cols]].to_numpy().astype(str)
            out = []
            for rank, rid, path, row in zip(part["rank"].tolist(), part["record_id"].tolist(),
                                            part["path"].tolist(), vals.tolist()):
                # names are escaped: one record's lines can never forge another's
                pre, post = f"{mod} {rank} {rid} ", f" {show_path(path, rid in cut)}\n"
                out.append("".join(f"{pre}{n} {v}{post}" for n, v in zip(names, row)))
            yield "".join(out).rstrip("\n")


def main(argv=None) -> int:
    return run_cli("iochar-parser", _main, argv)


def _main(argv) -> int:
    ap = ArgParser(prog="iochar-parser",
                   description="Print every counter of every record of a log.")
    ap.add_argument("logs", nargs="+", metavar="LOG",
                    help="a log, several per-rank logs of one job, or a directory of them")
    ap.add_argument("--module", action="append", metavar="M",
                    help="only this module (repeatable)")
    ap.add_argument("--recover", action="store_true",
                    help="write the log each live file (.*.live) holds, print its name")
    ap.add_argument("-o", "--output", metavar="OUT",
                    help="with --recover and one live file: write the log there")
    args = ap.parse_args(argv)
    if args.recover:
        from ..live import recover
        if args.output and len(args.logs) > 1:
            raise LogError("-o takes one live file")
        for f in args.logs:
            print(escape(recover(f, args.output)))
        return 0
    log = open_log(args.logs if len(args.logs) > 1 else args.logs[0])
    modules = args.module or log.modules
    for m in modules:
        if m not in log.modules:
            raise LogError(f"module {m} not in log (modules: {' '.join(log.modules) or 'none'})")
        log.records(m)  # read (and check) everything before printing anything
    for line in _lines(log, modules):
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
