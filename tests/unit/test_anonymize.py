"""iochar-parser --anonymize: names as keyed hashes, numbers kept; the key file; two logs
under one key share hashed names; nothing original left in any inflated section."""

import os
import stat
import struct

import numpy as np
import pandas as pd
import pytest

import iochar
from anoncheck import leaks
from iochar import anonymize as AN
from iochar.callsites import ENTRY_DTYPE
from iochar.cli import parser
from iochar.writer import fnv1a64, write_log
from logdata import make_job, posix_like_schema, random_records
from test_parser_trace import trace_payload

USER, HOST = "zanzibar", "gorgonzola-node17.example.org"
EXE = "/home/zanzibar/projects/quuxsim/bin/quuxsim"
PATHS = ["/scratch/zanzibar/runs/marmoset/out.0001.dat",
         "/scratch/zanzibar/runs/marmoset/checkpoint,step=12.h5",
         "/scratch/zanzibar/runs/marmoset/checkpoint,step=12.h5:/wombat/velocity"]
CMDLINE = f"{EXE} --deck=/scratch/zanzibar/decks/platypus.nml -v 12"
SECRETS = ["zanzibar", "gorgonzola", "example.org", "projects", "quuxsim", "marmoset",
           "out.0001.dat", "checkpoint", "step", "wombat", "velocity", "platypus", "decks",
           "runs", "scratch", "libquux"]
BUILD_ID = bytes.fromhex("deadbeefcafe" * 3)


def loadmap_payload(objs):
    return b"".join(struct.pack("<QQH", k, base, len(bid)) + bid
                    + struct.pack("<H", len(p.encode())) + p.encode() for k, base, bid, p in objs)


def make(tmp_path, name="a.iochar", extra_file=None, seed=0):
    schema = posix_like_schema()
    paths = PATHS[:2] + ([extra_file] if extra_file else [])
    recs = random_records(schema, len(paths), seed=seed, paths=paths)
    h5 = random_records([("H5D_OPENS", 0), ("H5D_F_READ_TIME", 7)], 1, paths=PATHS[2:],
                        seed=seed)
    rid = int(recs["record_id"][0])
    trace = trace_payload([dict(record_id=rid, offset=0, length=4096, start=1.0, end=1.5,
                                rank=0, thread=5, module=0, op=1)], ("POSIX",))
    lm = loadmap_payload([(111, 0x400000, BUILD_ID, EXE),
                          (222, 0x7f0000, b"", "/opt/libquux/libquux.so.1")])
    cs = np.zeros(2, ENTRY_DTYPE)
    cs[0]["hash"], cs[0]["nframes"], cs[0]["writes"] = 999, 2, 7
    cs[0]["frames"][0], cs[0]["frames"][1] = (111, 0x1234), (222, 0x99)
    cs[1]["writes"] = 1  # the "other" entry: hash 0
    job = make_job(user=USER, hostname=HOST, exe=EXE, cmdline=CMDLINE, jobid="778899",
                   uid=4242, warnings="cannot write log /scratch/zanzibar/logs/x.iochar: "
                   "Permission denied\nmemory bound of 4096 bytes reached; 3 files folded")
    path = tmp_path / name
    write_log(path, job, {"POSIX": {"schema": schema, "records": recs},
                          "H5D": {"schema": [("H5D_OPENS", 0), ("H5D_F_READ_TIME", 7)],
                                  "records": h5}},
              mounts=[("/scratch", "lustre", 1 << 20), ("/home/zanzibar", "nfs", 4096),
                      ("/", "ext4", 4096)],
              series={"POSIX": {"width": 0.5, "bytes_read": [1, 2], "bytes_written": [3, 4],
                                "reads": [5, 6], "writes": [7, 8]}},
              extra_sections=[("TRACE", "", 1, trace), ("LOADMAP", "", 2, lm),
                              ("CALLSITE", "POSIX", 2, cs.tobytes())])
    return path


def anon(src, out, key=None):
    args = [str(src), "--anonymize", "-o", str(out)] + (["--key", str(key)] if key else [])
    assert parser.main(args) == 0
    return iochar.open(out)


