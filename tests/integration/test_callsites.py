"""Call sites (IOCHAR_CALLSITES) and the bounded trace (IOCHAR_TRACE) on a workload
with two known call sites: write_checkpoint (100 x 28,800-byte writes) and
read_input (10 x 1 MiB reads); make_input writes the input first (10 x 1 MiB)."""

import json
import subprocess
import sys

import pytest

import iochar
from iochar import callsites
from iochar.flags import PARTIAL
from tool import LIB, one, run_log, workload
from tool import run as tool_run

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")

CKPT, INPUT, MIB = 28800, 10, 1 << 20
ROW = callsites.TRACE_DTYPE.itemsize


def run(tmp_path, **env):
    return run_log([workload("callsite_workload"), str(tmp_path)], tmp_path, env=env)[1]


def sites_by(tab, function, kind):
    return [s for s in tab if s["function"] == function and s[kind]]


@pytest.mark.parametrize("sample", [None, "1"])
def test_both_call_sites_named_with_exact_ops(tmp_path, sample):
    env = {"IOCHAR_CALLSITES": "1"}
    if sample:
        env["IOCHAR_CALLSITES_SAMPLE"] = sample
    log = run(tmp_path, **env)
    tab = callsites.table(callsites.from_log(log))
    (w,) = sites_by(tab, "write_checkpoint", "writes")
    assert (w["writes"], w["bytes_written"], w["reads"]) == (100, 100 * CKPT, 0)
    assert (w["dominant_size"], w["dominant_size_count"]) == (CKPT, 100)
    assert w["file"].endswith("callsite_workload.c") and w["line"] > 0
    assert w["stack"][1].startswith("main at callsite_workload.c:")
    (r,) = sites_by(tab, "read_input", "reads")
    assert (r["reads"], r["bytes_read"], r["writes"]) == (INPUT, INPUT * MIB, 0)
    assert r["dominant_size"] == MIB and r["file"].endswith("callsite_workload.c")
    (mk,) = sites_by(tab, "make_input", "writes")
    assert (mk["writes"], mk["bytes_written"]) == (INPUT, INPUT * MIB)
    # metadata calls always walk: each open and close is its own line
    assert sum(s["meta"] for s in sites_by(tab, "read_input", "meta")) == 2
    assert len(sites_by(tab, "write_checkpoint", "meta")) == 2
    # every op is attributed: the sites add up to the module's counters
    posix = log.records("POSIX")
    for kind, counter in (("reads", "POSIX_READS"), ("writes", "POSIX_WRITES"),
                          ("bytes_read", "POSIX_BYTES_READ"),
                          ("bytes_written", "POSIX_BYTES_WRITTEN")):
        assert sum(s[kind] for s in tab if s["module"] == "POSIX") == posix[counter].sum()
    assert one(posix, "/ckpt.dat")["POSIX_WRITES"] == 100


def test_report_text_json_html_and_advice(tmp_path):
    run(tmp_path, IOCHAR_CALLSITES="1")
    (log,) = tmp_path.glob("*.iochar")
    cfg = tmp_path / "adv.toml"
    cfg.write_text("[small-io]\nmin_ops = 10\n")
    cli = [sys.executable, "-m", "iochar.cli.report", str(log), "--config", str(cfg)]
    out = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    assert "write_checkpoint at callsite_workload.c:" in out
    assert "read_input at callsite_workload.c:" in out
    assert "writes 100 (2.7 MiB), mostly 28.1 KiB" in out
    assert "at 91% of POSIX writes from write_checkpoint at callsite_workload.c:" in out
    rep = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True,
                                    check=True).stdout)
    (adv,) = [a for a in rep["advice"] if a["id"] == "small-io"]
    assert adv["evidence"]["callsite"].startswith("write_checkpoint at callsite_workload.c:")
    assert adv["evidence"]["callsite_share"] == pytest.approx(100 / 110, abs=1e-4)
    page = tmp_path / "r.html"
    subprocess.run(cli + ["--html", str(page)], capture_output=True, check=True)
    html = page.read_text()
    assert "<h2>Call sites</h2>" in html and "read_input at callsite_workload.c:" in html


