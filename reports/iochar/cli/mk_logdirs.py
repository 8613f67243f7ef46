"""iochar-mk-logdirs: make every day directory of a year in a log tree (ROOT/YYYY/M/D),
ahead of the jobs, owned by whoever runs it (docs/deploying.md)."""

from __future__ import annotations

import sys
import time

from ..logtree import make_year
from .common import ArgParser, escape, run_cli
from .version import add_version


def main(argv=None) -> int:
    return run_cli("iochar-mk-logdirs", _main, argv)


def _main(argv) -> int:
    ap = ArgParser(prog="iochar-mk-logdirs",
                   description="Make the day directories ROOT/YYYY/M/D of a year (default: "
                               "this year) with the root's mode; existing ones are kept.")
    ap.add_argument("root", metavar="ROOT", help="the log root (IOCHAR_LOGROOT); must exist")
    ap.add_argument("year", metavar="YEAR", nargs="?", type=int, default=time.localtime().tm_year)
    add_version(ap)
    args = ap.parse_args(argv)
    if not 1970 <= args.year <= 9999:
        ap.error(f"year {args.year} is not 1970..9999")
    made = make_year(args.root, args.year)
    sys.stdout.write(f"{escape(args.root)}/{args.year}: {made} directories made\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