def test_nothing_original_left_numbers_kept(tmp_path, capsys):
    src = make(tmp_path)
    assert leaks(src, SECRETS + [BUILD_ID]) == SECRETS + [BUILD_ID]  # found where they are
    log = anon(src, tmp_path / "anon.iochar", tmp_path / "k")
    assert leaks(tmp_path / "anon.iochar", SECRETS + [BUILD_ID]) == []
    orig = iochar.open(src)
    for mod in ("POSIX", "H5D"):
        a, b = orig.records(mod), log.records(mod)
        cols = [c for c in a.columns if c not in ("record_id", "path")]
        pd.testing.assert_frame_equal(a[cols], b[cols])
    assert {k: v for k, v in log.job.items() if k not in
            ("uid", "jobid", "user", "hostname", "exe", "cmdline", "warnings", "anonymized")} \
        == {k: v for k, v in orig.job.items() if k not in
            ("uid", "jobid", "user", "hostname", "exe", "cmdline", "warnings")}
    assert log.series("POSIX")["writes"].tolist() == [7, 8]
    j = log.job
    assert j["uid"] >= 1 << 31 and j["jobid"].isdigit() and len(j["anonymized"]) == 16
    assert j["warnings"].startswith("cannot write log /") and "Permission denied" in j["warnings"]
    assert "memory bound of 4096 bytes reached; 3 files folded" in j["warnings"]


def test_structure_kept(tmp_path):
    log = anon(make(tmp_path), tmp_path / "anon.iochar", tmp_path / "k")
    A = AN.Anonymizer(AN.load_key(tmp_path / "k"))
    f, h5, ds = (A.name(p) for p in PATHS)
    assert sorted(log.names.values()) == sorted([f, h5, ds])
    assert ds.startswith(h5 + ":/") and f.rsplit("/", 1)[0] == h5.rsplit("/", 1)[0]
    assert f.count("/") == 5 and all(len(p) == 16 for p in f.split("/")[1:])
    assert all(i == fnv1a64(p) for i, p in log.names.items())  # ids are the new names'
    m = log.mounts.set_index("fs_type")["mount_point"].to_dict()
    assert m["ext4"] == "/" and f.startswith(m["lustre"] + "/")
    assert log.job["exe"] == A.name(EXE)
    words = log.job["cmdline"].split(" ")
    assert words[0] == A.name(EXE) and len(words) == 4
    assert words[1] == A.name("--deck") + "=" + A.name("/scratch/zanzibar/decks/platypus.nml")
    assert log.job["user"] == A.piece(USER) and log.job["hostname"] == A.piece(HOST)
    assert A.name("/home/zanzibar").split("/")[2] == log.job["user"]  # home dir = user


def test_trace_and_call_sites_follow(tmp_path, capsys):
    from iochar import callsites
    log = anon(make(tmp_path), tmp_path / "anon.iochar")
    obs = callsites.from_log(log)
    t = obs.trace
    assert len(t) == 1 and t["path"][0] == log.records("POSIX")["path"][0]
    assert (t["offset"][0], t["length"][0]) == (0, 4096)
    objs = obs.objects
    assert len(objs) == 2 and 111 not in objs and 222 not in objs
    assert sorted(len(o["build_id"]) for o in objs.values()) == [0, 36]
    sites = obs.sites.set_index("hash")
    assert 0 in sites.index and 999 not in sites.index and sites["writes"].sum() == 8
    frames = sites.drop(index=0)["frames"].iloc[0]
    assert [k for k, _ in frames] == list(objs) and [a for _, a in frames] == [0x1234, 0x99]


def test_one_key_shares_names_two_keys_do_not(tmp_path):
    a = make(tmp_path, "a.iochar", extra_file="/scratch/zanzibar/only-in-a")
    b = make(tmp_path, "b.iochar", extra_file="/scratch/zanzibar/only-in-b", seed=3)
    la = anon(a, tmp_path / "a1.iochar", tmp_path / "k1")
    lb = anon(b, tmp_path / "b1.iochar", tmp_path / "k1")
    na, nb = set(la.names.values()), set(lb.names.values())
    assert len(na & nb) == 3 and len(na) == len(nb) == 4
    assert la.job["anonymized"] == lb.job["anonymized"]
    assert la.job["user"] == lb.job["user"] and la.job["uid"] == lb.job["uid"]
    lc = anon(a, tmp_path / "a2.iochar", tmp_path / "k2")
    assert not set(lc.names.values()) & na and lc.job["anonymized"] != la.job["anonymized"]
    ld = anon(a, tmp_path / "a3.iochar")  # no key: a one-off one
    assert not set(ld.names.values()) & na


