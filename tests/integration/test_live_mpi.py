"""The live view of a running 4-rank MPICH job writing known bytes in steps
(tests/integration/live_steps.c): `iochar-top --once --json` sampled every 0.5 s, the
exporter's /metrics scraped alongside, and a real Prometheus server scraping the exporter
every second. Totals within one call per rank of the truth, never decreasing, the job
gone within two samples of its end; Prometheus holds the exact final bytes and the rate
over the steady phase within 10% of the true rate."""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tool import LIB, ROOT, mpiexec, workload

W = workload("live_steps")
NP, STEPS, BYTES, PERIOD_MS, PAUSE_MS = 4, 120, 256 * 1024, 100, 4000
JOBID = "7731"
PYENV = dict(os.environ, PYTHONPATH=str(ROOT / "reports"))  # this checkout's iochar
TRUE_RATE = NP * BYTES / (PERIOD_MS / 1000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout=10) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def progress(path: Path) -> list:
    """[(rank, step, time)] of the steps done so far."""
    out = []
    for ln in path.read_text().splitlines():
        parts = ln.split()
        if len(parts) == 3:
            out.append((int(parts[0]), int(parts[1]), float(parts[2])))
    return out


def exported_written(text: str):
    """POSIX bytes written of job JOBID in an exposition (None: no such series)."""
    from prometheus_client.parser import text_string_to_metric_families
    total = None
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == "iochar_bytes_total" and s.labels.get("job") == JOBID and \
                    s.labels.get("module") == "POSIX" and s.labels.get("direction") == "write":
                total = (total or 0) + int(s.value)
    return total


def sampler(fn, pfile: Path, ended, out: list, after: int, errors: list):
    """Call fn every 0.5 s (at most), appending (steps done before, steps done after, its
    result, whether the job had ended before the call) to out, until `after` calls were
    made once the job ended."""
    try:
        n = 0
        while n < after:
            t0 = time.time()
            done = ended.is_set()
            lo = len(progress(pfile))
            v = fn()
            out.append((lo, len(progress(pfile)), v, done))
            n += done
            time.sleep(max(0.0, 0.5 - (time.time() - t0)))
    except Exception as e:  # noqa: BLE001 -- reported by the fixture
        errors.append(repr(e))


