"""Site-wide questions over the store: the summary, the site page's data and one
program's history, each over the jobs started in a time window (--since/--until).

History reuses iochar-diff's comparison (iochar/compare.py, docs/diff-rules.md): each
run is compared with the run before it, from the per-module numbers the store keeps
(summaries) and the job's findings, so the thresholds are the same by construction.
"""

from __future__ import annotations

import datetime as dt

from .. import compare

TOP = 10
HIGH_ROWS = 5  # the site page's table of jobs with HIGH findings: this many x --top
DAY = 86400.0


def parse_when(text: str, end: bool = False) -> float:
    """--since/--until: a date YYYY-MM-DD is a UTC day (its start; with end=True the
    next day's start, so --until DAY includes DAY); an ISO 8601 time (2026-11-03T14:00,
    with a space or a T) is UTC unless it carries an offset (+02:00, Z). Epoch seconds."""
    t = text.strip()
    try:
        if len(t) == 10 and t[4] == "-" and t[7] == "-":
            d = dt.datetime.strptime(t, "%Y-%m-%d").replace(tzinfo=dt.timezone.utc)
            return d.timestamp() + (DAY if end else 0.0)
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a date (YYYY-MM-DD) or ISO time: {text!r}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return d.timestamp()


def scope(con, since: float | None = None, until: float | None = None) -> None:
    """Views of the jobs started in [since, until) (epoch seconds; None: unbounded)
    and of their rows in the other tables: jobs_in, summaries_in, findings_in,
    filesystems_in. Every query below reads these."""
    conds = []
    if since is not None:
        conds.append(f"start_time >= {float(since)!r}")
    if until is not None:
        conds.append(f"start_time < {float(until)!r}")
    cond = " AND ".join(conds) or "TRUE"
    con.execute(f"CREATE OR REPLACE TEMP VIEW jobs_in AS SELECT * FROM jobs WHERE {cond}")
    for t in ("summaries", "findings", "filesystems"):
        con.execute(f"""CREATE OR REPLACE TEMP VIEW {t}_in AS SELECT * FROM {t}
                        WHERE job_id IN (SELECT job_id FROM jobs_in)""")


def _rows(con, sql: str, params=()) -> list:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _one(con, sql: str):
    return con.execute(sql).fetchone()


def summary(con, top: int = TOP, since: float | None = None, until: float | None = None) -> dict:
    """The site view: totals, top jobs/users/programs by I/O time and bytes, shares of
    small, random and metadata I/O (POSIX, the layer that reaches the file system),
    the most common findings (of jobs started in [since, until)), and the logs that
    could not be read (all of them: an unreadable log has no start time)."""
    scope(con, since, until)
    t = _rows(con, """SELECT count(*) AS jobs, count(DISTINCT coalesce(user, CAST(uid AS VARCHAR)))
        AS users, count(DISTINCT exe) AS programs, coalesce(sum(bytes_read), 0) AS bytes_read,
        coalesce(sum(bytes_written), 0) AS bytes_written, coalesce(sum(io_time), 0) AS io_time,
        coalesce(sum(run_time * nprocs), 0) AS cpu_time, min(start_time) AS first_start,
        max(end_time) AS last_end FROM jobs_in""")[0]
    t["errors"] = _one(con, "SELECT count(*) FROM errors")[0]
    who = "coalesce(user, 'uid ' || CAST(uid AS VARCHAR), '?')"
    out = {"totals": t, "window": {"since": since, "until": until}}
    out["top_jobs"] = _rows(con, f"""SELECT job_id, jobid, exe, {who} AS user, nprocs, io_time,
        run_time, bytes_read + bytes_written AS bytes, log_path FROM jobs_in
        ORDER BY io_time DESC, bytes DESC, job_id LIMIT {int(top)}""")
    for key, expr in (("top_users", who), ("top_programs", "exe")):
        out[key] = _rows(con, f"""SELECT {expr} AS name, count(*) AS jobs, sum(io_time) AS io_time,
            sum(bytes_read + bytes_written) AS bytes FROM jobs_in GROUP BY 1
            ORDER BY io_time DESC, bytes DESC, name LIMIT {int(top)}""")
    out["top_programs_by_bytes"] = _rows(con, f"""SELECT exe AS name, count(*) AS jobs,
        sum(bytes_read + bytes_written) AS bytes, sum(io_time) AS io_time FROM jobs_in GROUP BY 1
        ORDER BY bytes DESC, name LIMIT {int(top)}""")
    s = _rows(con, """SELECT coalesce(sum(reads + writes), 0) AS ops,
        coalesce(sum(small_ops), 0) AS small_ops, coalesce(sum(random_ops), 0) AS random_ops,
        coalesce(sum(time_meta), 0) AS meta, coalesce(sum(time_read + time_write + time_meta), 0)
        AS io FROM summaries_in WHERE module = 'POSIX'""")[0]
    out["shares"] = {"small": s["small_ops"] / s["ops"] if s["ops"] else 0.0,
                     "random": s["random_ops"] / s["ops"] if s["ops"] else 0.0,
                     "metadata": s["meta"] / s["io"] if s["io"] else 0.0,
                     "posix_ops": s["ops"]}
    out["findings"] = _rows(con, f"""SELECT id, count(DISTINCT job_id) AS jobs,
        count(*) FILTER (WHERE severity = 'high') AS high, count(*) AS findings
        FROM findings_in GROUP BY id ORDER BY jobs DESC, id LIMIT {int(top)}""")
    out["errors"] = _rows(con, f"""SELECT log_path, reason FROM errors
        ORDER BY log_path LIMIT {int(top)}""")
    return out