def test_key_file(tmp_path, capsys):
    key = tmp_path / "k"
    anon(make(tmp_path), tmp_path / "o.iochar", key)
    st = key.lstat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 65
    first = key.read_bytes()
    anon(make(tmp_path, "b.iochar"), tmp_path / "o2.iochar", key)
    assert key.read_bytes() == first  # an existing key is used, not replaced
    key.chmod(0o644)
    assert parser.main([str(tmp_path / "b.iochar"), "--anonymize", "-o",
                        str(tmp_path / "o3.iochar"), "--key", str(key)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "open to others" in err
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    assert parser.main([str(tmp_path / "b.iochar"), "--anonymize", "-o",
                        str(tmp_path / "o4.iochar"), "--key", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "o4.iochar").exists()


def test_output_never_replaced_and_bad_input(tmp_path, capsys):
    src = make(tmp_path)
    (tmp_path / "o.iochar").write_bytes(b"keep")
    assert parser.main([str(src), "--anonymize", "-o", str(tmp_path / "o.iochar")]) == 2
    assert (tmp_path / "o.iochar").read_bytes() == b"keep"
    assert "exists" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        parser.main([str(src), "--anonymize"])
    assert e.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    bad = tmp_path / "bad.iochar"
    bad.write_bytes(src.read_bytes()[:-5])
    assert parser.main([str(bad), "--anonymize", "-o", str(tmp_path / "x.iochar")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_darshan_input_unsupported(tmp_path, capsys):
    pytest.importorskip("darshan")
    from pathlib import Path
    src = Path(__file__).resolve().parents[1] / "corpus" / "darshan-real" / "wheel__example.darshan"
    assert parser.main([str(src), "--anonymize", "-o", str(tmp_path / "x.iochar")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not supported" in err
    assert not os.path.exists(tmp_path / "x.iochar")


def test_to_darshan_of_anonymized_leaks_nothing(tmp_path, capsys):
    pytest.importorskip("darshan")
    anon(make(tmp_path), tmp_path / "anon.iochar", tmp_path / "k")
    assert parser.main([str(tmp_path / "anon.iochar"), "--to-darshan",
                        str(tmp_path / "x.darshan")]) == 0
    from iochar.darshan import DarshanLog
    d = DarshanLog(tmp_path / "x.darshan")
    text = repr(d.job) + repr(d.names) + repr(d.mounts.to_dict())
    assert not [s for s in SECRETS if s in text]
    import zlib
    raw = (tmp_path / "x.darshan").read_bytes()
    chunks, d2 = [], raw
    for i in range(len(d2)):  # every zlib stream in the file, inflated
        if d2[i] == 0x78:
            try:
                chunks.append(zlib.decompressobj().decompress(d2[i:]))
            except zlib.error:
                pass
    hay = raw + b"".join(chunks)
    assert len(chunks) >= 3 and not [s for s in SECRETS if s.encode() in hay]


CORPUS = __import__("pathlib").Path(__file__).resolve().parents[1] / "corpus"


@pytest.mark.parametrize("name", ["posix.iochar", "stdio.iochar", "mpi4.iochar", "names.iochar",
                                  "posix_folded.iochar", "netcdf.iochar",
                                  "callsites_trace.iochar", "v3/posix.iochar",
                                  "v3/callsites_trace.iochar", "rank0.iochar"])
def test_corpus_logs_read_back_the_same(name, tmp_path):
    orig = iochar.open(CORPUS / name)
    log = anon(CORPUS / name, tmp_path / "a.iochar")
    assert log.modules == orig.modules and len(log.names) == len(orig.names)
    for mod in orig.modules:
        a, b = orig.records(mod), log.records(mod)
        cols = [c for c in a.columns if c not in ("record_id", "path")]
        pd.testing.assert_frame_equal(a[cols], b[cols])
        assert (a["path"] == "<AGGREGATE>").sum() == (b["path"] == "<AGGREGATE>").sum()
        assert log.ranks(mod).equals(orig.ranks(mod))
    secrets = {p for n in orig.names.values() for p in n.split("/")
               if len(p) > 5 and not p.startswith("<")}  # <STDOUT>, <AGGREGATE> are kept
    assert secrets and not leaks(tmp_path / "a.iochar", sorted(secrets))


def test_per_rank_logs_become_one(tmp_path):
    files = [str(CORPUS / f"rank{i}.iochar") for i in range(4)]
    orig = iochar.open(files)
    assert parser.main(files + ["--anonymize", "-o", str(tmp_path / "all.iochar")]) == 0
    log = iochar.open(tmp_path / "all.iochar")
    for mod in orig.modules:
        a, b = orig.records(mod), log.records(mod)
        cols = [c for c in a.columns if c not in ("record_id", "path")]
        pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))


def test_names_that_grow_past_the_path_limit_are_cut_and_stay_apart(tmp_path):
    deep = "/" + "/".join("d" * 1 for _ in range(1500))  # 3,001 bytes; x17 hashed
    paths = [deep + "/x1", deep + "/x2", "/short"]
    schema = posix_like_schema()
    recs = random_records(schema, 3, paths=paths)
    src = tmp_path / "deep.iochar"
    write_log(src, make_job(), {"POSIX": {"schema": schema, "records": recs}})
    log = anon(src, tmp_path / "a.iochar")
    names = sorted(log.names.values(), key=len)
    assert len(names) == 3 and len(names[0]) == 17
    assert [len(n.encode()) for n in names[1:]] == [4095, 4095] and names[1] != names[2]
    assert all(i == fnv1a64(p) for i, p in log.names.items())