def start_prometheus(tmp: Path, target: str):
    """A Prometheus server of the Debian package on a free port, scraping target every
    second (honor_labels: the exporter's job label is the scheduler's job id); None when
    the binary is not installed."""
    exe = shutil.which("prometheus")
    if exe is None:
        return None, None
    port = free_port()
    cfg = tmp / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                   "scrape_configs:\n  - job_name: iochar\n    honor_labels: true\n"
                   f"    static_configs:\n      - targets: ['{target}']\n")
    p = subprocess.Popen([exe, f"--config.file={cfg}", f"--storage.tsdb.path={tmp / 'tsdb'}",
                          f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):  # ready, and its first scrape done (it applies targets every 5 s)
        try:
            if "Ready" in get(url + "/-/ready", timeout=2) and \
                    any(r["value"][1] == "1" for r in query(url, "query", query="up")):
                return p, url
        except OSError:
            pass
        if p.poll() is not None:
            raise AssertionError("prometheus did not start: " + p.stderr.read().decode())
        time.sleep(0.2)
    raise AssertionError("prometheus not ready after 60 s")


def query_range_any(url: str, expr: str, at: float) -> bool:
    """Whether expr (a dashboard's query) gives any series over the job's time."""
    return bool(query(url, "query_range", query=expr, start=at - 8, end=at, step="1"))


def query(url: str, path: str, **params):
    r = json.loads(get(f"{url}/api/v1/{path}?{urllib.parse.urlencode(params)}"))
    assert r["status"] == "success", r
    return r["data"]["result"]


@pytest.fixture(scope="module")
def run():
    """The job, observed by iochar-top, the exporter and Prometheus; what they saw."""
    tmp = Path(tempfile.mkdtemp(prefix="iochar-livempi-"))
    data, ld, logs, prog = tmp / "data", tmp / "live", tmp / "logs", tmp / "prog"
    for d in (data, logs, prog):
        d.mkdir()
    pfile = prog / "progress"
    pfile.touch()
    exp = subprocess.Popen([sys.executable, "-m", "iochar.cli.exporter", "--listen",
                            "127.0.0.1:0", "--livedir", str(ld)], env=PYENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    procs = [exp]
    try:
        line = exp.stdout.readline()
        assert "serving http://" in line, exp.stderr.read()
        metrics = line.split("serving ", 1)[1].strip()
        prom, purl = start_prometheus(tmp, metrics.split("//")[1].split("/")[0])
        if prom is not None:
            procs.append(prom)
        env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
        env.update(IOCHAR_LOGDIR=str(logs), IOCHAR_LIVEDIR=str(ld), LD_PRELOAD=str(LIB),
                   SLURM_JOB_ID=JOBID, IOCHAR_EXCLUDE=str(prog) + "/")
        t_start = time.time()
        job = subprocess.Popen(mpiexec(NP) + [W, str(data), str(pfile), str(STEPS), str(BYTES),
                                              str(PERIOD_MS), str(PAUSE_MS)], env=env,
                               cwd=str(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
        procs.append(job)
        ended = threading.Event()

        def top_sample():
            out = subprocess.run([sys.executable, "-m", "iochar.cli.top", "--once", "--json",
                                  "--livedir", str(ld)], env=PYENV, capture_output=True,
                                 text=True, timeout=120)
            assert out.returncode == 0 and out.stderr == "", out.stderr
            return json.loads(out.stdout)

        # iochar-top and the endpoint sampled each on its own every 0.5 s (or as fast as a
        # loaded machine runs them), each sample between two counts of the steps done
        samples, scrapes, errors = [], [], []
        for _ in range(600):  # the job's first process makes the live directory, and
            if ld.is_dir() or job.poll() is not None:  # iochar-top --livedir wants one there
                break
            time.sleep(0.05)
        threads = [threading.Thread(target=sampler, args=(fn, pfile, ended, out, after, errors))
                   for fn, out, after in ((top_sample, samples, 3),
                                          (lambda: exported_written(get(metrics)), scrapes, 6))]
        for t in threads:
            t.start()
        try:
            job.wait(timeout=180)
        finally:
            ended.set()
            for t in threads:
                t.join(timeout=300)
        assert not errors, errors
        assert job.returncode == 0, job.stderr.read()
        res = {"samples": samples, "scrapes": scrapes, "steps": progress(pfile),
               "t_start": t_start, "prom": purl, "logs": logs}
        if prom is not None:
            time.sleep(2)  # its last scrapes in
            res["prom_written"] = query(purl, "query_range", query="sum by (job) "
                                        f'(iochar_bytes_total{{job="{JOBID}",module="POSIX",'
                                        'direction="write"})', start=t_start,
                                        end=time.time(), step="0.5")
            steps = res["steps"]
            a = min(t for r_, s, t in steps if s == 10)  # the steady phase: steps 10 to the last
            b = max(t for r_, s, t in steps if s == STEPS)
            res["steady"] = (a, b)
            res["prom_rate"] = query(purl, "query", query="sum by (job) (rate(iochar_bytes_total"
                                     f'{{job="{JOBID}",module="POSIX",direction="write"}}'
                                     f"[{int(b - a)}s]))", time=b)
            res["prom_raw"] = query(purl, "query", query=f'iochar_bytes_total{{job="{JOBID}",'
                                    f'module="POSIX",direction="write"}}[{int(b - a) + 4}s]',
                                    time=b + 2)
            # every expression of the Grafana dashboard (docs/) parses and finds the job
            res["dashboard"] = []
            dash = json.loads((ROOT / "docs" / "grafana-iochar-live.json").read_text())
            for panel in dash["panels"]:
                for t in panel["targets"]:
                    expr = t["expr"].replace("$__rate_interval", "5s").replace(
                        "$__range", "60s").replace("$job", JOBID).replace("$user", ".*")
                    res["dashboard"].append((panel["title"], query_range_any(purl, expr, b)))
        yield res
    finally:
        for p in procs[::-1]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def check_series(points, name, grace=1, final=True):
    """(lo, hi, bytes written or None, after the end): within one call per rank of the
    progress lines around the read, whole calls, never decreasing; gone within two
    samples of the end (`grace` samples may still show it); the final total seen
    before."""
    seen = [(lo, hi, w) for lo, hi, w, ended in points if w is not None and not ended]
    assert len(seen) >= 3, (name, points)  # 0.5 s apart, or as fast as a loaded machine goes
    last = 0
    for lo, hi, w in seen:
        assert w % BYTES == 0, (name, w)
        assert lo <= w // BYTES <= min(hi + NP, NP * STEPS), (name, lo, hi, w // BYTES)
        assert w >= last, (name, points)
        last = w
    if final:  # a sample in the pause before MPI_Finalize
        assert last == NP * STEPS * BYTES, (name, last)
    # (iochar-top takes seconds on a loaded machine: it may miss the pause; a sample that
    # started in it is held to the whole total by the bounds above)
    after = [w for _, _, w, ended in points if ended]
    assert all(w is None for w in after[grace:]), (name, after)


def test_top_once_json_follows_the_job(run):
    pts = []
    for lo, hi, doc, ended in run["samples"]:
        jobs = [j for j in doc["jobs"] if j["job"] == JOBID]
        assert len(jobs) <= 1
        if jobs:
            j = jobs[0]
            assert (j["program"], j["user"], j["state"]) == \
                ("live_steps", pwd.getpwuid(os.getuid()).pw_name, "running")
            if lo > 0:  # every rank is past MPI_Init and its barrier
                assert j["processes"] == NP and j["ranks"] == NP
            assert set(j) >= {"job", "user", "program", "processes", "state", "bytes_read",
                              "bytes_written", "reads", "writes", "meta_ops",
                              "read_bytes_per_s", "write_bytes_per_s", "io_time"}
            # a call's bytes and its count are two stores: one call apart at most per rank
            assert abs(j["writes"] - j["bytes_written"] // BYTES) <= NP
            assert j["bytes_read"] == 0
        pts.append((lo, hi, jobs[0]["bytes_written"] if jobs else None, ended))
    check_series(pts, "iochar-top", final=False)


def test_exporter_endpoint_follows_the_job(run):
    # the exporter keeps an ended job's series for 3 collections (Prometheus's scrapes
    # count too), so that Prometheus sees its final values
    check_series(run["scrapes"], "exporter", grace=3)


def test_prometheus_exact_total_and_rate(run):
    if run["prom"] is None:
        pytest.skip("the Debian package prometheus is not installed (apt-get install "
                    "prometheus): no real Prometheus server to scrape the exporter")
    (series,) = run["prom_written"]
    values = [int(float(v)) for _, v in series["values"]]
    assert max(values) == NP * STEPS * BYTES
    assert values == sorted(values)  # a counter that never went down
    for title, found in run["dashboard"]:
        assert found, title
    (rate,) = run["prom_rate"]
    got = float(rate["value"][1])
    assert abs(got - TRUE_RATE) <= 0.1 * TRUE_RATE, (got, TRUE_RATE, run["steady"],
                                                     run["prom_raw"])
