"""Format-2 encodings (reports/iochar/codec.py, runtime/log_codec.c): each column
encoding is chosen where it should be and decodes to the exact values; NAMES
front coding keeps paths and ids; corrupt encodings are named errors; format-1
logs still read the same; the C writer's logs carry times as whole ns."""

import struct
import zlib

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar import codec
from iochar.log import AGGREGATE_ID, FORMAT_VERSION, HEADER, from_bytes, section_at
from iochar.logformat import Reader
from iochar.writer import encode_log, fnv1a64, job_payload, schema_payload, section
from logdata import make_job, posix_like_schema, random_records
from tool import logs_in, mpiexec, run_log, workload

I64 = np.iinfo(np.int64)


def roundtrip(cols, floating):
    body = np.array(cols, dtype=np.int64)
    enc = codec.encode_columns(body, np.array(floating))
    back = codec.decode_columns(enc, 0, len(body), body.shape[1], np.array(floating), "t")
    assert np.array_equal(back, body)
    return enc


def encodings(enc, ncols):
    """The encoding byte of each column, walking the framing."""
    c, out = Reader(enc, "t"), []
    for _ in range(ncols):
        e = c.take(1)[0]
        out.append(e)
        n = 0 if e & 0x7F in (codec.CONST, codec.SAME) else c.varint()
        if n:
            c.take(n)
        else:
            c.varint()
    return out


