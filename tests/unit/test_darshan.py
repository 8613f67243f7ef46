"""Darshan logs (the example logs the `darshan` wheel ships) through iochar.open and the CLIs."""

import json
from pathlib import Path

import numpy as np
import pytest

darshan = pytest.importorskip("darshan")

import iochar  # noqa: E402
from iochar.cli import diff, report  # noqa: E402

EXAMPLES = Path(darshan.__file__).parent / "examples" / "example_logs"
IOR = EXAMPLES / "ior_hdf5_example.darshan"


def pydarshan(path, module):
    """The same log through PyDarshan's own report API (an independent reading)."""
    r = darshan.DarshanReport(str(path), read_all=False)
    r.mod_read_all_records(module)
    return r.records[module].to_df()


def test_job_and_modules():
    log = iochar.open(str(IOR))
    assert log.modules == ["POSIX", "MPIIO", "STDIO", "H5F", "H5D", "LUSTRE"]
    j = log.job
    assert (j["nprocs"], j["jobid"], j["uid"]) == (4, "32324925", 69628)
    assert j["start_time"] == 1594155460.0 and j["end_time"] == 1594155461.0
    assert j["exe"] == "/global/u2/s/ssnyder/software/ior/build/src/ior"
    assert j["cmdline"].endswith("-o /global/cscratch1/sd/ssnyder/test123.h5")


def test_counters_pass_through_with_darshan_values():
    log = iochar.open(str(IOR))
    for mod, dmod in (("POSIX", "POSIX"), ("MPIIO", "MPI-IO"), ("H5D", "H5D")):
        ours, theirs = log.records(mod), pydarshan(IOR, dmod)
        assert list(ours["record_id"]) == list(theirs["counters"]["id"].astype(np.uint64))
        for name in ("_BYTES_WRITTEN", "_BYTES_READ"):
            c = mod + name
            assert list(ours[c]) == list(theirs["counters"][c])
        assert np.allclose(ours[f"{mod}_F_WRITE_TIME"], theirs["fcounters"][f"{mod}_F_WRITE_TIME"])
    h5d, th5d = log.records("H5D"), pydarshan(IOR, "H5D")["counters"]
    # Darshan's aggregate-size bins are iochar's size bins
    assert list(h5d["H5D_SIZE_WRITE_1M_4M"]) == list(th5d["H5D_SIZE_WRITE_AGG_1M_4M"])
    assert "H5D_SIZE_WRITE_AGG_1M_4M" not in h5d
    posix = log.records("POSIX")
    assert posix["path"].iloc[0] == "/global/cscratch1/sd/ssnyder/test123.h5"
    # what Darshan did not record (-1 everywhere) is absent, not zero
    assert "POSIX_MMAPS" not in posix and "POSIX_OPENS" in posix
    assert "POSIX_FSYNCS" in posix and "H5D_LAYOUT" not in h5d


def test_lustre_frame():
    lu = iochar.open(str(IOR)).records("LUSTRE")
    # darshan-parser's LUSTRE_COMP<N>_* as columns, one set per component of the
    # file with the most (advice/pfl.py reads them, as an iochar log's LUSTRE module's)
    comp1 = [f"LUSTRE_COMP1_{f}" for f in ("EXT_START", "EXT_END", "STRIPE_SIZE",
                                          "STRIPE_COUNT", "FLAGS", "MIRROR_ID",
                                          "STRIPE_PATTERN")]
    assert list(lu.columns) == ["rank", "record_id", "path", "LUSTRE_STRIPE_SIZE",
                                "LUSTRE_STRIPE_COUNT", "LUSTRE_COMPONENTS", "LUSTRE_OSTS",
                                "LUSTRE_OST_IDS", "LUSTRE_COMPS", *comp1]
    assert lu.iloc[0][3:7].tolist() == [1048576.0, 1.0, 1, 1]
    lu = iochar.open(str(EXAMPLES / "example.darshan")).records("LUSTRE")
    # a Darshan 3.1 log: one component over the whole file, flags and mirror unknown
    assert lu.iloc[0][3:9].tolist() == [1048576.0, 24.0, 1, 24,
                                        "7,9,23,21,1,19,20,8,18,12,6,2,10,16,4,0,22,14,13,17,"
                                        "5,15,11,3", "0:-1:1048576:24:-1:-1:-1"]
    assert lu.iloc[0][comp1].tolist() == [0, -1, 1048576, 24, -1, -1, -1]


