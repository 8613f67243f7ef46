"""iochar-db's site page and time windows, on a store of 300 logs over 6 days (known
users, programs, findings and their costs: tests/helpers/sitelogs.py): --since/--until
pick the jobs by their start (UTC days whole), the findings table carries each finding's
cost as iochar-report gives it, an older store without those columns still reads, and
the page renders in headless Chromium with its figures, tables and job-page links."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pq = pytest.importorskip("pyarrow.parquet")

from cdp import CHROMIUM, Browser, check_in_browser  # noqa: E402
from iochar.db import Store, ingest, queries  # noqa: E402
from iochar.db import cli as dbcli  # noqa: E402
from sitelogs import DAY, T0, USERS, make_site_logs  # noqa: E402

N, DAYS = 300, 6
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("site")
    jobs = make_site_logs(d / "logs", N, DAYS)
    store = Store(d / "store", create=True)
    st = ingest(store, [d / "logs"], jobs=1, progress=False)
    assert (st.ingested, st.errors) == (N, 0)
    return d, store, jobs


def db(store, *args) -> tuple:
    """Run the iochar-db CLI in this process: (exit code, stdout)."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = dbcli.main(["--store", str(store.root), *args])
    return rc, out.getvalue()


def in_days(jobs, first, last):
    """The jobs started on days first..last (0 = 2026-01-01), both included."""
    return [j for j in jobs if first <= j["day"] <= last]


def test_findings_carry_their_cost(site):
    _, store, jobs = site
    rows = store.connect().execute("""SELECT j.jobid, f.id, f.severity, f.cost_s, f.cost_share
        FROM findings f JOIN jobs j USING (job_id) ORDER BY j.jobid""").fetchall()
    want = sorted((j["jobid"], "small-io", j["severity"], j["cost"],
                   j["cost"] / 100.0) for j in jobs if j["small"])
    assert [(a, b, c, d, pytest.approx(e, abs=1e-6)) for a, b, c, d, e in rows] == want  # share: 6 digits


def test_since_until_pick_jobs_by_start_day(site):
    _, store, jobs = site
    con = store.connect()
    day = queries.parse_when
    for first, last in ((0, 5), (1, 1), (2, 4), (5, 5)):
        since = day(f"2026-01-0{first + 1}")
        until = day(f"2026-01-0{last + 1}", end=True)
        s = queries.summary(con, 10, since, until)
        picked = in_days(jobs, first, last)
        assert s["totals"]["jobs"] == len(picked)
        assert s["totals"]["bytes_written"] == sum(
            int(j["frames"]["POSIX"]["POSIX_BYTES_WRITTEN"].sum()) for j in picked)
        f = {r["id"]: r for r in s["findings"]}
        assert f.get("small-io", {"jobs": 0})["jobs"] == sum(j["small"] for j in picked)
    # an ISO time with an offset: 2026-01-02T03:00+02:00 is 01:00 UTC, the day's first start
    s = queries.summary(con, 10, day("2026-01-02T03:00+02:00"), day("2026-01-02T01:05"))
    assert s["totals"]["jobs"] == 5  # 01:00 ... 01:04 UTC on day 1 (a job a minute)
    assert day("2026-01-02") == T0 + DAY and day("2026-01-02", end=True) == T0 + 2 * DAY


def test_cli_summary_and_history_windows(site):
    _, store, jobs = site
    rc, out = db(store, "summary", "--json", "--since", "2026-01-03", "--until", "2026-01-04")
    assert rc == 0 and json.loads(out)["totals"]["jobs"] == len(in_days(jobs, 2, 3))
    rc, out = db(store, "history", "--exe", "sim", "--json", "--since", "2026-01-05")
    runs = json.loads(out)["runs"]
    want = sorted(j["jobid"] for j in in_days(jobs, 4, 5) if j["exe"] == "/apps/sim")
    assert rc == 0 and want and sorted(r["jobid"] for r in runs) == want
    rc, _ = db(store, "history", "--exe", "sim", "--since", "2027-01-01")
    assert rc == 2  # no runs in that window: one line, exit 2
    p = subprocess.run([sys.executable, "-m", "iochar.db.cli", "--store", str(store.root),
                        "summary", "--since", "yesterday"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "reports")})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "not a date" in p.stderr


