"""The crash corpus: one log (or per-rank set) per crash kind the readers once had,
built from the seeds in tests/corpus/ by changing exactly the fields at fault.

`python tests/helpers/crashcorpus.py` rewrites tests/corpus/crashes/; the files are
committed, and test_fuzz_readers.py runs each through every entry point. EXPECT says
what each must give: a LogError whose message matches, or a report (None).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reports"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import readerfuzz as F  # noqa: E402

# file (or directory of per-rank logs) -> regex of the LogError; None: must report;
# ("partial", regex): a directory whose job reports from the ranks that read, the
# others named in its JOB `unreadable_logs` (matching regex) and warned about
PARTIAL = "partial"
EXPECT = {
    "trace_nmodules_past_payload.iochar": "TRACE.*: TRACE: .* module names cannot fit",
    "start_time_1e20.iochar": "start_time .* is not a time",
    "start_time_nan.iochar": "start_time nan is not a time",
    "start_time_string.iochar": "start_time '2026-01-01' is not a time",
    "series_widths_2p40_apart.iochar": None,
    "nprocs_5e8.iochar": "nprocs 500000000 out of range",
    "nprocs_max_with_ranks.iochar": None,
    "section_inflates_past_bound.iochar": "past .* bytes, the bound for a",
    "counter_2p63_minus_1.iochar": None,
    "merge_topk_count_outside_table": (PARTIAL, "(rank1\\.iochar|\\[1\\]): .*top-k count outside a table"),
    "merge_folded_files_string": (PARTIAL, "(rank2\\.iochar|\\[2\\]): .*folded_files is str"),
    "merge_topk_section_repeated": (PARTIAL, "(rank3\\.iochar|\\[3\\]): TOPK POSIX: a record id has two rows"),
    "dollar_foo_trace_titles.iochar": None,
    "trace_name_not_utf8.iochar": None,
    # issue 31, format 3 (seeds in tests/corpus/v3/)
    "v3_ranks_one_bad": (PARTIAL, "(rank2\\.iochar|\\[2\\]): section \\d+ \\(NAMES\\): path 0 holds a NUL"),
    "v3_ranks_all_bad": "none of the 4 logs of this job reads",
    # bench/fuzz_generated.py seed 21 case 1391: three ranks unreadable, the one left has
    # uneven bytes and no I/O time: rank-imbalance divided by the slowest rank's 0 s
    "v3_ranks_untimed_uneven": (PARTIAL, "(rank0\\.iochar|\\[0\\]): section \\d+ \\(NAMES\\)"),
    "v3_name_of_4_mib.iochar": "path 0 is 4194304 bytes, more than the 4105",
    "v3_names_300_of_4105_bytes.iochar": None,
    "v3_records_1e6_in_few_bytes.iochar": "1000000 records cannot fit in",
    "v2_records_1e7_in_few_bytes.iochar": "10000000 records cannot fit in",
}


def _job_set(secs, key: bytes, t: int, val: bytes):
    sec = next(s for s in secs if s[0] == b"JOB")
    ents = F.job_entries(sec[3])
    for e in ents:
        if e[0] == key:
            e[1:] = [t, val]
            break
    else:
        ents.append([key, t, val])
    sec[2], sec[3] = len(ents), F.job_payload(ents)


def _edit(seed: str, fn, level: int = 1, version: int | None = None) -> bytes:
    secs = F.split(F.seed_bytes(seed))
    fn(secs)
    return F.join(secs, version=version, level=level)


def trace_nmodules(secs):
    sec = next(s for s in secs if s[0] == b"TRACE")
    sec[3] = sec[3][:12] + struct.pack("<I", 1 << 30) + sec[3][16:]


def series_apart(secs):
    sec = next(s for s in secs if s[0] == b"SERIES")
    twin = list(sec)
    twin[3] = struct.pack("<d", struct.unpack_from("<d", sec[3])[0] * 2.0**40) + sec[3][8:]
    secs.insert(secs.index(sec) + 1, twin)


def nprocs_max(secs):
    _job_set(secs, b"nprocs", 1, struct.pack("<q", 1 << 24))
    sec = next(s for s in secs if s[0] == b"RANKS")
    sec[3] = struct.pack("<q", (1 << 24) - 1) + sec[3][8:]  # the last rank did the I/O


def inflate_bomb(secs):
    # zeros deflate ~1000x: a 32 MiB payload in a ~40 KB file passes the 1032x zlib
    # limit but not the file's bound (16 MiB + 256 x its size)
    secs.append([b"NEWKIND", b"", 0, bytes(32 << 20), None])


def counter_max(secs):
    """POSIX_WRITES = 2**63-1 in every record: sums pass int64 in the summary."""
    sch = next(s for s in secs if s[0] == b"SCHEMA" and s[1] == b"POSIX")
    _, ents = F.schema_entries(sch[3])
    col = [e[0] for e in ents].index(b"POSIX_WRITES")
    sec = next(s for s in secs if s[0] == b"RECORDS" and s[1] == b"POSIX")
    count, words = sec[2], (len(ents) + 63) // 64
    buf = bytearray(sec[3])
    present = int.from_bytes(buf[:8 * words], "little")
    assert present >> col & 1, "POSIX_WRITES must be a stored column in the seed"
    pos = 2 + bin(present & ((1 << col) - 1)).count("1")  # after ids and ranks
    base = 8 * words + 8 * count * pos
    for row in range(count):
        for p in range(8):
            buf[base + p * count + row] = ((2**63 - 1) >> (8 * p)) & 0xFF
    sec[3] = bytes(buf)


def topk_twice(secs):
    sec = next(s for s in secs if s[0] == b"TOPK" and s[1] == b"POSIX")
    secs.insert(secs.index(sec) + 1, list(sec))


def stray_topk_count(secs):
    sec = next(s for s in secs if s[0] == b"SCHEMA" and s[1] == b"POSIX")
    head, ents = F.schema_entries(sec[3])
    ents[0][1] = 5  # POSIX_OPENS marked TOPK_CNT
    sec[3] = F.schema_payload(head, ents)


def dollar_names(secs, names=(b"/tmp/$\\foo$", b"/tmp/$x^2$ \\frac{a}{b}")):
    sec = next(s for s in secs if s[0] == b"NAMES")
    ents = F.names_entries(sec[3])
    for e, name in zip(ents, names):
        e[1] = name
    sec[3] = F.names_payload(ents)


def names_seed() -> bytes:
    """tests/corpus/names.iochar: posix.iochar's record under five names (ESC sequence,
    newline, bytes not UTF-8, `$\\foo$`, and one cut at the path limit with the runtime's
    NUL + TRUNCATED marker, the busiest), JOB warnings and truncated_paths."""
    import numpy as np

    import iochar
    from iochar.writer import encode_log, fnv1a64

    log = iochar.open(F.CORPUS / "posix.iochar")
    nasty = [b"/tmp/\x1b[31mred\x1b[0m.dat", b"/tmp/two\nlines.dat", b"/tmp/bad\xff\xfe.dat",
             b"/tmp/$\\foo$.dat", b"/tmp/" + b"d" * 300]
    ids = [fnv1a64(p) for p in nasty]
    df = log.records("POSIX")
    df = df.loc[np.repeat(df.index[:1], len(nasty))].reset_index(drop=True).drop(columns="path")
    df["record_id"] = np.array(ids, dtype=np.uint64)
    df.loc[len(nasty) - 1, "POSIX_F_WRITE_TIME"] *= 10
    names = {i: p.decode("utf-8", "surrogateescape") for i, p in zip(ids, nasty)}
    names[ids[-1]] += "\0TRUNCATED"
    job = dict(log.job, warnings="iochar: \x1b[2Jwarning one\niochar: warning two",
               truncated_paths=1, exe="/tmp/$\\foo$")
    schema = log.schema("POSIX")
    return encode_log(job, {"POSIX": {"schema": schema, "records": df,
                                      "n_int": sum("_F_" not in c for c, _ in schema)}},
                      names=names, series={"POSIX": log.series("POSIX")},
                      ranks={"POSIX": log.ranks("POSIX")}, mounts=log.mounts)


def names_nul(secs, path=b"/tmp/a\0b"):
    sec = next(s for s in secs if s[0] == b"NAMES")
    ents = F.names_entries(sec[3], secs.version, sec[2])
    ents[0][1] = path
    sec[3] = F.names_payload(ents, secs.version)


def long_names(n: int, k: int):
    """NAMES of k names of n bytes, each sharing all but its last byte with the one
    before (front-coded by hand, ids explicit): a 4 MiB name took the front-coded
    decoder 30-37 s before it worked row by row once few long names are left."""
    def edit(secs):
        sec = next(s for s in secs if s[0] == b"NAMES")  # the seed's names stay
        first = (b"/x/" * (n // 3 + 1))[:n]
        shared = F.codec.varints(F.np.array([0] + [n - 1] * (k - 1), F.np.uint64))
        lens = F.codec.varints(F.np.array([n] + [1] * (k - 1), F.np.uint64))
        ids = b"".join(F.codec.varint(i) + struct.pack("<Q", 0x1000 + i) for i in range(k))
        secs.insert(secs.index(sec) + 1, [b"NAMES", b"", k, F.codec.varint(len(shared)) + shared
                                          + F.codec.varint(len(lens)) + lens + F.codec.varint(k)
                                          + ids + first + bytes(65 + i % 26 for i in range(1, k)),
                                          None, None])
    return edit


def many_records(count: int):
    """A RECORDS section declaring `count` records in a few bytes (every column CONST):
    formats 2-3 did not check a count against its bytes (10^6: 14.5 s and 12 million
    lines; 10^7: out of memory)."""
    def edit(secs):
        sec = next(s for s in secs if s[0] == b"RECORDS")
        words = F._bitmap_words(secs, sec)
        bitmap, cols = F.columns(sec[3], words)
        sec[2] = count
        sec[3] = bitmap + b"".join(bytes([F.codec.CONST]) + F.codec.varint(2) for _ in cols)
    return edit


def build(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "trace_nmodules_past_payload.iochar": _edit("callsites_trace.iochar", trace_nmodules),
        "start_time_1e20.iochar": _edit("posix.iochar", lambda s: _job_set(
            s, b"start_time", 2, struct.pack("<d", 1e20))),
        "start_time_nan.iochar": _edit("posix.iochar", lambda s: _job_set(
            s, b"start_time", 2, struct.pack("<d", float("nan")))),
        "start_time_string.iochar": _edit("posix.iochar", lambda s: _job_set(
            s, b"start_time", 3, b"2026-01-01")),
        "series_widths_2p40_apart.iochar": _edit("posix.iochar", series_apart),
        "nprocs_5e8.iochar": _edit("mpi4.iochar", lambda s: _job_set(
            s, b"nprocs", 1, struct.pack("<q", 5 * 10**8))),
        "nprocs_max_with_ranks.iochar": _edit("posix.iochar", nprocs_max),
        "section_inflates_past_bound.iochar": _edit("posix.iochar", inflate_bomb, level=9),
        "counter_2p63_minus_1.iochar": _edit("posix_folded.iochar", counter_max),
        "dollar_foo_trace_titles.iochar": _edit("callsites_trace.iochar", dollar_names),
        # found by the fuzzer: pandas cannot group by a path that is not UTF-8
        "trace_name_not_utf8.iochar": _edit("callsites_trace.iochar", lambda s: dollar_names(
            s, [b"/tmp/\xff\xfe.dat", b"/tmp/\x1b[2J\n.dat"])),
    }
    files.update({
        "v3_name_of_4_mib.iochar": _edit("v3/posix.iochar", long_names(4 << 20, 1)),
        "v3_names_300_of_4105_bytes.iochar": _edit("v3/posix.iochar", long_names(4105, 300)),
        "v3_records_1e6_in_few_bytes.iochar": _edit("v3/posix.iochar", many_records(10**6)),
        "v2_records_1e7_in_few_bytes.iochar": _edit("v3/posix.iochar", many_records(10**7),
                                                    version=2),
    })
    for name, data in files.items():
        (out / name).write_bytes(data)
    v3 = F.seed_bytes("v3/ranks")
    for d, bad in (("v3_ranks_one_bad", {2}), ("v3_ranks_all_bad", {0, 1, 2, 3})):
        (out / d).mkdir(exist_ok=True)
        for i, blob in enumerate(v3):
            if i in bad:
                secs = F.split(blob)
                names_nul(secs)
                blob = F.join(secs)
            (out / d / f"rank{i}.iochar").write_bytes(blob)
    ranks = F.seed_bytes("ranks")
    for d, k, fn in (("merge_topk_count_outside_table", 1, stray_topk_count),
                     ("merge_folded_files_string", 2, lambda s: _job_set(
                         s, b"folded_files", 3, b"12")),
                     # found by the fuzzer: pandas cannot index repeated ids
                     ("merge_topk_section_repeated", 3, topk_twice)):
        (out / d).mkdir(exist_ok=True)
        for i, blob in enumerate(ranks):
            if i == k:
                secs = F.split(blob)
                fn(secs)
                blob = F.join(secs)
            (out / d / f"rank{i}.iochar").write_bytes(blob)


if __name__ == "__main__":
    (F.CORPUS / "names.iochar").write_bytes(names_seed())
    build(F.CRASHES)
