"""Corrupt, truncated and malformed logs give LogError (CLI: exit 2), never another error."""

import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import iochar
from iochar.cli import parser
from iochar.log import HEADER, SECTION, from_bytes, section_at
from iochar.writer import encode_log, job_payload, schema_payload
from iochar.writer import section as section_v2
from logdata import make_job, posix_like_schema, random_records

SCHEMA = posix_like_schema()


def valid_log() -> bytes:
    recs = random_records(SCHEMA, 6, seed=3)
    return encode_log(make_job(), {"POSIX": {"schema": SCHEMA, "records": recs}},
                      mounts=[("/", "ext4", 4096)], chunk=3,
                      series={"POSIX": {"width": 0.001, "bytes_read": [1], "bytes_written": [2],
                                            "reads": [3], "writes": [4]}},
                      ranks={"POSIX": {"rank": [0], "reads": [1], "writes": [2], "bytes_read": [3],
                                           "bytes_written": [4], "read_time": [.5], "write_time": [.5],
                                           "meta_time": [.5]}})


def read_all(data: bytes):
    """Everything a reporter would touch."""
    log = from_bytes(data)
    for m in log.modules:
        log.records(m)
        log.series(m)
        log.ranks(m)
    return log.names


def boundaries(data: bytes) -> list:
    offs, off = [0, 8, 12, 16, 24, 28, HEADER.size], HEADER.size
    version = HEADER.unpack_from(data)[1]
    for _ in range(HEADER.unpack_from(data)[4]):
        *_, clen, start = section_at(data, off, version)
        offs += [off + 1, off + 2, start - 8, start - 4, start]
        off = start + clen
        offs.append(off)
    return offs


def section(*args, **kw) -> bytes:
    """The hand-built payloads below are format 1 (byte-plane RECORDS, zlib
    streams); format 2's encodings have their own cases in test_log_codec.py."""
    return section_v2(*args, version=1, **kw)


def log_with(*sections: bytes) -> bytes:
    """A format-1 log whose framing is valid around arbitrary (possibly
    inconsistent) sections."""
    total = HEADER.size + sum(map(len, sections))
    head = HEADER.pack(b"IOCHARLG", 1, HEADER.size, total, len(sections), 0)[:28]
    return b"".join([head, struct.pack("<I", zlib.crc32(head)), *sections])


def raw_section(kind, module, count, comp, ulen):
    head = SECTION.pack(kind.encode(), module.encode(), count, zlib.crc32(comp), ulen,
                        len(comp), 0)[:44]
    return head + struct.pack("<I", zlib.crc32(head)) + comp


def test_valid_log_reads():
    assert len(read_all(valid_log())) == 6


def test_truncation_at_every_boundary_and_random_points():
    data = valid_log()
    rng = np.random.default_rng(0)
    cuts = {c + d for c in boundaries(data) for d in (-1, 0, 1)} | set(
        rng.integers(0, len(data), 200).tolist())
    for cut in sorted(c for c in cuts if 0 <= c < len(data)):
        with pytest.raises(iochar.LogError):
            read_all(data[:cut])


def test_every_single_byte_flip_is_caught():
    data = valid_log()
    rng = np.random.default_rng(1)
    for pos in range(len(data)):
        bad = bytearray(data)
        bad[pos] ^= 1 << int(rng.integers(0, 8))
        with pytest.raises(iochar.LogError):
            read_all(bytes(bad))


def test_random_garbage_and_junk_sections_with_valid_crcs():
    rng = np.random.default_rng(2)
    for n in [0, 1, 7, 8, 31, 32, 33, 100, 5000]:
        with pytest.raises(iochar.LogError):
            read_all(rng.bytes(n))
        with pytest.raises(iochar.LogError):
            read_all(b"IOCHARLG" + rng.bytes(n))
    job = section("JOB", "", 2, job_payload({"nprocs": 2, "x": "y"}))
    schema = section("SCHEMA", "POSIX", len(SCHEMA), schema_payload(SCHEMA, 32))
    for _ in range(300):  # structurally random payloads behind valid CRCs: parse or LogError
        kind = ["JOB", "MOUNTS", "NAMES", "SCHEMA", "RECORDS", "SERIES", "RANKS", "TRACE"][
            int(rng.integers(0, 8))]
        mod = "" if kind in ("JOB", "MOUNTS", "NAMES") else "POSIX"
        payload = rng.bytes(int(rng.integers(0, 64)))
        count = int(rng.integers(0, 5))
        parts = [job, schema] if kind != "JOB" else []
        try:
            read_all(log_with(*parts, section(kind, mod, count, payload)))
        except iochar.LogError:
            pass


WORDS = (len(SCHEMA) + 63) // 64  # RECORDS presence bitmap


