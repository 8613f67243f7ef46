"""The site page (iochar-db report --html): the store's jobs in a time window as one
self-contained HTML page (templates/site.html.j2, the job page's template family), and
with --pages, the job pages of the jobs with HIGH findings, linked from it."""

from __future__ import annotations

import datetime as dt
import os
import time

import numpy as np

from .. import html, jobreport, plots
from .. import summary as S
from ..atomicfile import write_atomic
from ..log import LogError
from ..safetext import escape
from . import queries

SEVERITIES = ("high", "warn", "info")
SEV_COLORS = {"high": "#c0392b", "warn": "#e67e22", "info": "#2980b9"}
MAX_RULE_BARS = 20


def _day(t) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(t))) if t else "-"


def _share(x) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"


def _secs(x) -> str:
    return "-" if x is None else S.human_time(x)


@plots.literal_text
def over_time(days: list) -> str:
    """Per day (UTC): bytes read and written, I/O time and time lost to findings, jobs."""
    fig, (a1, a2, a3) = plots.new_figure(3, 1, figsize=(9, 5.6), sharex=True)
    x = np.array([np.datetime64(d["date"]) for d in days if d["date"][:1].isdigit()],
                 dtype="datetime64[D]")
    rows = [d for d in days if d["date"][:1].isdigit()]
    if not len(x):
        for ax in (a1, a2, a3):
            plots.no_data(ax, "no jobs in this window")
        return plots.to_png(fig)
    rd = plots.floats([d["bytes_read"] for d in rows])
    wr = plots.floats([d["bytes_written"] for d in rows])
    a1.bar(x, rd, color=plots.COLORS["read"], label="read")
    a1.bar(x, wr, bottom=rd, color=plots.COLORS["write"], label="written")
    plots.binary_axis(a1.yaxis, float((rd + wr).max()))
    a1.set_ylabel("bytes")
    plots.legend_beside(a1, fontsize=7)
    io = plots.floats([d["io_time"] for d in rows]) / 3600
    lost = plots.floats([d["lost"] for d in rows]) / 3600
    a2.bar(x, io, color="#555555", label="I/O time (slowest rank)")
    a2.plot(x, lost, color=SEV_COLORS["high"], marker="o", ms=3, lw=1,
            label="lost to findings (all ranks)")
    a2.set_ylabel("hours")
    plots.legend_beside(a2, fontsize=7)
    a3.bar(x, plots.floats([d["jobs"] for d in rows]), color="#2E8B57")
    plots.integer_ticks(a3.yaxis)
    a3.set_ylabel("jobs")
    a3.set_xlabel("day (UTC)")
    fig.autofmt_xdate()
    fig.suptitle("I/O over time")
    return plots.to_png(fig)


@plots.literal_text
def rules_figure(rules: list) -> str:
    """Time lost per finding rule, by severity (the costliest MAX_RULE_BARS rules)."""
    ids = []
    for r in rules:
        if r["id"] not in ids:
            ids.append(r["id"])
    ids = ids[:MAX_RULE_BARS]
    fig, ax = plots.new_figure(figsize=(8, 0.9 + 0.32 * max(len(ids), 1)))
    left = np.zeros(len(ids))
    for sev in SEVERITIES:
        v = plots.floats([sum(float(r["cost_s"] or 0) for r in rules
                              if r["id"] == i and r["severity"] == sev) for i in ids]) / 3600
        ax.barh([escape(i) for i in ids], v, left=left, color=SEV_COLORS[sev], label=sev)
        left += v
    if not ids:
        plots.no_data(ax, "no findings")
    ax.invert_yaxis()
    ax.set_xlabel("hours lost (all ranks)")
    ax.set_title("Findings by rule and severity", fontsize=10)
    plots.legend_beside(ax)
    return plots.to_png(fig)


@plots.literal_text
def top_figure(rows: list, title: str) -> str:
    """Horizontal bars: I/O time and time lost, hours, of the top users or programs."""
    names = [escape(os.path.basename(str(r["name"])) or str(r["name"])) for r in rows]
    fig, ax = plots.new_figure(figsize=(6, 0.9 + 0.3 * max(len(rows), 1)))
    y = np.arange(len(rows))
    ax.barh(y - 0.2, plots.floats([r["io_time"] for r in rows]) / 3600, 0.4,
            color="#555555", label="I/O time")
    ax.barh(y + 0.2, plots.floats([r["lost"] for r in rows]) / 3600, 0.4,
            color=SEV_COLORS["high"], label="lost to findings")
    ax.set_yticks(y, names, fontsize=8)
    if not rows:
        plots.no_data(ax)
    ax.invert_yaxis()
    ax.set_xlabel("hours")
    ax.set_title(title, fontsize=10)
    plots.legend_beside(ax, fontsize=7)
    return plots.to_png(fig)


def job_pages(rows: list, pages: str, out: str) -> dict:
    """Render the job page of each row's log into PAGES/<job_id>.html (the log read
    again where it was ingested); {job_id: href relative to OUT's directory}, and the
    rows whose log is gone, unreadable or one rank's file of a several-file job get
    no link (their reason in `row["page"]`)."""
    os.makedirs(pages, exist_ok=True)
    links = {}
    for r in rows:
        try:
            data = jobreport.load([r["log_path"]])
            if isinstance(data["job"].get("rank"), int) and r["nprocs"] > 1:
                r["page"] = "one rank's log of several: run iochar-report on them all"
                continue
            rep = jobreport.build(data)
            page = html.render(rep, data["series"], data["ranks"], data.get("observed"),
                               data.get("heatmaps"), data["records"], data.get("mounts"),
                               data.get("dxt"))
        except (LogError, OSError) as e:
            r["page"] = f"not rendered: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            continue
        target = os.path.join(pages, f"{r['job_id']}.html")
        write_atomic(target, page)
        links[r["job_id"]] = os.path.relpath(target, os.path.dirname(os.path.abspath(out)))
    return links