def test_report_and_advice_use_the_stripe(capsys):
    assert report.main(["--json", str(EXAMPLES / "example.darshan")]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert sorted(rep["modules"]) == ["MPIIO", "POSIX", "STDIO"]  # LUSTRE is settings, not I/O
    mis = [a for a in rep["advice"] if a["id"] == "misaligned"]
    assert mis and "the stripe unit (1 MiB)" in mis[0]["message"]
    # vpicio.hdf5 with no H5 records: the remedy is HDF5's, the file named by its name
    assert "H5Pset_alignment(fapl, threshold, 1 MiB)" in mis[0]["recommendation"]
    for f in sorted(EXAMPLES.glob("*.darshan")):
        assert report.main([str(f)]) == 0, f
    capsys.readouterr()


def test_diff_on_darshan_logs(capsys):
    assert diff.main([str(IOR), str(IOR)]) == 0
    assert "verdict: ok" in capsys.readouterr().out


def test_corrupt_darshan_log_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(IOR.read_bytes()[:300])
    with pytest.raises(iochar.LogError, match="bad.darshan"):
        iochar.open(str(bad))
    assert report.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("iochar-report: error: ")
    (tmp_path / "text.darshan").write_text("hello")
    with pytest.raises(iochar.LogError, match="not a Darshan log"):
        iochar.open(str(tmp_path / "text.darshan"))


def test_db_ingests_the_examples(tmp_path):
    pytest.importorskip("duckdb")
    from iochar.db import Store, ingest
    store = Store(tmp_path / "s", create=True)
    st = ingest(store, [EXAMPLES], jobs=1, progress=False)
    assert (st.ingested, st.errors) == (len(list(EXAMPLES.glob("*.darshan"))), 0)
    con = store.connect()
    assert con.execute("SELECT nprocs, source FROM jobs WHERE jobid = '32324925'").fetchall() == \
        [(4, "darshan")]
    assert con.execute("SELECT count(*) FROM lustre").fetchone()[0] > 0


def _advice(path):
    return report.build(report.load([str(path)]))["advice"]


def _all_findings(adv):
    """Every finding, the folded symptoms included, as (id, message)."""
    return [(a["id"], a["message"]) for a in adv] + \
        [(f["id"], f["message"]) for a in adv for f in a["folded"]]


def test_advice_says_nothing_of_counters_darshan_lacks():
    # sample-badost: 2048 ranks each fopen 3 files once (6,144 opens): not repeated opens,
    # so no metadata finding; 2,056 fflush() calls are not syncs (no fsync-storm)
    adv = _advice(EXAMPLES / "sample-badost.darshan")
    found = dict(_all_findings(adv))
    assert "metadata-heavy" not in found and "fsync-storm" not in found
    # Darshan's STDIO module (as iochar's) counts no stat calls: no finding claims "0 stats"
    for f in sorted(EXAMPLES.glob("*.darshan")):
        adv = _advice(f)
        for _, msg in _all_findings(adv):
            assert " 0 stats" not in msg, (f.name, msg)
        assert not [a for a in adv if "STDIO_STATS" in a["evidence"]], f.name


def test_stdio_straggler_remedy_names_stdio_calls():
    adv = _advice(EXAMPLES / "noposix.darshan")
    (imb,) = [a for a in adv if a["id"] == "rank-imbalance"]
    assert imb["module"] == "STDIO" and imb["message"].startswith("STDIO: 1 shared file(s)")
    assert "each rank's fwrite/fread" in imb["recommendation"]
    assert "pwrite" not in imb["recommendation"]


def test_db_findings_are_the_reports_advice(tmp_path):
    """iochar-db stores, per job, the findings iochar-report gives for that log."""
    pytest.importorskip("duckdb")
    from iochar.db import Store, ingest
    from iochar.db.extract import content_hash
    store = Store(tmp_path / "s", create=True)
    ingest(store, [EXAMPLES], jobs=1, progress=False)
    con = store.connect()
    for f in sorted(EXAMPLES.glob("*.darshan")):
        want = sorted((a["id"], a["severity"], a["module"], a["message"]) for a in _advice(f))
        got = con.execute("SELECT id, severity, module, message FROM findings WHERE job_id = ?",
                          [content_hash(f.read_bytes())]).fetchall()
        assert sorted(got) == want, f.name
    assert con.execute("SELECT count(*) FROM findings").fetchone()[0] >= 10
