"""iochar-parser --trace: an iochar log's TRACE sections and a Darshan log's DXT records,
one access a line (text and JSON Lines), filters, escaping, no trace."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from iochar import darshan
from iochar.callsites import TRACE_DTYPE
from iochar.cli import parser
from iochar.writer import fnv1a64, write_log
from logdata import make_job, posix_like_schema, random_records

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "darshan-real"
ODD = "/scratch/a\nb\udcff c.dat"  # a newline, a byte that is not UTF-8, a space


def trace_payload(rows, modules=("POSIX", "STDIO"), dropped=0) -> bytes:
    """TRACE payload (docs/log-format.md): dropped, row size, module names, rows."""
    head = struct.pack("<QII", dropped, TRACE_DTYPE.itemsize, len(modules))
    names = b"".join(struct.pack("<H", len(m)) + m.encode() for m in modules)
    arr = np.zeros(len(rows), dtype=TRACE_DTYPE)
    for i, r in enumerate(rows):
        for k, v in r.items():
            arr[i][k] = v
    return head + names + arr.tobytes()


def make(tmp_path, dropped=0):
    paths = ["/scratch/in.dat", ODD]
    schema = posix_like_schema()
    a, b = fnv1a64(paths[0]), fnv1a64(paths[1])
    recs = random_records(schema, 2, nprocs=2).drop(columns="path").assign(record_id=[a, b])
    rank0 = [dict(record_id=a, offset=-1, length=0, start=0.5, end=0.75, rank=0, thread=77,
                  module=0, op=2),
             dict(record_id=a, offset=0, length=4096, start=1.0, end=1.25, rank=0, thread=77,
                  module=0, op=0),
             dict(record_id=b, offset=8192, length=100, start=3.0, end=3.5, rank=0, thread=78,
                  module=1, op=1)]
    rank1 = [dict(record_id=a, offset=4096, length=-1, start=2.0, end=2.000000001, rank=1,
                  thread=90, module=0, op=0)]
    path = tmp_path / "t.iochar"
    write_log(path, make_job(nprocs=2), {"POSIX": {"schema": schema, "records": recs}},
              names={a: paths[0], b: paths[1]},
              extra_sections=[("TRACE", "", 3, trace_payload(rank0, dropped=dropped)),
                              ("TRACE", "", 1, trace_payload(rank1, ("POSIX",)))])
    return path, a, b


def body(out):
    return [ln for ln in out.splitlines() if not ln.startswith("#")]


def test_text_one_access_a_line_in_start_order(tmp_path, capsys):
    path, a, b = make(tmp_path, dropped=5)
    assert parser.main([str(path), "--trace"]) == 0
    out = capsys.readouterr().out
    assert "# trace (TRACE): 4 accesses, 5 calls not kept (IOCHAR_TRACE_MEMORY full)" in out
    assert "#<rank> <module> <op> <offset> <length> <start> <end> <thread> <record id> " \
           "<file name>" in out
    assert body(out) == [
        f"0 POSIX meta -1 0 0.500000000 0.750000000 77 {a} /scratch/in.dat",
        f"0 POSIX read 0 4096 1.000000000 1.250000000 77 {a} /scratch/in.dat",
        f"1 POSIX read 4096 -1 2.000000000 2.000000001 90 {a} /scratch/in.dat",
        f"0 STDIO write 8192 100 3.000000000 3.500000000 78 {b} /scratch/a\\nb\\xff c.dat"]


def test_json_lines(tmp_path, capsys):
    path, a, b = make(tmp_path)
    assert parser.main([str(path), "--trace", "--json"]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert len(rows) == 4
    assert rows[0] == {"rank": 0, "module": "POSIX", "op": "meta", "offset": None, "length": 0,
                       "start": 0.5, "end": 0.75, "thread": 77, "record_id": a,
                       "path": "/scratch/in.dat"}
    assert rows[3]["path"] == "/scratch/a\\nb\\xff c.dat" and rows[3]["record_id"] == b
    assert rows[2]["length"] == -1 and rows[2]["end"] == 2.000000001


def test_filters(tmp_path, capsys):
    path, a, b = make(tmp_path)
    assert parser.main([str(path), "--trace", "--rank", "1"]) == 0
    assert body(capsys.readouterr().out) == [
        f"1 POSIX read 4096 -1 2.000000000 2.000000001 90 {a} /scratch/in.dat"]
    assert parser.main([str(path), "--trace", "--module", "STDIO", "--json"]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [(r["module"], r["op"], r["offset"]) for r in rows] == [("STDIO", "write", 8192)]
    assert parser.main([str(path), "--trace", "--path", "*/in.dat", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_no_trace_and_bad_arguments(tmp_path, capsys):
    path = tmp_path / "n.iochar"
    schema = posix_like_schema()
    write_log(path, make_job(), {"POSIX": {"schema": schema, "records": random_records(schema, 1)}})
    assert parser.main([str(path), "--trace"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("# no trace in this log") and "# nprocs: 4" in out
    assert all(ln.startswith("#") for ln in out)
    assert parser.main([str(path), "--trace", "--json"]) == 0
    assert capsys.readouterr().out == ""
    with pytest.raises(SystemExit) as e:
        parser.main([str(path), "--json"])
    assert e.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def _pydarshan_segments(path):
    """The same log's DXT through PyDarshan's own per-segment reader (a second way)."""
    from darshan.backend import cffi_backend as be
    log = be.log_open(str(path))
    try:
        names = be.log_get_name_records(log)
        out = []
        for dmod, mod in (("DXT_POSIX", "POSIX"), ("DXT_MPIIO", "MPIIO")):
            while (rec := be.log_get_dxt_record(log, dmod)) is not None:
                for op in ("write", "read"):
                    for s in rec[f"{op}_segments"]:
                        out.append((int(rec["rank"]), mod, op, s["offset"], s["length"],
                                    s["start_time"], s["end_time"], names[rec["id"]]))
        return out
    finally:
        be.log_close(log)


@pytest.mark.parametrize("name", [
    "wheel__dxt.darshan",
    "mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"])
def test_darshan_dxt_equals_pydarshan(name, capsys):
    pytest.importorskip("darshan")
    path = CORPUS / name
    want = sorted(_pydarshan_segments(path), key=lambda r: (r[5], r[0]))
    assert parser.main([str(path), "--trace", "--json"]) == 0
    got = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert len(got) == len(want) > 500
    assert sorted((r["rank"], r["module"], r["op"], r["offset"], r["length"], r["start"],
                   r["end"], r["path"]) for r in got) == sorted(want)
    assert all(r["thread"] is None for r in got)
    assert [r["start"] for r in got] == sorted(r["start"] for r in got)


def test_darshan_dxt_known_rows(capsys):
    pytest.importorskip("darshan")
    path = CORPUS / ("mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-"
                     "9815401321915095332_1.darshan")
    df = darshan.dxt_trace(path)
    assert len(df) == 576
    assert df["module"].value_counts().to_dict() == {"POSIX": 320, "MPIIO": 256}
    assert parser.main([str(path), "--trace"]) == 0
    first = body(capsys.readouterr().out)[0].split(" ")
    assert first[:5] == ["10", "POSIX", "write", "0", "40"] and first[7] == "-"
    assert first[9] == "/tmp/ompi.sn362.28751/jf.47773/1/test.out_cid-1-33381.sm"


def test_darshan_without_dxt(capsys):
    pytest.importorskip("darshan")
    assert parser.main([str(CORPUS / "wheel__example.darshan"), "--trace"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("# no trace in this log")