def test_site_data_ranks_by_time_lost(site):
    _, store, jobs = site
    d = queries.site(store.connect(), 10, queries.parse_when("2026-01-01"),
                     queries.parse_when("2026-01-03", end=True))
    picked = in_days(jobs, 0, 2)
    assert [r["date"] for r in d["days"]] == ["2026-01-01", "2026-01-02", "2026-01-03"]
    assert [r["jobs"] for r in d["days"]] == [len(in_days(jobs, k, k)) for k in range(3)]
    assert [r["lost"] for r in d["days"]] == [sum(j["cost"] for j in in_days(jobs, k, k))
                                              for k in range(3)]
    lost = {u: sum(j["cost"] for j in picked if j["user"] == u) for u in USERS}
    want = sorted(lost, key=lambda u: -lost[u])
    assert [r["name"] for r in d["users_by_lost"]] == want
    assert [r["lost"] for r in d["users_by_lost"]] == [lost[u] for u in want]
    high = [j for j in picked if j["small"] and j["severity"] == "high"]
    assert d["high_total"] == len(high)
    assert [r["jobid"] for r in d["high_jobs"]] == [
        j["jobid"] for j in sorted(high, key=lambda j: (-j["cost"], j["job"]["start_time"]))]
    rules = {(r["id"], r["severity"]): r for r in d["rules"]}
    assert rules[("small-io", "high")]["cost_s"] == sum(j["cost"] for j in high)
    assert rules[("small-io", "warn")]["jobs"] == sum(
        j["small"] and j["severity"] == "warn" for j in picked)
    fs = {r["mount_point"]: r for r in d["filesystems"]}
    assert set(fs) == {"/scratch", "/home"}
    assert fs["/scratch"]["fs_type"] == "lustre" and fs["/home"]["fs_type"] == "nfs"
    assert fs["/home"]["bytes_read"] == len(picked) * (1 << 20)
    assert fs["/scratch"]["bytes_written"] == sum(
        int(j["frames"]["POSIX"]["POSIX_BYTES_WRITTEN"].sum()) for j in picked)
    assert fs["/scratch"]["jobs"] == fs["/home"]["jobs"] == len(picked)


def test_store_without_cost_columns_still_reads(site, tmp_path):
    """A store written before the findings had cost_s/cost_share (and before the
    filesystems table): the columns read as NULL, the page still renders."""
    d, store, _ = site
    old = tmp_path / "old"
    shutil.copytree(store.root, old)
    shutil.rmtree(old / "filesystems")
    for f in (old / "findings").rglob("*.parquet"):
        t = pq.read_table(f)
        pq.write_table(t.drop_columns(["cost_s", "cost_share"]), f)
    con = Store(old).connect()
    assert con.execute("SELECT count(*), count(cost_s) FROM findings").fetchone() == (
        sum(j["small"] for j in site[2]), 0)
    s = queries.site(con, 3)
    assert s["totals"]["lost"] == 0 and s["filesystems"] == []
    rc, out = db(Store(old), "report", "--html", str(tmp_path / "old.html"), "--top", "2")
    assert rc == 0 and "wrote" in out
    assert "No file system data" in (tmp_path / "old.html").read_text()


PAGE_JS = """(() => ({h2: [...document.querySelectorAll('h2')].map(h => h.innerText),
  head: [...document.querySelectorAll('table')[0].querySelectorAll('tr')].map(
    r => [...r.cells].map(c => c.innerText)),
  links: [...document.querySelectorAll('a')].map(a => [a.innerText, a.getAttribute('href')]),
  alts: [...document.images].map(i => i.alt)}))()"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("IOCHAR_CHROMIUM_AS_USER"),
                    reason="the headless chromium recipe here runs as root (--no-sandbox)")
def test_site_page_in_chromium(site, tmp_path):
    _, store, jobs = site
    out, pages = tmp_path / "site.html", tmp_path / "pages"
    rc, said = db(store, "report", "--html", str(out), "--pages", str(pages), "--top", "1",
                  "--since", "2026-01-02", "--until", "2026-01-05")
    picked = in_days(jobs, 1, 4)
    high = sorted((j for j in picked if j["small"] and j["severity"] == "high"),
                  key=lambda j: (-j["cost"], j["job"]["start_time"]))
    assert rc == 0 and f"{len(picked)} jobs" in said
    check_in_browser(out, tmp_path, 4)
    with Browser(tmp_path / "cdp") as b:
        b.open(out.as_uri())
        seen = b.evaluate(PAGE_JS)
        assert b.errors() == []
    assert seen["h2"] == ["I/O over time", "Top users", "Top programs", "Top jobs", "Findings",
                          "Jobs with HIGH findings", "File systems"]
    assert seen["alts"] == ["I/O over time", "users by time lost", "programs by time lost",
                            "findings by rule"]
    head = dict(r for r in seen["head"] if len(r) == 2)
    assert head["jobs / users / programs"] == f"{len(picked)} / 5 / 4"
    assert head["window"] == "jobs started from 2026-01-02 00:00 UTC before 2026-01-06 00:00 UTC"
    # the first 5 (--top 1) HIGH jobs, costliest first, each linking to its rendered page
    linked = [(t, h) for t, h in seen["links"] if h.startswith("pages/")]
    assert [t for t, _ in linked][-5:] == [j["jobid"] for j in high[:5]]
    for _, h in linked[-5:]:
        page = tmp_path / h
        assert page.exists() and "iochar report: /apps/" in page.read_text()
    check_in_browser(tmp_path / linked[-1][1], tmp_path,
                     (tmp_path / linked[-1][1]).read_text().count("<img"))
