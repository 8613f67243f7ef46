"""iochar-diff: compare two runs of one application; exit 1 on an I/O regression.

The comparison and its rules are the library's (iochar/compare.py,
docs/diff-rules.md); this module reads the two sides and prints it.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import advice, junit
from .. import summary as S
from ..compare import TIME_THRESHOLD, changes_only, compare, describe, fmt, warnings
from ..jobreport import build, load, load_log
from ..log import LogError, open_job
from . import jobs as cj
from .common import ArgParser, escape, run_cli, sanitize
from .version import add_version


def text(res: dict, base: str, new: str) -> str:
    out = [f"iochar-diff: {base} -> {new}"]
    out += [f"warning: {w['message']}" for w in res.get("warnings", [])]
    out.append(f"{'module':<8} {'metric':<38} {'base':>12} {'new':>12} {'change':>8}  verdict")
    for r in res["rows"]:
        if r["metric"] == "module":
            out.append(f"{r['module']:<8} {'(module)':<38} {'':>12} {'':>12} {'':>8}  "
                       f"{r['verdict']}")
            continue
        ch = "new" if r["change"] is None else f"{r['change']:+.0f}%"
        out.append(f"{r['module']:<8} {r['metric']:<38} {fmt(r['base'], r['kind']):>12} "
                   f"{fmt(r['new'], r['kind']):>12} {ch:>8}  {r['verdict']}")
    for a in res["advice_appeared"]:
        out.append(f"advice appeared: [{a['severity'].upper()}] {a['id']}: {a['message']}"
                   + ("  REGRESSION" if a["severity"] == "high" else ""))
    for a in res["advice_disappeared"]:
        out.append(f"advice gone:     [{a['severity'].upper()}] {a['id']}: {a['message']}")
    out.append(f"verdict: {res['regressions']} regression(s)" if res["regression"]
               else "verdict: ok (within thresholds)")
    # names, messages and the arguments come from outside: every line escaped once
    return "\n".join(escape(line) for line in out) + "\n"


def _pct(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"percentage must be >= 0: {s!r}")
    return v


def _side(paths: str, want: str | None, which: str) -> dict:
    """One side's job: a log, per-rank logs of one job, or one job of many (--*-job)."""
    if cj.single_file([paths]) and want is None:
        return load([paths])
    jobs, _ = cj.find([paths], want)
    if len(jobs) > 1:
        raise LogError(f"{paths} holds {len(jobs)} jobs: pick one with --{which}-job "
                       f"(jobs: {', '.join(j.id for j in jobs)})")
    return load_log(open_job(jobs[0]))


def main(argv=None) -> int:
    return run_cli("iochar-diff", _main, argv)


def _main(argv) -> int:
    p = ArgParser(prog="iochar-diff", description="Compare two iochar logs of one application.")
    p.add_argument("base", metavar="BASE", help="reference log (or directory of per-rank logs)")
    p.add_argument("new", metavar="NEW", help="log to check")
    p.add_argument("--threshold", type=_pct, default=10.0, metavar="PCT",
                   help="allowed growth of ops/bytes/files, shrink of access size (default 10)")
    p.add_argument("--time-threshold", type=_pct, default=TIME_THRESHOLD, metavar="PCT",
                   help=f"allowed growth of I/O time (default {TIME_THRESHOLD:g})")
    p.add_argument("--config", metavar="TOML", help="advice thresholds, as iochar-report")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--changes-only", action="store_true",
                   help="only metrics beyond their thresholds (regressions and improvements)")
    p.add_argument("--junit", metavar="FILE",
                   help="also write the comparison as JUnit XML (one testcase per metric)")
    p.add_argument("--base-job", metavar="ID", help="BASE holds several jobs: compare this one")
    p.add_argument("--new-job", metavar="ID", help="NEW holds several jobs: compare this one")
    add_version(p)
    args = p.parse_args(argv)
    cfg = advice.config.load(args.config)
    base = build(_side(args.base, args.base_job, "base"), cfg)
    new = build(_side(args.new, args.new_job, "new"), cfg)
    res = compare(base, new, args.threshold, args.time_threshold)
    res["warnings"] = warnings(base, new)
    if args.junit:
        junit.write(args.junit, junit.document(res, args.base, args.new, describe))
    for w in res["warnings"]:
        print(f"iochar-diff: warning: {escape(w['message'])}", file=sys.stderr)
    shown = changes_only(res) if args.changes_only else res
    if args.json:
        print(json.dumps(sanitize({"base": args.base, "new": args.new, **shown}), indent=1,
                         default=S.json_value, allow_nan=False))
    else:
        sys.stdout.write(text(shown, args.base, args.new))
    return 1 if res["regression"] else 0


if __name__ == "__main__":
    sys.exit(main())