def test_each_encoding_is_chosen_and_exact():
    n = 64
    ramp = np.arange(n) * 1000 + 7  # DELTA: steps of 1000
    ids = np.random.default_rng(7).integers(I64.min, I64.max, n)  # hashes look random
    cols = [ids, np.full(n, 3), ramp, ramp, ramp + (np.arange(n) % 3),
            np.arange(n) % 5, [I64.min, I64.max] * (n // 2)]
    enc = roundtrip(cols, [False] * len(cols))
    # the last column's steps wrap around: max - min is -1, one byte each
    assert encodings(enc, len(cols)) == [codec.RAW, codec.CONST, codec.DELTA, codec.SAME,
                                         codec.DIFF, codec.PLAIN, codec.DELTA]


def test_floats_in_whole_ns_are_integers_others_raw_bit_for_bit():
    n = 50
    ts = np.arange(n) * 1e-5 + 1.5  # not all exactly n/1e9: rounded to the ns first
    ts = np.rint(ts * 1e9) / 1e9
    odd = np.random.default_rng(1).random(n)  # full-precision fractions
    neg0 = np.zeros(n)
    neg0[3] = -0.0
    cols = [x.view(np.int64) for x in (ts, odd, neg0, np.rint((ts + 2e-6) * 1e9) / 1e9)]
    enc = roundtrip(cols, [True] * 4)
    e = encodings(enc, 4)
    assert e[0] == codec.NS | codec.DELTA and e[1] & codec.NS == 0  # bits, exactly
    assert e[2] & codec.NS == 0  # -0.0 keeps its sign bit: not stored as 0 ns
    assert e[3] == codec.NS | codec.DIFF


def test_empty_and_single_record_sections():
    assert codec.decode_columns(b"", 0, 3, 0, np.zeros(3, bool), "t").shape == (3, 0)
    enc = roundtrip([[fnv1a64("/a")], [2], [I64.min]], [False] * 3)
    assert len(enc) < 30


def test_names_front_coding_keeps_paths_and_ids():
    paths = [f"/scratch/run/out.{i:05d}.dat" for i in range(1000)]
    paths += ["<STDOUT>", "/données/ü", "/scratch/run/out.00001.dat.bak", "<AGGREGATE>"]
    ids = np.array([fnv1a64(p) for p in paths], np.uint64)
    ids[-1] = AGGREGATE_ID  # not the hash of its name: stored explicitly
    ids[5] -= np.uint64(1)  # a hash equal to the aggregate id is logged minus one
    enc = codec.encode_names(ids, paths)
    back_ids, back = codec.decode_names(enc, len(paths), "t")
    assert back == [p.encode() for p in paths] and np.array_equal(back_ids, ids)
    assert len(zlib.compress(enc)) < 2500  # 12 bytes of id per entry would be 12,000


@pytest.mark.parametrize("bad, message", [
    (lambda e: e[:-1], "runs past"),
    (lambda e: e + b"\0", "after the last column"),
    (lambda e: bytes([codec.SAME]) + b"\5" + e[2:], "refers to column"),
    (lambda e: bytes([9]) + e[1:], "unknown encoding"),
    (lambda e: bytes([codec.PLAIN | codec.NS]) + e[1:], "nanosecond flag"),
    (lambda e: bytes([codec.CONST]) + b"\xff" * 11, "bad varint"),
])
def test_corrupt_columns_are_named(bad, message):
    schema = posix_like_schema()
    n_int = sum("_F_" not in s for s, _ in schema)
    words = (len(schema) + 63) // 64
    head = np.zeros(8 * words, np.uint8)
    head[0] = 1  # counter 0 (an integer) present
    body = codec.encode_columns(np.array([[fnv1a64("/a"), fnv1a64("/b")], [0, 1], [5, 9]]),
                                np.zeros(3, bool))
    payload = head.tobytes() + bad(body)
    secs = [section("JOB", "", 1, job_payload({"nprocs": 4})),
            section("SCHEMA", "POSIX", len(schema), schema_payload(schema, n_int)),
            section("RECORDS", "POSIX", 2, payload)]
    total = HEADER.size + sum(map(len, secs))
    head = HEADER.pack(b"IOCHARLG", FORMAT_VERSION, HEADER.size, total, len(secs), 0)[:28]
    data = b"".join([head, struct.pack("<I", zlib.crc32(head)), *secs])
    with pytest.raises(iochar.LogError, match=message):
        from_bytes(data).records("POSIX")


def test_formats_1_2_3_read_the_same_and_each_is_smaller():
    schema = posix_like_schema()
    recs = random_records(schema, 40, seed=5)
    for c in [c for c in recs.columns if "_F_" in c]:
        recs[c] = np.rint(recs[c] * 1e9) / 1e9  # times as the C writer logs them
    logs = {v: encode_log(make_job(), {"POSIX": {"schema": schema, "records": recs}},
                          chunk=16, version=v) for v in (1, 2, 3)}
    frames = {v: from_bytes(d).records("POSIX") for v, d in logs.items()}
    pd.testing.assert_frame_equal(frames[1], frames[2])
    pd.testing.assert_frame_equal(frames[1], frames[3])
    assert from_bytes(logs[1]).job == from_bytes(logs[2]).job == from_bytes(logs[3]).job
    assert len(logs[2]) < len(logs[1])  # random 40-bit counters: little to gain
    nsec = HEADER.unpack_from(logs[3])[4]  # format 3: the same payloads, shorter headers
    assert len(logs[2]) - len(logs[3]) >= 20 * nsec


def test_format_3_section_headers_trust_nothing():
    """Every truncation and every byte of every section header changed: a LogError
    naming the section (CRC, lengths, varints), never another exception."""
    schema = posix_like_schema()
    data = encode_log(make_job(), {"POSIX": {"schema": schema,
                                             "records": random_records(schema, 5, seed=2)}})
    assert HEADER.unpack_from(data)[1] == 3
    heads, off = [], HEADER.size
    for _ in range(HEADER.unpack_from(data)[4]):
        *_, clen, start = section_at(data, off, 3)
        heads.append((off, start))
        off = start + clen
    assert off == len(data)
    for n in sorted({s for _, s in heads} | {o + 1 for o, _ in heads}):  # truncations
        cut = bytearray(data[:n])
        cut[16:24] = struct.pack("<Q", n)
        cut[28:32] = struct.pack("<I", zlib.crc32(bytes(cut[:28])))
        with pytest.raises(iochar.LogError):
            from_bytes(bytes(cut)).records("POSIX")
    for o, start in heads:
        for i in range(o, start):
            for v in (0x00, 0x80, 0xFF):
                bad = bytearray(data)
                if bad[i] == v:
                    continue
                bad[i] = v
                with pytest.raises(iochar.LogError, match=r"section \d+"):
                    from_bytes(bytes(bad)).records("POSIX")


def section_kinds(path):
    data = open(path, "rb").read()
    off, out = HEADER.size, []
    version = HEADER.unpack_from(data)[1]
    for _ in range(HEADER.unpack_from(data)[4]):
        kind, mod, *_, clen, start = section_at(data, off, version)
        out.append((kind.rstrip(b"\0").decode(), mod.rstrip(b"\0").decode()))
        off = start + clen
    return out


@pytest.mark.parametrize("files, per_rank", [(200, False), (300, True)])
def test_c_log_is_format_3_exact_and_small(tmp_path, files, per_rank):
    """4 MPI ranks x N private files of 100 bytes (tests/mpi_many.c), reduced
    by the C writer: format 2, every path and count exact, times whole ns.  Up
    to 1,024 rows rank 0 gathers them into one NAMES, RECORDS and RANKS
    section; past that each rank writes its own."""
    _, log = run_log(mpiexec(4) + [workload("mpi_many"), str(files)], tmp_path)
    kinds = section_kinds(logs_in(tmp_path)[0])
    assert kinds.count(("RECORDS", "POSIX")) == (4 if per_rank else 1)
    assert kinds.count(("NAMES", "")) == (4 if per_rank else 1)
    assert log.ranks("POSIX")["rank"].tolist() == [0, 1, 2, 3]
    assert log.job["format"] == 3
    df = log.records("POSIX")
    private = df[df["path"].str.contains(r"/many\.\d+\.\d+$")]
    assert len(private) == 4 * files
    assert sorted(private["path"].str.rsplit("/", n=1).str[1]) == sorted(
        f"many.{r}.{i}" for r in range(4) for i in range(files))
    assert (private["rank"] == private["path"].str.extract(r"many\.(\d)\.")[0].astype(int)).all()
    assert (private["POSIX_BYTES_WRITTEN"] == 100).all()
    assert (private["POSIX_OPENS"] == 1).all() and (private["POSIX_WRITES"] == 1).all()
    assert np.array_equal(private["record_id"].to_numpy(),
                          codec.fnv1a64_many([p.encode() for p in private["path"]]))
    for c in [c for c in df.columns if "_F_" in c and "VARIANCE" not in c]:
        v = df[c].to_numpy()
        assert np.array_equal(np.rint(v * 1e9) / 1e9, v), c
    size = logs_in(tmp_path)[0].stat().st_size
    assert size < 30 * len(df) + 3000, size  # format 1 took ~75 bytes per record


def test_header_says_format_3():
    assert HEADER.unpack_from(encode_log(make_job(), {}))[1] == 3
