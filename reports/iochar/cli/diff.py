"""iochar-diff: compare two runs of one application; exit 1 on an I/O regression.

Rules (docs/diff-rules.md): per module, a metric regresses when it grows (or, for
access size, shrinks) by more than its threshold AND by more than its absolute floor,
so timing noise between two runs of one deterministic job never flags.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .. import advice, junit
from .. import summary as S
from ..jobreport import build, load, load_log
from ..log import LogError
from . import jobs as cj
from .common import ArgParser, escape, run_cli, sanitize
from .version import add_version

TIME_THRESHOLD = 50.0  # percent; I/O time is noisy on shared file systems
TIME_FLOOR = 1.0  # seconds of slowest-rank I/O time
OPS_FLOOR = 100  # operations
BYTES_FLOOR = 1 << 20  # bytes
FILES_FLOOR = 10  # files
SIZE_FLOOR = 1024  # bytes of mean access size


def metrics(s: dict) -> dict:
    """The compared quantities of one module summary: name -> (value, worse_if, floor, kind)."""
    ops = s["reads"] + s["writes"]
    nbytes = s["bytes_read"] + s["bytes_written"]
    top = s["top_sizes"][0]["size"] if s.get("top_sizes") else 0
    return {
        "io time (slowest rank)": (float(s["slowest_rank"]["time"] or 0), "up", TIME_FLOOR, "time"),
        "read+write ops": (ops, "up", OPS_FLOOR, "count"),
        "meta ops (opens, stats, seeks, syncs)":
            (s["opens"] + s["stats"] + s["seeks"] + s["syncs"], "up", OPS_FLOOR, "count"),
        "bytes moved": (nbytes, "up", BYTES_FLOOR, "bytes"),
        "files": (s["files"], "up", FILES_FLOOR, "count"),
        "mean access size": (nbytes / ops if ops else 0, "down", SIZE_FLOOR, "bytes"),
        "most common access size": (top, "down", SIZE_FLOOR, "bytes"),
    }


def fmt(v, kind) -> str:
    return {"time": S.human_time, "bytes": S.human_bytes}.get(kind, lambda x: f"{x:,.0f}")(v)


def worst_advice(items: list) -> dict:
    """(module, rule id) -> its most severe advice (the list is sorted most severe first)."""
    out = {}
    for a in items:
        out.setdefault((a["module"], a["id"]), a)
    return out


def compare(base: dict, new: dict, threshold: float, time_threshold: float) -> dict:
    rows = []
    for m in sorted(set(base["modules"]) | set(new["modules"])):
        b, n = base["modules"].get(m), new["modules"].get(m)
        if b is None or n is None:
            rows.append({"module": m, "metric": "module", "base": b is not None,
                         "new": n is not None, "change": None,
                         "verdict": "appeared" if b is None else "disappeared"})
            continue
        mb, mn = metrics(b), metrics(n)
        for k, (bv, worse, floor, kind) in mb.items():
            nv = mn[k][0]
            change = (nv - bv) / bv * 100 if bv else (0.0 if nv == bv else None)
            limit = time_threshold if kind == "time" else threshold
            delta = nv - bv if worse == "up" else bv - nv
            bad = delta > floor and (bv == 0 or delta / bv * 100 > limit)
            good = -delta > floor and bv and -delta / bv * 100 > limit
            rows.append({"module": m, "metric": k, "base": bv, "new": nv, "kind": kind,
                         "change": None if change is None else round(change, 2),
                         "verdict": "REGRESSION" if bad else "better" if good else "ok"})
    ba, na = worst_advice(base["advice"]), worst_advice(new["advice"])
    appeared = [a for k, a in na.items() if k not in ba or
                advice.RANK[a["severity"]] < advice.RANK[ba[k]["severity"]]]
    gone = [a for k, a in ba.items() if k not in na]
    severe = [a for a in appeared if a["severity"] == "high"]
    regressions = sum(r["verdict"] == "REGRESSION" for r in rows) + len(severe)
    return {"rows": rows, "advice_appeared": appeared, "advice_disappeared": gone,
            "regressions": regressions, "regression": regressions > 0}


def warnings(base: dict, new: dict) -> list:
    """What makes the two runs hard to compare: another program (executable name),
    another process count, another iochar version. One entry each."""
    out = []
    checks = (("exe", "different programs", lambda j: os.path.basename(str(j.get("exe", "?")))),
              ("nprocs", "different process counts", lambda j: j.get("nprocs")),
              ("version", "different iochar versions", lambda j: j.get("version", "?")))
    for kind, what, get in checks:
        b, n = get(base["job"]), get(new["job"])
        if b != n:
            out.append({"kind": kind, "base": b, "new": n,
                        "message": f"{what}: {b} (base) vs {n} (new)"})
    return out


def describe(r: dict) -> str:
    """One metric row as "base -> new (change)"."""
    ch = "new" if r["change"] is None else f"{r['change']:+.0f}%"
    return f"{fmt(r['base'], r['kind'])} -> {fmt(r['new'], r['kind'])} ({ch})"


def changes_only(res: dict) -> dict:
    """The comparison without the rows that stayed within thresholds."""
    return {**res, "rows": [r for r in res["rows"] if r["verdict"] != "ok"]}


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
    return load_log(jobs[0].open())


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
                         default=S._py, allow_nan=False))
    else:
        sys.stdout.write(text(shown, args.base, args.new))
    return 1 if res["regression"] else 0


if __name__ == "__main__":
    sys.exit(main())
