"""iochar logs written as Darshan logs (reports/iochar/darshan_export.py): layouts against
PyDarshan's library, corpus and hand-built logs read back three ways, bad input."""

import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

darshan = pytest.importorskip("darshan")

import darshan_check as D  # noqa: E402
import iochar  # noqa: E402
from iochar.darshan_counters import MODULES  # noqa: E402
from iochar.darshan_export import HEADER_SIZE, export, to_bytes  # noqa: E402
from iochar.log import OP  # noqa: E402
from iochar.writer import fnv1a64, write_log  # noqa: E402
from logdata import make_job, posix_like_schema  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def parser_cli(capsys, *args):
    """iochar-parser in this process: (exit status, stdout, stderr)."""
    from iochar.cli import parser
    rc = parser.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_layouts_are_darshans():
    from darshan.backend import cffi_backend as be
    for m in MODULES:
        assert m.ints == be.counter_names(m.name) and m.floats == be.fcounter_names(m.name)
        rec = "darshan_hdf5_dataset" if m.name == "H5D" else \
            "darshan_pnetcdf_var" if m.name == "PNETCDF_VAR" else None
        if rec:
            assert be.ffi.sizeof(f"struct {rec}") == 24 + 8 * (len(m.ints) + len(m.floats))


@pytest.mark.parametrize("name", ["mpi4", "posix", "netcdf", "posix_folded"])
def test_corpus_logs_read_back(tmp_path, name):
    log = iochar.open(str(CORPUS / f"{name}.iochar"))
    out = export(log, tmp_path / "x.darshan")
    assert D.check_pydarshan(log, out) > 0 and D.check_roundtrip(log, out) > 0
    if D.DARSHAN_PARSER.exists():
        assert D.check_parser(log, out, "--show-incomplete") > 0
    flags = struct.unpack_from("<Q", out.read_bytes(), 24)[0]
    assert flags == (2 if name == "posix_folded" else 0)  # bit 1: POSIX lost file records


def test_aggregate_record_keeps_the_totals(tmp_path):
    log = iochar.open(str(CORPUS / "posix_folded.iochar"))
    out = export(log, tmp_path / "x.darshan")
    rep = darshan.DarshanReport(str(out), read_all=True)
    c = rep.records["POSIX"].to_df()["counters"]
    agg = c[c["id"] == 0xFFFFFFFFFFFFFFFF]
    assert rep.name_records[0xFFFFFFFFFFFFFFFF] == "<AGGREGATE>" and len(agg) == 1
    assert c["POSIX_BYTES_WRITTEN"].sum() == log.records("POSIX")["POSIX_BYTES_WRITTEN"].sum()
    assert rep.metadata["job"]["metadata"]["folded_files"] == "417"
    if D.DARSHAN_PARSER.exists():  # as for a Darshan log that ran out of memory
        p = subprocess.run([str(D.DARSHAN_PARSER), str(out)], capture_output=True)
        assert b"The POSIX module contains incomplete data" in p.stdout + p.stderr


def test_empty_job(tmp_path, capsys):
    src = tmp_path / "empty.iochar"
    write_log(src, make_job(), {})
    out = tmp_path / "empty.darshan"
    assert parser_cli(capsys, src, "--to-darshan", out) == (0, f"{out}\n", "")
    data = out.read_bytes()
    assert data[:8] == b"3.41\0\0\0\0" and struct.unpack_from("<q", data, 8)[0] == 6567223
    assert struct.unpack_from("<18Q", data, 24) == (0,) * 18  # no partial, names, modules
    rep = darshan.DarshanReport(str(out), read_all=True)
    assert rep.modules == {} and rep.metadata["job"]["nprocs"] == 4
    assert rep.mounts == [("/", "unknown")]  # no mounts in the log
    assert rep.metadata["job"]["jobid"] == 1234 and rep.metadata["exe"] == "/home/u/app -n 3 in.dat"
    back = iochar.open(str(out))
    assert back.modules == [] and back.job["start_time"] == 1700000000.25
    if D.DARSHAN_PARSER.exists():
        q = subprocess.run([str(D.DARSHAN_PARSER), str(out)], capture_output=True)
        assert q.returncode == 0 and b"# nprocs: 4" in q.stdout


COMP_FIELDS = ("EXT_START", "EXT_END", "STRIPE_SIZE", "STRIPE_COUNT", "FLAGS", "MIRROR_ID",
               "STRIPE_PATTERN")