# Time a job lost to its findings: their costs (seconds over all ranks, as iochar-report
# gives them) summed, at most the job's whole time (run time x processes): two findings
# may explain some of the same seconds.
LOST = """CREATE OR REPLACE TEMP VIEW lost_in AS SELECT j.job_id,
    least(coalesce(sum(f.cost_s), 0), greatest(j.run_time * j.nprocs, 0)) AS lost
    FROM jobs_in j LEFT JOIN findings_in f USING (job_id) GROUP BY j.job_id, j.run_time, j.nprocs"""
WHO = "coalesce(\"user\", 'uid ' || CAST(uid AS VARCHAR), '?')"


def site(con, top: int = TOP, since: float | None = None, until: float | None = None) -> dict:
    """The site page's data for the jobs started in [since, until): the summary (above),
    then per day (UTC) jobs, bytes, I/O time and time lost to findings; top users,
    programs and jobs by I/O time and by time lost; findings by rule and severity with
    their costliest jobs; the jobs with HIGH findings; bytes per file system."""
    out = summary(con, top, since, until)
    con.execute(LOST)
    out["totals"]["lost"] = _one(con, "SELECT coalesce(sum(lost), 0) FROM lost_in")[0]
    out["totals"]["findings"] = _one(con, "SELECT count(*) FROM findings_in")[0]
    out["days"] = _rows(con, """SELECT j.date, count(*) AS jobs, sum(j.bytes_read) AS bytes_read,
        sum(j.bytes_written) AS bytes_written, sum(j.io_time) AS io_time, sum(l.lost) AS lost
        FROM jobs_in j JOIN lost_in l USING (job_id) GROUP BY j.date ORDER BY j.date""")
    for key, expr in (("users", WHO), ("programs", "exe")):
        for order in ("io_time", "lost"):
            out[f"{key}_by_{order}"] = _rows(con, f"""SELECT {expr} AS name, count(*) AS jobs,
                sum(io_time) AS io_time, sum(l.lost) AS lost,
                sum(bytes_read + bytes_written) AS bytes FROM jobs_in JOIN lost_in l
                USING (job_id) GROUP BY 1 ORDER BY {order} DESC, bytes DESC, name
                LIMIT {int(top)}""")
    for order in ("io_time", "lost"):
        out[f"jobs_by_{order}"] = _rows(con, f"""SELECT job_id, jobid, exe, {WHO} AS user,
            nprocs, start_time, run_time, io_time, l.lost, bytes_read + bytes_written AS bytes,
            log_path FROM jobs_in JOIN lost_in l USING (job_id)
            ORDER BY {order} DESC, bytes DESC, job_id LIMIT {int(top)}""")
    out["rules"] = _rows(con, """SELECT id, severity, count(DISTINCT job_id) AS jobs,
        count(*) AS findings, sum(cost_s) AS cost_s, max(cost_share) AS max_share
        FROM findings_in GROUP BY id, severity
        ORDER BY cost_s DESC NULLS LAST, jobs DESC, id, severity""")
    worst = _rows(con, """SELECT id, severity, jobid, exe, job_id, cost_s FROM (
        SELECT f.id, f.severity, j.jobid, j.exe, j.job_id, f.cost_s, row_number() OVER (
            PARTITION BY f.id, f.severity ORDER BY f.cost_s DESC NULLS LAST, j.job_id) AS n
        FROM findings_in f JOIN jobs_in j USING (job_id)) WHERE n <= 3
        ORDER BY id, severity, n""")
    for r in out["rules"]:
        r["worst"] = [w for w in worst if (w["id"], w["severity"]) == (r["id"], r["severity"])]
    out["high_total"] = _one(con, """SELECT count(DISTINCT job_id) FROM findings_in
        WHERE severity = 'high'""")[0]
    out["high_jobs"] = _rows(con, f"""SELECT j.job_id, j.jobid, j.exe, {WHO} AS user,
        j.nprocs, j.start_time, j.log_path, string_agg(f.id, ', ' ORDER BY f.id) AS rules,
        sum(f.cost_s) AS cost_s, max(f.cost_share) AS cost_share
        FROM findings_in f JOIN jobs_in j USING (job_id) WHERE f.severity = 'high'
        GROUP BY ALL ORDER BY cost_s DESC NULLS LAST, j.start_time, j.job_id
        LIMIT {HIGH_ROWS * int(top)}""")
    out["filesystems"] = _rows(con, """SELECT mount_point, fs_type,
        count(DISTINCT job_id) AS jobs, sum(files) AS files, sum(bytes_read) AS bytes_read,
        sum(bytes_written) AS bytes_written, sum(reads) AS reads, sum(writes) AS writes
        FROM filesystems_in GROUP BY 1, 2
        ORDER BY sum(bytes_read + bytes_written) DESC, mount_point, fs_type""")
    return out


def _report(mods: list, finds: list) -> dict:
    """A run as iochar-diff's compare() wants it, from summaries and findings rows."""
    modules = {r["module"]: {**r, "top_sizes": [{"size": r["top_size"]}] if r["top_size"] else [],
                             "slowest_rank": {"time": r["slowest_time"]}} for r in mods}
    return {"modules": modules, "advice": finds}


def history(con, exe: str, threshold: float = 10.0,
            time_threshold: float = compare.TIME_THRESHOLD, since: float | None = None,
            until: float | None = None) -> dict:
    """A program's runs started in [since, until), in time order; each compared with
    the previous one by the iochar-diff rules. `exe` matches the full path or its last
    component."""
    scope(con, since, until)
    runs = _rows(con, """SELECT job_id, jobid, exe, start_time, end_time, run_time, nprocs,
        io_time, bytes_read, bytes_written, reads, writes, log_path FROM jobs_in
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