@pytest.mark.parametrize("sections, message", [
    (lambda job, sch, rec: [sch, rec], "no JOB"),
    (lambda job, sch, rec: [job, job], "second JOB"),
    (lambda job, sch, rec: [job, rec], "before the module's SCHEMA"),
    (lambda job, sch, rec: [job, sch, section("RECORDS", "POSIX", 2, rec[48:])],
     "inconsistent with schema"),
    (lambda job, sch, rec: [job, section("SCHEMA", "POSIX", 3, schema_payload(SCHEMA, 32))],
     "n_int"),
    (lambda job, sch, rec: [section("JOB", "", 1, b"\1\0k\x09" + bytes(8))],
     "unknown value type 9"),
    (lambda job, sch, rec: [section("JOB", "", 3, job_payload({"a": 1}))], "ends inside"),
    (lambda job, sch, rec: [section("JOB", "", 0, job_payload({"a": 1}))], "left after"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, b"not zlib", 10)], "zlib error"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, zlib.compress(b"")[:-2], 0)],
     "truncated"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, zlib.compress(b"") + b"xx", 0)],
     "after the zlib stream"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, zlib.compress(b"abc"), 2)], "larger"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, zlib.compress(b"abc"), 4)],
     "payload is 3 bytes"),
    (lambda job, sch, rec: [raw_section("JOB", "", 0, zlib.compress(b""), 1 << 40)],
     "impossible"),
    (lambda job, sch, rec: [job, section("SERIES", "POSIX", 1, struct.pack("<dII", -1, 1, 0)
                                         + bytes(32))], "positive"),
    (lambda job, sch, rec: [job, section("RANKS", "POSIX", 2, bytes(64))], "inconsistent"),
    (lambda job, sch, rec: [job, section("NAMES", "POSIX", 0, b"")], "needs|must not"),
    (lambda job, sch, rec: [job, section("NAMES", "", 1, struct.pack("<QI", 1, 3) + b"a\0b")],
     "NUL byte"),
    (lambda job, sch, rec: [job, section("NAMES", "", 1, struct.pack("<QI", 1, 9) + b"ab")],
     "entries cover|cannot fit"),
    (lambda job, sch, rec: [section("JOB", "", 1, job_payload({"nprocs": 2})), sch,
                            section("RECORDS", "POSIX", 1, bytes(8 * WORDS)
                                    + struct.pack("<Qq", 1, 5))], "rank 5 out of range"),
    (lambda job, sch, rec: [job, sch, section("RECORDS", "POSIX", 1, bytes([1]) + bytes(8 * WORDS + 15))],
     "marked present"),
])
def test_inconsistent_content_is_named(sections, message):
    job = section("JOB", "", 1, job_payload({"nprocs": 4}))
    sch = section("SCHEMA", "POSIX", len(SCHEMA), schema_payload(SCHEMA, 32))
    rec = section("RECORDS", "POSIX", 1, bytes(8 * WORDS + 16))  # all counters 0: none stored
    with pytest.raises(iochar.LogError, match=message):
        read_all(log_with(*sections(job, sch, rec)))


def test_header_problems_are_named():
    data = valid_log()
    assert "empty file" in str(pytest.raises(iochar.LogError, from_bytes, b"").value)
    assert "bad magic" in str(pytest.raises(iochar.LogError, from_bytes, b"PK\3\4" + data).value)
    assert "header CRC" in str(pytest.raises(iochar.LogError, from_bytes,
                                             data[:9] + b"\7" + data[10:]).value)
    v4 = bytearray(data[:28])
    v4[8] = 4
    v4 = bytes(v4) + struct.pack("<I", zlib.crc32(bytes(v4))) + data[32:]
    assert "unsupported format version 4" in str(pytest.raises(iochar.LogError, from_bytes,
                                                               v4).value)
    msg = str(pytest.raises(iochar.LogError, from_bytes, data[:100]).value)
    assert f"truncated file: expected {len(data)} bytes got 100" in msg
    assert "trailing" in str(pytest.raises(iochar.LogError, from_bytes, data + b"\0").value)


def parser_run(args, capsys):
    code = parser.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_parser_cli_bad_inputs_exit_2(tmp_path, capsys):
    good = tmp_path / "good.iochar"
    good.write_bytes(valid_log())
    cases = {"missing": tmp_path / "nope.iochar", "empty": tmp_path / "e.iochar",
             "text": tmp_path / "t.iochar", "trunc": tmp_path / "tr.iochar",
             "dir": tmp_path / "d"}
    cases["empty"].write_bytes(b"")
    cases["text"].write_text("hello world\n" * 10)
    cases["trunc"].write_bytes(valid_log()[:-5])
    cases["dir"].mkdir()
    for path in cases.values():
        code, out, err = parser_run([path], capsys)
        assert code == 2 and out == ""
        assert err.startswith("iochar-parser: error: ") and err.count("\n") == 1
    code, _, err = parser_run([good, "--module", "HDF5"], capsys)
    assert code == 2 and "module HDF5 not in log" in err
    flips = np.random.default_rng(4).integers(0, good.stat().st_size, 30)
    data = valid_log()
    for pos in flips:
        cases["trunc"].write_bytes(data[:pos] + bytes([data[pos] ^ 0x10]) + data[pos + 1:])
        assert parser_run([cases["trunc"]], capsys)[0] == 2


def test_parser_cli_subprocess_no_traceback(tmp_path):
    bad = tmp_path / "bad.iochar"
    bad.write_bytes(b"IOCHARLG" + bytes(40))
    p = subprocess.run([sys.executable, "-m", "iochar.cli.parser", str(bad)],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("iochar-parser: error: ")