def test_trace_segments_exact(tmp_path):
    log = run(tmp_path, IOCHAR_TRACE="1")
    obs = callsites.from_log(log)
    assert obs.sites.empty and obs.trace_dropped == 0 and log.job["partial"] == 0
    t = obs.trace
    assert len(t) == 10 + 100 + 10 + 6  # data ops plus 3 opens and 3 closes
    w = t[(t["op"] == "write") & t["path"].str.endswith("/ckpt.dat")]
    assert list(w["offset"]) == [i * CKPT for i in range(100)]
    assert set(w["length"]) == {CKPT}
    r = t[(t["op"] == "read") & t["path"].str.endswith("/input.dat")]
    assert list(r["offset"]) == [i * MIB for i in range(INPUT)]
    assert set(r["length"]) == {MIB}
    assert (t["rank"] == 0).all() and (t["module"] == "POSIX").all()
    assert (t["end"] >= t["start"]).all() and t["start"].is_monotonic_increasing
    assert (t["thread"] > 0).all() and t["thread"].nunique() == 1


def test_trace_truncated_keeps_first_rows(tmp_path):
    log = run(tmp_path, IOCHAR_TRACE="1", IOCHAR_TRACE_MEMORY=str(20 * ROW))
    obs = callsites.from_log(log)
    t = obs.trace
    assert len(t) == 20 and obs.trace_dropped == 126 - 20
    assert log.job["partial"] & PARTIAL["TRACE_TRUNCATED"]
    # the first 20: open input, 10 writes, close, open ckpt, 7 checkpoint writes
    assert list(t["op"][:12]) == ["meta"] + ["write"] * 10 + ["meta"]
    w = t[(t["op"] == "write") & t["path"].str.endswith("/ckpt.dat")]
    assert list(w["offset"]) == [i * CKPT for i in range(7)]
    rep = subprocess.run([sys.executable, "-m", "iochar.cli.report", str(log.files[0])],
                         capture_output=True, text=True, check=True).stdout
    assert "trace: 20 segments kept, 106 dropped" in rep


def test_trace_html_views(tmp_path):
    run(tmp_path, IOCHAR_TRACE="1", IOCHAR_CALLSITES="1")
    (log,) = tmp_path.glob("*.iochar")
    page = tmp_path / "r.html"
    subprocess.run([sys.executable, "-m", "iochar.cli.report", str(log), "--html", str(page)],
                   capture_output=True, check=True)
    html = page.read_text()
    assert 'alt="offset vs time"' in html and 'alt="rank vs time"' in html


def test_off_by_default(tmp_path):
    log = run(tmp_path)
    assert callsites.from_log(log) is None
    assert not [e for e in log.extra_sections if e[0] in ("CALLSITE", "LOADMAP", "TRACE")]


def test_mpi_call_sites_merged_across_ranks(tmp_path):
    """4 ranks run the same code: identical stacks merge (nranks 4), the sites
    still add up to the reduced counters, and each rank's trace is kept."""
    from tool import mpiexec

    p = tool_run(mpiexec(4) + [workload("mpi_workload")], tmp_path,
                 env={"IOCHAR_CALLSITES": "1", "IOCHAR_TRACE": "1"})
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    (lg,) = tmp_path.glob("*.iochar")
    log = iochar.open(str(lg))
    obs = callsites.from_log(log)
    tab = callsites.table(obs)
    for module, reads, writes in (("POSIX", "POSIX_READS", "POSIX_WRITES"),
                                  ("MPIIO", None, None)):
        sites = [s for s in tab if s["module"] == module]
        assert sites, module
        if reads:
            df = log.records(module)
            assert sum(s["reads"] for s in sites) == df[reads].sum()
            assert sum(s["writes"] for s in sites) == df[writes].sum()
    assert max(s["nranks"] for s in tab) == 4
    # no stack appears twice for one module: merged, not concatenated
    keys = [(s["module"], s["hash"]) for s in tab]
    assert len(keys) == len(set(keys))
    assert sorted(obs.trace["rank"].unique()) == [0, 1, 2, 3]
