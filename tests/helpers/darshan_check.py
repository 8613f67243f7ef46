"""Check a Darshan log exported by iochar against the iochar log it came from, through
PyDarshan's report API, through iochar.open (the round trip) and through darshan-parser."""

import fnmatch
import os
import re
import subprocess
from pathlib import Path

import numpy as np

import iochar
from iochar.darshan_counters import MODULES, RENAMED, SUMMED, UNFILLED, mapping

ROOT = Path(__file__).resolve().parents[2]
# darshan-util 3.4.7's darshan-parser (the lead's baseline build); tests skip without it
DARSHAN_PARSER = Path(os.environ.get("IOCHAR_BENCH_DARSHAN", "/work/baseline/darshan")) / \
    "bin" / "darshan-parser"


def exported_modules(log):
    return [m for m in MODULES if m.ours in log.modules and len(log.records(m.ours))]


def _sorted(df):
    return df.sort_values(["record_id", "rank"], kind="stable").reset_index(drop=True)


def expected(log, mod):
    """(our records sorted by id and rank, {darshan field: expected values})."""
    df = _sorted(log.records(mod.ours))
    names = [n for n, _ in log.schema(mod.ours)]
    out = {}
    for k, (dname, src) in enumerate(zip(mod.ints + mod.floats, mapping(mod, names))):
        ints = k < len(mod.ints)
        if src:
            out[dname] = sum(df[s].to_numpy(dtype=np.int64 if ints else np.float64) for s in src)
        else:
            out[dname] = np.full(len(df), UNFILLED.get(dname, -1),
                                 dtype=np.int64 if ints else np.float64)
    return df, out


def check_pydarshan(log, path) -> int:
    """Every field of every record as PyDarshan reads it equals what iochar's record
    gives it (-1 where nothing does); returns the number of values compared."""
    import darshan
    rep = darshan.DarshanReport(str(path), read_all=True)
    job = rep.metadata["job"]
    assert job["nprocs"] == log.job["nprocs"] and job["uid"] == log.job["uid"]
    for k in ("start", "end"):
        t = job[f"{k}_time_sec"] + job[f"{k}_time_nsec"] * 1e-9
        assert abs(t - log.job[f"{k}_time"]) < 1e-6, k
    assert str(job["jobid"]) == str(log.job["jobid"])
    assert rep.metadata["exe"] == log.job["cmdline"]
    mods = exported_modules(log)
    assert sorted(rep.modules) == sorted([m.name for m in mods] +
                                         (["LUSTRE"] if "LUSTRE" in rep.modules else []))
    n = 0
    for mod in mods:
        ours, want = expected(log, mod)
        theirs = rep.records[mod.name].to_df()
        c = theirs["counters"].sort_values(["id", "rank"], kind="stable").reset_index(drop=True)
        f = theirs["fcounters"].sort_values(["id", "rank"], kind="stable").reset_index(drop=True)
        assert c["id"].astype(np.uint64).tolist() == ours["record_id"].tolist(), mod.name
        assert c["rank"].tolist() == ours["rank"].tolist(), mod.name
        for name, vals in want.items():
            got = (c if name in mod.ints else f)[name].to_numpy()
            assert np.array_equal(got, vals), (mod.name, name, got, vals)
            n += len(vals)
        for rid, path in zip(ours["record_id"].tolist(), ours["path"].tolist()):
            assert rep.name_records[rid] == path
    return n


def check_roundtrip(log, path) -> int:
    """iochar.open(exported) gives the original's value for every mapped counter (under
    its iochar name when the reader's is the same, else under Darshan's name)."""
    back = iochar.open(str(path))
    assert back.job["nprocs"] == log.job["nprocs"] and back.job["uid"] == log.job["uid"]
    assert abs(back.job["start_time"] - log.job["start_time"]) < 1e-6
    assert abs(back.job["end_time"] - log.job["end_time"]) < 1e-6
    n = 0
    for mod in exported_modules(log):
        ours, want = expected(log, mod)
        got = _sorted(back.records(mod.ours))
        assert got["record_id"].tolist() == ours["record_id"].tolist()
        assert got["path"].tolist() == ours["path"].tolist()
        names = [nm for nm, _ in log.schema(mod.ours)]
        for dname, src in zip(mod.ints + mod.floats, mapping(mod, names)):
            if not src:
                continue
            col = dname.replace("_AGG_", "_") if dname not in RENAMED and dname not in SUMMED \
                else dname
            if col not in got:  # the reader drops a column that is -1 in every row
                assert (want[dname] == -1).all(), (mod.name, dname)
                continue
            assert np.array_equal(got[col].to_numpy(), want[dname]), (mod.name, dname)
            if len(src) == 1 and src[0] == col:
                assert np.array_equal(got[col].to_numpy(), ours[col].to_numpy())
            n += len(ours)
    return n


def parser_values(path, *args) -> dict:
    """darshan-parser's counter lines: {(module, rank, id, counter): text value}."""
    out = subprocess.run([str(DARSHAN_PARSER), *args, str(path)], capture_output=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    vals = {}
    for line in out.stdout.decode(errors="surrogateescape").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split("\t")
        vals[(f[0], int(f[1]), int(f[2]), f[3])] = f[4]
    return vals


def check_parser(log, path, *args) -> int:
    """darshan-parser (Darshan 3.4.7) prints what iochar's records give (%f for floats)."""
    vals = parser_values(path, *args)
    n = 0
    for mod in exported_modules(log):
        ours, want = expected(log, mod)
        for i, (rid, rank) in enumerate(zip(ours["record_id"].tolist(), ours["rank"].tolist())):
            for name, v in want.items():
                text = vals[(mod.name, rank, rid, name)]
                assert text == (str(int(v[i])) if name in mod.ints else f"{v[i]:f}"), \
                    (mod.name, name, text, v[i])
                n += 1
    return n


def doc_section() -> str:
    text = (ROOT / "docs" / "log-format.md").read_text()
    start = text.index("## Writing Darshan logs")
    return text[start:text.index("\n## ", start + 1)]


def listed(names, heading: str) -> list:
    """The names not covered by the backquoted patterns (fnmatch) of the docs' list
    that follows `heading` in the Darshan-writing section (up to the next blank line)."""
    sec = doc_section()
    i = sec.index(heading)
    block = sec[i:sec.find("\n\n", i)]
    pats = re.findall(r"`([A-Z0-9_\[\]\-*?]+)`", block)
    return [n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in pats)]


def check_documented(log):
    """Every Darshan field left unknown and every iochar counter left out by this log's
    modules is named in docs/log-format.md."""
    for mod in exported_modules(log):
        names = [n for n, _ in log.schema(mod.ours)]
        m = mapping(mod, names)
        unknown = [d for d, src in zip(mod.ints + mod.floats, m) if not src]
        used = {s for src in m for s in src}
        left = [n for n in names if n not in used]
        assert listed(unknown, "Darshan fields iochar cannot fill") == [], mod.name
        assert listed(left, "iochar counters with no Darshan field") == [], mod.name