def _lustre_log(path):
    paths = ["/lus/a.dat", "/lus/b.dat", "/lus/c.dat", "/home/d.dat"]
    base = posix_like_schema()
    ints = [c for c in base if "_F_" not in c[0]]
    schema = ints + [(f"POSIX_LUSTRE_{k}", OP["ANY"]) for k in
                     ("STRIPE_SIZE", "STRIPE_COUNT", "STRIPE_OFFSET", "COMPONENTS")] + \
        [c for c in base if "_F_" in c[0]]
    df = pd.DataFrame({"rank": [0, -1, 1, 0], "record_id": np.array([fnv1a64(p) for p in paths],
                                                                     dtype=np.uint64),
                       "path": paths})
    for n, _ in schema:
        df[n] = 0.5 if "_F_" in n else 3
    # a plain layout; a composite (3 components) described by its widest one; a
    # component not instantiated yet (count -1); not on Lustre
    df["POSIX_LUSTRE_STRIPE_SIZE"] = [1 << 20, 4 << 20, 1 << 20, 0]
    df["POSIX_LUSTRE_STRIPE_COUNT"] = [4, 8, -1, 0]
    df["POSIX_LUSTRE_STRIPE_OFFSET"] = [7, -1, -1, 0]
    df["POSIX_LUSTRE_COMPONENTS"] = [1, 3, 2, 0]
    # the LUSTRE module's record of the composite: its components over the accessed
    # extent (the others have none)
    comps = [(0, 1 << 20, 1 << 20, 1, 0x10, 0, 1), (1 << 20, -1, 4 << 20, 8, 0x10, 0, 1)]
    lschema = [("LUSTRE_COMPONENTS", OP["ANY"]), ("LUSTRE_COMPS_LISTED", OP["ANY"])] + \
        [(f"LUSTRE_COMP{n}_{f}", OP["ANY"]) for n in range(1, 5) for f in COMP_FIELDS]
    lu = df.iloc[[1], :3].reset_index(drop=True)
    lu["LUSTRE_COMPONENTS"], lu["LUSTRE_COMPS_LISTED"] = 3, 2
    for n in range(1, 5):
        for k, f in enumerate(COMP_FIELDS):
            lu[f"LUSTRE_COMP{n}_{f}"] = comps[n - 1][k] if n <= 2 else 0
    write_log(path, make_job(), {"POSIX": {"schema": schema, "records": df},
                                 "LUSTRE": {"schema": lschema, "records": lu}},
              mounts=[("/lus", "lustre", 4096), ("/home", "ext4", 4096)])
    return paths


def test_lustre_facts_become_lustre_records(tmp_path):
    paths = _lustre_log(tmp_path / "l.iochar")
    log = iochar.open(str(tmp_path / "l.iochar"))
    out = export(log, tmp_path / "l.darshan")
    assert D.check_pydarshan(log, out) > 0 and D.check_roundtrip(log, out) > 0
    lu = iochar.open(str(out)).records("LUSTRE").sort_values("path")
    assert lu["path"].tolist() == paths[:2] and lu["rank"].tolist() == [0, -1]
    assert lu["LUSTRE_STRIPE_SIZE"].tolist() == [1 << 20, 1 << 20]  # the first component's
    assert lu["LUSTRE_STRIPE_COUNT"].tolist() == [4, 1]
    assert sorted(iochar.open(str(out)).mounts.values.tolist()) == [["/home", "ext4", 0],
                                                                   ["/lus", "lustre", 0]]
    if D.DARSHAN_PARSER.exists():
        vals = D.parser_values(out)
        rid = fnv1a64(paths[0])
        assert vals[("LUSTRE", 0, rid, "LUSTRE_COMP1_STRIPE_SIZE")] == str(1 << 20)
        assert vals[("LUSTRE", 0, rid, "LUSTRE_COMP1_OST_ID_0")] == "7"
        assert vals[("LUSTRE", 0, rid, "LUSTRE_COMP1_OST_ID_3")] == "-1"
        rid = fnv1a64(paths[1])  # the composite: both components, Darshan's names
        assert vals[("LUSTRE", -1, rid, "LUSTRE_COMP2_STRIPE_SIZE")] == str(4 << 20)
        assert vals[("LUSTRE", -1, rid, "LUSTRE_COMP2_EXT_START")] == str(1 << 20)
        assert vals[("LUSTRE", -1, rid, "LUSTRE_COMP1_STRIPE_COUNT")] == "1"
    # read back: the components as written, and the first one's stripe in the frame
    comp = lu[lu["path"] == paths[1]]
    assert comp["LUSTRE_COMPONENTS"].tolist() == [2] and comp["LUSTRE_OSTS"].tolist() == [0]
    assert comp["LUSTRE_COMP2_STRIPE_COUNT"].tolist() == [8]


def test_job_record_and_metadata(tmp_path):
    src = tmp_path / "j.iochar"
    write_log(src, make_job(jobid="8812.pbs01", cmdline="./app\nsecond line", recovered=1,
                            ended_by="killed", partial=8),
              {}, mounts=[("/a b", "ext4", 4096), ("/scratch", "lustre", 4096)])
    rep = darshan.DarshanReport(str(export(iochar.open(str(src)), tmp_path / "j.darshan")))
    job = rep.metadata["job"]
    assert job["jobid"] == 8812 and job["uid"] == 1000
    assert (job["start_time_sec"], job["start_time_nsec"]) == (1700000000, 250000000)
    assert (job["end_time_sec"], job["end_time_nsec"]) == (1700000010, 500000000)
    md = job["metadata"]
    assert md["iochar_jobid"] == "8812.pbs01" and md["recovered"] == "1"
    assert md["ended_by"] == "killed" and md["iochar_partial"] == "8"
    assert md["hostname"] == "node001" and md["lib_ver"] == "iochar 0.1.0"
    assert rep.metadata["exe"] == "./app second line"
    assert rep.mounts == [("/scratch", "lustre")]  # a mount point with a space is left out


