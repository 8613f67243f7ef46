"""Two runs of one application compared (docs/diff-rules.md): per module, a metric
regresses when it grows (or, for access size, shrinks) by more than its threshold AND
by more than its absolute floor, so timing noise between two runs of one deterministic
job never flags. iochar-diff (cli/diff.py) prints it; iochar-db history (db/queries.py)
walks a program's runs with it."""

from __future__ import annotations

import os

from . import advice
from . import summary as S

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
    """Each module's metrics (metrics()) base vs new, with a verdict per row, and the
    advice that appeared or went; base and new are report data (jobreport.build, or
    db/queries' rows). Thresholds in percent."""
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
