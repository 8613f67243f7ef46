"""Writer -> reader round trip of every field of the log format."""

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.log import AGGREGATE_ID, OP, UNKNOWN_PATH, from_bytes
from iochar.writer import encode_log, fnv1a64, write_log
from logdata import make_job, posix_like_schema, random_records

STDIO = [("STDIO_OPENS", OP["SUM"]), ("STDIO_BYTES_WRITTEN", OP["BYTES"]),
         ("STDIO_F_WRITE_TIME", OP["TIME"])]


def test_fnv1a64_reference_values():
    assert fnv1a64("") == 0xCBF29CE484222325
    assert fnv1a64("a") == 0xAF63DC4C8601EC8C
    assert fnv1a64("foobar") == 0x85944171F73967E8
    assert fnv1a64("/tmp/é") == fnv1a64("/tmp/é".encode())


@pytest.mark.parametrize("chunk", [None, 2])
def test_every_field_round_trips(tmp_path, chunk):
    schema = posix_like_schema()
    paths = [f"/scratch/f{i}" for i in range(4)] + ["/home/ünï cøde/x y.dat"]
    posix = random_records(schema, 5, paths=paths)
    posix.loc[4, "POSIX_F_READ_TIME"] = 1e-9  # tiny timings survive bit-exactly
    agg = pd.DataFrame({"rank": [-1], "record_id": np.array([AGGREGATE_ID], np.uint64),
                        "path": ["<AGGREGATE>"], "STDIO_OPENS": [7],
                        "STDIO_BYTES_WRITTEN": [1 << 62], "STDIO_F_WRITE_TIME": [0.1 + 0.2]})
    job = make_job(partial=1, folded_files=12, **{"folded.POSIX": 12, "weird key ✓": -5})
    series = {"POSIX": {"width": 0.004, "bytes_read": [1, 2, 3], "bytes_written": [4, 5, 6],
                            "reads": [7, 8, 9], "writes": [10, 11, 12]}}
    ranks = {"POSIX": pd.DataFrame({"rank": [0, 3], "reads": [1, 2], "writes": [3, 4],
                                    "bytes_read": [5, 6], "bytes_written": [7, 8],
                                    "read_time": [0.5, 1e-7], "write_time": [0.25, 2.0],
                                    "meta_time": [0.0, 3.5]})}
    mounts = [("/", "ext4", 4096), ("/scratch", "lustre", 1 << 20)]
    # a kind this reader does not know is kept as it is (TRACE and the other observer
    # sections are validated at open, so they must be well-formed here)
    extra = [("NEWKIND", "POSIX", 3, b"\x01\x02\x03"), ("LOADMAP", "", 0, b"")]
    path = tmp_path / "a.iochar"
    write_log(path, job, {"POSIX": {"schema": schema, "records": posix, "version": 3},
                          "STDIO": {"schema": STDIO, "records": agg}},
              series=series, ranks=ranks, mounts=mounts, extra_sections=extra, chunk=chunk)
    log = iochar.open(str(path))
    assert log.job == job
    assert log.modules == ["POSIX", "STDIO"]
    assert log.schema("POSIX") == schema and log.schema("STDIO") == STDIO
    assert log.schema_version("POSIX") == 3
    assert log.mounts.to_dict("list") == {"mount_point": ["/", "/scratch"],
                                          "fs_type": ["ext4", "lustre"],
                                          "block_size": [4096, 1 << 20]}
    assert log.names == dict(zip(posix.record_id.tolist(), paths)) | {AGGREGATE_ID: "<AGGREGATE>"}
    rec = log.records("POSIX")
    assert list(rec.columns) == ["rank", "record_id", "path"] + [n for n, _ in schema]
    assert rec["record_id"].dtype == np.uint64 and rec["rank"].dtype == np.int64
    for n, _ in schema:
        assert rec[n].dtype == (np.float64 if "_F_" in n else np.int64)
    pd.testing.assert_frame_equal(rec, posix[rec.columns], check_dtype=False)
    assert rec.loc[4, "POSIX_F_READ_TIME"] == 1e-9
    st = log.records("STDIO")
    assert st.loc[0, "STDIO_BYTES_WRITTEN"] == 1 << 62
    assert st.loc[0, "STDIO_F_WRITE_TIME"] == 0.1 + 0.2
    s = log.series("POSIX")
    assert s["width"] == 0.004 and s["writes"].tolist() == [10, 11, 12]
    assert log.series("STDIO") is None
    pd.testing.assert_frame_equal(log.ranks("POSIX"), ranks["POSIX"], check_dtype=False)
    assert len(log.ranks("STDIO")) == 0
    assert log.extra_sections == [(k, m, c, p) for k, m, c, p in extra]


def test_records_cache_is_not_corrupted_by_callers(tmp_path):
    schema = posix_like_schema()
    data = encode_log(make_job(), {"POSIX": {"schema": schema,
                                             "records": random_records(schema, 3)}})
    log = from_bytes(data)
    df = log.records("POSIX")
    df["POSIX_OPENS"] = -99
    df.loc[0, "POSIX_READS"] = -1
    assert (log.records("POSIX")["POSIX_OPENS"] >= 0).all()
    assert log.records("POSIX").loc[0, "POSIX_READS"] >= 0
    with pytest.raises(KeyError, match="MPIIO"):
        log.records("MPIIO")


def test_empty_module_missing_name_and_several_series(tmp_path):
    schema = posix_like_schema()
    empty = random_records(schema, 0, paths=[])
    rec = random_records(STDIO, 1, paths=["/x"])
    series = {"STDIO": [{"width": 0.001, "bytes_read": [1, 2, 3, 4, 5], "bytes_written": [0] * 5,
                             "reads": [1] * 5, "writes": [0] * 5},
                        {"width": 0.004, "bytes_read": [100], "bytes_written": [1], "reads": [2],
                             "writes": [3]}]}
    log = from_bytes(encode_log(make_job(), {"POSIX": {"schema": schema, "records": empty},
                                             "STDIO": {"schema": STDIO, "records": rec}},
                                names={}, series=series))
    assert len(log.records("POSIX")) == 0
    assert list(log.records("POSIX").columns)[3:] == [n for n, _ in schema]
    assert log.records("STDIO")["path"].tolist() == [UNKNOWN_PATH]
    s = log.series("STDIO")  # 1 ms bins coarsened to 4 ms by pairwise sums, then added
    assert s["width"] == 0.004
    assert s["bytes_read"].tolist() == [1 + 2 + 3 + 4 + 100, 5]
    assert s["writes"].tolist() == [3, 0]


def test_directory_and_list(tmp_path):
    schema = posix_like_schema()
    write_log(tmp_path / "one.iochar", make_job(), {"POSIX": {"schema": schema,
              "records": random_records(schema, 2)}})
    (tmp_path / "notes.txt").write_text("not a log")
    assert len(iochar.open(tmp_path).records("POSIX")) == 2
    assert len(iochar.open([tmp_path / "one.iochar"]).records("POSIX")) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(iochar.LogError, match="no \\*.iochar logs"):
        iochar.open(empty)
    with pytest.raises(iochar.LogError, match="No such file"):
        iochar.open(tmp_path / "missing.iochar")
