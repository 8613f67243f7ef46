"""iochar-parser --trace and --anonymize on real runs: callsite_workload (make_input
writes input.dat in 10 x 1 MiB, write_checkpoint 100 x 28,800 bytes to ckpt.dat,
read_input 10 x 1 MiB reads) under IOCHAR_TRACE=1 IOCHAR_CALLSITES=1, and 4 MPI ranks."""

import contextlib
import io
import json
import os
import zlib

import pytest

import iochar
from anoncheck import leaks
from iochar.cli import parser
from tool import LIB, mpiexec, run_log, workload

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")

CKPT, MIB = 28800, 1 << 20
USER = "quokkauser"  # the runtime takes the user from USER


def cli(*argv) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = parser.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def traced(tmp_path):
    d = tmp_path / "wallaby_project" / "run-numbat"
    d.mkdir(parents=True)
    _, log = run_log([workload("callsite_workload"), str(d)], d,
                     env={"IOCHAR_TRACE": "1", "IOCHAR_CALLSITES": "1", "USER": USER})
    return log


def test_trace_lines_of_a_run(traced):
    code, out, err = cli(traced.files[0], "--trace")
    assert code == 0 and err == ""
    assert "# trace (TRACE): 126 accesses" in out
    rows = [ln.split(" ", 9) for ln in out.splitlines() if not ln.startswith("#")]
    assert len(rows) == 126
    w = [r for r in rows if r[2] == "write" and r[9].endswith("/ckpt.dat")]
    assert [int(r[3]) for r in w] == [i * CKPT for i in range(100)]
    assert {int(r[4]) for r in w} == {CKPT}
    rd = [r for r in rows if r[2] == "read" and r[9].endswith("/input.dat")]
    assert [int(r[3]) for r in rd] == [i * MIB for i in range(10)]
    assert [r[2] for r in rows].count("meta") == 6
    assert {r[0] for r in rows} == {"0"} and {r[1] for r in rows} == {"POSIX"}
    assert all(float(r[6]) >= float(r[5]) for r in rows)
    code, out, _ = cli(traced.files[0], "--trace", "--json", "--path", "*/ckpt.dat")
    js = [json.loads(ln) for ln in out.splitlines()]
    assert len(js) == 102 and [j["op"] for j in js].count("write") == 100  # + open, close
    assert js[0]["offset"] is None and js[0]["op"] == "meta"


def test_trace_of_mpi_ranks(tmp_path):
    _, log = run_log(mpiexec(4) + [workload("mpi_workload")], tmp_path,
                     env={"IOCHAR_TRACE": "1"})
    code, out, _ = cli(log.files[0], "--trace", "--json", "--module", "POSIX",
                       "--path", "/posix.")
    js = [json.loads(ln) for ln in out.splitlines()]
    writes = sorted((j["rank"], j["length"], j["path"].rsplit("/", 1)[1]) for j in js
                    if j["op"] == "write")
    assert writes == [(r, 512, f"posix.{r}.dat") for r in range(4)]
    code, out, _ = cli(log.files[0], "--trace", "--rank", "2", "--json")
    assert code == 0 and {json.loads(ln)["rank"] for ln in out.splitlines()} == {2}


def test_anonymized_run_holds_no_original_name(traced, tmp_path):
    src = traced.files[0]
    j = traced.job
    secrets = ["wallaby_project", "run-numbat", "callsite_workload", "input.dat", "ckpt.dat",
               USER, str(tmp_path.name)]
    if len(j["hostname"]) >= 4:
        secrets.append(j["hostname"])
    assert leaks(src, secrets) == secrets  # the check finds them in the original
    out = tmp_path / "shared.iochar"
    code, printed, err = cli(src, "--anonymize", "-o", out, "--key", tmp_path / "site.key")
    assert code == 0 and printed.strip() == str(out) and err == ""
    assert leaks(out, secrets) == []
    a = iochar.open(out)
    for mod in traced.modules:
        x, y = traced.records(mod), a.records(mod)
        cols = [c for c in x.columns if c not in ("record_id", "path")]
        assert x[cols].equals(y[cols])
    code, tr, _ = cli(out, "--trace")
    assert code == 0 and "# trace (TRACE): 126 accesses" in tr
    body = "\n".join(ln for ln in tr.splitlines() if not ln.startswith("# iochar log:"))
    assert not [s for s in secrets if s in body]  # (the header names the copy's file)
    # the Darshan export of the copy: no original string in any zlib region either
    pytest.importorskip("darshan")
    dx = tmp_path / "shared.darshan"
    assert cli(out, "--to-darshan", dx)[0] == 0
    raw = dx.read_bytes()
    regions = []
    for i in range(len(raw) - 1):
        if raw[i] == 0x78 and raw[i + 1] in (0x01, 0x5E, 0x9C, 0xDA):
            try:
                regions.append(zlib.decompressobj().decompress(raw[i:]))
            except zlib.error:
                pass
    hay = raw + b"".join(regions)
    assert len(regions) >= 3 and not [
        s for s in secrets if s.encode() in hay]


def test_two_runs_one_key_share_names(tmp_path):
    logs = []
    for run in ("first", "second"):
        d = tmp_path / run
        d.mkdir()
        _, log = run_log([workload("knobs_workload"), str(tmp_path), "2"], d)
        logs.append(log)
    key = tmp_path / "k"
    outs = []
    for i, log in enumerate(logs):
        o = tmp_path / f"a{i}.iochar"
        assert cli(log.files[0], "--anonymize", "-o", o, "--key", key)[0] == 0
        outs.append(iochar.open(o))
    assert oct(os.stat(key).st_mode & 0o777) == "0o600"
    n0, n1 = (set(o.records("POSIX")["path"]) for o in outs)
    assert len(n0) == 2 and n0 == n1  # the same two files, the same hashed names
    assert outs[0].job["exe"] == outs[1].job["exe"] != logs[0].job["exe"]
