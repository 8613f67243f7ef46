"""Site-wide questions over the store: the summary and one program's history.

History reuses iochar-diff's comparison (iochar/compare.py, docs/diff-rules.md): each
run is compared with the run before it, from the per-module numbers the store keeps
(summaries) and the job's findings, so the thresholds are the same by construction.
"""

from __future__ import annotations

import datetime as dt

from .. import compare

TOP = 10


def _rows(con, sql: str, params=()) -> list:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _one(con, sql: str):
    return con.execute(sql).fetchone()


def summary(con, top: int = TOP) -> dict:
    """The site view: totals, top jobs/users/programs by I/O time and bytes, shares of
    small, random and metadata I/O (POSIX, the layer that reaches the file system),
    the most common findings, and the logs that could not be read."""
    t = _rows(con, """SELECT count(*) AS jobs, count(DISTINCT coalesce(user, CAST(uid AS VARCHAR)))
        AS users, count(DISTINCT exe) AS programs, coalesce(sum(bytes_read), 0) AS bytes_read,
        coalesce(sum(bytes_written), 0) AS bytes_written, coalesce(sum(io_time), 0) AS io_time,
        coalesce(sum(run_time * nprocs), 0) AS cpu_time, min(start_time) AS first_start,
        max(end_time) AS last_end FROM jobs""")[0]
    t["errors"] = _one(con, "SELECT count(*) FROM errors")[0]
    who = "coalesce(user, 'uid ' || CAST(uid AS VARCHAR), '?')"
    out = {"totals": t}
    out["top_jobs"] = _rows(con, f"""SELECT job_id, jobid, exe, {who} AS user, nprocs, io_time,
        run_time, bytes_read + bytes_written AS bytes, log_path FROM jobs
        ORDER BY io_time DESC, bytes DESC, job_id LIMIT {int(top)}""")
    for key, expr in (("top_users", who), ("top_programs", "exe")):
        out[key] = _rows(con, f"""SELECT {expr} AS name, count(*) AS jobs, sum(io_time) AS io_time,
            sum(bytes_read + bytes_written) AS bytes FROM jobs GROUP BY 1
            ORDER BY io_time DESC, bytes DESC, name LIMIT {int(top)}""")
    out["top_programs_by_bytes"] = _rows(con, f"""SELECT exe AS name, count(*) AS jobs,
        sum(bytes_read + bytes_written) AS bytes, sum(io_time) AS io_time FROM jobs GROUP BY 1
        ORDER BY bytes DESC, name LIMIT {int(top)}""")
    s = _rows(con, """SELECT coalesce(sum(reads + writes), 0) AS ops,
        coalesce(sum(small_ops), 0) AS small_ops, coalesce(sum(random_ops), 0) AS random_ops,
        coalesce(sum(time_meta), 0) AS meta, coalesce(sum(time_read + time_write + time_meta), 0)
        AS io FROM summaries WHERE module = 'POSIX'""")[0]
    out["shares"] = {"small": s["small_ops"] / s["ops"] if s["ops"] else 0.0,
                     "random": s["random_ops"] / s["ops"] if s["ops"] else 0.0,
                     "metadata": s["meta"] / s["io"] if s["io"] else 0.0,
                     "posix_ops": s["ops"]}
    out["findings"] = _rows(con, f"""SELECT id, count(DISTINCT job_id) AS jobs,
        count(*) FILTER (WHERE severity = 'high') AS high, count(*) AS findings
        FROM findings GROUP BY id ORDER BY jobs DESC, id LIMIT {int(top)}""")
    out["errors"] = _rows(con, f"""SELECT log_path, reason FROM errors
        ORDER BY log_path LIMIT {int(top)}""")
    return out


def _report(mods: list, finds: list) -> dict:
    """A run as iochar-diff's compare() wants it, from summaries and findings rows."""
    modules = {r["module"]: {**r, "top_sizes": [{"size": r["top_size"]}] if r["top_size"] else [],
                             "slowest_rank": {"time": r["slowest_time"]}} for r in mods}
    return {"modules": modules, "advice": finds}


def history(con, exe: str, threshold: float = 10.0,
            time_threshold: float = compare.TIME_THRESHOLD) -> dict:
    """A program's runs in time order; each compared with the previous one by the
    iochar-diff rules. `exe` matches the full path or its last component."""
    runs = _rows(con, """SELECT job_id, jobid, exe, start_time, end_time, run_time, nprocs,
        io_time, bytes_read, bytes_written, reads, writes, log_path FROM jobs
        WHERE exe = ? OR regexp_extract(exe, '[^/]*$') = ?
        ORDER BY start_time, job_id""", (exe, exe))
    if not runs:
        return {"exe": exe, "runs": [], "regressions": 0}
    ids = [r["job_id"] for r in runs]
    mods, finds = {}, {}
    for r in _rows(con, "SELECT * EXCLUDE (date) FROM summaries WHERE list_contains(?, job_id)",
                   (ids,)):
        mods.setdefault(r["job_id"], []).append(r)
    for r in _rows(con, """SELECT job_id, id, severity, module, message FROM findings
                   WHERE list_contains(?, job_id) ORDER BY job_id, severity, id""", (ids,)):
        finds.setdefault(r["job_id"], []).append(r)
    # compare() takes the advice most-severe first, as iochar-report lists it
    sev = {s: i for i, s in enumerate(("high", "warn", "info"))}
    prev = None
    total = 0
    for r in runs:
        f = sorted(finds.get(r["job_id"], []), key=lambda a: sev.get(a["severity"], 9))
        rep = _report(mods.get(r["job_id"], []), f)
        r["findings"] = len(f)
        if prev is None:
            r.update(regression=False, regressions=[], verdict="first")
        else:
            res = compare.compare(prev, rep, threshold, time_threshold)
            bad = [f"{x['module']} {x['metric']} {x['change']:+.0f}%" if x["change"] is not None
                   else f"{x['module']} {x['metric']}" for x in res["rows"]
                   if x["verdict"] == "REGRESSION"]
            bad += [f"advice {a['id']} ({a['module']})" for a in res["advice_appeared"]
                    if a["severity"] == "high"]
            r.update(regression=res["regression"], regressions=bad,
                     verdict="REGRESSION" if res["regression"] else "ok")
            total += bool(res["regression"])
        prev = rep
    return {"exe": exe, "runs": runs, "regressions": total}


def plot_history(hist: dict, out: str) -> None:
    """I/O time and bytes moved per run over time; regressed runs marked in red."""
    import matplotlib  # heavy: imported by the one command that draws
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = hist["runs"]
    x = [dt.datetime.fromtimestamp(r["start_time"], dt.timezone.utc) for r in runs]
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    a.plot(x, [r["io_time"] for r in runs], marker="o", lw=1)
    b.plot(x, [(r["bytes_read"] + r["bytes_written"]) / 2**20 for r in runs], marker="o", lw=1)
    bad = [i for i, r in enumerate(runs) if r["regression"]]
    if bad:
        a.scatter([x[i] for i in bad], [runs[i]["io_time"] for i in bad], color="red",
                  zorder=3, label="regression (iochar-diff rules)")
        b.scatter([x[i] for i in bad], [(runs[i]["bytes_read"] + runs[i]["bytes_written"]) / 2**20
                                        for i in bad], color="red", zorder=3)
        a.legend(loc="best")
    a.set_ylabel("I/O time, slowest rank (s)")
    b.set_ylabel("bytes moved (MiB)")
    a.set_title(f"{hist['exe']}: {len(runs)} runs")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