def _window_text(w: dict) -> str:
    def show(t):
        return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    since, until = w.get("since"), w.get("until")
    if since is None and until is None:
        return "all jobs in the store"
    return ("jobs started " + (f"from {show(since)}" if since is not None else "")
            + (" " if since is not None and until is not None else "")
            + (f"before {show(until)}" if until is not None else ""))


def render(d: dict, links: dict | None = None, store: str = "") -> str:
    """The page from queries.site's data; links: job_id -> href of its job page."""
    links = links or {}
    t = d["totals"]
    head = [("window", _window_text(d["window"])),
            ("jobs / users / programs", f"{t['jobs']:,} / {t['users']:,} / {t['programs']:,}"),
            ("first start / last end (UTC)", f"{_day(t['first_start'])} / {_day(t['last_end'])}"),
            ("bytes read / written", f"{S.human_bytes(t['bytes_read'])} / "
                                     f"{S.human_bytes(t['bytes_written'])}"),
            ("I/O time (slowest ranks, summed)", S.human_time(t["io_time"])),
            ("findings / time lost to them (all ranks)",
             f"{t['findings']:,} / {S.human_time(t['lost'])}"),
            ("unreadable logs (whole store)", f"{t['errors']:,}")]
    sh = d["shares"]
    head.append(("POSIX accesses < 1 MiB / random / metadata share of I/O time",
                 f"{100 * sh['small']:.1f}% / {100 * sh['random']:.1f}% / "
                 f"{100 * sh['metadata']:.1f}% of {sh['posix_ops']:,} accesses"))

    def who(rows):
        return [[r["name"], f"{r['jobs']:,}", S.human_time(r["io_time"]), S.human_time(r["lost"]),
                 S.human_bytes(r["bytes"])] for r in rows]

    def jobs(rows):
        return [[(r["jobid"] or r["job_id"][:12], links.get(r["job_id"])), r["user"], r["exe"],
                 _day(r["start_time"]), f"{r['nprocs']:,}", S.human_time(r["io_time"]),
                 S.human_time(r["lost"]), S.human_bytes(r["bytes"])] for r in rows]

    rules = [[r["id"], r["severity"], f"{r['jobs']:,}", f"{r['findings']:,}", _secs(r["cost_s"]),
              _share(r["max_share"]),
              "; ".join(f"{w['jobid'] or w['job_id'][:12]} ({os.path.basename(w['exe'] or '')}, "
                        f"{_secs(w['cost_s'])})" for w in r["worst"])] for r in d["rules"]]
    high = [[(r["jobid"] or r["job_id"][:12], links.get(r["job_id"])), r["user"], r["exe"],
             _day(r["start_time"]), f"{r['nprocs']:,}", r["rules"], _secs(r["cost_s"]),
             _share(r["cost_share"]), r.get("page", "")] for r in d["high_jobs"]]
    fs = [[r["mount_point"] or "(other)", r["fs_type"] or "?", f"{r['jobs']:,}",
           f"{r['files']:,}", S.human_bytes(r["bytes_read"]), S.human_bytes(r["bytes_written"]),
           f"{r['reads']:,}", f"{r['writes']:,}"] for r in d["filesystems"]]
    figures = {"over_time": {"png": over_time(d["days"]), "alt": "I/O over time"},
               "rules": {"png": rules_figure(d["rules"]), "alt": "findings by rule"},
               "users": {"png": top_figure(d["users_by_lost"], "Users by time lost"),
                         "alt": "users by time lost"},
               "programs": {"png": top_figure(d["programs_by_lost"], "Programs by time lost"),
                            "alt": "programs by time lost"}}
    return html.template("site.html.j2").render(
        title=f"site view{': ' + store if store else ''}", store=store, head=head,
        figures=figures,
        days=[[r["date"], f"{r['jobs']:,}", S.human_bytes(r["bytes_read"]),
               S.human_bytes(r["bytes_written"]), S.human_time(r["io_time"]),
               S.human_time(r["lost"])] for r in d["days"]],
        users_io=who(d["users_by_io_time"]), users_lost=who(d["users_by_lost"]),
        programs_io=who(d["programs_by_io_time"]), programs_lost=who(d["programs_by_lost"]),
        jobs_io=jobs(d["jobs_by_io_time"]), jobs_lost=jobs(d["jobs_by_lost"]),
        rules=rules, high=high, high_total=d["high_total"], high_shown=len(high),
        linked=bool(links), filesystems=fs) + "\n"


def write(con, out: str, since=None, until=None, top: int = queries.TOP, pages: str | None = None,
          store: str = "") -> dict:
    """Query, render job pages (pages: a directory, or None), write OUT atomically;
    returns the data."""
    d = queries.site(con, top, since, until)
    links = job_pages(d["high_jobs"], pages, out) if pages else {}
    write_atomic(out, render(d, links, store))
    return d