def test_long_command_line_and_many_mounts_fit_the_job_record(tmp_path):
    src = tmp_path / "j.iochar"
    mounts = [(f"/m{i:04d}/" + "x" * 40, "nfs", 4096) for i in range(200)]
    write_log(src, make_job(cmdline="a" * 5000), {}, mounts=mounts)
    log = iochar.open(str(src))
    data = to_bytes(log)
    import zlib
    job = zlib.decompressobj().decompress(data[HEADER_SIZE:])
    assert len(job) <= 4096 and job.endswith(b"\0")
    rep = darshan.DarshanReport(str(export(log, tmp_path / "j.darshan")))
    # all the room but the one mount entry readers need to end the exe line
    assert rep.metadata["exe"] == "a" * (4096 - 1080 - 1 - len("\nunknown\t/"))
    assert rep.mounts == [("/", "unknown")]


def test_bad_input_and_existing_outputs(tmp_path, capsys):
    bad = tmp_path / "bad.iochar"
    bad.write_bytes((CORPUS / "posix.iochar").read_bytes()[:200])
    rc, out, err = parser_cli(capsys, bad, "--to-darshan", tmp_path / "o.darshan")
    assert (rc, out) == (2, "") and (rc, out, err) == parser_cli(capsys, bad)
    assert err.count("\n") == 1 and err.startswith("iochar-parser: error: ")
    assert os.listdir(tmp_path) == ["bad.iochar"]  # no output, no temp file left

    dest = tmp_path / "o.darshan"
    dest.write_bytes(b"keep")
    rc, _, err = parser_cli(capsys, CORPUS / "posix.iochar", "--to-darshan", dest)
    assert rc == 2 and err == f"iochar-parser: error: {dest}: exists (not overwritten)\n"
    assert dest.read_bytes() == b"keep"
    link = tmp_path / "link.darshan"
    link.symlink_to(tmp_path / "target")  # dangling: still never followed
    assert parser_cli(capsys, CORPUS / "posix.iochar", "--to-darshan", link)[0] == 2
    assert sorted(os.listdir(tmp_path)) == ["bad.iochar", "link.darshan", "o.darshan"]

    dl = Path(darshan.__file__).parent / "examples" / "example_logs" / "ior_hdf5_example.darshan"
    rc, _, err = parser_cli(capsys, dl, "--to-darshan", tmp_path / "again.darshan")
    assert rc == 2 and "is a Darshan log already" in err


def test_db_export(tmp_path):
    pytest.importorskip("duckdb")
    from iochar.db.cli import main
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in ("posix", "mpi4"):
        (logs / f"{n}.iochar").write_bytes((CORPUS / f"{n}.iochar").read_bytes())
    store, out = tmp_path / "s", tmp_path / "out"
    assert main(["--store", str(store), "ingest", str(logs)]) == 0
    assert main(["--store", str(store), "export", "--darshan", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["mpi4.darshan", "posix.darshan"]
    for n in ("posix", "mpi4"):
        log = iochar.open(str(logs / f"{n}.iochar"))
        assert D.check_pydarshan(log, out / f"{n}.darshan") > 0
    before = (out / "posix.darshan").read_bytes()
    (out / "mpi4.darshan").unlink()
    (logs / "mpi4.iochar").rename(logs / "moved")
    assert main(["--store", str(store), "export", "--darshan", str(out)]) == 1
    assert (out / "posix.darshan").read_bytes() == before  # there already: left as it was
    assert not (out / "mpi4.darshan").exists()


def test_file_systems_without_hard_links(tmp_path, monkeypatch):
    import errno

    from iochar import darshan_export as E

    def no_link(src, dst, **kw):  # no hard links (nor O_TMPFILE linking)
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(E.os, "link", no_link)
    log = iochar.open(str(CORPUS / "posix.iochar"))
    out = export(log, tmp_path / "x.darshan")
    assert os.listdir(tmp_path) == ["x.darshan"] and (out.stat().st_mode & 0o777) == 0o600
    assert out.read_bytes() == to_bytes(log)
    with pytest.raises(iochar.LogError, match="exists"):
        export(log, out)


def test_recovered_live_file(tmp_path):
    import gzip
    live = tmp_path / ".job.iochar.0123456789abcdef.live"
    live.write_bytes(gzip.decompress((CORPUS / "live" / "version2.live.gz").read_bytes()))
    log = iochar.open(str(live))  # a process killed before writing its log
    out = export(log, tmp_path / "rec.darshan")
    assert D.check_pydarshan(log, out) > 0 and D.check_roundtrip(log, out) > 0
    md = darshan.DarshanReport(str(out)).metadata["job"]["metadata"]
    assert (md["recovered"], md["ended_by"], md["iochar_partial"]) == ("1", "killed", "8")
